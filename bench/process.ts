/**
 * Process benchmark: what `npm start` costs on the embedded default (no
 * DATABASE_URL), as a user runs it (`node bin/hearth.js start`, the compiled
 * build) in a fresh data folder.
 * - Idle RSS of the Hearth process (PostgreSQL's own processes not counted)
 *   5 s after a fresh start and after a restart, against a bare `node` process
 *   idling (the floor no Node program goes under), and its peak under 5 s of
 *   REST load (GET /rest/v1/ with the publishable key).
 * - Restart on the existing data folder to a healthy /health (median of 3),
 *   with its pieces measured apart: Node with Hearth's modules (`hearth --help`,
 *   against `node -e 0`), and the embedded PostgreSQL's own start on the same
 *   folder (src/db/embedded.ts alone; `hearth start` overlaps it with loading
 *   the server's modules). The rest is the server's modules (the `start`
 *   chunk, which `--help` does not load), the connection budget, the
 *   migrations check, bootstrap, the routes and listening.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbedded } from '../src/db/embedded.ts';
import { embeddedStartEnv } from '../test/helpers/ports.ts';
import { load } from './lib.ts';

const bin = path.resolve('bin/hearth.js');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function timedRun(args: string[]): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return performance.now() - started;
}

export async function benchProcess(): Promise<string[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-bench-process-'));
  const { env, port } = await embeddedStartEnv(dataDir);
  const base = `http://127.0.0.1:${port}`;
  spawnSync(process.execPath, [bin, '--help'], { stdio: 'ignore' }); // a current build first (rebuilt if src/ changed)

  const start = async (): Promise<{ child: ChildProcess; ms: number }> => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'start'], { env, stdio: 'ignore' });
    for (;;) {
      if (child.exitCode !== null) throw new Error(`hearth start exited with ${child.exitCode}`);
      const ok = await fetch(`${base}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { child, ms: performance.now() - started };
      await sleep(10);
    }
  };
  const stop = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGINT');
    });

  const out: string[] = [];
  try {
    const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await sleep(1000);
    const bareRss = rssMiB(bare.pid!);
    bare.kill();

    const first = await start();
    await sleep(5000);
    const freshRss = rssMiB(first.child.pid!);
    await stop(first.child);
    out.push(`first start (initdb, migrations) ${(first.ms / 1000).toFixed(2)} s to a healthy /health`);

    const restarts: number[] = [];
    let idleRss = 0;
    let peakRss = 0;
    for (let i = 0; i < 3; i++) {
      const again = await start();
      restarts.push(again.ms);
      if (i === 2) {
        await sleep(5000);
        idleRss = rssMiB(again.child.pid!);
        const status = spawnSync(process.execPath, [bin, 'status', '-o', 'json'], { env, encoding: 'utf8' });
        const key = (JSON.parse(status.stdout) as { PUBLISHABLE_KEY: string }).PUBLISHABLE_KEY;
        const loading = load(`${base}/rest/v1/`, { seconds: 5, connections: 20, headers: { apikey: key } });
        for (let t = 0; t < 50; t++) {
          peakRss = Math.max(peakRss, rssMiB(again.child.pid!));
          await sleep(100);
        }
        await loading;
      }
      await stop(again.child);
    }
    out.push(
      `idle RSS of the Hearth process: fresh start ${freshRss.toFixed(0)} MiB, after a restart ${idleRss.toFixed(0)} MiB, peak under REST load ${peakRss.toFixed(0)} MiB   bare node idling ${bareRss.toFixed(0)} MiB   ratio ${(freshRss / bareRss).toFixed(1)}`,
    );

    const nodeOnly = median([0, 1, 2].map(() => timedRun(['-e', '0'])));
    const cli = median([0, 1, 2].map(() => timedRun([bin, '--help'])));
    const pgStarts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const cluster = await startEmbedded(dataDir, Number(env.HEARTH_DB_PORT), { info: () => {}, warn: () => {} });
      pgStarts.push(performance.now() - started);
      await cluster.stop();
    }
    const restart = median(restarts);
    const pg = median(pgStarts);
    out.push(
      `restart to a healthy /health (median of 3): ${(restart / 1000).toFixed(2)} s   bare: node -e 0 ${(nodeOnly / 1000).toFixed(2)} s + PostgreSQL start ${(pg / 1000).toFixed(2)} s   ratio ${(restart / (nodeOnly + pg)).toFixed(1)}`,
    );
    out.push(
      `  pieces: Node with Hearth's modules (hearth --help) ${(cli / 1000).toFixed(2)} s, embedded PostgreSQL start ${(pg / 1000).toFixed(2)} s, the rest (loading the server's modules, connection budget, migrations check, bootstrap, routes, listen) ${(Math.max(0, restart - cli - pg) / 1000).toFixed(2)} s`,
    );
    out.push(`  load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    return out;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
