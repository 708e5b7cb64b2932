// Two Hearth processes on one control database: a broadcast, a presence
// change and a database change reach subscribers on the other process
// (through NOTIFY on the project database), and presences of a process that
// vanished are swept.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { hubTimers } from '../../src/realtime/hub.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { Inbox, RawSocket, startRealtimeTest, subscribed, type RealtimeTest } from './setup.ts';

let t: RealtimeTest;
let second: TestHearth;
before(async () => {
  hubTimers.presenceKeepaliveMs = 300;
  hubTimers.presenceStaleMs = 1500;
  t = await startRealtimeTest();
  second = await startTestHearth({
    controlDb: t.h.config.controlDb,
    dataDir: t.h.config.dataDir,
    env: { HEARTH_ROLE: 'api' },
  });
  await t.owner.unsafe(`create table items (id int primary key, v text);
    alter publication supabase_realtime add table items;`);
});
after(async () => {
  await second.close();
  await t.close();
});

function clientOn(h: TestHearth) {
  return createClient(h.url, t.h.info.PUBLISHABLE_KEY, {
    realtime: { transport: WebSocket as never, heartbeatIntervalMs: 500 },
    auth: { persistSession: false, autoRefreshToken: false },
  });
}

describe('two processes', () => {
  test('broadcast, presence and database changes cross processes', async () => {
    const one = await t.client();
    const two = clientOn(second);
    const bcast = new Inbox();
    const changes = new Inbox();
    const joins = new Inbox();
    const chTwo = two
      .channel('shared', { config: { presence: { key: 'two' } } })
      .on('broadcast', { event: 'e' }, bcast.push)
      .on('presence', { event: 'join' }, joins.push)
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'items' }, changes.push);
    assert.equal((await subscribed(chTwo)).status, 'SUBSCRIBED');
    const chOne = one
      .channel('shared', { config: { presence: { key: 'one' } } })
      .on('presence', { event: 'sync' }, () => {});
    assert.equal((await subscribed(chOne)).status, 'SUBSCRIBED');
    await chOne.send({ type: 'broadcast', event: 'e', payload: { across: true } });
    await bcast.atLeast(1);
    assert.deepEqual(bcast.items[0].payload, { across: true });
    await chOne.track({ where: 'process one' });
    await joins.atLeast(1);
    assert.equal(joins.items[0].key, 'one');
    // A large broadcast (past NOTIFY's 8000 bytes) goes through realtime.relay.
    const big = 'x'.repeat(20_000);
    await chOne.send({ type: 'broadcast', event: 'e', payload: { big } });
    await bcast.atLeast(2);
    assert.equal(bcast.items[1].payload.big.length, 20_000);
    await t.owner`insert into items values (1, 'one')`;
    await changes.atLeast(1);
    assert.deepEqual(changes.items[0].new, { id: 1, v: 'one' });
    await two.removeAllChannels();
  });

  test("config/realtime enabled=false closes the project's sockets on the other process too", async () => {
    const config = (enabled: boolean | null) =>
      t.h.api('PATCH', `/v1/projects/${t.h.info.PROJECT_REF}/config/realtime`, { body: { enabled } });
    const s = await RawSocket.open(`${second.url}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`);
    assert.equal((await s.call('realtime:there', 'phx_join', {}, '1')).status, 'ok');
    try {
      assert.equal((await config(false)).status, 200);
      const deadline = Date.now() + 5000;
      while (!s.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(s.closed?.code, 1008);
      const refused = await RawSocket.open(
        `${second.url}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`,
      ).catch((e) => e);
      assert.equal(refused.status, 403);
    } finally {
      await config(null);
    }
  });

  test('presences of a process that died (no longer confirmed) are swept and announced as leaves', async () => {
    // What a process that crashed leaves behind: its row, confirmed no more.
    const project = (await t.h.hearth.registry.defaultProject())!;
    await project.sql`insert into realtime.presences (ref, topic, key, meta, node)
      values ('dead-ref', 'o:sweep', 'ghost', '{"phx_ref":"dead-ref"}', 'dead-process')`;
    const watcher = await t.client();
    const leaves = new Inbox();
    const chW = watcher
      .channel('sweep', { config: { presence: { key: 'watcher' } } })
      .on('presence', { event: 'leave' }, leaves.push);
    assert.equal((await subscribed(chW)).status, 'SUBSCRIBED');
    for (let i = 0; i < 100 && !chW.presenceState().ghost; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(Object.keys(chW.presenceState()), ['ghost']);
    await project.sql`update realtime.presences set seen_at = now() - interval '1 minute' where node = 'dead-process'`;
    await leaves.atLeast(1, 8000);
    assert.equal(leaves.items[0].key, 'ghost');
    const [left] = await project.sql`select count(*)::int as n from realtime.presences where node = 'dead-process'`;
    assert.equal(left!.n, 0);
  });

  test('another project under /project/{ref}/: its key only, its own topics; deleting it ends its channels, nothing else', async () => {
    const orgs = await t.h.api('GET', '/v1/organizations');
    const created = await t.h.api('POST', '/v1/projects', {
      body: { name: 'Other', organization_id: orgs.body[0].id },
    });
    const ref = created.body.ref as string;
    const key = (await t.h.api('GET', `/v1/projects/${ref}/api-keys`)).body.find(
      (k: { type: string }) => k.type === 'publishable',
    ).api_key;
    const base = `${t.h.url}/project/${ref}`;
    const wrongKey = await RawSocket.open(`${base}/realtime/v1/websocket?apikey=${t.h.info.PUBLISHABLE_KEY}`).catch(
      (e) => e,
    );
    assert.equal(wrongKey.status, 401);
    const other = createClient(base, key, {
      realtime: { transport: WebSocket as never, heartbeatIntervalMs: 500 },
      auth: { persistSession: false, autoRefreshToken: false },
    });
    const inOther = new Inbox();
    const system = new Inbox();
    const ch = other.channel('shared').on('broadcast', { event: 'e' }, inOther.push).on('system', {}, system.push);
    assert.equal((await subscribed(ch)).status, 'SUBSCRIBED');
    // The default project's topic of the same name is another topic.
    const mine = await t.client();
    const chMine = mine.channel('shared', { config: { broadcast: { ack: true } } });
    assert.equal((await subscribed(chMine)).status, 'SUBSCRIBED');
    await chMine.send({ type: 'broadcast', event: 'e', payload: {} });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(inOther.items.length, 0);
    assert.equal((await t.h.api('DELETE', `/v1/projects/${ref}`, { body: { confirm: ref } })).status, 200);
    await system.atLeast(1, 8000);
    assert.equal(system.items[0].status, 'error');
    await other.removeAllChannels();
    // The process and the default project's channels are unaffected.
    assert.equal(await chMine.send({ type: 'broadcast', event: 'e', payload: {} }), 'ok');
  });
});
