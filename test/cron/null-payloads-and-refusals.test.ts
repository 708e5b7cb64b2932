// SPEC 2.14, 4.5 and 8 for cron: a JSON null
// payload reaches the queue and the run as JSON null, @nicknames and a
// seconds field are refused saying why, and bodies that are not JSON are 400
// invalid_request. The scheduler is driven directly (role api: no background
// workers).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { runDueJobs } from '../../src/cron/scheduler.ts';
import { parseSchedule, startOfMinute } from '../../src/cron/schedule.ts';
import type { HearthError } from '../../src/errors.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, wf } from '../workflows/helpers.ts';

const MINUTE = 60_000;
let h: TestHearth;
let db: pg.Client;
let base: string;
let t0: number;

before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api' } });
  base = `/v1/projects/${h.info.PROJECT_REF}/cron-jobs`;
  db = new pg.Client({ connectionString: h.info.DB_URL });
  await db.connect();
  t0 = startOfMinute(h.clock.now()).getTime() + 10 * MINUTE;
});
after(async () => {
  await db?.end();
  await h?.close();
});

const fire = async (minutes: number, name: string) =>
  (await runDueJobs(h.hearth.p, h.hearth.registry, new Date(t0 + minutes * MINUTE + 500))).filter(
    (f) => f.job === name,
  );

describe('a JSON null payload stays JSON null', () => {
  test('enqueue: the message body is JSON null, not SQL NULL', async () => {
    await db.query(`select pgmq.create('nulls')`);
    const created = await h.api('POST', base, {
      body: { name: 'enq-null', schedule: '* * * * *', target_kind: 'enqueue', target: 'nulls', payload: null },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.payload, null);
    const [fired] = await fire(0, 'enq-null');
    assert.equal(fired?.status, 'succeeded');
    const { rows } = await db.query(
      `select message is null as sql_null, jsonb_typeof(message) as type from pgmq.q_nulls`,
    );
    assert.deepEqual(rows, [{ sql_null: false, type: 'null' }]);
  });

  test('workflow: the run input is JSON null, not {}', async () => {
    await enableWorkflows(h);
    await wf(h).put('nightly', { steps: [{ key: 'a', kind: 'sql', target: 'select 1' }] });
    const created = await h.api('POST', base, {
      body: { name: 'wf-null', schedule: '* * * * *', target_kind: 'workflow', target: 'nightly', payload: null },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const [fired] = await fire(1, 'wf-null');
    assert.equal(fired?.status, 'succeeded', JSON.stringify(fired));
    const run = await wf(h).run('nightly', (fired!.result as { run_id: string }).run_id);
    assert.equal(run.input, null);
  });
});

describe('refusals that say why', () => {
  test('@reboot and other nicknames are 400 invalid_schedule naming the nickname', async () => {
    for (const nickname of ['@reboot', '@hourly', '@every 5m']) {
      assert.throws(
        () => parseSchedule(nickname),
        (e: HearthError) =>
          e.status === 400 && e.code === 'invalid_schedule' && /nicknames .* are not supported/.test(e.message),
        nickname,
      );
    }
    const res = await h.api('POST', base, {
      body: { name: 'boot', schedule: '@reboot', target_kind: 'enqueue', target: 'nulls' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_schedule');
    assert.match(res.body.error.message, /@reboot/);
  });

  test('a six-field (seconds) schedule is 400 invalid_schedule saying the granularity is one minute', async () => {
    const res = await h.api('POST', base, {
      body: { name: 'secs', schedule: '*/10 * * * * *', target_kind: 'enqueue', target: 'nulls' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_schedule');
    assert.match(res.body.error.message, /6 fields.*seconds.*one minute/);
  });

  test('a form post is 400 invalid_request, not 415; a number beyond a double is 400 invalid_payload', async () => {
    const form = await h.api('POST', base, {
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.status, 400);
    assert.equal(form.body.error.code, 'invalid_request');
    const huge = await h.api('POST', base, {
      raw: '{"name": "huge", "schedule": "* * * * *", "target_kind": "enqueue", "target": "nulls", "payload": {"n": 1e999}}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(huge.status, 400);
    assert.equal(huge.body.error.code, 'invalid_payload');
    const names = (await h.api('GET', base)).body.map((j: { name: string }) => j.name);
    assert.ok(
      !names.includes('huge') && !names.includes('boot') && !names.includes('secs'),
      'nothing refused was stored',
    );
  });
});
