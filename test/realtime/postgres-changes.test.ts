// postgres_changes with real supabase-js clients: tables opt in through the
// supabase_realtime publication, RLS decides who receives a change (two users
// on one table each see their own rows), filters, old records, bad bindings.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Inbox, RawSocket, sleep, startRealtimeTest, subscribed, type RealtimeTest } from './setup.ts';

let t: RealtimeTest;
before(async () => {
  t = await startRealtimeTest();
  await t.owner.unsafe(`
    create table messages (id serial primary key, owner_id uuid not null, body text, n int default 0, at timestamptz default now());
    alter table messages enable row level security;
    create policy own_rows on messages for select to authenticated using (owner_id = auth.uid());
    create table public_posts (id int primary key, title text, likes int);
    alter table public_posts replica identity full;
    create table hidden (id int primary key);
    revoke all on hidden from anon, authenticated;
    create table rt_ts (id int primary key, ts timestamptz, u uuid, ok boolean, amt numeric, big int8, wall timestamp, d date, f float8);
    create table rt_big (id int8 primary key, n numeric, note text);
    alter table rt_big enable row level security;
    create policy all_rows on rt_big for select to authenticated using (true);
    alter publication supabase_realtime add table messages, public_posts, hidden, rt_ts, rt_big;`);
});
after(() => t.close());

const ALICE = '00000000-0000-0000-0000-00000000000a';
const BOB = '00000000-0000-0000-0000-00000000000b';

/** An anon channel on public_posts' changes, subscribed. */
async function watchPosts(topic: string, event: '*' | 'INSERT'): Promise<Inbox> {
  const inbox = new Inbox();
  const ch = (await t.client())
    .channel(topic)
    .on('postgres_changes', { event, schema: 'public', table: 'public_posts' }, inbox.push);
  assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
  return inbox;
}

describe('postgres_changes', () => {
  test('the publication puts the capture triggers on its tables and takes them off again', async () => {
    const rows =
      await t.owner`select tgrelid::regclass::text as rel, count(*)::int as n from pg_trigger where tgname like 'realtime_capture_%' group by 1 order by 1`;
    assert.deepEqual(
      rows.map((r) => [r.rel, r.n]),
      [
        ['hidden', 3],
        ['messages', 3],
        ['public_posts', 3],
        ['rt_big', 3],
        ['rt_ts', 3],
      ],
    );
    await t.owner`alter publication supabase_realtime drop table hidden`;
    const after =
      await t.owner`select count(*)::int as n from pg_trigger where tgname like 'realtime_capture_%' and tgrelid = 'hidden'::regclass`;
    assert.equal(after[0]!.n, 0);
    await t.owner`alter publication supabase_realtime add table hidden`;
  });

  test('RLS decides: two users on one table each receive only their own rows; service_role all', async () => {
    const alice = await t.client({ sub: ALICE });
    const bob = await t.client({ sub: BOB });
    const service = await t.client({ key: t.h.info.SECRET_KEY });
    const atAlice = new Inbox();
    const atBob = new Inbox();
    const atService = new Inbox();
    const sub = (c: typeof alice, inbox: Inbox) =>
      subscribed(
        c
          .channel(`rls-${Math.random()}`)
          .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'messages' }, inbox.push),
      );
    assert.deepEqual(await sub(alice, atAlice), { status: 'SUBSCRIBED', error: undefined });
    assert.equal((await sub(bob, atBob)).status, 'SUBSCRIBED');
    assert.equal((await sub(service, atService)).status, 'SUBSCRIBED');
    await t.owner`insert into messages (owner_id, body) values (${ALICE}, 'for alice'), (${BOB}, 'for bob'), (${ALICE}, 'alice again')`;
    await atService.atLeast(3);
    await atAlice.atLeast(2);
    await atBob.atLeast(1);
    await sleep(200);
    assert.deepEqual(
      atAlice.items.map((c) => c.new.body),
      ['for alice', 'alice again'],
    );
    assert.deepEqual(
      atBob.items.map((c) => c.new.body),
      ['for bob'],
    );
    const c = atBob.items[0];
    assert.equal(c.eventType, 'INSERT');
    assert.equal(c.schema, 'public');
    assert.equal(c.table, 'messages');
    assert.equal(typeof c.new.id, 'number');
    assert.equal(c.new.owner_id, BOB);
    assert.deepEqual(c.old, {});
    assert.ok(!Number.isNaN(Date.parse(c.commit_timestamp)));
    assert.equal(c.errors, null);
  });

  test('UPDATE and DELETE: old is the primary key, or the whole row under REPLICA IDENTITY FULL', async () => {
    const c = await t.client();
    const inbox = new Inbox();
    const ch = c
      .channel('posts')
      .on('postgres_changes', { event: '*', schema: 'public', table: 'public_posts' }, inbox.push);
    const msgs = new Inbox();
    const svc = await t.client({ key: t.h.info.SECRET_KEY });
    const ch2 = svc
      .channel('msgs')
      .on('postgres_changes', { event: '*', schema: 'public', table: 'messages' }, msgs.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    assert.equal((await subscribed(ch2)).status, 'SUBSCRIBED');
    await t.owner`insert into public_posts values (1, 'hello', 0)`;
    await t.owner`update public_posts set likes = 5 where id = 1`;
    await t.owner`delete from public_posts where id = 1`;
    await inbox.atLeast(3);
    assert.deepEqual(
      inbox.items.map((x) => x.eventType),
      ['INSERT', 'UPDATE', 'DELETE'],
    );
    assert.deepEqual(inbox.items[1].old, { id: 1, title: 'hello', likes: 0 });
    assert.deepEqual(inbox.items[1].new, { id: 1, title: 'hello', likes: 5 });
    assert.deepEqual(inbox.items[2].old, { id: 1, title: 'hello', likes: 5 });
    assert.deepEqual(inbox.items[2].new, {});
    const [row] = await t.owner`insert into messages (owner_id, body) values (${ALICE}, 'x') returning id`;
    await t.owner`update messages set body = 'y' where id = ${row!.id}`;
    await t.owner`delete from messages where id = ${row!.id}`;
    await msgs.atLeast(3);
    assert.deepEqual(msgs.items[1].old, { id: row!.id });
    assert.deepEqual(msgs.items[2].old, { id: row!.id });
  });

  test('changes too large for NOTIFY keep their order among the others, in one transaction and across them', async () => {
    const inbox = await watchPosts('large-rows', '*');
    const large = 'L'.repeat(20_000); // past NOTIFY's 8000 bytes: relayed through realtime.relay
    await t.owner.begin(async (tx) => {
      await tx`insert into public_posts values (10, ${large}, 0)`;
      await tx`update public_posts set title = 'short' where id = 10`;
      await tx`delete from public_posts where id = 10`;
    });
    await t.owner`insert into public_posts values (11, 'a', 0), (12, ${large}, 0), (13, 'c', 0)`;
    await t.owner`insert into public_posts values (14, 'd', 0)`;
    await inbox.atLeast(7);
    assert.deepEqual(
      inbox.items.map((x) => `${x.eventType} ${x.new.id ?? x.old.id}`),
      ['INSERT 10', 'UPDATE 10', 'DELETE 10', 'INSERT 11', 'INSERT 12', 'INSERT 13', 'INSERT 14'],
    );
    assert.equal(inbox.items[4].new.title, large);
    await t.owner`delete from public_posts where id between 11 and 14`;
  });

  test('a change over 1 MiB keeps only its fields of at most 64 bytes, with errors ["Error 413: Payload Too Large"], as Supabase sends it', async () => {
    const inbox = await watchPosts('huge-rows', 'INSERT');
    await t.owner`insert into public_posts values (20, ${'H'.repeat(1_100_000)}, 7)`;
    await t.owner`insert into public_posts values (21, 'small', 1)`;
    await inbox.atLeast(2);
    assert.deepEqual(inbox.items[0].new, { id: 20, likes: 7 });
    assert.deepEqual(inbox.items[0].errors, ['Error 413: Payload Too Large']);
    assert.deepEqual(inbox.items[1].new, { id: 21, title: 'small', likes: 1 });
    assert.equal(inbox.items[1].errors, null);
    await t.owner`delete from public_posts where id in (20, 21)`;
  });

  test('DELETE filters see only the old record sent: on an RLS table the key, so no filter can probe a hidden row', async () => {
    const [row] =
      await t.owner`insert into messages (owner_id, body, n) values (${ALICE}, 'my secret diary', 4242) returning id`;
    const id = row!.id as number;
    const anon = await t.client();
    const alice = await t.client({ sub: ALICE });
    // [client, filter, what it receives]: on messages (RLS, default replica identity) only `id` is sent.
    const cases: [typeof anon, string, unknown[]][] = [
      [anon, 'body=eq.my secret diary', []],
      [anon, 'n=gt.1000', []],
      [alice, `owner_id=eq.${ALICE}`, []],
      [anon, `id=eq.${id}`, [{ id }]],
      [anon, `id=neq.${id}`, []],
    ];
    const inboxes = cases.map(() => new Inbox());
    for (const [i, [c, filter]] of cases.entries()) {
      const ch = c
        .channel(`deletes${i}`)
        .on('postgres_changes', { event: 'DELETE', schema: 'public', table: 'messages', filter }, inboxes[i]!.push);
      assert.equal((await subscribed(ch)).status, 'SUBSCRIBED', filter);
    }
    // Under RLS even REPLICA IDENTITY FULL sends only the key (Supabase would filter on the whole row here).
    await t.owner.unsafe(`create table ledger (id int primary key, secret text);
      alter table ledger enable row level security;
      alter table ledger replica identity full;
      alter publication supabase_realtime add table ledger;`);
    const ledger = [new Inbox(), new Inbox()];
    for (const [i, filter] of ['secret=eq.x', 'id=eq.1'].entries()) {
      const ch = anon
        .channel(`ledger${i}`)
        .on('postgres_changes', { event: 'DELETE', schema: 'public', table: 'ledger', filter }, ledger[i]!.push);
      assert.equal((await subscribed(ch)).status, 'SUBSCRIBED', filter);
    }
    // Without RLS and under REPLICA IDENTITY FULL the whole old row is sent, and filtered on.
    const posts = new Inbox();
    const chPosts = anon
      .channel('post-deletes')
      .on(
        'postgres_changes',
        { event: 'DELETE', schema: 'public', table: 'public_posts', filter: 'title=eq.gone' },
        posts.push,
      );
    assert.equal((await subscribed(chPosts)).status, 'SUBSCRIBED');
    await t.owner`insert into public_posts values (30, 'gone', 0), (31, 'stays', 0)`;
    await t.owner`delete from messages where id = ${id}`;
    await t.owner`delete from public_posts where id in (30, 31)`;
    await t.owner`insert into ledger values (1, 'x')`;
    await t.owner`delete from ledger`;
    await inboxes[3]!.atLeast(1);
    await posts.atLeast(1);
    await ledger[1]!.atLeast(1);
    await sleep(300);
    for (const [i, [, filter, want]] of cases.entries())
      assert.deepEqual(
        inboxes[i]!.items.map((x) => x.old),
        want,
        filter,
      );
    assert.deepEqual(
      posts.items.map((x) => x.old),
      [{ id: 30, title: 'gone', likes: 0 }],
    );
    assert.deepEqual(
      ledger.map((inbox) => inbox.items.map((x) => x.old)),
      [[], [{ id: 1 }]],
    );
  });

  const FILTERS: [string, number[]][] = [
    ['likes=eq.5', [2]],
    ['likes=neq.5', [1, 3]],
    ['likes=lt.5', [1]],
    ['likes=lte.5', [1, 2]],
    ['likes=gt.5', [3]],
    ['likes=gte.5', [2, 3]],
    ['likes=in.(1,10)', [1, 3]],
    ['title=eq.b c', [2]],
    ['title=in.("a","b c")', [1, 2]],
  ];
  test('filters eq, neq, lt, lte, gt, gte, in', async () => {
    const c = await t.client();
    const inboxes = FILTERS.map(() => new Inbox());
    for (const [i, [filter]] of FILTERS.entries()) {
      const ch = c
        .channel(`f${i}`)
        .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'public_posts', filter }, inboxes[i]!.push);
      assert.equal((await subscribed(ch)).status, 'SUBSCRIBED', filter);
    }
    await t.owner`insert into public_posts values (11, 'a', 1), (12, 'b c', 5), (13, 'd', 10)`;
    await sleep(500);
    for (const [i, [filter, want]] of FILTERS.entries()) {
      assert.deepEqual(
        inboxes[i]!.items.map((x) => x.new.id - 10),
        want,
        filter,
      );
    }
  });

  // Values are read as the column's type, as Supabase casts the filter value:
  // row 1 is the one the filter names, row 2 differs by a little (1 µs, 1 in a bigint, ...).
  const TYPED: [string, number[]][] = [
    ['ts=eq.2024-06-01T10:00:00Z', [1]],
    ['ts=eq.2024-06-01 10:00:00+00', [1]],
    ['ts=gt.2024-06-01T11:00:00+02:00', [1, 2]],
    ['ts=lte.2024-06-01T10:00:00Z', [1]],
    ['ts=in.(2024-06-01T10:00:00.000001Z,2020-01-01)', [2]],
    ['u=eq.A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', [1]],
    ['u=eq.{a0eebc999c0b4ef8bb6d6bb9bd380a11}', [1]],
    ['ok=eq.TRUE', [1]],
    ['ok=eq.off', [2]],
    ['ok=neq.y', [2]],
    ['amt=eq.1.5', [1]],
    ['amt=in.(1.50,3)', [1]],
    ['amt=gt.1.499999999999999999999', [1, 2]],
    ['amt=lt.1.500000000000000000001', [1]],
    ['big=eq.9007199254740993', [2]],
    ['big=eq.9007199254740992', [1]],
    ['big=gt.9007199254740992', [2]],
    ['wall=eq.2024-06-01T10:00:00+05:00', [1]],
    ['d=eq.2024-06-01', [1]],
    ['d=lt.2024-06-02', [1]],
    ['f=gte.0.25', [2]],
  ];
  test('filters compare as the column type: timestamptz, uuid, boolean, numeric, bigint, timestamp, date, float', async () => {
    const c = await t.client();
    const inboxes = TYPED.map(() => new Inbox());
    for (const [i, [filter]] of TYPED.entries()) {
      const ch = c
        .channel(`typed${i}`)
        .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'rt_ts', filter }, inboxes[i]!.push);
      assert.equal((await subscribed(ch)).status, 'SUBSCRIBED', filter);
    }
    // The writer's session is not in UTC: the captured times carry its offset.
    await t.owner.begin((tx) => [
      tx`set local timezone to 'Asia/Kolkata'`,
      tx`insert into rt_ts values
        (1, '2024-06-01T10:00:00Z', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', true, 1.50, 9007199254740992, '2024-06-01 10:00:00', '2024-06-01', 0.125),
        (2, '2024-06-01T10:00:00.000001Z', 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', false, 2, 9007199254740993, '2024-06-01 10:00:01', '2024-06-02', 0.5),
        (3, null, null, null, null, null, null, null, null)`,
    ]);
    await sleep(500);
    for (const [i, [filter, want]] of TYPED.entries()) {
      assert.deepEqual(
        inboxes[i]!.items.map((x) => x.new.id),
        want,
        filter,
      );
    }
  });

  test('numbers of 16 digits or more go out with their exact digits (bigint, numeric), also through the RLS check', async () => {
    const s = await RawSocket.open(
      `${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}&vsn=1.0.0`,
    );
    const texts: string[] = [];
    s.ws.on('message', (d) => texts.push(String(d)));
    const binding = { event: 'INSERT', schema: 'public', table: 'rt_big', filter: 'id=eq.9223372036854775807' };
    const token = await t.token(ALICE);
    const join = await s.call(
      'realtime:big',
      'phx_join',
      { config: { postgres_changes: [binding] }, access_token: token },
      '1',
    );
    assert.equal(join.status, 'ok', JSON.stringify(join));
    await t.owner.unsafe(`insert into rt_big values (9223372036854775806, 1, 'x'),
      (9223372036854775807, 12345678901234567890.123456789, '9223372036854775807 in text, "quoted" 12345678901234567')`);
    await s.inbox.atLeast(s.frames.filter((f) => f.event === 'postgres_changes').length + 1);
    await sleep(200);
    const changes = texts.filter((x) => x.includes('"postgres_changes"') && x.includes('"record"'));
    assert.equal(changes.length, 1, changes.join('\n'));
    assert.match(changes[0]!, /"id":9223372036854775807[,}]/);
    assert.match(changes[0]!, /"n":12345678901234567890\.123456789[,}]/);
    const record = JSON.parse(changes[0]!).payload.data.record;
    assert.equal(record.note, '9223372036854775807 in text, "quoted" 12345678901234567');
    s.close();
  });

  test('schema-wide bindings, several bindings on one channel, and the ids in the join reply', async () => {
    const c = await t.client();
    const all = new Inbox();
    const posts = new Inbox();
    const ch = c
      .channel('wide')
      .on('postgres_changes', { event: '*', schema: 'public' }, all.push)
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'public_posts' }, posts.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    const ids = (ch as any).bindings.postgres_changes.map((b: { id: number }) => b.id);
    assert.equal(ids.length, 2);
    assert.notEqual(ids[0], ids[1]);
    await t.owner`insert into public_posts values (20, 'wide', 0)`;
    // messages has RLS and anon no policy: the schema-wide binding does not see its rows.
    await t.owner`insert into messages (owner_id, body) values (${ALICE}, 'secret')`;
    await posts.atLeast(1);
    await all.atLeast(1);
    await sleep(300);
    assert.deepEqual(
      all.items.map((x) => x.table),
      ['public_posts'],
    );
  });

  test('bad bindings are refused at join with a reason: missing table, hidden table, missing column, bad filter', async () => {
    const c = await t.client();
    const cases: [Record<string, string>, RegExp][] = [
      [
        { event: '*', schema: 'public', table: 'nope' },
        /InvalidPostgresChanges: .*does not exist or role anon may not select it/,
      ],
      [{ event: '*', schema: 'public', table: 'hidden' }, /may not select it/],
      [
        { event: '*', schema: 'public', table: 'public_posts', filter: 'ghost=eq.1' },
        /filter column "ghost" does not exist/,
      ],
      [{ event: '*', schema: 'public', table: 'public_posts', filter: 'likes=like.1' }, /requires a text column/],
      [{ event: '*', schema: 'public', table: 'public_posts', filter: 'likes=regex.1' }, /is not one of eq, neq/],
      [
        { event: '*', schema: 'public', table: 'public_posts', filter: 'likes=eq.abc' },
        /filter value for "likes" is not a valid int4: invalid input syntax for type integer: "abc"/,
      ],
      [{ event: '*', schema: 'public', table: 'public_posts', filter: 'likes=eq.1.5' }, /not a valid int4/],
      [{ event: '*', schema: 'public', table: 'rt_ts', filter: 'big=in.(1,99999999999999999999)' }, /out of range/],
      [{ event: '*', schema: 'public', table: 'rt_ts', filter: 'ts=gt.yesterdayish' }, /not a valid timestamptz/],
      [{ event: '*', schema: 'public', table: 'rt_ts', filter: 'u=eq.a0eebc99' }, /not a valid uuid/],
      [{ event: '*', schema: 'public', table: 'rt_ts', filter: 'ok=eq.maybe' }, /not a valid bool/],
      [{ event: 'TRUNCATE', schema: 'public' }, /event must be one of/],
    ];
    for (const [i, [binding, reason]] of cases.entries()) {
      const ch = c.channel(`bad${i}`).on('postgres_changes', binding as never, () => {});
      const res = await subscribed(ch);
      assert.equal(res.status, 'CHANNEL_ERROR', JSON.stringify(binding));
      assert.match(res.error!, reason);
    }
  });
});
