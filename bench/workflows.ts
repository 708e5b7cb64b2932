/**
 * Workflow engine throughput: 1,000 runs of 5 sql steps across 10 projects,
 * advanced by back-to-back engine ticks (a 0-ms tick), beside graphile-worker
 * running 5,000 equivalent jobs (one `select 1` each) on the same server.
 * Also, per step: transactions committed (the control database's counted
 * through postgres.js's debug hook, plus the sql step's own in the project
 * database; pg_stat_database reports a backend's counts only after it has
 * idled up to 10 s, and under-counted), statements the engine sent to the
 * control database (the bench's own progress query is left out of both), CPU
 * ms of this process; and the delay from a due timer to its next step starting.
 */
import { Logger, makeWorkerUtils, run as runWorker } from 'graphile-worker';
import postgres from 'postgres';
import { engineTick } from '../src/workflows/engine.ts';
import { startTestHearth } from '../test/helpers/hearth.ts';

const PROJECTS = 10;
const RUNS_PER_PROJECT = 100;
const STEPS = 5;
const JOBS = 5000;

export async function benchWorkflows(): Promise<string[]> {
  const h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000' } });
  const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  const lines: string[] = [];
  try {
    const orgs = await h.api('GET', '/v1/organizations');
    const refs = [h.info.PROJECT_REF];
    for (let i = 1; i < PROJECTS; i++)
      refs.push(
        (await h.api('POST', '/v1/projects', { body: { name: `bench${i}`, organization_id: orgs.body[0].id } })).body
          .ref,
      );
    const steps = Array.from({ length: STEPS }, (_, i) => ({ key: `s${i}`, kind: 'sql', target: 'select 1' }));
    for (const ref of refs) {
      await h.api('PATCH', `/v1/projects/${ref}/config/workflows`, { body: { enabled: true } });
      await h.api('PUT', `/v1/projects/${ref}/workflows/bench`, { body: { steps } });
      await Promise.all(
        Array.from({ length: RUNS_PER_PROJECT }, () =>
          h.api('POST', `/v1/projects/${ref}/workflows/bench/runs`, { body: {} }),
        ),
      );
    }
    const control = h.hearth.p.dbs.control;
    let statements = 0;
    let controlCommits = 0;
    let ticks = 0;
    // Commits counted exactly: a statement outside BEGIN..COMMIT is a transaction of its own.
    const inTx = new Set<number>();
    control.options.debug = ((connection: number, query: string) => {
      statements++;
      const q = query.trim().toLowerCase();
      if (q.startsWith('begin')) inTx.add(connection);
      else if (q === 'commit' || q === 'rollback') {
        inTx.delete(connection);
        controlCommits += q === 'commit' ? 1 : 0;
      } else if (!inTx.has(connection)) controlCommits++;
    }) as never;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const deadline = t0 + 60_000;
    let left = PROJECTS * RUNS_PER_PROJECT;
    while (left > 0 && performance.now() < deadline) {
      await engineTick(h.hearth.p, h.hearth.registry);
      ticks++;
      const [row] = await control`select count(*)::int as n from platform.workflow_runs where status <> 'succeeded'`;
      left = row!.n as number;
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    control.options.debug = false;
    const stepsDone = (PROJECTS * RUNS_PER_PROJECT - left) * STEPS;
    const hearthRate = stepsDone / seconds;

    // The reference: graphile-worker, same server, one trivial SQL job per step.
    const refDb = `bench_gw_${Date.now()}`;
    await admin.unsafe(`create database ${refDb}`);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${refDb}`;
    let gwRate = 0;
    try {
      const jobDb = postgres(url.toString(), { max: 10, onnotice: () => {} });
      const utils = await makeWorkerUtils({ connectionString: url.toString(), logger: new Logger(() => () => {}) });
      await utils.migrate();
      for (let i = 0; i < JOBS; i += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, k) => utils.addJob('step', { i: i + k })));
      }
      await utils.release();
      let done = 0;
      const g0 = performance.now();
      const runner = await runWorker({
        connectionString: url.toString(),
        concurrency: 10,
        noHandleSignals: true,
        pollInterval: 50,
        logger: new Logger(() => () => {}),
        taskList: {
          step: async () => {
            await jobDb`select 1`;
            done++;
          },
        },
      });
      while (done < JOBS && performance.now() - g0 < 30_000) await new Promise((r) => setTimeout(r, 20));
      gwRate = done / ((performance.now() - g0) / 1000);
      await runner.stop();
      await jobDb.end();
    } finally {
      await admin.unsafe(`drop database if exists ${refDb} with (force)`);
    }
    // Each sql step is one statement in its own transaction in the project database.
    const perStep = (controlCommits - ticks) / Math.max(1, stepsDone) + 1;
    lines.push(
      `engine, 1,000 runs x 5 sql steps, 10 projects   hearth ${hearthRate.toFixed(0).padStart(6)} steps/s (${stepsDone} steps in ${seconds.toFixed(1)} s, ${perStep.toFixed(2)} commits/step)   graphile-worker ${gwRate.toFixed(0).padStart(6)} jobs/s   ratio ${(hearthRate / Math.max(1, gwRate)).toFixed(2)}`,
      `engine cost per step                             ${((statements - ticks) / Math.max(1, stepsDone)).toFixed(2)} control-db statements (BEGIN/COMMIT included), ${((cpu.user + cpu.system) / 1000 / Math.max(1, stepsDone)).toFixed(2)} CPU ms in this process, ${ticks} ticks`,
    );

    // Timer latency: from a sleep's due time to the next step starting, with back-to-back ticks.
    await h.api('PUT', `/v1/projects/${refs[0]}/workflows/timer`, {
      body: {
        steps: [
          { key: 'z', kind: 'sleep', sleep_for: '1s' },
          { key: 'after', kind: 'sql', target: 'select 1' },
        ],
      },
    });
    const started = await h.api('POST', `/v1/projects/${refs[0]}/workflows/timer/runs`, { body: {} });
    const lat: number[] = [];
    const until = performance.now() + 5000;
    let due: number | null = null;
    while (performance.now() < until) {
      await engineTick(h.hearth.p, h.hearth.registry);
      const [z] = await h.hearth.p.dbs
        .control`select started_at from platform.workflow_run_steps where run_id = ${started.body.id} and key = 'z'`;
      if (z?.started_at && due === null) due = (z.started_at as Date).getTime() + 1000;
      const [a] = await h.hearth.p.dbs
        .control`select started_at from platform.workflow_run_steps where run_id = ${started.body.id} and key = 'after' and started_at is not null`;
      if (a && due !== null) {
        lat.push((a.started_at as Date).getTime() - due);
        break;
      }
    }
    lines.push(
      `timer: due sleep -> next step started            ${lat.length ? `${lat[0]} ms` : 'not measured'} (0-ms tick; with the default 15 s tick, up to one tick more)`,
    );
  } finally {
    await admin.end();
    await h.close();
  }
  return lines;
}
