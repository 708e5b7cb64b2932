// Private channels authorised by RLS policies on realtime.messages
// (realtime.topic(), extension), and the access_token event: a refreshed
// token swaps the channel's caller, a key (signOut) makes it that key's role,
// an invalid or expired one ends it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { Inbox, RawSocket, sleep, startRealtimeTest, subscribed, type RealtimeTest } from './setup.ts';

let t: RealtimeTest;
before(async () => {
  t = await startRealtimeTest();
  await t.owner.unsafe(`
    create table room_members (room text, user_id uuid);
    insert into room_members values ('room:1', '00000000-0000-0000-0000-00000000000a'), ('room:1', '00000000-0000-0000-0000-00000000000b');
    create policy members_read on realtime.messages for select to authenticated
      using (exists (select 1 from room_members m where m.room = realtime.topic() and m.user_id = auth.uid()));
    create policy alice_writes on realtime.messages for insert to authenticated
      with check (realtime.messages.extension in ('broadcast', 'presence') and realtime.topic() = 'room:1'
        and auth.uid() = '00000000-0000-0000-0000-00000000000a');
    create table diary (id serial primary key, owner_id uuid not null, body text);
    alter table diary enable row level security;
    create policy own_entries on diary for select to authenticated using (owner_id = auth.uid());
    alter publication supabase_realtime add table diary;`);
});
after(() => t.close());

const ALICE = '00000000-0000-0000-0000-00000000000a';
const BOB = '00000000-0000-0000-0000-00000000000b';
const EVE = '00000000-0000-0000-0000-00000000000e';

describe('private channels', () => {
  test('SELECT policies decide who joins; INSERT policies who sends', async () => {
    const alice = await t.client({ sub: ALICE });
    const bob = await t.client({ sub: BOB });
    const eve = await t.client({ sub: EVE });
    const anon = await t.client();
    const atBob = new Inbox();
    const atAlice = new Inbox();
    const chA = alice
      .channel('room:1', { config: { private: true, broadcast: { ack: true } } })
      .on('broadcast', { event: '*' }, atAlice.push);
    const chB = bob
      .channel('room:1', { config: { private: true, broadcast: { ack: true } } })
      .on('broadcast', { event: '*' }, atBob.push);
    assert.equal((await subscribed(chA)).status, 'SUBSCRIBED');
    assert.equal((await subscribed(chB)).status, 'SUBSCRIBED');
    for (const c of [eve, anon]) {
      const res = await subscribed(c.channel('room:1', { config: { private: true } }));
      assert.equal(res.status, 'CHANNEL_ERROR');
      assert.match(res.error!, /Unauthorized: You do not have permissions to read from this Channel topic: room:1/);
    }
    assert.equal(await chA.send({ type: 'broadcast', event: 'hi', payload: { from: 'alice' } }), 'ok');
    await atBob.atLeast(1);
    // Bob may read but not write.
    assert.equal(await chB.send({ type: 'broadcast', event: 'hi', payload: { from: 'bob' } }), 'error');
    await sleep(200);
    assert.equal(atAlice.items.length, 0);
    // A public channel of the same name is another topic.
    const pub = await t.client();
    const atPub = new Inbox();
    assert.equal(
      (await subscribed(pub.channel('room:1').on('broadcast', { event: '*' }, atPub.push))).status,
      'SUBSCRIBED',
    );
    await chA.send({ type: 'broadcast', event: 'hi', payload: { n: 2 } });
    await atBob.atLeast(2);
    await sleep(200);
    assert.equal(atPub.items.length, 0);
  });

  test('presence on a private topic: SELECT to see it, INSERT to track', async () => {
    const alice = await t.client({ sub: ALICE });
    const bob = await t.client({ sub: BOB });
    const joinsAtBob = new Inbox();
    const chB = bob
      .channel('room:1', { config: { private: true, presence: { key: 'bob' } } })
      .on('presence', { event: 'join' }, joinsAtBob.push);
    assert.equal((await subscribed(chB)).status, 'SUBSCRIBED');
    const chA = alice
      .channel('room:1', { config: { private: true, presence: { key: 'alice' } } })
      .on('presence', { event: 'sync' }, () => {});
    assert.equal((await subscribed(chA)).status, 'SUBSCRIBED');
    assert.equal(await chA.track({ typing: true }), 'ok');
    await joinsAtBob.atLeast(1);
    assert.equal(joinsAtBob.items[0].key, 'alice');
    assert.equal(await chB.track({ typing: false }), 'error');
  });

  test("HTTP broadcast to a private topic: the caller's INSERT policies decide (403 otherwise)", async () => {
    const send = async (token: string) =>
      fetch(`${t.h.info.BASE_URL}/realtime/v1/api/broadcast`, {
        method: 'POST',
        headers: {
          apikey: t.h.info.PUBLISHABLE_KEY,
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ messages: [{ topic: 'room:1', event: 'e', payload: {}, private: true }] }),
      });
    assert.equal((await send(await t.token(ALICE))).status, 202);
    const denied = await send(await t.token(BOB));
    assert.equal(denied.status, 403);
    const body = await denied.json();
    assert.equal(body.code, 'forbidden');
    assert.match(body.error, /private topic "room:1"/);
    assert.equal((await send(t.h.info.SECRET_KEY)).status, 202);
  });
});

describe('access_token', () => {
  test('a refreshed token swaps the caller; an invalid one ends the channel with a reason', async () => {
    const s = await RawSocket.open(`${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`);
    const join = await s.call(
      'realtime:room:1',
      'phx_join',
      { config: { private: true }, access_token: await t.token(ALICE) },
      '1',
    );
    assert.equal(join.status, 'ok');
    // Eve's token: she may not read room:1, so the channel ends.
    s.send('realtime:room:1', 'access_token', { access_token: await t.token(EVE) }, '1');
    await s.inbox.atLeast(s.frames.length + 2);
    const sys = s.frames.find((f) => f.event === 'system');
    assert.equal(sys.payload.status, 'error');
    assert.match(sys.payload.message, /no longer have permission to read from this Channel topic: room:1/);
    assert.ok(s.frames.some((f) => f.event === 'phx_close' && f.topic === 'realtime:room:1'));
    // A garbage token on another channel ends it too.
    assert.equal((await s.call('realtime:open', 'phx_join', {}, '2')).status, 'ok');
    const before = s.frames.length;
    s.send('realtime:open', 'access_token', { access_token: 'a.b.c' }, '2');
    await s.inbox.atLeast(before + 2);
    const sys2 = s.frames.slice(before).find((f) => f.event === 'system');
    assert.match(sys2.payload.message, /InvalidJWTToken/);
    s.close();
  });

  test("a join held by a slow policy holds up its own topic only: the socket's heartbeats and other channels go on", async () => {
    await t.owner.unsafe(`
      create function slow_gate() returns boolean language sql as $$ select pg_sleep(2) is not null $$;
      create policy slow_room on realtime.messages for select to authenticated
        using (realtime.topic() = 'slow-room' and slow_gate());`);
    const s = await RawSocket.open(`${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`);
    const token = await t.token(ALICE);
    const slow = s.send('realtime:slow-room', 'phx_join', { config: { private: true }, access_token: token }, '1');
    assert.equal((await s.call('phoenix', 'heartbeat', {})).status, 'ok');
    const join = { config: { broadcast: { ack: true } }, access_token: token };
    assert.equal((await s.call('realtime:fast', 'phx_join', join, '2')).status, 'ok');
    const sent = await s.call('realtime:fast', 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, '2');
    assert.equal(sent.status, 'ok');
    assert.equal((await s.replyTo(slow, 10_000)).status, 'ok', 'the slow join itself completes');
    const replies = s.frames.filter((f) => f.event === 'phx_reply').map((f) => f.topic);
    assert.deepEqual(replies, ['phoenix', 'realtime:fast', 'realtime:fast', 'realtime:slow-room'], 'answered first');
    s.close();
    await t.owner.unsafe('drop policy slow_room on realtime.messages; drop function slow_gate()');
  });

  test('a join with an expired token is refused; a token expiring while joined ends the channel', async () => {
    const s = await RawSocket.open(`${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`);
    const expired = await s.call(
      'realtime:x',
      'phx_join',
      { access_token: await t.token(ALICE, { expiresIn: -10 }) },
      '1',
    );
    assert.equal(expired.status, 'error');
    assert.match(expired.response.reason, /^InvalidJWTToken: .*expired/);
    const soon = await s.call('realtime:x', 'phx_join', { access_token: await t.token(ALICE, { expiresIn: 2 }) }, '2');
    assert.equal(soon.status, 'ok');
    const n = s.frames.length;
    await s.inbox.atLeast(n + 2, 5000);
    const sys = s.frames.slice(n).find((f) => f.event === 'system');
    assert.match(sys.payload.message, /Token has expired/);
    assert.ok(s.frames.slice(n).some((f) => f.event === 'phx_close'));
    s.close();
  });
  test("signOut: the channel becomes anon; the user's rows and private broadcasts no longer reach the socket", async () => {
    // Every frame the client's socket receives, to prove nothing is sent rather than dropped by supabase-js.
    const frames: string[] = [];
    class RecordingWebSocket extends WebSocket {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args);
        this.on('message', (data) => frames.push(String(data)));
      }
    }
    const c = createClient(t.h.info.BASE_URL, t.h.info.PUBLISHABLE_KEY, {
      realtime: { transport: RecordingWebSocket as never, heartbeatIntervalMs: 500 },
      auth: { persistSession: false, autoRefreshToken: false },
    });
    const email = `signout-${Math.random().toString(36).slice(2)}@example.com`;
    const { data, error } = await c.auth.signUp({
      email,
      password: `Hearth-${Math.random().toString(36).slice(2)}-pw`,
    });
    assert.equal(error, null);
    const uid = data.user!.id;
    await t.owner`insert into room_members values ('room:1', ${uid})`;
    const rows = new Inbox();
    const broadcasts = new Inbox();
    const system = new Inbox();
    const chRows = c
      .channel('diary')
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'diary' }, rows.push);
    const chRoom = c
      .channel('room:1', { config: { private: true } })
      .on('broadcast', { event: '*' }, broadcasts.push)
      .on('system', {}, system.push);
    assert.equal((await subscribed(chRows)).status, 'SUBSCRIBED');
    assert.equal((await subscribed(chRoom)).status, 'SUBSCRIBED');
    await t.owner`insert into diary (owner_id, body) values (${uid}, 'while signed in')`;
    await t.owner`select realtime.send('{"n": "while signed in"}', 'e', 'room:1', true)`;
    await rows.atLeast(1);
    await broadcasts.atLeast(1);

    // supabase-js now sends the publishable key as the access_token of every channel.
    assert.equal((await c.auth.signOut()).error, null);
    // The private channel ends as a refresh to a token that may not read it does (the channels' swaps are in order).
    await system.atLeast(1);
    assert.equal(system.items[0].status, 'error');
    assert.match(system.items[0].message, /no longer have permission to read from this Channel topic: room:1/);
    await t.owner`insert into diary (owner_id, body) values (${uid}, 'after sign out')`;
    await t.owner`select realtime.send('{"n": "after sign out"}', 'e', 'room:1', true)`;
    await sleep(500);
    assert.equal(
      frames.filter((f) => f.includes('after sign out')).length,
      0,
      frames.filter((f) => f.includes('after sign out')).join('\n'),
    );
    assert.equal(chRoom.state, 'closed');
    assert.equal(chRows.state, 'joined'); // still joined, now as anon (who may not read diary rows)
    await t.owner`delete from room_members where user_id = ${uid}`;
    await c.removeAllChannels();
  });

  test('an access_token that is no key of the project ends the channel', async () => {
    const s = await RawSocket.open(`${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`);
    assert.equal((await s.call('realtime:open', 'phx_join', {}, '1')).status, 'ok');
    const before = s.frames.length;
    s.send('realtime:open', 'access_token', { access_token: 'sb_publishable_not-a-key' }, '1');
    await s.inbox.atLeast(before + 2);
    const sys = s.frames.slice(before).find((f) => f.event === 'system');
    assert.match(sys.payload.message, /^InvalidJWTToken: the access_token is not a key of this project/);
    assert.ok(s.frames.slice(before).some((f) => f.event === 'phx_close'));
    s.close();
  });
});
