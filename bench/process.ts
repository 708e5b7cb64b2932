/**
 * Process benchmark: what `npm start` costs on the embedded default (no
 * DATABASE_URL), as a user runs it (`node bin/hearth.js start`, the compiled
 * build, with the start script's memory settings: its environment variables
 * and node flags, read from package.json) in a fresh data folder.
 * - Idle RSS of the Hearth process (PostgreSQL's own processes not counted)
 *   5 s after a fresh start and after a restart, against a bare `node` process
 *   idling (the floor no Node program goes under), and its peak under 5 s of
 *   REST load (GET /rest/v1/ with the publishable key).
 * - Downloads of a 10 MiB public object, 16 at a time for 5 s, against a bare
 *   node:http server streaming the same bytes from a file with
 *   fs.createReadStream (strict floor: no lookup, no headers to plan); with
 *   the Hearth process's CPU per download. The start script's settings
 *   matter here: a fixed glibc mmap threshold once made this 2-4x slower.
 * - Restart on the existing data folder to a healthy /health (median of 3),
 *   with its pieces measured apart: Node with Hearth's modules (`hearth --help`,
 *   against `node -e 0`), and the embedded PostgreSQL's own start on the same
 *   folder (src/db/embedded.ts alone; `hearth start` overlaps it with loading
 *   the server's modules). The rest is the server's modules (the `start`
 *   chunk, which `--help` does not load), the connection budget, the
 *   migrations check, bootstrap, the routes and listening.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbedded } from '../src/db/embedded.ts';
import { embeddedStartEnv } from '../test/helpers/ports.ts';
import { load } from './lib.ts';

const bin = path.resolve('bin/hearth.js');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The environment variables and node flags of package.json's start script (`exec env A=1 node --flag bin/hearth.js start`). */
function startScript(): { env: Record<string, string>; nodeArgs: string[] } {
  const script = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = script.split(/\s+/);
  const env = Object.fromEntries(
    words.filter((w) => /^[A-Z_]+=/.test(w)).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
  const nodeArgs = words.slice(words.indexOf('node') + 1, words.indexOf('bin/hearth.js'));
  return { env, nodeArgs };
}

/** Downloads of `url`, `concurrency` at a time for `seconds`, from a child process: completed downloads per second. */
function downloads(url: string, concurrency: number, seconds: number): Promise<number> {
  const client = `import http from 'node:http';
const agent = new http.Agent({ keepAlive: true });
let bytes = 0; const end = Date.now() + ${seconds * 1000};
const one = () => new Promise((ok, fail) => http.get(${JSON.stringify(url)}, { agent }, (r) => { r.on('data', (c) => (bytes += c.length)).on('end', ok); }).on('error', fail));
await Promise.all(Array.from({ length: ${concurrency} }, async () => { while (Date.now() < end) await one(); }));
console.log(bytes); process.exit(0);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', client], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) =>
      code === 0 ? resolve(Number(out) / DOWNLOAD_BYTES / seconds) : reject(new Error(`client exited ${code}`)),
    );
  });
}

const DOWNLOAD_BYTES = 10 * 1024 * 1024;
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

function timedRun(args: string[]): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return performance.now() - started;
}

export async function benchProcess(): Promise<string[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-bench-process-'));
  const embedded = await embeddedStartEnv(dataDir);
  const script = startScript();
  const env = { ...embedded.env, ...script.env };
  const { port } = embedded;
  const base = `http://127.0.0.1:${port}`;
  spawnSync(process.execPath, [bin, '--help'], { stdio: 'ignore' }); // a current build first (rebuilt if src/ changed)

  const start = async (): Promise<{ child: ChildProcess; ms: number }> => {
    const started = performance.now();
    const child = spawn(process.execPath, [...script.nodeArgs, bin, 'start'], { env, stdio: 'ignore' });
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
    let download = '';
    for (let i = 0; i < 3; i++) {
      const again = await start();
      restarts.push(again.ms);
      if (i === 2) {
        await sleep(5000);
        idleRss = rssMiB(again.child.pid!);
        const status = spawnSync(process.execPath, [bin, 'status', '-o', 'json'], { env, encoding: 'utf8' });
        const keys = JSON.parse(status.stdout) as { PUBLISHABLE_KEY: string; SECRET_KEY: string };
        const loading = load(`${base}/rest/v1/`, {
          seconds: 5,
          connections: 20,
          headers: { apikey: keys.PUBLISHABLE_KEY },
        });
        for (let t = 0; t < 50; t++) {
          peakRss = Math.max(peakRss, rssMiB(again.child.pid!));
          await sleep(100);
        }
        await loading;
        download = await benchDownloads(base, keys.SECRET_KEY, again.child.pid!, dataDir);
      }
      await stop(again.child);
    }
    out.push(download);
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

/** A 10 MiB public object downloaded through Hearth and from the bare file server, side by side. */
async function benchDownloads(base: string, secret: string, pid: number, dataDir: string): Promise<string> {
  const auth = { authorization: `Bearer ${secret}`, apikey: secret };
  const bytes = Buffer.alloc(DOWNLOAD_BYTES, 7);
  await fetch(`${base}/storage/v1/bucket`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench-download', public: true }),
  });
  const put = await fetch(`${base}/storage/v1/object/bench-download/10mib.bin`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/octet-stream', 'x-upsert': 'true' },
    body: bytes,
  });
  if (!put.ok) throw new Error(`upload failed: ${put.status} ${await put.text()}`);
  const file = path.join(dataDir, 'bench-download.bin');
  writeFileSync(file, bytes);
  const bare = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': DOWNLOAD_BYTES });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  try {
    const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/`;
    const hearthUrl = `${base}/storage/v1/object/public/bench-download/10mib.bin`;
    await downloads(hearthUrl, 4, 1);
    const cpu = cpuMs(pid);
    const hearth = await downloads(hearthUrl, 16, 5);
    const perDownload = (cpuMs(pid) - cpu) / (hearth * 5);
    const floor = await downloads(bareUrl, 16, 5);
    return `10 MiB public download, 16 at a time: Hearth ${hearth.toFixed(1)}/s (${perDownload.toFixed(1)} ms of CPU each), bare fs stream ${floor.toFixed(1)}/s   ratio ${(hearth / floor).toFixed(2)}`;
  } finally {
    bare.closeAllConnections();
    bare.close();
  }
}
