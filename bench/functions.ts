/**
 * Functions benchmark: cold start of a newly deployed function, and
 * requests/s of a hello-world function at five depths, each loaded in turn by
 * one autocannon child process: the same handler in a bare node:http server
 * (no workerd); the very workerd process Hearth runs for the function, called
 * directly on its unix socket (no second hop: the function alone); a bare
 * node:http proxy to that workerd (the runtime's own cost: the second hop and
 * workerd); a node:http server calling the runtime's invokeFunction; and a
 * real Hearth (needs DATABASE_URL, as `npm run bench` provides) serving
 * `/functions/v1/hello` deployed through the management API, key checked,
 * logs written to the control database. Beside req/s, the CPU time per
 * request of this process (which hosts every server above), of workerd and of
 * the load generator, since on a small shared machine CPU per request is the
 * steadier figure. Bounded well under 90 s.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { HearthError } from '../src/errors.ts';
import { createFunctionsRuntime } from '../src/functions/runtime.ts';
import { DirFunctionStore } from '../test/functions/dir-store.ts';
import { withHearth } from './lib.ts';

const HELLO = "Deno.serve(() => new Response('Hello World'));";
const DURATION_S = 5;
const CONNECTIONS = 32;
const COLD_RUNS = 7;

type Handler = (req: Request) => Response | Promise<Response>;

/** The HTTP glue both servers share, so they differ only in the handler. */
function serve(handler: Handler): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    try {
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : (Readable.toWeb(req) as ReadableStream);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers: req.headers as HeadersInit,
        body,
        duplex: 'half',
      } as RequestInit);
      const response = await handler(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (e) {
      res.writeHead(e instanceof HearthError ? e.status : 500).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A reverse proxy as a developer would write it with node:http alone, to a workerd unix socket. */
function proxy(socketPath: string): Promise<http.Server> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      { socketPath, agent, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('close', () => agent.destroy());
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** CPU time (ms) of this process's children that have exited and been waited for (the load generator). */
function exitedChildrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** CPU time (ms) used so far by this process's workerd children. */
function workerdCpuMs(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.includes('(workerd)') && Number(fields[1]) === process.pid)
        ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* exited meanwhile */
    }
  }
  return ticks * 10;
}

interface Result {
  rps: number;
  p99: number;
  errors: number;
  cpuMs: number;
  workerdMs: number;
  clientMs: number;
}

/** `socketPath`: connect there (a unix socket) instead of to the URL's host. */
async function load(url: string, headers: Record<string, string> = {}, socketPath?: string): Promise<Result> {
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const args = [bin, '-j', '-c', String(CONNECTIONS), '-d', String(DURATION_S)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  if (socketPath) args.push('-S', socketPath);
  const cpu = process.cpuUsage();
  const workerd = workerdCpuMs();
  const client = exitedChildrenCpuMs();
  const child = spawn(process.execPath, [...args, url], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  await new Promise((r) => child.on('close', r));
  const used = process.cpuUsage(cpu);
  const workerdMs = workerdCpuMs() - workerd;
  const clientMs = exitedChildrenCpuMs() - client;
  const result = JSON.parse(out) as {
    requests: { average: number; total: number };
    latency: { p99: number };
    errors: number;
    non2xx: number;
  };
  const n = Math.max(1, result.requests.total);
  return {
    rps: Math.round(result.requests.average),
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    cpuMs: (used.user + used.system) / 1000 / n,
    workerdMs: workerdMs / n,
    clientMs: clientMs / n,
  };
}

/** The unix socket of the one workerd process serving a data dir's functions. */
function workerdSocket(dataDir: string): string {
  const run = path.join(dataDir, 'functions', 'run');
  const dirs = readdirSync(run);
  if (dirs.length !== 1) throw new Error(`expected one running function instance, found ${dirs.length}`);
  return path.join(run, dirs[0]!, 's');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

export async function benchFunctions(): Promise<string> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-fn-bench-'));
  const runtime = createFunctionsRuntime(loadConfig({}, { dataDir }), {
    store: new DirFunctionStore(path.join(dataDir, 'functions')),
  });
  const servers: http.Server[] = [];
  try {
    const deployMs: number[] = [];
    const coldMs: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      let t = performance.now();
      await runtime.deployFunction('bench', `cold-${i}`, { files: { 'index.ts': HELLO } });
      deployMs.push(performance.now() - t);
      t = performance.now();
      await (await runtime.invokeFunction('bench', `cold-${i}`, new Request(`http://localhost/cold-${i}`))).text();
      coldMs.push(performance.now() - t);
    }
    const warmT = performance.now();
    await (await runtime.invokeFunction('bench', 'cold-0', new Request('http://localhost/cold-0'))).text();
    const warmMs = performance.now() - warmT;

    await runtime.deployFunction('bench', 'hello', { files: { 'index.ts': HELLO } });
    const viaFunctions = await serve((req) => {
      const url = new URL(req.url);
      const name = url.pathname.split('/')[3];
      return runtime.invokeFunction(
        'bench',
        name,
        new Request(new URL(url.pathname.slice('/functions/v1'.length) + url.search, url), req),
      );
    });
    const bare = await serve(() => new Response('Hello World'));
    servers.push(viaFunctions, bare);
    const port = (s: http.Server) => (s.address() as { port: number }).port;
    const reference = await load(`http://127.0.0.1:${port(bare)}/functions/v1/hello`);
    const functions = await load(`http://127.0.0.1:${port(viaFunctions)}/functions/v1/hello`);
    const [direct, bareProxy, throughHearth] = await withHearth(async (h) => {
      const deployed = await h.api('PUT', `/v1/projects/${h.info.PROJECT_REF}/functions/hello`, {
        body: { source: HELLO },
      });
      if (deployed.status !== 201) throw new Error(`deploy failed: ${JSON.stringify(deployed.body)}`);
      const headers = { authorization: `Bearer ${h.info.PUBLISHABLE_KEY}` };
      const first = await fetch(`${h.url}/functions/v1/hello`, { headers });
      if (first.status !== 200) throw new Error(`invoke failed: ${first.status} ${await first.text()}`);
      await first.text();
      const socket = workerdSocket(h.config.dataDir);
      const bareProxy = await proxy(socket);
      servers.push(bareProxy);
      return [
        // The path Hearth would send: the function's name, then the rest.
        await load('http://localhost/hello', {}, socket),
        await load(`http://127.0.0.1:${port(bareProxy)}/functions/v1/hello`),
        await load(`${h.url}/functions/v1/hello`, headers),
      ];
    });

    const cpu = (ms: number) => ms.toFixed(3).padStart(6);
    const row = (label: string, r: Result) =>
      `  ${label.padEnd(36)} ${String(r.rps).padStart(6)} req/s  p99 ${String(r.p99).padStart(3)} ms  errors ${r.errors}  cpu/req: node ${cpu(r.cpuMs)} ms, workerd ${cpu(r.workerdMs)} ms, autocannon ${cpu(r.clientMs)} ms`;
    return [
      'functions (workerd, one process per function version)',
      `  deploy (bundle + publish), median of ${COLD_RUNS}:    ${median(deployMs).toFixed(1)} ms`,
      `  cold start (first invoke), median of ${COLD_RUNS}:   ${median(coldMs).toFixed(1)} ms (min ${Math.min(...coldMs).toFixed(1)}, max ${Math.max(...coldMs).toFixed(1)})`,
      `  warm invoke, one request:              ${warmMs.toFixed(1)} ms`,
      `  hello world, ${CONNECTIONS} connections, ${DURATION_S} s each:`,
      row('bare node:http, same handler', reference),
      row('workerd directly (its unix socket)', direct),
      row('bare node:http proxy -> workerd', bareProxy),
      row('node:http -> invokeFunction', functions),
      row('Hearth GET /functions/v1/hello', throughHearth),
      `  ratio Hearth / workerd directly: ${(throughHearth.rps / direct.rps).toFixed(2)} (strict: everything Hearth adds, second hop included)`,
      `  ratio Hearth / bare proxy to workerd: ${(throughHearth.rps / bareProxy.rps).toFixed(2)} (lenient: Hearth's own overhead over a proxy that checks nothing)`,
      `  ratio bare proxy / workerd directly: ${(bareProxy.rps / direct.rps).toFixed(2)} (what any second hop costs)`,
      `  ratio bare proxy / bare handler: ${(bareProxy.rps / reference.rps).toFixed(2)} (the runtime's: second hop + workerd)`,
      `  ratio Hearth HTTP / bare handler: ${(throughHearth.rps / reference.rps).toFixed(2)}`,
    ].join('\n');
  } finally {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await runtime.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(await benchFunctions());
