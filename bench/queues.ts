/**
 * Queue throughput: Hearth's pgmq against graphile-worker on the same fresh
 * project database, in the same process, one after the other.
 *
 * One message = enqueue + claim + complete:
 * - pgmq: W connections (as the project owner), each looping
 *   send -> read(vt 30, qty 1) -> delete, as named prepared statements (pg,
 *   the driver graphile-worker uses too).
 * - graphile-worker: W producers looping addJob, and a runner with
 *   concurrency W whose task does nothing (it claims with get_job and
 *   completes with complete_job, woken by LISTEN/NOTIFY).
 * Each case moves MESSAGES messages after a short warm-up and reports
 * messages per second; ratio = pgmq / graphile-worker.
 */
import { pathToFileURL } from 'node:url';
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';
import pg from 'pg';
import { createProjectDb } from '../test/helpers/project-db.ts';

const MESSAGES = 2000;
const WARMUP = 100;
const CASE_LIMIT_MS = 12_000; // keeps the whole bench under a minute on a slow machine

export interface QueueBenchRow {
  workers: number;
  pgmqPerSec: number;
  graphilePerSec: number;
  ratio: number;
}

const quiet = new Logger(() => () => {});

/** Splits n messages over the lanes, runs them side by side; returns messages/s. */
async function timed(n: number, lanes: number, lane: (count: number, index: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  const counts = Array.from({ length: lanes }, (_, i) => Math.floor(n / lanes) + (i < n % lanes ? 1 : 0));
  await Promise.all(counts.map((count, index) => lane(count, index)));
  return n / ((performance.now() - started) / 1000);
}

async function pgmqCase(ownerUrl: string, workers: number): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: workers }, async () => {
      const c = new pg.Client({ connectionString: ownerUrl });
      await c.connect();
      return c;
    }),
  );
  // A read can come back empty while the other workers hold the visible rows;
  // the lane then reads again, so every lane completes exactly `count`.
  const cycle = async (count: number, index: number) => {
    const c = clients[index];
    for (let sent = 0, done = 0; done < count; ) {
      if (sent < count) {
        await c.query({ name: 'send', text: `select pgmq.send('bench', $1::jsonb)`, values: ['{"n":1}'] });
        sent++;
      }
      const { rows } = await c.query({ name: 'read', text: `select msg_id from pgmq.read('bench', 30, 1)` });
      if (rows.length === 0) continue;
      await c.query({ name: 'delete', text: `select pgmq.delete('bench', $1::bigint)`, values: [rows[0].msg_id] });
      done++;
    }
  };
  try {
    await timed(WARMUP * workers, workers, cycle);
    return await withLimit(timed(MESSAGES, workers, cycle));
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

async function graphileCase(adminUrl: string, workers: number): Promise<number> {
  let done = 0;
  let target = 0;
  let reached: () => void = () => {};
  const runner = await run({
    connectionString: adminUrl,
    concurrency: workers,
    maxPoolSize: workers + 2,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: quiet,
    taskList: {
      bench: async () => {
        if (++done === target) reached();
      },
    },
  });
  const utils = await makeWorkerUtils({ connectionString: adminUrl, maxPoolSize: workers + 1, logger: quiet });
  // Produce n jobs from W producers; resolve when the runner has completed all.
  const batch = async (n: number) => {
    done = 0;
    target = n;
    const drained = new Promise<void>((resolve) => (reached = resolve));
    await timed(n, workers, async (count) => {
      for (let i = 0; i < count; i++) await utils.addJob('bench', { n: 1 });
    });
    await drained;
  };
  try {
    await batch(WARMUP * workers);
    const started = performance.now();
    await withLimit(batch(MESSAGES));
    return MESSAGES / ((performance.now() - started) / 1000);
  } finally {
    await utils.release();
    await runner.stop();
  }
}

async function withLimit<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a queue bench case took over ${CASE_LIMIT_MS} ms`)), CASE_LIMIT_MS);
  });
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}

export async function benchQueues(): Promise<{ rows: QueueBenchRow[]; text: string }> {
  const project = await createProjectDb();
  try {
    await withClient(project.ownerUrl, (c) => c.query(`select pgmq.create('bench')`));
    await runMigrations({ connectionString: project.adminUrl, logger: quiet });
    const rows: QueueBenchRow[] = [];
    for (const workers of [1, 4]) {
      const pgmqPerSec = await pgmqCase(project.ownerUrl, workers);
      const graphilePerSec = await graphileCase(project.adminUrl, workers);
      rows.push({ workers, pgmqPerSec, graphilePerSec, ratio: pgmqPerSec / graphilePerSec });
    }
    const text = [
      `queues: ${MESSAGES} messages per case (enqueue + claim + complete), same database`,
      ...rows.map(
        (r) =>
          `  ${r.workers} worker${r.workers > 1 ? 's' : ' '}  pgmq ${r.pgmqPerSec.toFixed(0).padStart(6)} msg/s   ` +
          `graphile-worker ${r.graphilePerSec.toFixed(0).padStart(6)} msg/s   ratio ${r.ratio.toFixed(2)}x`,
      ),
    ].join('\n');
    return { rows, text };
  } finally {
    await project.drop();
  }
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log((await benchQueues()).text);
}
