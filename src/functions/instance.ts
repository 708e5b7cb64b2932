/**
 * One running workerd process serving one version of one function, reached
 * over a unix socket in its own run directory. The process is the isolation
 * and resource boundary: its V8 heap limit is the function's memory limit, and
 * a stuck or crashed function is dealt with by killing its process alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import { fail } from '../errors.ts';
import type { LogLevel } from './store.ts';
import { CF_HEADER, workerdFiles, type WorkerdSpec } from './workerd-config.ts';

// The npm package's main export is the path of the platform binary.
const WORKERD_BIN = (createRequire(import.meta.url)('workerd') as { default: string }).default;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'proxy-authorization',
  'host',
]);
/** Replaced by the client's address when the invocation has one. */
const CLIENT_ADDRESS = new Set(['x-forwarded-for', 'x-real-ip']);
const STDERR_TAIL = 16 * 1024;
const SMALL_BODY = 64 * 1024;

export type ExitReason = 'memory' | 'crash' | 'killed';
export interface InstanceLog {
  invocationId: string | null;
  level: LogLevel;
  message: string;
}

/** A request as the runtime forwards it: plain values, no web Request in between. */
export interface Invocation {
  method: string;
  /** Path and query the function sees: `/{name}/...?...`. */
  path: string;
  host: string;
  /** Header names and values, alternating, as in IncomingMessage.rawHeaders. */
  headers: string[];
  body: Readable | null;
  /** True once the caller went away before its upload ended. */
  callerGone(): boolean;
  /**
   * The caller's address as Hearth determines it (request.ip: X-Forwarded-For
   * counts only from HEARTH_TRUSTED_PROXIES). When given, the function sees it
   * as X-Forwarded-For and X-Real-IP, as behind Supabase's gateway, in place of
   * whatever the caller sent in those headers.
   */
  clientIp?: string;
}

/**
 * The start of a body. A body that has arrived whole (up to SMALL_BODY bytes)
 * is sent with a content-length, in one write with the head: a function that
 * answers without reading it then cannot make the upload fail half-way. Of a
 * caller's upload still arriving, what has come is sent at once (only its
 * first bytes are waited for) and the rest streams on as it comes, so a slow
 * upload (progress reports, NDJSON) reaches the function piece by piece.
 */
async function readHead(stream: Readable): Promise<{ head: Buffer; rest: Readable | null }> {
  if (!(stream instanceof http.IncomingMessage)) return readUpTo(stream);
  if (stream.readableLength === 0 && !stream.complete) await firstBytes(stream);
  const head: Buffer[] = [];
  let size = 0;
  for (let chunk: Buffer | null; size <= SMALL_BODY && (chunk = stream.read() as Buffer | null) !== null; ) {
    head.push(chunk);
    size += chunk.length;
  }
  const whole = stream.complete && stream.readableLength === 0;
  return { head: Buffer.concat(head), rest: whole ? null : stream };
}

/** Resolves once a stream has bytes to read, or ended or failed. */
function firstBytes(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      for (const event of ['readable', 'end', 'error']) stream.off(event, settle);
      resolve();
    };
    for (const event of ['readable', 'end', 'error']) stream.on(event, settle);
  });
}

/** A body made in this process (a workflow step's JSON): read whole up to SMALL_BODY, as it never waits on a caller. */
async function readUpTo(stream: Readable): Promise<{ head: Buffer; rest: Readable | null }> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let size = 0;
  while (size <= SMALL_BODY) {
    const { value, done } = await chunks.next();
    if (done) return { head: Buffer.concat(head), rest: null };
    head.push(value);
    size += value.length;
  }
  const rest = Readable.from(
    (async function* () {
      for (let r = await chunks.next(); !r.done; r = await chunks.next()) yield r.value;
    })(),
  );
  return { head: Buffer.concat(head), rest };
}

const MAX_CONNECTIONS = 256;
const ignore = () => {};

/**
 * Keep-alive connections to one workerd socket, at most MAX_CONNECTIONS, the
 * rest of the requests queued. What http.Agent does for this case without
 * its generality (per-destination maps, TLS, scheduling options), which
 * measured about a fifth of the CPU a request to workerd costs the host.
 * ClientRequest drives it: it hands a socket back with a `free` event once
 * its response ended and the connection may be reused.
 */
class SocketPool extends http.Agent {
  private readonly idle: net.Socket[] = [];
  private readonly waiting: http.ClientRequest[] = [];
  private open = 0;

  constructor(private readonly socketPath: string) {
    super({ keepAlive: true });
  }

  // Called by ClientRequest (not in the type definitions).
  addRequest(req: http.ClientRequest): void {
    const socket = this.idle.pop();
    if (socket) {
      socket.ref();
      this.give(req, socket, true);
      return;
    }
    if (this.open >= MAX_CONNECTIONS) return void this.waiting.push(req);
    this.give(req, this.connect(), false);
  }

  override destroy(): void {
    for (const socket of this.idle.splice(0)) socket.destroy();
    for (const req of this.waiting.splice(0)) req.destroy();
    super.destroy();
  }

  private give(req: http.ClientRequest, socket: net.Socket, reused: boolean): void {
    (req as { reusedSocket: boolean }).reusedSocket = reused;
    req.onSocket(socket);
  }

  private connect(): net.Socket {
    this.open++;
    const socket = net.createConnection(this.socketPath);
    // Errors of a socket in use reach its request; an idle one has no other listener.
    socket.on('error', ignore);
    socket.on('free', () => {
      if (socket.destroyed) return;
      const next = this.nextWaiting();
      if (next) return this.give(next, socket, true);
      socket.unref();
      this.idle.push(socket);
    });
    socket.on('close', () => {
      this.open--;
      const i = this.idle.indexOf(socket);
      if (i >= 0) this.idle.splice(i, 1);
      const next = this.nextWaiting();
      if (next) this.give(next, this.connect(), false);
    });
    return socket;
  }

  /** The oldest queued request that is still wanted (a time limit may have destroyed it). */
  private nextWaiting(): http.ClientRequest | undefined {
    let req = this.waiting.shift();
    while (req?.destroyed) req = this.waiting.shift();
    return req;
  }
}

/** True once the worker answers: a listening socket alone does not mean the module loaded. */
function probe(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request(
      { socketPath, path: '/', headers: { [CF_HEADER]: '{"probe":true}' }, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode === 204);
      },
    );
    req.on('error', () => resolve(false));
    req.end();
  });
}

export class Instance {
  inflight = 0;
  retired = false;
  exitReason: ExitReason | null = null;
  readonly closed: Promise<void>;
  /** Set once the module has loaded; start-up errors are reported by start() instead. */
  private started = false;
  private stderrTail = '';
  private readonly agent: SocketPool;

  private constructor(
    private readonly child: ChildProcess,
    private readonly runDir: string,
    socketPath: string,
    logPrefix: string,
    onLog: (log: InstanceLog) => void,
  ) {
    this.agent = new SocketPool(socketPath);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith(logPrefix)) return onLog({ invocationId: null, level: 'log', message: line });
      const { i, l, m } = JSON.parse(line.slice(logPrefix.length)) as { i: string | null; l: LogLevel; m: string };
      onLog({ invocationId: i, level: l, message: m });
    });
    // workerd tells the function only "internal error; reference = X". The reason is on stderr:
    // "connecting to A is not allowed", then a line with "wdErrId = X", the same X.
    let refusedTo: string | null = null;
    const logRefusal = (reference: string | null) => {
      onLog({
        invocationId: null,
        level: 'warn',
        message: `Outbound connection to ${refusedTo} refused: functions may only connect to public internet addresses.${reference ? ` (reference = ${reference})` : ''}`,
      });
      refusedTo = null;
    };
    readline.createInterface({ input: child.stderr! }).on('line', (line) => {
      this.stderrTail = `${this.stderrTail + line}\n`.slice(-STDERR_TAIL);
      if (refusedTo !== null) logRefusal(/wdErrId = (\w+)/.exec(line)?.[1] ?? null);
      const refused = /connecting to (.+) is not allowed/.exec(line);
      if (refused) refusedTo = refused[1]!;
      // An exception the shim cannot catch (a response body stream that throws) is only reported here.
      const uncaught = this.started && /Uncaught exception: (?:.*?failed: )?(?:remote\.)?(?:jsg\.)?(.*)$/.exec(line);
      if (uncaught) onLog({ invocationId: null, level: 'error', message: `Uncaught exception: ${uncaught[1]}` });
    });
    this.closed = new Promise((resolve) =>
      child.on('close', () => {
        if (refusedTo !== null) logRefusal(null);
        this.exitReason ??= /heap out of memory|Reached heap limit/.test(this.stderrTail) ? 'memory' : 'crash';
        this.agent.destroy();
        void fs.rm(this.runDir, { recursive: true, force: true }).finally(resolve);
      }),
    );
  }

  get alive(): boolean {
    return this.exitReason === null;
  }

  static async start(
    runDir: string,
    spec: Omit<WorkerdSpec, 'socketPath'>,
    onLog: (log: InstanceLog) => void,
    startTimeoutMs = 15_000,
  ): Promise<Instance> {
    const socketPath = path.join(runDir, 's');
    const { files, logPrefix } = workerdFiles({ ...spec, socketPath });
    await fs.mkdir(runDir, { recursive: true, mode: 0o700 });
    await Promise.all(
      Object.entries(files).map(([name, text]) => fs.writeFile(path.join(runDir, name), text, { mode: 0o600 })),
    );
    // An empty environment: nothing of the platform's configuration reaches the process.
    const child = spawn(WORKERD_BIN, ['serve', 'config.capnp'], {
      cwd: runDir,
      env: {},
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const instance = new Instance(child, runDir, socketPath, logPrefix, onLog);
    // Kept so a later start can stop this process if Hearth dies without shutting down.
    if (child.pid) await fs.writeFile(path.join(runDir, 'pid'), String(child.pid));
    const deadline = Date.now() + startTimeoutMs;
    while (!(await probe(socketPath))) {
      if (!instance.alive || Date.now() > deadline) {
        await instance.kill();
        const reason = instance.bootError();
        onLog({ invocationId: null, level: 'error', message: `Boot failed: ${reason}` });
        throw fail('function_boot_error', `The function failed to start: ${reason.split('\n')[0]}`);
      }
      await new Promise((r) => setTimeout(r, 3));
    }
    instance.started = true;
    // workerd has read everything it needs; secrets do not stay on disk.
    await Promise.all(Object.keys(files).map((name) => fs.rm(path.join(runDir, name), { force: true })));
    return instance;
  }

  private bootError(): string {
    const text = this.stderrTail.replaceAll(`${this.runDir}/`, '');
    const uncaught = text.split('\n').findIndex((l) => l.includes('Uncaught'));
    const lines = text.split('\n');
    const picked = uncaught >= 0 ? lines.slice(uncaught, uncaught + 6) : lines.filter(Boolean).slice(-3);
    return (
      picked
        .map((l) => l.replace(/^.*?(Uncaught)/, '$1'))
        .join('\n')
        .trim() || 'the runtime exited during start-up'
    );
  }

  /**
   * Sends the request to the function; resolves when the response head
   * arrives. `bind` gets the outgoing request at once, so a time limit can
   * destroy it (and the upload with it) while the head is awaited.
   */
  async forward(
    invocation: Invocation,
    invocationId: string,
    bind: (req: http.ClientRequest) => void,
  ): Promise<http.IncomingMessage> {
    const { headers: raw, clientIp } = invocation;
    const headers: string[] = [];
    let length: string | null = null;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      if (HOP_BY_HOP.has(name) || name.startsWith('x-hearth-')) continue;
      if (clientIp !== undefined && CLIENT_ADDRESS.has(name)) continue;
      if (name === 'content-length') length = raw[i + 1]!;
      else headers.push(name, raw[i + 1]!);
    }
    headers.push('host', invocation.host, CF_HEADER, `{"invocation":"${invocationId}"}`);
    if (clientIp !== undefined) headers.push('x-forwarded-for', clientIp, 'x-real-ip', clientIp);
    const body = invocation.body && (await readHead(invocation.body));
    if (body?.rest === null) headers.push('content-length', String(body.head.length));
    else if (body && length !== null) headers.push('content-length', length);
    return new Promise((resolve, reject) => {
      const req = http.request(
        { agent: this.agent, method: invocation.method, path: invocation.path, headers },
        resolve,
      );
      req.on('error', reject);
      bind(req);
      if (!body) return void req.end();
      if (body.rest === null) return void req.end(body.head);
      req.write(body.head);
      const { rest } = body;
      rest.on('error', (e) => req.destroy(e)).pipe(req);
      // An upload cut short (workerd closed the connection, a time limit) is
      // still read to its end and dropped, so the caller's connection is not
      // left holding a body nobody reads. A caller that goes away ends it too.
      req.once('close', () => {
        if (!rest.readableEnded) rest.resume();
      });
    });
  }

  async kill(): Promise<void> {
    if (this.alive) {
      this.exitReason = 'killed';
      // SIGKILL: a function spinning in a loop never gets to handle SIGTERM, and workerd holds no state to save.
      this.child.kill('SIGKILL');
    }
    await this.closed;
  }
}

/**
 * Kills workerd processes left by a Hearth process that died without shutting
 * down (run directories are named `<owner pid>-...`). A pid is only killed if
 * it still runs in that directory, so a recycled pid is never hit.
 */
export function sweepOrphans(runRoot: string): void {
  let dirs: string[];
  try {
    dirs = readdirSync(runRoot);
  } catch {
    return;
  }
  for (const dir of dirs) {
    const owner = Number(dir.split('-')[0]);
    if (owner === process.pid || isAlive(owner)) continue;
    const runDir = path.join(runRoot, dir);
    try {
      const pid = Number(readFileSync(path.join(runDir, 'pid'), 'utf8'));
      if (readlinkSync(`/proc/${pid}/cwd`) === runDir) process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    rmSync(runDir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
