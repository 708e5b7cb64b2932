// postgres_changes with real supabase-js clients: tables opt in through the
// supabase_realtime publication, RLS decides who receives a change (two users
// on one table each see their own rows), filters, old records, bad bindings.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Inbox, sleep, startRealtimeTest, subscribed, type RealtimeTest } from './setup.ts';

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
    alter publication supabase_realtime add table messages, public_posts, hidden;`);
});
after(() => t.close());

const ALICE = '00000000-0000-0000-0000-00000000000a';
const BOB = '00000000-0000-0000-0000-00000000000b';

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

  test('DELETE on an RLS table goes to subscribers whose filter matches the deleted row, with only its key', async () => {
    const alice = await t.client({ sub: ALICE });
    const inbox = new Inbox();
    const ch = alice
      .channel('deletes')
      .on(
        'postgres_changes',
        { event: 'DELETE', schema: 'public', table: 'messages', filter: `owner_id=eq.${ALICE}` },
        inbox.push,
      );
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    const [a] = await t.owner`insert into messages (owner_id, body) values (${ALICE}, 'a') returning id`;
    const [b] = await t.owner`insert into messages (owner_id, body) values (${BOB}, 'b') returning id`;
    await t.owner`delete from messages where id in (${a!.id}, ${b!.id})`;
    await inbox.atLeast(1);
    await sleep(200);
    assert.deepEqual(
      inbox.items.map((x) => x.old),
      [{ id: a!.id }],
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
      [{ event: '*', schema: 'public', table: 'public_posts', filter: 'likes=like.1' }, /must be column=op.value/],
      [{ event: '*', schema: 'public', table: 'public_posts', filter: 'likes=eq.abc' }, /must be a number/],
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
