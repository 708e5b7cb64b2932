// Limits from config/realtime and bad input: each refusal is an error reply
// with a code; the socket (unless it is the slow one) and every other socket
// go on working.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { socketLimits } from '../../src/realtime/connection.ts';
import { Inbox, RawSocket, sleep, startRealtimeTest, subscribed, type RealtimeTest } from './setup.ts';

let t: RealtimeTest;
before(async () => {
  t = await startRealtimeTest();
});
after(() => t.close());

const url = () => `${t.h.info.BASE_URL}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`;
const config = (body: Record<string, unknown>) =>
  t.h.api('PATCH', `/v1/projects/${t.h.info.PROJECT_REF}/config/realtime`, { body });
const DEFAULTS = {
  enabled: null,
  max_concurrent_users: null,
  max_channels_per_client: null,
  max_joins_per_second: null,
  max_events_per_second: null,
  max_payload_size_in_kb: null,
};

/** A healthy socket: joins and hears its own broadcast. */
async function stillWorks(): Promise<void> {
  const s = await RawSocket.open(url());
  assert.equal(
    (await s.call('realtime:health', 'phx_join', { config: { broadcast: { self: true, ack: true } } }, '1')).status,
    'ok',
  );
  assert.equal(
    (await s.call('realtime:health', 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, '1')).status,
    'ok',
  );
  s.close();
}

describe('config/realtime', () => {
  beforeEach(async () => void (await config(DEFAULTS)));

  test('defaults are shown; a bad value is 400 naming the field', async () => {
    const res = await t.h.api('GET', `/v1/projects/${t.h.info.PROJECT_REF}/config/realtime`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      enabled: true,
      max_concurrent_users: 200,
      max_channels_per_client: 100,
      max_joins_per_second: 100,
      max_events_per_second: 100,
      max_payload_size_in_kb: 256,
    });
    const bad = await config({ max_events_per_second: 0 });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /max_events_per_second/);
  });

  test('enabled=false: open sockets are closed, new ones and HTTP broadcasts refused; enabled again, all works', async () => {
    const s = await RawSocket.open(url());
    assert.equal((await s.call('realtime:x', 'phx_join', {}, '1')).status, 'ok');
    const c = await t.client();
    const system = new Inbox();
    const ch = c.channel('x').on('system', {}, system.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    assert.equal((await config({ enabled: false })).status, 200);
    // Each channel is told why, then the socket is closed (realtime-js retries, and is refused while disabled).
    await system.atLeast(1);
    assert.equal(system.items[0].status, 'error');
    assert.match(system.items[0].message, /^RealtimeDisabledForTenant: /);
    const deadline = Date.now() + 5000;
    while (!s.closed && Date.now() < deadline) await sleep(20);
    assert.deepEqual(s.closed, {
      code: 1008,
      reason: 'RealtimeDisabledForTenant: Realtime is disabled for this project (config/realtime enabled)',
    });
    assert.ok(s.frames.some((f) => f.event === 'system' && /^RealtimeDisabledForTenant/.test(f.payload.message)));
    const refused = await RawSocket.open(url()).catch((e) => e);
    assert.equal(refused.status, 403);
    assert.equal(JSON.parse(refused.body).code, 'realtime_disabled');
    const res = await fetch(`${t.h.info.BASE_URL}/realtime/v1/api/broadcast/x/events/e`, {
      method: 'POST',
      headers: { apikey: t.h.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).code, 'realtime_disabled');
    await c.removeAllChannels();
    await config({ enabled: true });
    await stillWorks();
  });

  test('max_concurrent_users: the socket past it has its joins refused', async () => {
    await config({ max_concurrent_users: 2 });
    const a = await RawSocket.open(url());
    const b = await RawSocket.open(url());
    const c = await RawSocket.open(url());
    assert.equal((await a.call('realtime:x', 'phx_join', {}, '1')).status, 'ok');
    const refused = await c.call('realtime:x', 'phx_join', {}, '1');
    assert.match(refused.response.reason, /^ConnectionRateLimitReached:/);
    for (const s of [a, b, c]) s.close();
    await sleep(100);
    await stillWorks();
  });

  test('max_joins_per_second and max_channels_per_client', async () => {
    await config({ max_joins_per_second: 3 });
    const s = await RawSocket.open(url());
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => s.call(`realtime:j${i}`, 'phx_join', {}, String(i))),
    );
    const refused = replies.filter((r) => r.status === 'error');
    assert.ok(refused.length >= 4, `${refused.length} refused`);
    for (const r of refused) assert.match(r.response.reason, /^ClientJoinRateLimitReached:/);
    s.close();
    await config({ max_joins_per_second: null, max_channels_per_client: 5 });
    const s2 = await RawSocket.open(url());
    const r2 = [];
    for (let i = 0; i < 6; i++) r2.push(await s2.call(`realtime:c${i}`, 'phx_join', {}, String(i)));
    assert.deepEqual(
      r2.map((r) => r.status),
      ['ok', 'ok', 'ok', 'ok', 'ok', 'error'],
    );
    assert.match(r2[5].response.reason, /^ChannelRateLimitReached:/);
    s2.close();
  });

  test('max_events_per_second and max_payload_size_in_kb', async () => {
    await config({ max_events_per_second: 5, max_payload_size_in_kb: 1 });
    const s = await RawSocket.open(url());
    assert.equal((await s.call('realtime:e', 'phx_join', { config: { broadcast: { ack: true } } }, '1')).status, 'ok');
    const big = await s.call(
      'realtime:e',
      'broadcast',
      { type: 'broadcast', event: 'e', payload: { x: 'y'.repeat(2000) } },
      '1',
    );
    assert.match(big.response.reason, /^PayloadTooLarge:/);
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        s.call('realtime:e', 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, '1'),
      ),
    );
    const refused = replies.filter((r) => r.status === 'error');
    assert.ok(refused.length >= 10, `${refused.length} refused`);
    for (const r of refused) assert.match(r.response.reason, /^RateLimitReached:/);
    assert.deepEqual(await s.call('phoenix', 'heartbeat'), { status: 'ok', response: {} });
    s.close();
  });

  test('max_events_per_second also bounds the HTTP broadcast API: 429 too_many_requests, in Supabase BatchBroadcast words', async () => {
    await config({ max_events_per_second: 5 });
    const post = async (n: number) => {
      const res = await fetch(`${t.h.info.BASE_URL}/realtime/v1/api/broadcast`, {
        method: 'POST',
        headers: { apikey: t.h.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({
          messages: Array.from({ length: n }, (_, i) => ({ topic: 'rate', event: 'e', payload: { i } })),
        }),
      });
      return { status: res.status, body: res.status === 202 ? null : await res.json() };
    };
    const s = await RawSocket.open(url());
    assert.equal(
      (await s.call('realtime:rate', 'phx_join', { config: { broadcast: { ack: true } } }, '1')).status,
      'ok',
    );
    // (The window is one second: start just after one begins.)
    await sleep(1000 - (Date.now() % 1000) + 20);
    const tooBig = await post(6);
    assert.equal(tooBig.status, 429);
    assert.equal(tooBig.body.code, 'too_many_requests');
    assert.match(tooBig.body.message, /^Too many messages to broadcast, please reduce the batch size/);
    assert.equal(tooBig.body.error, tooBig.body.message);
    assert.equal((await post(5)).status, 202);
    // A socket's messages count against the same figure.
    const ws = await s.call('realtime:rate', 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, '1');
    assert.match(ws.response.reason, /^RateLimitReached:/);
    s.close();
    const over = await post(1);
    assert.deepEqual(over, {
      status: 429,
      body: {
        error: 'You have exceeded your rate limit',
        code: 'too_many_requests',
        message: 'You have exceeded your rate limit',
      },
    });
    // The next second, it is allowed again.
    await sleep(1000 - (Date.now() % 1000) + 20);
    assert.equal((await post(5)).status, 202);
  });
});

describe('bad input', () => {
  beforeEach(async () => void (await config(DEFAULTS)));

  test('malformed frames, unknown events, a 10 KB topic: error replies, the socket lives on', async () => {
    const s = await RawSocket.open(url());
    const v2 = await RawSocket.open(url(), '2.0.0');
    for (const [sock, frame] of [
      [s, 'not json'],
      [s, '[1,2,3]'],
      [s, '{"topic":5,"event":"x"}'],
      [v2, '{"topic":"a"}'],
      [v2, Buffer.from([9, 9, 9])],
      [v2, Buffer.from([3, 200, 0, 0, 0, 0, 1])],
      [s, Buffer.from([3, 0, 0, 0, 0, 0, 1])],
    ] as const) {
      const n = sock.frames.length;
      sock.sendRaw(frame);
      await sock.inbox.atLeast(n + 1);
      const f = sock.frames[n];
      assert.equal(f.event, 'phx_reply', String(frame));
      assert.equal(f.payload.status, 'error');
      assert.match(f.payload.response.reason, /^MalformedMessage:/);
    }
    const long = await s.call(`realtime:${'x'.repeat(10_000)}`, 'phx_join', {}, '1');
    assert.match(long.response.reason, /^TopicTooLong:/);
    const wrongPrefix = await s.call('room', 'phx_join', {}, '1');
    assert.match(wrongPrefix.response.reason, /^UnknownTopic:/);
    assert.equal((await s.call('realtime:ok', 'phx_join', {}, '2')).status, 'ok');
    const presence = await s.call('realtime:ok', 'presence', { type: 'presence', event: 'dance' }, '2');
    assert.match(presence.response.reason, /^UnknownPresenceEvent:/, JSON.stringify(presence));
    const track = await s.call('realtime:ok', 'presence', { type: 'presence', event: 'track', payload: [1] }, '2');
    assert.match(track.response.reason, /^InvalidPresence:/);
    assert.deepEqual(await s.call('phoenix', 'heartbeat'), { status: 'ok', response: {} });
    s.close();
    v2.close();
    await stillWorks();
  });

  test('1,000 joins on one socket: the first 100 join, every other gets an error reply', async () => {
    await config({ max_joins_per_second: 100_000 });
    const s = await RawSocket.open(url());
    const replies = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => s.call(`realtime:many${i}`, 'phx_join', {}, String(i))),
    );
    assert.equal(replies.filter((r) => r.status === 'ok').length, 100);
    const refused = replies.filter((r) => r.status === 'error');
    assert.equal(refused.length, 900);
    assert.ok(refused.every((r) => /^(ChannelRateLimitReached|TooManyPendingMessages):/.test(r.response.reason)));
    s.close();
    await stillWorks();
    await config(DEFAULTS);
  });

  test('a slow client is disconnected instead of buffered without bound; others go on', async () => {
    // Joins too: the test before spent this second's joins of the project.
    await config({ max_events_per_second: 100_000, max_joins_per_second: 100_000 });
    const saved = socketLimits.maxBufferedBytes;
    socketLimits.maxBufferedBytes = 256 * 1024;
    try {
      const slow = await RawSocket.open(url());
      assert.equal((await slow.call('realtime:flood', 'phx_join', {}, '1')).status, 'ok');
      const fast = await t.client();
      const inbox = new Inbox();
      const listener = await t.client();
      const chL = listener.channel('flood').on('broadcast', { event: 'e' }, inbox.push);
      assert.equal((await subscribed(chL)).status, 'SUBSCRIBED');
      const ch = fast.channel('flood', { config: { broadcast: { ack: true } } });
      assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
      (slow.ws as any)._socket.pause(); // the client stops reading
      const payload = { x: 'z'.repeat(50_000) };
      for (let i = 0; i < 200; i++) assert.equal(await ch.send({ type: 'broadcast', event: 'e', payload }), 'ok');
      // A client that reads gets everything.
      await inbox.atLeast(200, 15_000);
      (slow.ws as any)._socket.resume();
      const deadline = Date.now() + 10_000;
      while (!slow.closed && Date.now() < deadline) await sleep(50);
      assert.ok(slow.closed, 'the slow socket was closed');
      assert.ok(slow.frames.length < 200, `${slow.frames.length} frames reached the slow client`);
    } finally {
      socketLimits.maxBufferedBytes = saved;
      await config(DEFAULTS);
    }
  });
});
