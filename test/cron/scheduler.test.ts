// The scheduler's tick, driven directly with explicit times: what each fire
// does (a pgmq message, a signed HTTPS webhook), what it records, that it
// catches nothing up, and that two processes on one database fire each minute
// exactly once. Both processes have role api, so no background scheduler runs.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { cronOutboundClient } from '../../src/cron/deliver.ts';
import { runDueJobs, type FireResult } from '../../src/cron/scheduler.ts';
import { startOfMinute } from '../../src/cron/schedule.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { startReceiver, type Receiver, type Received } from './receiver.ts';

const ENV = { HEARTH_ROLE: 'api', HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' };
const MINUTE = 60_000;

let h: TestHearth;
let second: TestHearth;
let receiver: Receiver;
let db: pg.Client;
let base: string;
/** The start of a minute after every job of this file is created (the file runs in seconds). */
let t0: number;

before(async () => {
  receiver = await startReceiver();
  h = await startTestHearth({ env: ENV });
  second = await startTestHearth({ controlDb: h.config.controlDb, dataDir: h.config.dataDir, env: ENV });
  base = `/v1/projects/${h.info.PROJECT_REF}/cron-jobs`;
  db = new pg.Client({ connectionString: h.info.DB_URL });
  await db.connect();
  t0 = startOfMinute(h.clock.now()).getTime() + 10 * MINUTE;
});
after(async () => {
  await db?.end();
  await second?.close();
  await h?.close();
  await receiver?.close();
});

const at = (minutes: number, seconds = 0.5) => new Date(t0 + minutes * MINUTE + seconds * 1000);
const deps = (t: TestHearth) => ({ outbound: cronOutboundClient(t.hearth.p, receiver.cert) });
const tick = (now: Date, t: TestHearth = h) => runDueJobs(t.hearth.p, t.hearth.registry, now, deps(t));

async function create(body: Record<string, unknown>) {
  const res = await h.api('POST', base, { body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

async function job(name: string) {
  const res = await h.api('GET', `${base}/${name}`);
  assert.equal(res.status, 200);
  return res.body;
}

async function drain(queue: string): Promise<Array<{ msg_id: string; message: unknown }>> {
  const { rows } = await db.query(`select msg_id::text, message from pgmq.read($1, 300, 1000)`, [queue]);
  return rows;
}

function verify(r: Received, secret: string): boolean {
  const expected = createHmac('sha256', secret).update(`${r.headers['x-service-timestamp']}.`).update(r.body).digest();
  const given = Buffer.from(String(r.headers['x-service-signature']), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const only = (results: FireResult[], name: string) => results.filter((r) => r.job === name);

describe('what a fire does', () => {
  test('enqueue: the payload lands in the pgmq queue; the run records the message id', async () => {
    await db.query(`select pgmq.create('reports')`);
    await create({
      name: 'enq',
      schedule: '* * * * *',
      target_kind: 'enqueue',
      target: 'reports',
      payload: { task: 'report', n: 1 },
    });
    const fired = only(await tick(at(0)), 'enq');
    assert.equal(fired.length, 1);
    assert.equal(fired[0]!.status, 'succeeded');

    const messages = await drain('reports');
    assert.deepEqual(
      messages.map((m) => m.message),
      [{ task: 'report', n: 1 }],
    );
    const j = await job('enq');
    assert.equal(j.last_run.status, 'succeeded');
    assert.equal(j.last_run.scheduled_for, at(0, 0).toISOString());
    assert.equal(j.last_run.http_status, null);
    assert.equal(j.last_run.error, null);
    assert.equal(j.runs.length, 1);
    // A number, as a workflow enqueue step's output (SPEC 2.9).
    assert.deepEqual(j.runs[0].result, { msg_id: Number(messages[0]!.msg_id) });
    assert.equal(j.runs[0].status, 'succeeded');
    assert.equal(j.runs[0].started_at, at(0).toISOString());
    await h.api('DELETE', `${base}/enq`);
  });

  test('webhook: a signed HTTPS POST of the payload; 2xx recorded as succeeded', async () => {
    const created = await create({
      name: 'hook',
      schedule: '* * * * *',
      target_kind: 'webhook',
      target: `${receiver.base}/ok`,
      payload: { hello: 'wörld' },
    });
    const before = receiver.received.length;
    const fired = only(await tick(at(1)), 'hook');
    assert.deepEqual(
      fired.map((f) => [f.status, f.httpStatus]),
      [['succeeded', 200]],
    );

    const got = receiver.received.slice(before);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.path, '/ok');
    assert.equal(got[0]!.body.toString(), JSON.stringify({ hello: 'wörld' }));
    assert.equal(got[0]!.headers['content-type'], 'application/json');
    assert.match(String(got[0]!.headers['x-service-timestamp']), /^\d+$/);
    assert.ok(
      verify(got[0]!, created.secret),
      'the receiver verifies X-Service-Signature with the secret shown at creation',
    );
    assert.ok(!verify(got[0]!, 'whsec_other'), 'and another secret does not verify');

    const j = await job('hook');
    assert.deepEqual([j.last_run.status, j.last_run.http_status, j.last_run.error], ['succeeded', 200, null]);
    await h.api('DELETE', `${base}/hook`);
  });

  test('webhook: a non-2xx answer is recorded as failed with its status, and not retried', async () => {
    await create({ name: 'broken', schedule: '* * * * *', target_kind: 'webhook', target: `${receiver.base}/fail` });
    const before = receiver.received.length;
    const fired = only(await tick(at(2)), 'broken');
    assert.deepEqual(
      fired.map((f) => [f.status, f.httpStatus]),
      [['failed', 500]],
    );
    assert.equal(receiver.received.length, before + 1);
    const j = await job('broken');
    assert.equal(j.last_run.status, 'failed');
    assert.equal(j.last_run.http_status, 500);
    assert.match(j.last_run.error, /500/);
    assert.equal(j.runs[0].status, 'failed');
    await h.api('DELETE', `${base}/broken`);
  });

  test('webhook: an unreachable receiver is recorded as failed with the error, no HTTP status', async () => {
    await create({ name: 'nobody', schedule: '* * * * *', target_kind: 'webhook', target: 'https://127.0.0.1:1/' });
    const [fired] = only(await tick(at(3)), 'nobody');
    assert.equal(fired!.status, 'failed');
    const j = await job('nobody');
    assert.equal(j.last_run.http_status, null);
    assert.ok(j.last_run.error.length > 0);
    await h.api('DELETE', `${base}/nobody`);
  });

  test('enqueue into a queue dropped since: recorded as failed, saying so', async () => {
    await db.query(`select pgmq.create('shortlived')`);
    await create({ name: 'orphan', schedule: '* * * * *', target_kind: 'enqueue', target: 'shortlived' });
    await db.query(`select pgmq.drop_queue('shortlived')`);
    await tick(at(4));
    const j = await job('orphan');
    assert.equal(j.last_run.status, 'failed');
    assert.match(j.last_run.error, /shortlived.*does not exist/);
    await h.api('DELETE', `${base}/orphan`);
  });
});

describe('when jobs fire', () => {
  test('only in matching minutes, first in the minute after creation, once per minute, with no catch-up', async () => {
    await db.query(`select pgmq.create('ticks')`);
    const t = new Date(t0 + 10 * MINUTE);
    // Every other minute, including t: 60 is even, so this holds across hours.
    const alternate = `${t.getUTCMinutes() % 2}-59/2 * * * *`;
    const created = new Date(
      (
        await create({
          name: 'every',
          schedule: '* * * * *',
          target_kind: 'enqueue',
          target: 'ticks',
          payload: 'every',
        })
      ).created_at,
    );
    // Nothing for the minute that had begun when the job was created.
    const expected = created.getTime() % MINUTE === 0 ? ['every'] : [];
    assert.deepEqual(
      only(await tick(created), 'every').map((r) => r.job),
      expected,
    );
    await create({
      name: 'alternate',
      schedule: alternate,
      target_kind: 'enqueue',
      target: 'ticks',
      payload: 'alternate',
    });

    const names = async (now: Date) =>
      (await tick(now))
        .map((r) => r.job)
        .filter((n) => n === 'every' || n === 'alternate')
        .sort();
    assert.deepEqual(await names(at(10, 0)), ['alternate', 'every']);
    assert.deepEqual(await names(at(10, 59.9)), [], 'the same minute does not fire again');
    assert.deepEqual(await names(at(11, 30)), ['every']);
    // Every process was down for minutes 12 to 15: they are skipped, not caught up.
    assert.deepEqual(await names(at(16, 1)), ['alternate', 'every']);
    const runs = (await job('every')).runs.map((r: { scheduled_for: string }) => r.scheduled_for);
    assert.deepEqual(
      runs,
      [at(16, 0), at(11, 0), at(10, 0)].map((d) => d.toISOString()),
    );
    const messages = (await drain('ticks')).map((m) => m.message).sort();
    assert.deepEqual(messages, ['alternate', 'alternate', 'every', 'every', 'every']);
    await h.api('DELETE', `${base}/every`);
    await h.api('DELETE', `${base}/alternate`);
  });

  test('the run history keeps the newest 20 runs; last_run follows the newest', async () => {
    await db.query(`select pgmq.create('history')`);
    await create({ name: 'often', schedule: '* * * * *', target_kind: 'enqueue', target: 'history' });
    for (let m = 20; m < 45; m++) await tick(at(m));
    const j = await job('often');
    assert.equal(j.runs.length, 20);
    assert.equal(j.runs[0].scheduled_for, at(44, 0).toISOString());
    assert.equal(j.runs[19].scheduled_for, at(25, 0).toISOString());
    assert.equal(j.last_run.scheduled_for, at(44, 0).toISOString());
    const [{ n }] = await h.hearth.p.dbs.control`select count(*)::int as n from platform.cron_fires f
      join platform.cron_jobs j on j.id = f.job_id where j.name = 'often'`;
    assert.equal(n, 20);
    await h.api('DELETE', `${base}/often`);
  });
});

describe('several processes on one database', () => {
  test('each job fires exactly once per minute when two processes tick at the same instant', async () => {
    await db.query(`select pgmq.create('shared')`);
    const names = ['s1', 's2', 's3', 's4', 's5'];
    for (const name of names)
      await create({ name, schedule: '* * * * *', target_kind: 'enqueue', target: 'shared', payload: name });
    await create({
      name: 'shared-hook',
      schedule: '* * * * *',
      target_kind: 'webhook',
      target: `${receiver.base}/ok`,
      payload: 'hook',
    });
    const before = receiver.received.length;

    for (const m of [50, 51, 52]) {
      const [a, b] = await Promise.all([tick(at(m, 0.2), h), tick(at(m, 0.2), second)]);
      const fired = [...a, ...b].map((r) => r.job).sort();
      assert.deepEqual(fired, [...names, 'shared-hook'].sort(), `minute ${m}`);
    }
    const messages = (await drain('shared')).map((m) => m.message as string);
    assert.equal(messages.length, 15);
    for (const name of names) assert.equal(messages.filter((m) => m === name).length, 3, name);
    assert.equal(receiver.received.length - before, 3);
    const j = await job('shared-hook');
    assert.equal(j.runs.length, 3);
    assert.ok(j.runs.every((r: { status: string }) => r.status === 'succeeded'));
  });
});
