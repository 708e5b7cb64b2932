// postgres_changes filters as realtime-js 2.109+ writes them (postgresChangesFilter()):
// several conditions joined by commas (AND), `not.` before any operator, like,
// ilike, is, match, imatch, isdistinct, double-quoted values; and `select`, the
// columns a binding receives. One row per case, checked through supabase-js.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresChangesFilter } from '@supabase/supabase-js';
import { Inbox, RawSocket, sleep, startRealtimeTest, subscribed, type RealtimeTest } from './setup.ts';

let t: RealtimeTest;
before(async () => {
  t = await startRealtimeTest();
  await t.owner.unsafe(`
    create extension if not exists citext;
    create table rt_f (id int primary key, n int, t text, flag boolean, ci citext, v varchar(20));
    create table rt_sel (id int primary key, n int, body text, secret text);
    alter table rt_sel replica identity full;
    alter publication supabase_realtime add table rt_f, rt_sel;`);
});
after(() => t.close());

// Rows 1 to 4; each case lists the rows it receives (SQL's answers: a null is never matched, negated or not).
const ROWS = `insert into rt_f values
  (1, 1, 'b,c', true, 'Alpha', 'x(1)'),
  (2, 5, 'Hello world', false, 'beta', 'y'),
  (3, 9, null, null, null, null),
  (4, null, 'b c', true, 'ALPHA', 'z')`;
const CASES: [string, number[]][] = [
  ['n=gt.1,n=lt.9', [2]],
  ['n=gte.1,n=lte.9,flag=is.true', [1]],
  [' n=eq.1 , flag=is.true ', [1]],
  ['n=not.eq.5', [1, 3]],
  ['n=not.in.(1,5)', [3]],
  ['n=in.(1,NULL)', [1]],
  ['n=not.in.(1,NULL)', []],
  ['n=not.gt.4', [1]],
  ['t=eq."b,c"', [1]],
  ['t=eq.b c', [4]],
  ['t=in.(a,"b,c")', [1]],
  ['t=in.(a,"b c")', [4]],
  ['t=not.eq.b c', [1, 2]],
  ['t=like.Hello%', [2]],
  ['t=like.hello%', []],
  ['t=ilike.hello%', [2]],
  ['t=ilike.B_C', [1, 4]],
  ['t=not.like."%,%"', [2, 4]],
  ['t=match.^H.*d$', [2]],
  ['t=match.^(Hello|x)', [2]],
  ['t=match."^b,c$"', [1]],
  ['t=imatch.^h', [2]],
  ['t=not.imatch.^h', [1, 4]],
  ['t=is.null', [3]],
  ['t=not.is.null', [1, 2, 4]],
  ['flag=is.true', [1, 4]],
  ['flag=is.false', [2]],
  ['flag=is.unknown', [3]],
  ['flag=not.is.true', [2, 3]],
  ['n=isdistinct.5', [1, 3, 4]],
  ['n=not.isdistinct.5', [2]],
  ['n=gte.5,t=like.%o%', [2]],
  ['ci=eq.alpha', [1, 4]],
  ['ci=like.al%', [1, 4]],
  ['v=like.x(%', [1]],
  ['v=eq."x(1)"', [1]],
  ['', [1, 2, 3, 4]],
  [postgresChangesFilter().not('n', 'in', [1, 5]).build(), [3]],
  [postgresChangesFilter().eq('t', 'b,c').build(), [1]],
  [postgresChangesFilter().in('t', ['a', 'b c']).build(), [4]],
  [postgresChangesFilter().gt('n', 0).ilike('t', '%WORLD').build(), [2]],
  [postgresChangesFilter().not('flag', 'is', null).neq('n', 1).build(), [2]],
];

describe('postgres_changes filters', () => {
  test('several conditions (AND), not., like, ilike, is, match, imatch, isdistinct, quoted values', async () => {
    const c = await t.client();
    const inboxes = CASES.map(() => new Inbox());
    for (const [i, [filter]] of CASES.entries()) {
      const ch = c
        .channel(`and${i}`)
        .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'rt_f', filter }, inboxes[i]!.push);
      assert.deepEqual(await subscribed(ch), { status: 'SUBSCRIBED', error: undefined }, filter);
    }
    await t.owner.unsafe(ROWS);
    await inboxes[CASES.findIndex(([f]) => f === '')]!.atLeast(4);
    await sleep(300);
    for (const [i, [filter, want]] of CASES.entries())
      assert.deepEqual(inboxes[i]!.items.map((x) => x.new.id).sort(), want, filter);
  });

  test('a filter builder passed as is, and the builder the join echoes, keep the channel subscribed', async () => {
    const c = await t.client();
    const inbox = new Inbox();
    const ch = c.channel('builder').on(
      'postgres_changes',
      {
        event: 'UPDATE',
        schema: 'public',
        table: 'rt_f',
        filter: postgresChangesFilter().gt('n', 1).lt('n', 9),
      },
      inbox.push,
    );
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    await t.owner`update rt_f set flag = not flag where id in (1, 2)`;
    await inbox.atLeast(1);
    await sleep(200);
    assert.deepEqual(
      inbox.items.map((x) => x.new.id),
      [2],
    );
  });

  test('a regular expression is evaluated by PostgreSQL, never by a backtracking engine in the server', async () => {
    const c = await t.client();
    const slow = new Inbox();
    const all = new Inbox();
    const ch = c
      .channel('redos')
      .on(
        'postgres_changes',
        { event: 'INSERT', schema: 'public', table: 'rt_f', filter: 't=match.^(a+)+$' },
        slow.push,
      )
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'rt_f', filter: 'id=gte.100' }, all.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    const started = Date.now();
    await t.owner`insert into rt_f (id, t) values (100, ${`${'a'.repeat(50_000)}!`}), (101, ${'a'.repeat(50_000)})`;
    await all.atLeast(2);
    await slow.atLeast(1);
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    await sleep(100);
    assert.deepEqual(
      slow.items.map((x) => x.new.id),
      [101],
    );
  });

  test('malformed filters are refused at join with InvalidPostgresChanges and a reason', async () => {
    const c = await t.client();
    const many = Array.from({ length: 101 }, (_, i) => i).join(',');
    const cases: [string, RegExp][] = [
      ['n=gt.1,,n=lt.9', /empty condition/],
      ['n=gt.1,', /empty condition/],
      ['n=foo.1', /operator "foo" .* is not one of eq, neq/],
      ['n=not.foo.1', /operator "foo"/],
      ['n=gt1', /must be column=op.value/],
      ['n', /must be column=op.value/],
      ['n=gt.1,n=lt.x', /filter value for "n" is not a valid int4: invalid input syntax for type integer: "x"/],
      ['n=like.1', /operator like requires a text column .*"n" is int4/],
      ['flag=match.t', /operator match requires a text column/],
      ['t=match.(', /invalid pattern for match filter: invalid regular expression/],
      ['t=like.a\\', /invalid pattern for like filter: LIKE pattern must not end with escape character/],
      ['flag=is.maybe', /invalid value for is filter/],
      ['flag=is.NULL', /invalid value for is filter/],
      ['n=is.true', /is true filter requires a boolean column; "n" is int4/],
      ['n=in.1', /"in" filter takes a list in parentheses/],
      ['n=in.({)', /not a valid int4: malformed array literal/],
      [`n=in.(${many})`, /too many values for "in" filter on "n": at most 100/],
      ['ghost=eq.1', /filter column "ghost" does not exist in public.rt_f/],
    ];
    for (const [i, [filter, reason]] of cases.entries()) {
      const ch = c
        .channel(`badf${i}`)
        .on('postgres_changes', { event: '*', schema: 'public', table: 'rt_f', filter }, () => {});
      const res = await subscribed(ch);
      assert.equal(res.status, 'CHANNEL_ERROR', filter);
      assert.match(res.error!, /^InvalidPostgresChanges: /, filter);
      assert.match(res.error!, reason, filter);
    }
  });
});

describe('postgres_changes select', () => {
  test('new and old carry only the selected columns and the primary key; columns too', async () => {
    const c = await t.client();
    const picked = new Inbox();
    const whole = new Inbox();
    const ch = c
      .channel('select')
      .on('postgres_changes', { event: '*', schema: 'public', table: 'rt_sel', select: ['n'] }, picked.push)
      .on('postgres_changes', { event: '*', schema: 'public', table: 'rt_sel' }, whole.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    await t.owner`insert into rt_sel values (1, 2, 'hello', 's3cret')`;
    await t.owner`update rt_sel set n = 3 where id = 1`;
    await t.owner`delete from rt_sel where id = 1`;
    await picked.atLeast(3);
    await whole.atLeast(3);
    await sleep(100);
    assert.deepEqual(
      picked.items.map((x) => [x.eventType, x.new, x.old]),
      [
        ['INSERT', { id: 1, n: 2 }, {}],
        ['UPDATE', { id: 1, n: 3 }, { id: 1, n: 2 }],
        ['DELETE', {}, { id: 1, n: 3 }],
      ],
    );
    assert.deepEqual(whole.items[0].new, { id: 1, n: 2, body: 'hello', secret: 's3cret' });
    assert.equal(picked.items.length, 3);
  });

  test('the join reply echoes select; its columns list only what is sent (raw frames)', async () => {
    const s = await RawSocket.open(`${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`);
    const binding = { event: 'INSERT', schema: 'public', table: 'rt_sel', select: ['body', 'n'], filter: 'n=gt.0' };
    const join = await s.call('realtime:sel-raw', 'phx_join', { config: { postgres_changes: [binding] } }, '1');
    assert.equal(join.status, 'ok', JSON.stringify(join));
    assert.deepEqual(join.response.postgres_changes[0].select, ['body', 'n']);
    await t.owner`insert into rt_sel values (2, 1, 'b', 'hidden')`;
    const change = await s.frame((f) => f.event === 'postgres_changes');
    assert.deepEqual(change.payload.data.record, { id: 2, n: 1, body: 'b' });
    assert.deepEqual(
      change.payload.data.columns.map((col: { name: string }) => col.name),
      ['id', 'n', 'body'],
    );
    s.close();
  });

  test('an unknown column, a select that is not a list, or one on a wildcard binding is refused', async () => {
    const c = await t.client();
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { event: '*', schema: 'public', table: 'rt_sel', select: ['id', 'ghost'] },
        /InvalidPostgresChanges: select column "ghost" does not exist in public.rt_sel/,
      ],
      [{ event: '*', schema: 'public', table: 'rt_sel', select: 'id,n' }, /select must be a list of column names/],
      [
        { event: '*', schema: 'public', select: ['id'] },
        /Column selection is not supported for wildcard subscriptions/,
      ],
    ];
    for (const [i, [binding, reason]] of cases.entries()) {
      const ch = c.channel(`badsel${i}`).on('postgres_changes', binding as never, () => {});
      const res = await subscribed(ch);
      assert.equal(res.status, 'CHANNEL_ERROR', JSON.stringify(binding));
      assert.match(res.error!, reason);
    }
  });
});
