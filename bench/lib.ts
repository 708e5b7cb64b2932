/**
 * Shared bench helpers: a Hearth on a scratch control database, and a load
 * generator (autocannon) in a child process, so the servers measured do not
 * share their event loop with the client.
 */
import { spawn } from 'node:child_process';
import type postgres from 'postgres';
import path from 'node:path';
import { startTestHearth, type TestHearth } from '../test/helpers/hearth.ts';

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export async function load(
  url: string,
  opts: {
    seconds?: number;
    connections?: number;
    headers?: Record<string, string>;
    method?: string;
    body?: string;
  } = {},
): Promise<Load> {
  const args = [
    '-j',
    '-d',
    String(opts.seconds ?? 5),
    '-c',
    String(opts.connections ?? 20),
    '-m',
    opts.method ?? 'GET',
  ];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (opts.body) args.push('-b', opts.body);
  args.push(url);
  const bin = path.resolve('node_modules/autocannon/autocannon.js');
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`autocannon exited ${code}`))));
  });
  const r = JSON.parse(out);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/**
 * A load run with this process's CPU time (user + system) per completed request,
 * in microseconds: with both servers in this process and the client in a child,
 * steadier than req/s on a shared machine.
 */
export async function measuredLoad(
  url: string,
  opts: Parameters<typeof load>[1] = {},
): Promise<Load & { cpu: number }> {
  const before = process.cpuUsage();
  const r = await load(url, opts);
  const used = process.cpuUsage(before);
  return { ...r, cpu: (used.user + used.system) / Math.max(1, r.rps * (opts.seconds ?? 5)) };
}

/** compare(), and a second line with the CPU per request of each. */
export function compareWithCpu(name: string, hearth: Load & { cpu: number }, bare: Load & { cpu: number }): string[] {
  const cpu = `${''.padEnd(44)} CPU per request: hearth ${hearth.cpu.toFixed(1)} us, bare ${bare.cpu.toFixed(1)} us, ratio ${(bare.cpu / hearth.cpu).toFixed(2)}`;
  return [compare(name, hearth, bare), cpu];
}

export function compare(name: string, hearth: Load, bare: Load): string {
  const ratio = hearth.rps / bare.rps;
  return `${name.padEnd(44)} hearth ${hearth.rps.toFixed(0).padStart(6)} req/s (p99 ${hearth.p99} ms, errors ${hearth.errors})   bare ${bare.rps.toFixed(0).padStart(6)} req/s (p99 ${bare.p99} ms)   ratio ${ratio.toFixed(2)}`;
}

export async function withHearth<T>(fn: (h: TestHearth) => Promise<T>): Promise<T> {
  const h = await startTestHearth();
  try {
    return await fn(h);
  } finally {
    await h.close();
  }
}

/**
 * The bare reference's transaction: what a developer writes with postgres.js
 * alone — sql.begin, the same set_config statement Hearth sends, the query.
 */
export function bareTransaction(
  pool: postgres.Sql,
  claims: Record<string, unknown>,
  query: (tx: postgres.TransactionSql) => Promise<postgres.Row[]>,
  readOnly = true,
) {
  const work = async (tx: postgres.TransactionSql) => {
    await tx`select set_config('role', ${String(claims.role)}, true), set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
      set_config('statement_timeout', '10s', true)`;
    return query(tx);
  };
  return (readOnly ? pool.begin('read only', work) : pool.begin(work)) as Promise<postgres.Row[]>;
}
