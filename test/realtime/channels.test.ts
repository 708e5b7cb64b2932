// The realtime endpoint with real supabase-js clients: connecting with the
// project's key, heartbeats, broadcast (self, ack, HTTP and SQL senders),
// presence, on both protocol versions and every project address.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { heartbeat } from '../../src/realtime/server.ts';
import { Inbox, RawSocket, sleep, startRealtimeTest, subscribed, type RealtimeTest } from './setup.ts';

let t: RealtimeTest;
before(async () => {
  heartbeat.timeoutMs = 1500;
  t = await startRealtimeTest();
});
after(() => t.close());

const wsUrl = () => `${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`;

describe('endpoint', () => {
  test('a key of the project opens the socket; a wrong or missing key is 401 with a JSON reason', async () => {
    const ok = await RawSocket.open(wsUrl());
    assert.deepEqual(await ok.call('phoenix', 'heartbeat'), { status: 'ok', response: {} });
    ok.close();
    const bad = await RawSocket.open(`${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=sb_publishable_nope`).catch(
      (e) => e,
    );
    assert.equal(bad.status, 401);
    assert.equal(JSON.parse(bad.body).code, 'invalid_api_key');
    const none = await RawSocket.open(`${t.h.info.BASE_URL}/realtime/v1/websocket`).catch((e) => e);
    assert.equal(none.status, 401);
    const vsn = await RawSocket.open(`${wsUrl()}&vsn=3.0.0`).catch((e) => e);
    assert.equal(vsn.status, 400);
  });

  test('the project is also addressed under /project/{ref}/; another ref is 404', async () => {
    const s = await RawSocket.open(
      `${t.h.url}/project/${t.h.info.PROJECT_REF}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`,
    );
    assert.equal((await s.call('realtime:x', 'phx_join', {})).status, 'ok');
    s.close();
    const other = await RawSocket.open(
      `${t.h.url}/project/abcdefghijabcdefghij/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`,
    ).catch((e) => e);
    assert.equal(other.status, 404);
  });

  test('a socket that sends nothing past the heartbeat timeout is closed', async () => {
    const s = await RawSocket.open(wsUrl());
    const start = Date.now();
    while (!s.closed && Date.now() - start < 10_000) await sleep(100);
    assert.ok(s.closed, 'the silent socket was closed');
    assert.match(s.closed!.reason, /heartbeat/);
  });

  test('join, leave, and refusals for unjoined topics and unknown events', async () => {
    const s = await RawSocket.open(wsUrl());
    const join = await s.call('realtime:room', 'phx_join', { config: {} }, '1');
    assert.deepEqual(join, { status: 'ok', response: { postgres_changes: [] } });
    const unknown = await s.call('realtime:room', 'dance', {}, '1');
    assert.equal(unknown.status, 'error');
    assert.match(unknown.response.reason, /^UnknownEvent:/);
    assert.deepEqual(await s.call('realtime:room', 'phx_leave', {}, '1'), { status: 'ok', response: {} });
    const after = await s.call('realtime:room', 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, '1');
    assert.match(after.response.reason, /^UnmatchedTopic:/);
    s.close();
  });
});

describe('broadcast', () => {
  for (const vsn of ['1.0.0', '2.0.0'] as const) {
    test(`client to client, self and ack (vsn ${vsn})`, async () => {
      const a = await t.client({ vsn });
      const b = await t.client({ vsn: vsn === '1.0.0' ? '2.0.0' : '1.0.0' });
      const atA = new Inbox();
      const atB = new Inbox();
      const chA = a
        .channel(`room-${vsn}`, { config: { broadcast: { self: true, ack: true } } })
        .on('broadcast', { event: 'move' }, atA.push);
      const chB = b.channel(`room-${vsn}`).on('broadcast', { event: 'move' }, atB.push);
      assert.equal((await subscribed(chA)).status, 'SUBSCRIBED');
      assert.equal((await subscribed(chB)).status, 'SUBSCRIBED');
      assert.equal(await chA.send({ type: 'broadcast', event: 'move', payload: { x: 1, s: 'é' } }), 'ok');
      await atB.atLeast(1);
      await atA.atLeast(1);
      assert.deepEqual(atB.items[0], { type: 'broadcast', event: 'move', payload: { x: 1, s: 'é' } });
      assert.deepEqual(atA.items[0].payload, { x: 1, s: 'é' });
      // Without self, the sender does not hear itself.
      await chB.send({ type: 'broadcast', event: 'move', payload: { from: 'b' } });
      await atA.atLeast(2);
      await sleep(100);
      assert.equal(atB.items.length, 1);
    });
  }

  test('HTTP: send() on an unjoined channel and httpSend() answer 202 and reach subscribers', async () => {
    const listener = await t.client();
    const inbox = new Inbox();
    const ch = listener.channel('news').on('broadcast', { event: '*' }, inbox.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    const sender = await t.client();
    const out = sender.channel('news');
    assert.equal(await out.send({ type: 'broadcast', event: 'fallback', payload: { n: 1 } }), 'ok');
    assert.deepEqual(await out.httpSend('explicit', { n: 2 }), { success: true });
    await inbox.atLeast(2);
    assert.deepEqual(inbox.items.map((m) => [m.event, m.payload]).sort(), [
      ['explicit', { n: 2 }],
      ['fallback', { n: 1 }],
    ]);
    const raw = await fetch(`${t.h.info.BASE_URL}/realtime/v1/api/broadcast`, {
      method: 'POST',
      headers: { apikey: t.h.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ topic: 'news' }] }),
    });
    assert.equal(raw.status, 400);
    assert.equal((await raw.json()).code, 'invalid_message');
    const noKey = await fetch(`${t.h.info.BASE_URL}/realtime/v1/api/broadcast`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"messages":[]}',
    });
    assert.equal(noKey.status, 401);
  });

  test('HTTP from a browser on another origin: preflights are 204 without a key, answers allow any origin', async () => {
    const origin = 'http://localhost:3000';
    for (const path of ['/realtime/v1/api/broadcast', '/realtime/v1/api/broadcast/news/events/e?private=true']) {
      const pre = await fetch(`${t.h.info.BASE_URL}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'apikey,authorization,content-type,x-client-info',
        },
      });
      assert.equal(pre.status, 204, path);
      assert.equal(pre.headers.get('access-control-allow-origin'), '*', path);
      assert.match(pre.headers.get('access-control-allow-methods')!, /POST/);
      assert.equal(pre.headers.get('access-control-allow-headers'), 'apikey,authorization,content-type,x-client-info');
    }
    const sent = await fetch(`${t.h.info.BASE_URL}/realtime/v1/api/broadcast`, {
      method: 'POST',
      headers: { origin, apikey: t.h.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ topic: 'news', event: 'e', payload: {} }] }),
    });
    assert.equal(sent.status, 202);
    assert.equal(sent.headers.get('access-control-allow-origin'), '*');
    const refused = await fetch(`${t.h.info.BASE_URL}/realtime/v1/api/broadcast`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: '{"messages":[]}',
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
  });

  test('SQL: realtime.send() and the realtime.broadcast_changes trigger helper', async () => {
    const c = await t.client();
    const inbox = new Inbox();
    const ch = c.channel('sql-room').on('broadcast', { event: '*' }, inbox.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    const v1 = new Inbox();
    const ch1 = (await t.client({ vsn: '1.0.0' })).channel('sql-room').on('broadcast', { event: '*' }, v1.push);
    assert.equal((await subscribed(ch1)).status, 'SUBSCRIBED');
    await t.owner`select realtime.send('{"hello":"sql"}'::jsonb, 'greet', 'sql-room', false)`;
    await inbox.atLeast(1);
    await v1.atLeast(1);
    assert.equal(inbox.items[0].event, 'greet');
    assert.equal(inbox.items[0].payload.hello, 'sql');
    // The realtime.messages id, as meta.id (realtime-js's broadcast typings), over 2.0.0 (binary metadata) and 1.0.0.
    const [sent] = await t.owner`select id from realtime.messages where topic = 'sql-room' and event = 'greet'`;
    assert.deepEqual(inbox.items[0].meta, { id: sent!.id });
    assert.deepEqual(v1.items[0].meta, { id: sent!.id });
    assert.deepEqual(v1.items[0].payload, { hello: 'sql' });
    await t.owner.unsafe(`create table notes (id int primary key, body text);
      create function notes_broadcast() returns trigger language plpgsql as $$ begin
        perform realtime.broadcast_changes('sql-room', tg_op, tg_op, tg_table_name, tg_table_schema, new, old);
        return null; end $$;
      create trigger notes_broadcast after insert or update or delete on notes for each row execute function notes_broadcast();
      insert into notes values (1, 'hi');`);
    // broadcast_changes sends on a private topic (realtime.send's default): a public channel does not hear it.
    const priv = await t.client({ key: t.h.info.SECRET_KEY });
    const privInbox = new Inbox();
    const pch = priv
      .channel('sql-room', { config: { private: true } })
      .on('broadcast', { event: 'UPDATE' }, privInbox.push);
    assert.equal((await subscribed(pch)).status, 'SUBSCRIBED');
    await t.owner`update notes set body = 'there' where id = 1`;
    await privInbox.atLeast(1);
    const p = privInbox.items[0].payload;
    assert.equal(p.operation, 'UPDATE');
    assert.deepEqual([p.record.body, p.old_record.body, p.table, p.schema], ['there', 'hi', 'notes', 'public']);
    const [changed] = await t.owner`select id from realtime.messages where topic = 'sql-room' and event = 'UPDATE'`;
    assert.equal(privInbox.items[0].meta.id, changed!.id);
    await sleep(100);
    assert.equal(inbox.items.length, 1);
  });

  test('broadcast.replication_ready: a system message once changes from the database flow; none without it', async () => {
    const c = await t.client();
    const ready = new Inbox();
    const plain = new Inbox();
    const heard = new Inbox();
    const ch = c
      .channel('ready-room', { config: { broadcast: { replication_ready: true } } })
      .on('system', {}, ready.push)
      .on('broadcast', { event: 'db' }, heard.push);
    const other = c.channel('plain-room').on('system', {}, plain.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    assert.equal((await subscribed(other)).status, 'SUBSCRIBED');
    await ready.atLeast(1);
    assert.deepEqual(ready.items[0], {
      extension: 'system',
      status: 'ok',
      message: 'Replication connection established',
      channel: 'ready-room',
    });
    // Ready means ready: a message sent from SQL right after it arrives.
    await t.owner`select realtime.send('{}'::jsonb, 'db', 'ready-room', false)`;
    await heard.atLeast(1);
    await sleep(100);
    assert.deepEqual(plain.items, []);
    assert.equal(ready.items.length, 1);
  });

  test('binary payloads over vsn 2.0.0 via httpSend', async () => {
    const c = await t.client({ vsn: '2.0.0' });
    const inbox = new Inbox();
    const ch = c.channel('bytes').on('broadcast', { event: 'blob' }, inbox.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    assert.deepEqual(await ch.httpSend('blob', new Uint8Array([1, 2, 3, 250])), { success: true });
    await inbox.atLeast(1);
    assert.deepEqual([...new Uint8Array(inbox.items[0].payload)], [1, 2, 3, 250]);
  });
});

describe('presence', () => {
  test('track, sync, join, leave; a closed socket leaves', async () => {
    const a = await t.client();
    const b = await t.client();
    const joins = new Inbox();
    const leaves = new Inbox();
    const chA = a
      .channel('lobby', { config: { presence: { key: 'alice' } } })
      .on('presence', { event: 'sync' }, () => {})
      .on('presence', { event: 'join' }, joins.push)
      .on('presence', { event: 'leave' }, leaves.push);
    assert.equal((await subscribed(chA)).status, 'SUBSCRIBED');
    assert.equal(await chA.track({ mood: 'happy' }), 'ok');
    const chB = b
      .channel('lobby', { config: { presence: { key: 'bob' } } })
      .on('presence', { event: 'sync' }, () => {});
    assert.equal((await subscribed(chB)).status, 'SUBSCRIBED');
    assert.equal(await chB.track({ mood: 'calm' }), 'ok');
    await joins.atLeast(2);
    const stateAtB = await waitFor(
      () => chB.presenceState(),
      (s) => Object.keys(s).length === 2,
    );
    assert.deepEqual(Object.keys(stateAtB).sort(), ['alice', 'bob']);
    assert.equal((stateAtB.alice![0] as any).mood, 'happy');
    assert.equal(await chB.untrack(), 'ok');
    await leaves.atLeast(1);
    assert.equal(leaves.items[0].key, 'bob');
    await chB.track({ mood: 'back' });
    await joins.atLeast(3);
    await b.realtime.disconnect();
    await leaves.atLeast(2);
    assert.deepEqual(Object.keys(chA.presenceState()), ['alice']);
  });
});

async function waitFor<T>(read: () => T, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = read();
    if (ok(v) || Date.now() > deadline) return v;
    await sleep(25);
  }
}
