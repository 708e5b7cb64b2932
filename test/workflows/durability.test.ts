// Durability (issue 8, SPEC 3.2): a real worker process killed with SIGKILL in
// the middle of a step, the engine's database connections terminated mid-step
// (what a PostgreSQL restart does to them), a function that does not answer,
// the 30-day retention of finished runs, and the per-run step ceiling.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { pruneRuns } from '../../src/workflows/engine.ts';
import { startRun } from '../../src/workflows/runs.ts';
import type { FunctionInvoker } from '../../src/workflows/steps/action.ts';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, tick, wf } from './helpers.ts';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'worker-process.ts');
const DAY = 86400_000;

let h: TestHearth;
let owner: postgres.Sql;
let admin: postgres.Sql;
let projectDb: string;
const children: ChildProcess[] = [];

before(async () => {
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000' } });
  await enableWorkflows(h);
  projectDb = h.hearth.project.db_name;
  owner = postgres(h.info.DB_URL, { max: 2, onnotice: () => {} });
  admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
});
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await owner?.end();
  await admin?.end();
  await h?.close();
});

const w = () => wf(h);

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Backends of the project database busy in a statement containing `marker`. */
async function busyWith(marker: string): Promise<number> {
  const [row] = await admin`select count(*)::int as n from pg_stat_activity
    where datname = ${projectDb} and state = 'active' and query like ${`%${marker}%`} and pid <> pg_backend_pid()`;
  return row!.n as number;
}

/** A statement that sleeps (5 minutes) until the gate table has a row, then records one row. */
const gated = (gate: string, table: string) =>
  `insert into ${table} (note) select 'done' from pg_sleep(case when exists (select 1 from ${gate}) then 0 else 300 end)`;

describe('crashes', () => {
  test('a worker process killed with SIGKILL mid-step: another resumes after the lease, the attempt counts, the effect commits once', async () => {
    await owner.unsafe(
      'create table charges (id serial primary key, note text); create table charge_gate (open boolean)',
    );
    const id = await w().go('pay', [
      { key: 'charge', kind: 'sql', target: gated('charge_gate', 'charges'), timeout_seconds: 120 },
    ]);

    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      env: {
        ...process.env,
        DATABASE_URL: serverUrl(),
        HEARTH_CONTROL_DB: h.config.controlDb,
        HEARTH_DATA_DIR: h.config.dataDir,
        HEARTH_WORKFLOW_TICK_MS: '100',
        HEARTH_LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));

    // The child's engine leases the run, records the attempt as started, and is inside the statement.
    const started = await until('the child to start the attempt', async () => {
      if (child.exitCode !== null) throw new Error(`the worker process exited: ${stderr}`);
      const run = await w().run('pay', id);
      return run.steps[0].status === 'running' && (await busyWith('charge_gate')) === 1 ? run : null;
    });
    assert.equal(started.steps[0].attempt, 1);
    const [lease] = await h.hearth.p.dbs
      .control`select lease_owner, lease_until from platform.workflow_runs where id = ${id}`;
    assert.match(lease!.lease_owner as string, new RegExp(`:${child.pid}:`), 'the run is leased by the child process');

    child.kill('SIGKILL');
    const [, signal] = await once(child, 'exit');
    assert.equal(signal, 'SIGKILL');
    // Its backend is still sleeping; ending it rolls the uncommitted insert back, as a crash would.
    await admin`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = ${projectDb} and state = 'active' and query like '%charge_gate%' and pid <> pg_backend_pid()`;
    await until('the orphaned statement to end', async () => (await busyWith('charge_gate')) === 0);
    assert.equal(
      (await owner`select count(*)::int as n from charges`)[0]!.n,
      0,
      'the interrupted attempt committed nothing',
    );

    // Before the lease expires, no other worker touches the run.
    await tick(h, { owner: 'survivor' });
    let run = await w().run('pay', id);
    assert.deepEqual([run.status, run.steps[0].status, run.steps[0].attempt], ['running', 'running', 1]);

    await owner`insert into charge_gate values (true)`;
    h.clock.advance((lease!.lease_until as Date).getTime() - h.clock.now().getTime() + 1000);
    await tick(h, { owner: 'survivor' });
    run = await w().run('pay', id);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.steps[0].attempt, 2, 'the attempt cut short by the crash counts');
    assert.deepEqual(run.output, { rows_affected: 1 });
    assert.equal((await owner`select count(*)::int as n from charges`)[0]!.n, 1);
  });

  test("the engine's connections terminated mid-step (pg_terminate_backend): the attempt fails with the reason; retried it succeeds, out of attempts the run fails", async () => {
    await owner.unsafe('create table marks (note text); create table mark_gate (open boolean)');
    const stmt = gated('mark_gate', 'marks');
    const single = await w().go('cut-once', [{ key: 's', kind: 'sql', target: stmt, max_attempts: 1 }]);
    const retried = await w().go('cut-retry', [{ key: 's', kind: 'sql', target: stmt, max_attempts: 3 }]);

    const ticking = tick(h);
    await until('both statements to run', async () => (await busyWith('mark_gate')) === 2);
    // Every client backend of the control and project databases (but the change listener), as a restart would.
    const [killed] = await admin`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname in (${h.config.controlDb}, ${projectDb}) and backend_type = 'client backend'
        and pid <> pg_backend_pid() and query not ilike 'listen%'`;
    assert.ok((killed!.n as number) >= 3, `terminated ${killed!.n} backends`);
    await ticking;

    const failed = await w().run('cut-once', single);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.compensation.state, 'none');
    assert.deepEqual([failed.steps[0].status, failed.steps[0].attempt], ['failed', 1]);
    // The backend's FATAL 57P01, or the closed socket, whichever the driver sees first.
    assert.match(
      failed.last_error,
      /step "s" failed after 1 attempt: SQL error (57P01: terminating connection due to administrator command|CONNECTION_CLOSED)/,
    );

    let run = await w().run('cut-retry', retried);
    assert.deepEqual([run.status, run.steps[0].status, run.steps[0].attempt], ['running', 'pending', 1]);
    assert.match(run.steps[0].error, /57P01|CONNECTION_CLOSED/);
    await owner`insert into mark_gate values (true)`;
    h.clock.advance(2000);
    await tick(h);
    run = await w().run('cut-retry', retried);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.steps[0].attempt, 2);
    assert.equal((await owner`select count(*)::int as n from marks`)[0]!.n, 1, 'only the retry committed');
  });

  test('a sql statement that outlives timeout_seconds: the attempt fails with the reason and the statement is cancelled in the database', async () => {
    const id = await w().go('slowsql', [
      { key: 'q', kind: 'sql', target: 'select pg_sleep(30) as slow_marker', timeout_seconds: 1, max_attempts: 1 },
    ]);
    await tick(h);
    const run = await w().run('slowsql', id);
    assert.equal(run.status, 'failed');
    assert.match(run.last_error, /step "q" failed after 1 attempt: .*did not finish within timeout_seconds \(1 s\)/);
    await until('the statement to be cancelled', async () => (await busyWith('slow_marker')) === 0, 5000);
  });

  test('a function that does not answer within timeout_seconds: each attempt fails with the reason, then the run fails', async () => {
    // An invoker that never answers stands in for a hung function (the engine bounds the attempt either way).
    const hang: FunctionInvoker = () => new Promise(() => {});
    const id = await w().go('slowfn', [
      { key: 'f', kind: 'function', target: 'slow', timeout_seconds: 1, max_attempts: 2 },
    ]);
    await tick(h, { invoker: hang });
    let run = await w().run('slowfn', id);
    assert.deepEqual([run.status, run.steps[0].status, run.steps[0].attempt], ['running', 'pending', 1]);
    assert.match(run.steps[0].error, /did not finish within timeout_seconds \(1 s\)/);
    h.clock.advance(2000);
    await tick(h, { invoker: hang });
    run = await w().run('slowfn', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.steps[0].attempt, 2);
    assert.match(
      run.last_error,
      /step "f" failed after 2 attempts: The attempt did not finish within timeout_seconds \(1 s\)/,
    );
  });
});

describe('step ceiling', () => {
  test('a run that reaches its ceiling of step attempts fails as a structural failure, without compensation', async () => {
    await owner.unsafe('create table undo_log (step text)');
    const id = await w().go('flaky', [
      {
        key: 'book',
        kind: 'sql',
        target: 'select 1',
        compensate: { kind: 'sql', target: "insert into undo_log values ('book')" },
      },
      { key: 'retry', kind: 'sql', target: 'select 1/0', max_attempts: 10 },
    ]);
    for (let i = 0; i < 8; i++) {
      await tick(h, { stepCeiling: 4 });
      h.clock.advance(20_000);
    }
    const run = await w().run('flaky', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.compensation.state, 'none');
    assert.match(run.last_error, /ceiling of 4 step attempts/);
    assert.equal(run.steps.find((s: { key: string }) => s.key === 'retry').attempt, 3, 'book 1 + retry 3 = 4 attempts');
    assert.equal(run.steps.filter((s: { compensating: boolean }) => s.compensating).length, 0);
    assert.equal((await owner`select count(*)::int as n from undo_log`)[0]!.n, 0, 'nothing was undone');
  });

  test('fan-out children never take a run past its ceiling', async () => {
    const children = Array.from({ length: 5 }, (_, i) => ({ key: `c${i}`, kind: 'sql', target: 'select 1' }));
    const id = await w().go('wide-ceiling', [
      { key: 'f', kind: 'fanout', children },
      { key: 'j', kind: 'join' },
    ]);
    for (let i = 0; i < 4; i++) await tick(h, { stepCeiling: 3 });
    const run = await w().run('wide-ceiling', id);
    assert.equal(run.status, 'failed');
    assert.match(run.last_error, /ceiling of 3 step attempts/);
    const kids = run.steps.filter((s: { parent_step_id?: string }) => s.parent_step_id);
    assert.equal(
      kids.reduce((n: number, s: { attempt: number }) => n + s.attempt, 0),
      3,
      '3 child attempts in all',
    );
    assert.equal(kids.filter((s: { status: string }) => s.status === 'skipped').length, 2);
  });

  test('the default ceiling is 10,000 attempts of side-effecting steps', async () => {
    const id = await w().go('worn', [
      { key: 'a', kind: 'sql', target: 'select 1' },
      { key: 'b', kind: 'sql', target: 'select 1' },
    ]);
    // As if step a had been retried 9,999 times: its next attempt is the 10,000th.
    await h.hearth.p.dbs
      .control`update platform.workflow_run_steps set attempt = 9999, max_attempts = 10000 where run_id = ${id} and key = 'a'`;
    await tick(h);
    let run = await w().run('worn', id);
    assert.deepEqual([run.status, run.steps[0].status, run.steps[0].attempt], ['running', 'succeeded', 10000]);
    await tick(h);
    run = await w().run('worn', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.steps[1].status, 'skipped');
    assert.match(run.last_error, /ceiling of 10000 step attempts/);
  });
});

describe('retention', () => {
  test('finished runs, their steps and signals are removed 30 days after finishing; active and younger runs stay', async () => {
    const ok = await w().go('keep-ok', [{ key: 's', kind: 'sql', target: 'select 1' }]);
    const bad = await w().go('keep-bad', [{ key: 's', kind: 'sql', target: 'select 1/0', max_attempts: 1 }]);
    const parked = await w().go('keep-parked', [
      { key: 'w', kind: 'wait_for_signal', signal: 'never', timeout_seconds: 30 * 86400 },
    ]);
    const gone = (await w().start('keep-parked')).body.id;
    await w().signal('keep-parked', gone, { signal: 'other', payload: 1 });
    await w().cancel('keep-parked', gone);
    for (let i = 0; i < 3; i++) await tick(h);
    assert.equal((await w().run('keep-ok', ok)).status, 'succeeded');
    assert.equal((await w().run('keep-bad', bad)).status, 'failed');
    assert.equal((await w().run('keep-parked', parked)).status, 'waiting');
    const old = [ok, bad, gone];

    // From here on the clock is 29+ days ahead, past the management session: read the rows directly.
    const control = h.hearth.p.dbs.control;
    const runs = async (ids: string[]) =>
      (await control`select id, status from platform.workflow_runs where id = any(${ids}::uuid[]) order by id`).map(
        (r) => r.status as string,
      );
    h.clock.advance(29 * DAY);
    await pruneRuns(h.hearth.p);
    assert.equal((await runs(old)).length, 3, 'kept before 30 days');
    const { id: young } = await startRun(h.hearth.p, h.hearth.project, 'keep-ok');
    await tick(h);

    h.clock.advance(DAY + 60_000);
    await pruneRuns(h.hearth.p);
    assert.deepEqual(await runs(old), [], 'removed 30 days after finishing');
    assert.equal(
      (await control`select count(*)::int as n from platform.workflow_run_steps where run_id = any(${old}::uuid[])`)[0]!
        .n,
      0,
    );
    assert.equal(
      (await control`select count(*)::int as n from platform.workflow_signals where run_id = any(${old}::uuid[])`)[0]!
        .n,
      0,
    );
    assert.deepEqual(await runs([parked]), ['waiting'], 'an active run is never removed');
    assert.deepEqual(await runs([young]), ['succeeded'], 'a run finished 1 day ago stays');
  });
});
