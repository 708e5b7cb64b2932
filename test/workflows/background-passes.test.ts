// The engine as a worker process runs it (startEngine): ticks lease and start
// passes without waiting for them, so one slow step holds up no other run,
// in its project or another; a run whose pass is still going is not leased
// again by the same engine; stop() waits for the passes under way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { LEASE_MS, startEngine } from '../../src/workflows/engine.ts';
import type { Worker } from '../../src/periodic.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { enableWorkflows, wf } from './helpers.ts';

const TICK_MS = 100;
let h: TestHearth;
let owner: postgres.Sql;
let otherRef: string;
let engine: Worker | null = null;

before(async () => {
  // The server's own engine never ticks here: each test starts one with a short tick.
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000' } });
  await enableWorkflows(h);
  const orgs = await h.api('GET', '/v1/organizations');
  otherRef = (await h.api('POST', '/v1/projects', { body: { name: 'Other', organization_id: orgs.body[0].id } })).body
    .ref;
  await enableWorkflows(h, otherRef);
  owner = postgres(h.info.DB_URL, { max: 2, onnotice: () => {} });
});
after(async () => {
  await engine?.stop();
  await owner?.end();
  await h?.close();
});

/** A step that runs until a row appears in `gate` (one statement, polling every 50 ms). */
async function gatedStep(gate: string) {
  await owner.unsafe(`create table ${gate} (open boolean)`);
  const target = `do $$ begin while not exists (select 1 from ${gate}) loop perform pg_sleep(0.05); end loop; end $$`;
  return { key: 'slow', kind: 'sql', target, timeout_seconds: 300 };
}

const isRunning = (run: { steps: { status: string }[] }) => run.steps[0]!.status === 'running';

describe('passes run beside the ticks', () => {
  test('a slow step holds up no other run: quick runs in its project and in another finish meanwhile', async () => {
    const w = wf(h);
    const w2 = wf(h, otherRef);
    const slow = await w.go('slow', [await gatedStep('slow_gate')]);
    engine = startEngine(h.hearth.p, h.hearth.registry, TICK_MS);
    assert.ok(isRunning(await until(() => w.run('slow', slow), isRunning)), 'the slow step is under way');

    const quick = await w.go('quick', [
      { key: 'a', kind: 'sql', target: 'select 1' },
      { key: 'b', kind: 'sql', target: 'select 2' },
    ]);
    const elsewhere = await w2.go('quick', [{ key: 'a', kind: 'sql', target: 'select 1' }]);
    const done = (run: { status: string }) => run.status === 'succeeded';
    assert.equal((await until(() => w.run('quick', quick), done)).status, 'succeeded', 'the same project');
    assert.equal((await until(() => w2.run('quick', elsewhere), done)).status, 'succeeded', 'another project');
    assert.ok(isRunning(await w.run('slow', slow)), 'the slow step is still running');

    await owner`insert into slow_gate values (true)`;
    const run = await until(
      () => w.run('slow', slow),
      (r) => r.status === 'succeeded',
    );
    assert.equal(run.status, 'succeeded');
    assert.equal(run.steps[0].attempt, 1);
    await engine.stop();
    engine = null;
  });

  test('a run whose pass outlives its lease is not leased again by the same engine', async () => {
    const w = wf(h);
    const id = await w.go('outlived', [await gatedStep('outlived_gate')]);
    engine = startEngine(h.hearth.p, h.hearth.registry, TICK_MS);
    await until(() => w.run('outlived', id), isRunning);
    // Past the lease (300 s timeout + margin): without the in-flight check the next tick would take
    // the run again under the same owner, count the attempt as interrupted and start a second one.
    h.clock.advance(300_000 + 2 * LEASE_MS);
    await new Promise((r) => setTimeout(r, 5 * TICK_MS));
    let run = await w.run('outlived', id);
    assert.deepEqual([run.steps[0].status, run.steps[0].attempt], ['running', 1]);

    await owner`insert into outlived_gate values (true)`;
    run = await until(
      () => w.run('outlived', id),
      (r) => r.status === 'succeeded',
    );
    assert.equal(run.status, 'succeeded');
    assert.equal(run.steps[0].attempt, 1);
    await engine.stop();
    engine = null;
  });

  test('stop() waits for the passes under way to be written back', async () => {
    const w = wf(h);
    const id = await w.go('draining', [await gatedStep('draining_gate')]);
    engine = startEngine(h.hearth.p, h.hearth.registry, TICK_MS);
    await until(() => w.run('draining', id), isRunning);
    let stopped = false;
    const stopping = engine.stop().then(() => {
      stopped = true;
    });
    engine = null;
    await new Promise((r) => setTimeout(r, 3 * TICK_MS));
    assert.equal(stopped, false, 'stop() waits while the step runs');
    await owner`insert into draining_gate values (true)`;
    await stopping;
    const run = await w.run('draining', id);
    assert.deepEqual([run.status, run.steps[0].status], ['succeeded', 'succeeded']);
  });
});
