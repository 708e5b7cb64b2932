// Cron jobs with target_kind workflow (SPEC 4.5, 3.2): each fire starts a new
// run of the highest enabled version with the payload as input and no
// idempotency key, so every fire is a distinct run; a fire that cannot start
// a run is recorded failed with the reason. The scheduler and the engine are
// driven directly with explicit times (role api: no background workers).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runDueJobs } from '../../src/cron/scheduler.ts';
import { startOfMinute } from '../../src/cron/schedule.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, tick, wf } from '../workflows/helpers.ts';

const MINUTE = 60_000;
let h: TestHearth;
let base: string;
let t0: number;

before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api' } });
  base = `/v1/projects/${h.info.PROJECT_REF}/cron-jobs`;
  t0 = startOfMinute(h.clock.now()).getTime() + 10 * MINUTE;
});
after(async () => {
  await h?.close();
});

const at = (minutes: number) => new Date(t0 + minutes * MINUTE + 500);
const fire = async (minutes: number, name: string) =>
  (await runDueJobs(h.hearth.p, h.hearth.registry, at(minutes))).filter((f) => f.job === name);
const job = async (name: string) => (await h.api('GET', `${base}/${name}`)).body;

describe('cron workflow targets', () => {
  test('creating a job for a workflow that was never published is 400 workflow_not_found; a bad name is invalid_workflow', async () => {
    const body = { name: 'nightly', schedule: '* * * * *', target_kind: 'workflow', target: 'nowhere', payload: {} };
    const res = await h.api('POST', base, { body });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'workflow_not_found');
    assert.match(res.body.error.message, /no workflow "nowhere"/);
    const bad = await h.api('POST', base, { body: { ...body, target: 'Not A Name' } });
    assert.equal(bad.body.error.code, 'invalid_workflow');
    assert.equal((await h.api('GET', base)).body.length, 0, 'nothing was stored');
  });

  test('every fire starts a distinct run with the payload as input, pinned to the highest enabled version', async () => {
    await enableWorkflows(h);
    const w = wf(h);
    await w.put('report', { steps: [{ key: 'a', kind: 'sql', target: 'select 1' }] });
    await w.put('report', {
      steps: [
        { key: 'a', kind: 'sql', target: 'select 1' },
        { key: 'b', kind: 'sql', target: 'select 2' },
      ],
    });
    await w.put('report', { enabled: false, steps: [{ key: 'c', kind: 'sql', target: 'select 3' }] });
    const created = await h.api('POST', base, {
      body: {
        name: 'report-job',
        schedule: '* * * * *',
        target_kind: 'workflow',
        target: 'report',
        payload: { day: 'mon' },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));

    const first = await fire(0, 'report-job');
    const second = await fire(1, 'report-job');
    assert.deepEqual([first[0]!.status, second[0]!.status], ['succeeded', 'succeeded']);
    const ids = [first[0]!.result, second[0]!.result].map((r) => (r as { run_id: string }).run_id);
    assert.notEqual(ids[0], ids[1], 'two fires, two runs');

    const history = await job('report-job');
    assert.deepEqual(
      history.runs.map((r: { result: { run_id: string } }) => r.result.run_id),
      [ids[1], ids[0]],
    );
    assert.equal(history.last_run.status, 'succeeded');

    for (const id of ids) {
      const run = await w.run('report', id);
      assert.equal(run.status, 'pending');
      assert.equal(run.version, 2);
      assert.deepEqual(run.input, { day: 'mon' });
    }
    const rows = await h.hearth.p.dbs
      .control`select trigger, idempotency_key from platform.workflow_runs where id = any(${ids}::uuid[])`;
    assert.deepEqual(
      rows.map((r) => [r.trigger, r.idempotency_key]),
      [
        ['cron', null],
        ['cron', null],
      ],
    );

    // The runs are ordinary runs: the engine takes them to the end.
    for (let i = 0; i < 3; i++) await tick(h);
    for (const id of ids) assert.equal((await w.run('report', id)).status, 'succeeded');
  });

  test('a fire of a disabled workflow is recorded failed with the reason, and starts nothing', async () => {
    const w = wf(h);
    const before = (await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/workflows/report/runs`)).body.length;
    assert.equal(
      (await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/workflows/report`, { body: { enabled: false } }))
        .status,
      204,
    );
    const [f] = await fire(2, 'report-job');
    assert.equal(f!.status, 'failed');
    const history = await job('report-job');
    assert.equal(history.last_run.status, 'failed');
    assert.match(history.last_run.error, /no enabled version/);
    assert.equal((await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/workflows/report/runs`)).body.length, before);

    // Enabled again, the next fire starts a run again.
    await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/workflows/report`, { body: { enabled: true } });
    const [again] = await fire(3, 'report-job');
    assert.equal(again!.status, 'succeeded');
    assert.equal((await w.run('report', (again!.result as { run_id: string }).run_id)).status, 'pending');
  });

  test('a fire while workflows are off for the project is recorded failed, saying so', async () => {
    await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/workflows`, { body: { enabled: false } });
    try {
      const [f] = await fire(4, 'report-job');
      assert.equal(f!.status, 'failed');
      assert.match((await job('report-job')).last_run.error, /not enabled/);
    } finally {
      await enableWorkflows(h);
    }
  });
});
