/**
 * Storage throughput: 10 MiB uploads and downloads through Hearth's
 * /storage/v1 (auth, RLS transactions, hashing, staging record, fs backend)
 * against a bare node:http server that streams the same bytes to and from
 * files, side by side. The client is a child process (its own event loop),
 * moving COUNT objects with CONCURRENCY in flight; ratio = hearth / bare.
 * Neither side fsyncs (Hearth's fs backend relies on the page cache like the
 * bare server; docs/storage.md). The machine is shared and the two servers
 * run one after the other, so each direction runs ROUNDS alternating pairs and
 * reports the median ratio with its range, plus the servers' CPU time per MiB
 * (process.cpuUsage of this process, which hosts both), which noise moves less.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { withHearth } from './lib.ts';

const MIB = 10;
const COUNT = 24;
const CONCURRENCY = 4;
const ROUNDS = 5;

/** The client: `mode url token count concurrency mib`; prints MiB/s. Uploads go to url-<i>, downloads all read url. */
const CLIENT = `
  const http = require('node:http');
  const [mode, url, token, count, concurrency, mib] = process.argv.slice(1);
  const chunk = Buffer.alloc(65536, 7);
  const one = (i) => new Promise((resolve, reject) => {
    const up = mode === 'up';
    const req = http.request(up ? url + '-' + i : url, { method: up ? 'POST' : 'GET', agent: false,
      headers: { authorization: 'Bearer ' + token, 'content-type': 'application/octet-stream', ...(up ? { 'content-length': String(mib * 1048576) } : {}) } }, (res) => {
      let n = 0;
      res.on('data', (c) => (n += c.length));
      res.on('end', () => (res.statusCode < 300 && (up || n === mib * 1048576) ? resolve() : reject(new Error('status ' + res.statusCode + ' bytes ' + n))));
    });
    req.on('error', reject);
    if (!up) return req.end();
    let left = mib * 16;
    const pump = () => { while (left > 0) { left--; if (!req.write(chunk)) return req.once('drain', pump); } req.end(); };
    pump();
  });
  (async () => {
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: +concurrency }, async () => { while (next < +count) await one(next++); }));
    console.log(String((+count * +mib) / ((performance.now() - started) / 1000)));
  })().catch((e) => { console.error(e.message); process.exit(1); });`;

function client(mode: 'up' | 'down', url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['-e', CLIENT, mode, url, token, String(COUNT), String(CONCURRENCY), String(MIB)],
      (err, out) => (err ? reject(err) : resolve(Number(out))),
    ),
  );
}

async function bareServer(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    const done = (status: number) => {
      res.statusCode = status;
      res.end();
    };
    if (req.method === 'POST') {
      pipeline(req, createWriteStream(path.join(dir, `up-${n++}`))).then(
        () => done(201),
        () => done(500),
      );
      return;
    }
    const file = path.join(dir, 'source');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': statSync(file).size });
    pipeline(createReadStream(file), res).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

interface Run {
  mibPerSecond: number;
  /** This process's CPU time (the server under test) per MiB moved. */
  cpuMsPerMib: number;
}

async function measure(mode: 'up' | 'down', url: string, token: string): Promise<Run> {
  const before = process.cpuUsage();
  const mibPerSecond = await client(mode, url, token);
  const cpu = process.cpuUsage(before);
  return { mibPerSecond, cpuMsPerMib: (cpu.user + cpu.system) / 1000 / (COUNT * MIB) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** ROUNDS pairs, alternating which server goes first. */
async function compare(what: string, run: (server: 'hearth' | 'bare', round: number) => Promise<Run>): Promise<string> {
  const pairs: { hearth: Run; bare: Run }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order: ('hearth' | 'bare')[] = round % 2 ? ['hearth', 'bare'] : ['bare', 'hearth'];
    const pair = {} as { hearth: Run; bare: Run };
    for (const server of order) pair[server] = await run(server, round);
    pairs.push(pair);
  }
  const ratios = pairs.map((p) => p.hearth.mibPerSecond / p.bare.mibPerSecond);
  const of = (server: 'hearth' | 'bare') => pairs.map((p) => p[server]);
  return (
    `${what.padEnd(24)} hearth ${median(of('hearth').map((r) => r.mibPerSecond))
      .toFixed(0)
      .padStart(4)} MiB/s   bare ${median(of('bare').map((r) => r.mibPerSecond))
      .toFixed(0)
      .padStart(4)} MiB/s   ` +
    `ratio ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})   ` +
    `server CPU ${median(of('hearth').map((r) => r.cpuMsPerMib)).toFixed(2)} vs ${median(of('bare').map((r) => r.cpuMsPerMib)).toFixed(2)} ms/MiB`
  );
}

export async function benchStorage(): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hearth-bench-storage-'));
  const bare = await bareServer(dir);
  try {
    return await withHearth(async (h) => {
      const key = h.info.SECRET_KEY;
      // ROUNDS × COUNT × MIB is over the default 1 GiB project quota.
      const quota = await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/storage`, {
        token: h.info.MANAGEMENT_TOKEN,
        body: { quota_bytes: 1024 ** 4 },
      });
      if (quota.status !== 200) throw new Error(`quota: ${quota.status}`);
      const create = await fetch(`${h.info.BASE_URL}/storage/v1/bucket`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      });
      if (!create.ok) throw new Error(`bucket: ${create.status}`);
      const hearthBase = `${h.info.BASE_URL}/storage/v1/object/bench/obj`;
      // Warm both up (and leave a source object for the downloads).
      await client('up', `${bare.url}/warm`, key);
      await client('up', `${hearthBase}-warm`, key);
      await pipeline(createReadStream(path.join(dir, 'up-0')), createWriteStream(path.join(dir, 'source')));

      const up = await compare('upload (POST /object)', (server, round) =>
        measure('up', server === 'hearth' ? `${hearthBase}-r${round}` : `${bare.url}/r${round}`, key),
      );
      const down = await compare('download (GET /object)', (server) =>
        measure('down', server === 'hearth' ? `${hearthBase}-warm-0` : `${bare.url}/source`, key),
      );
      return [
        `${COUNT} transfers of ${MIB} MiB, ${CONCURRENCY} at a time, client in a child process; median of ${ROUNDS} alternating pairs (range)`,
        up,
        down,
      ];
    });
  } finally {
    await bare.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
