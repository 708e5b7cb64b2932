/**
 * The functions runtime owned by a Hearth process: deploys versions, keeps one
 * workerd instance per running function version, forwards invocations to it
 * with a wall-clock limit, and records what each invocation logged. Nothing
 * here speaks Hearth's HTTP API; routes call these methods with plain values.
 */
import { createHash, randomUUID } from 'node:crypto';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import { fail, HearthError } from '../errors.ts';
import { bundleFunction, stopBundler } from './bundle.ts';
import { Instance, sweepOrphans, type InstanceLog, type Invocation } from './instance.ts';
import { functionNetworkPolicy, type NetworkPolicy } from './network.ts';
import type { FunctionLogEntry, FunctionRecord, FunctionStore, ProjectSecrets } from './store.ts';
import { assertFunctionName, checkSecrets, checkSource, type FunctionSource } from './validate.ts';

export interface FunctionsRuntimeOptions {
  store: FunctionStore;
  /** Wall-clock limit of one invocation, body streaming included. */
  timeoutMs?: number;
  /** V8 heap limit of one function instance. */
  memoryLimitMb?: number;
  /** An instance with no request for this long is stopped. */
  idleMs?: number;
  /** Variables every function of a project sees besides its secrets (SUPABASE_URL, keys, ...). */
  platformEnv?: (projectRef: string) => Record<string, string> | Promise<Record<string, string>>;
  /**
   * `host:port` of this process's own HTTP listener, asked when an instance
   * starts: a function's requests to its SUPABASE_URL go there directly (the
   * network policy refuses loopback, where a local Hearth listens). Null or
   * absent: they take the public network like any other request.
   */
  ownApi?: () => string | null;
}

export interface FunctionInfo {
  name: string;
  version: number;
  entrypoint: string;
  verifyJwt: boolean;
  createdAt: string;
}

export type { Invocation } from './instance.ts';

/** A function's response as the runtime hands it to the HTTP route. */
export interface Invoked {
  status: number;
  /** The function's headers, hop-by-hop ones removed. */
  headers: http.IncomingHttpHeaders;
  /** The body as it streams from workerd, or whole when it came with the head; null for a status that has none. */
  body: Readable | Buffer | null;
  /** What to report for a body that failed part-way (time limit, crash, memory). */
  failure(error: unknown): Promise<HearthError>;
}

interface Slot {
  key: string;
  version: number;
  instance: Promise<Instance>;
  ready: Instance | null;
}

/** Values of the promises seen resolved (see resolvedValue). */
const resolved = new WeakMap<Promise<unknown>, { value: unknown }>();

/**
 * The value of a cached promise that has already resolved, read without a
 * microtask turn; undefined until then (it is noted when it resolves, so the
 * cache's next hand-out of the same promise is read at once).
 */
function resolvedValue<T>(promise: Promise<T>): { value: T } | undefined {
  const known = resolved.get(promise);
  if (!known) promise.then((value) => void resolved.set(promise, { value }), ignore);
  return known as { value: T } | undefined;
}
const ignore = () => {};

/** Decodes as Response.text() does (a leading BOM dropped). */
const UTF8 = new TextDecoder();
const LOG_FLUSH_MS = 200;
const ACQUIRE_ATTEMPTS = 5;
const NULL_BODY = new Set([101, 204, 205, 304]);

const info = (r: FunctionRecord): FunctionInfo => ({
  name: r.name,
  version: r.version,
  entrypoint: r.entrypoint,
  verifyJwt: r.verifyJwt,
  createdAt: r.createdAt,
});

export class FunctionsRuntime {
  readonly store: FunctionStore;
  private readonly timeoutMs: number;
  private readonly memoryLimitMb: number;
  private readonly idleMs: number;
  private readonly network: NetworkPolicy;
  private readonly runRoot: string;
  private readonly slots = new Map<string, Slot>();
  private readonly bindings = new Map<
    string,
    {
      secrets: ProjectSecrets;
      env: Record<string, string> | undefined;
      bindings: Record<string, string>;
      digest: string;
      /** The instance key of the last version seen with these bindings, built once. */
      last: { version: number; key: string } | null;
    }
  >();
  private readonly instances = new Set<Instance>();
  private readonly starting = new Set<Promise<Instance>>();
  private readonly active = new Set<(error: HearthError) => void>();
  private readonly idleTimers = new Map<Instance, NodeJS.Timeout>();
  private pendingLogs = new Map<string, FunctionLogEntry[]>();
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    config: Config,
    private readonly options: FunctionsRuntimeOptions,
  ) {
    this.store = options.store;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.memoryLimitMb = options.memoryLimitMb ?? 128;
    this.idleMs = options.idleMs ?? 5 * 60_000;
    this.network = functionNetworkPolicy(config.outboundAllow);
    // Unix socket paths are limited to ~107 bytes; a deep data dir falls back to the temp dir.
    const preferred = path.join(config.dataDir, 'functions', 'run');
    this.runRoot = preferred.length <= 80 ? preferred : path.join(os.tmpdir(), 'hearth-functions');
    sweepOrphans(this.runRoot);
  }

  async deployFunction(
    projectRef: string,
    name: string,
    source: FunctionSource,
    secrets?: Record<string, string>,
  ): Promise<FunctionInfo> {
    assertFunctionName(name);
    const entrypoint = checkSource(source);
    if (secrets) checkSecrets(secrets);
    const bundle = await bundleFunction(source.files, entrypoint);
    if (secrets) await this.store.updateSecrets(projectRef, secrets, []);
    const record = await this.store.publish(projectRef, name, {
      entrypoint,
      verifyJwt: source.verifyJwt ?? true,
      files: source.files,
      bundle,
    });
    // In-flight requests finish on the old instance; the next one starts the new version.
    this.retire(`${projectRef}/${name}`);
    return info(record);
  }

  async getFunction(projectRef: string, name: string): Promise<FunctionInfo | null> {
    assertFunctionName(name);
    const record = await this.store.get(projectRef, name);
    return record && info(record);
  }

  async listFunctions(projectRef: string): Promise<FunctionInfo[]> {
    return (await this.store.list(projectRef)).map(info);
  }

  async removeFunction(projectRef: string, name: string): Promise<void> {
    assertFunctionName(name);
    if (!(await this.store.remove(projectRef, name))) throw this.missing(name);
    this.retire(`${projectRef}/${name}`);
  }

  async setSecrets(projectRef: string, secrets: Record<string, string>): Promise<void> {
    checkSecrets(secrets);
    await this.store.updateSecrets(projectRef, secrets, []);
    this.retireProject(projectRef);
  }

  async unsetSecrets(projectRef: string, names: string[]): Promise<void> {
    await this.store.updateSecrets(projectRef, {}, names);
    this.retireProject(projectRef);
  }

  /** Names and a SHA-256 digest of each value (as Supabase shows them); values never leave. */
  async listSecrets(projectRef: string): Promise<{ name: string; digest: string }[]> {
    const { values } = await this.store.getSecrets(projectRef);
    return Object.keys(values)
      .sort()
      .map((name) => ({ name, digest: createHash('sha256').update(values[name]).digest('hex') }));
  }

  /** Newest first; `before` is the cursor of an entry already read, for the page after it. */
  async readLogs(
    projectRef: string,
    name: string,
    { limit = 100, before }: { limit?: number; before?: string } = {},
  ): Promise<FunctionLogEntry[]> {
    assertFunctionName(name);
    await this.flushLogs();
    return this.store.readLogs(projectRef, name, Math.max(1, Math.min(limit, 1000)), before);
  }

  /**
   * Runs the function on `request` (any method, streaming body) and resolves
   * with its response once the head arrives; the body streams through. The
   * function sees the request's path and query as given. Platform failures are
   * thrown as HearthError: 404 function_not_found, 503 function_boot_error,
   * 504 function_timeout, 546 function_memory_limit, 502 function_crashed,
   * 500 function_error (the function threw).
   */
  async invokeFunction(projectRef: string, name: string, request: Request): Promise<Response> {
    const url = new URL(request.url);
    const headers: string[] = [];
    request.headers.forEach((value, header) => void headers.push(header, value));
    const invoked = await this.invoke(projectRef, name, {
      method: request.method,
      path: url.pathname + url.search,
      host: url.host,
      headers,
      body: request.body && Readable.fromWeb(request.body as import('node:stream/web').ReadableStream<Uint8Array>),
      callerGone: () => request.signal.aborted,
    });
    const out = new Headers();
    for (const [header, value] of Object.entries(invoked.headers)) {
      for (const v of Array.isArray(value) ? value : [value!]) out.append(header, v);
    }
    if (!invoked.body) return new Response(null, { status: invoked.status, headers: out });
    if (Buffer.isBuffer(invoked.body))
      return new Response(invoked.body as Uint8Array<ArrayBuffer>, { status: invoked.status, headers: out });
    const res = invoked.body;
    const chunks = res[Symbol.asyncIterator]();
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const { value, done } = await chunks.next();
          if (done) controller.close();
          else controller.enqueue(value as Uint8Array);
        } catch (e) {
          controller.error(await invoked.failure(e));
        }
      },
      cancel: () => void res.destroy(),
    });
    return new Response(body, { status: invoked.status, headers: out });
  }

  /**
   * invokeFunction without web Request and Response objects, for the HTTP
   * route: the body of the result is the socket stream from workerd, piped
   * as is, or a buffer when it arrived whole with the head. Destroying the
   * stream before its end logs the invocation as cancelled.
   * `known` holds what the caller has just read: the function's record, and
   * the project's platform variables (else `platformEnv` is asked).
   */
  async invoke(
    projectRef: string,
    name: string,
    invocation: Invocation,
    known: { record?: FunctionRecord; env?: Promise<Record<string, string>> } = {},
  ): Promise<Invoked> {
    if (this.stopped) throw fail('functions_stopped');
    assertFunctionName(name);
    const startedAt = performance.now();
    // A redeploy or a crash can retire the instance between lookup and use; look again then.
    for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt++) {
      // The caller's record (the route looked it up to check verify_jwt) saves a lookup the first time.
      const record = attempt === 0 && known.record ? known.record : await this.store.get(projectRef, name);
      if (!record) throw this.missing(name);
      const acquired = this.acquire(projectRef, record, known.env);
      const instance =
        acquired instanceof Promise
          ? await acquired.catch((err: unknown) => this.unstarted(projectRef, record, invocation, startedAt, err))
          : acquired;
      if (instance) return this.run(projectRef, record, instance, invocation);
    }
    throw fail(
      'function_unavailable',
      `The function "${name}" kept changing or stopping while this request waited; try again.`,
    );
  }

  /** The workflows' `function` step: POSTs `body` as JSON, returns the status and the (JSON if possible) body. */
  async invokeFunctionJson(
    projectRef: string,
    name: string,
    body: unknown,
  ): Promise<{ status: number; body: unknown }> {
    // Plain values rather than a web Request and Response: those cost more than the invocation.
    const invoked = await this.invoke(projectRef, name, {
      method: 'POST',
      path: `/${name}`,
      host: 'localhost',
      headers: ['content-type', 'application/json'],
      body: Readable.from([Buffer.from(JSON.stringify(body ?? null))]),
      callerGone: () => false,
    });
    let text = '';
    if (Buffer.isBuffer(invoked.body)) text = UTF8.decode(invoked.body);
    else if (invoked.body) {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of invoked.body) chunks.push(chunk as Buffer);
      } catch (e) {
        throw await invoked.failure(e);
      }
      text = UTF8.decode(Buffer.concat(chunks));
    }
    try {
      return { status: invoked.status, body: text === '' ? null : JSON.parse(text) };
    } catch {
      return { status: invoked.status, body: text };
    }
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    const stopping = fail('functions_stopped');
    for (const stop of [...this.active]) stop(stopping);
    for (const timer of this.idleTimers.values()) clearTimeout(timer);
    this.idleTimers.clear();
    await Promise.allSettled([...this.starting]);
    this.slots.clear();
    await Promise.all([...this.instances].map((i) => i.kill()));
    await this.flushLogs();
    await stopBundler();
  }

  private missing(name: string): HearthError {
    return fail('function_not_found', `No function named "${name}" is deployed in this project.`);
  }

  /**
   * The live instance for this version and these secrets, started if needed,
   * with the request already counted in flight; null if it was retired first.
   * Synchronous when the secrets and variables were already loaded and the
   * instance is running (every request but the first few): no microtask turn
   * per cached lookup on the hot path.
   */
  private acquire(
    projectRef: string,
    record: FunctionRecord,
    env?: Promise<Record<string, string>>,
  ): Instance | null | Promise<Instance | null> {
    const secretsLoad = this.store.getSecrets(projectRef);
    const envLoad = env ?? this.options.platformEnv?.(projectRef);
    const secrets = resolvedValue(secretsLoad);
    const vars = envLoad instanceof Promise ? resolvedValue(envLoad) : { value: envLoad };
    if (!secrets || !vars)
      return Promise.all([secretsLoad, envLoad]).then(([s, e]) => this.instanceFor(projectRef, record, s, e));
    return this.instanceFor(projectRef, record, secrets.value, vars.value);
  }

  private instanceFor(
    projectRef: string,
    record: FunctionRecord,
    secrets: ProjectSecrets,
    env: Record<string, string> | undefined,
  ): Instance | null | Promise<Instance | null> {
    const slotKey = `${projectRef}/${record.name}`;
    // Both sources are cached objects: the digest is recomputed only when one of them was reloaded.
    let known = this.bindings.get(slotKey);
    if (known?.secrets !== secrets || known.env !== env) {
      const bindings = { ...env, ...secrets.values };
      known = {
        secrets,
        env,
        bindings,
        digest: createHash('sha256').update(JSON.stringify(bindings)).digest('hex'),
        last: null,
      };
      this.bindings.set(slotKey, known);
    }
    const { bindings } = known;
    if (known.last?.version !== record.version)
      known.last = { version: record.version, key: `${record.version}:${secrets.revision}:${known.digest}` };
    const { key } = known.last;
    let slot = this.slots.get(slotKey);
    // A request holding an older record must not displace a newer version.
    if (slot && slot.version > record.version) return null;
    if (slot?.key !== key) slot = this.startSlot(projectRef, slotKey, key, record, bindings);
    if (slot.ready) return this.claim(slotKey, slot.ready);
    return slot.instance.then((instance) => this.claim(slotKey, instance));
  }

  /** Counts a request in flight on `instance`, unless it stopped or was retired meanwhile. */
  private claim(slotKey: string, instance: Instance): Instance | null {
    if (!instance.alive || instance.retired) {
      this.dropSlot(slotKey, instance);
      return null;
    }
    // Counted in the same turn as the check, so a retire cannot kill it in between.
    instance.inflight++;
    clearTimeout(this.idleTimers.get(instance));
    return instance;
  }

  private startSlot(
    projectRef: string,
    slotKey: string,
    key: string,
    record: FunctionRecord,
    bindings: Record<string, string>,
  ): Slot {
    this.retire(slotKey);
    const onLog = (log: InstanceLog) => this.log(projectRef, record.name, record.version, log);
    const runDir = path.join(this.runRoot, `${process.pid}-${randomUUID().slice(0, 8)}`);
    const slot: Slot = {
      key,
      version: record.version,
      ready: null,
      instance: Instance.start(
        runDir,
        {
          bundle: record.bundle,
          bindings,
          network: this.network,
          memoryLimitMb: this.memoryLimitMb,
          ownApi: this.options.ownApi?.() ?? null,
        },
        onLog,
      ),
    };
    this.slots.set(slotKey, slot);
    this.starting.add(slot.instance);
    void slot.instance.finally(() => this.starting.delete(slot.instance)).catch(() => {});
    slot.instance.then(
      (i) => {
        slot.ready = i;
        this.instances.add(i);
        void i.closed.then(() => {
          this.instances.delete(i);
          clearTimeout(this.idleTimers.get(i));
          this.idleTimers.delete(i);
          this.dropSlot(slotKey, i);
        });
      },
      () => {
        if (this.slots.get(slotKey) === slot) this.slots.delete(slotKey);
      },
    );
    return slot;
  }

  /** Forgets the slot if it still routes to `instance`. */
  private dropSlot(slotKey: string, instance: Instance): void {
    if (this.slots.get(slotKey)?.ready === instance) this.slots.delete(slotKey);
  }

  /** Stops routing to a slot's instance; it is killed once its last request is done. */
  private retire(slotKey: string): void {
    const slot = this.slots.get(slotKey);
    if (!slot) return;
    this.slots.delete(slotKey);
    const retire = (i: Instance) => {
      i.retired = true;
      if (i.inflight === 0) void i.kill();
    };
    if (slot.ready) retire(slot.ready);
    else slot.instance.then(retire, () => {});
  }

  private retireProject(projectRef: string): void {
    for (const key of [...this.slots.keys()]) if (key.startsWith(`${projectRef}/`)) this.retire(key);
  }

  /**
   * A call whose instance failed to start (function_boot_error): its closing
   * entry is logged as a call that ran would have been, then the error thrown.
   */
  private unstarted(
    projectRef: string,
    record: FunctionRecord,
    invocation: Invocation,
    startedAt: number,
    err: unknown,
  ): never {
    const status = err instanceof HearthError ? err.status : 500;
    const code = err instanceof HearthError ? err.code : 'internal_error';
    const { method } = invocation;
    const path = invocation.path.split('?', 1)[0]!;
    this.log(
      projectRef,
      record.name,
      record.version,
      { invocationId: randomUUID(), level: 'error', message: `${method} ${path} ${status} ${code}` },
      { method, path, status, code, durationMs: Math.round(performance.now() - startedAt) },
    );
    throw err;
  }

  private async run(
    projectRef: string,
    record: FunctionRecord,
    instance: Instance,
    invocation: Invocation,
  ): Promise<Invoked> {
    const invocationId = randomUUID();
    const startedAt = performance.now();
    const { method } = invocation;
    const path = invocation.path.split('?', 1)[0]!;
    let req: http.ClientRequest | null = null;
    let response: http.IncomingMessage | null = null;
    let stoppedBy: HearthError | null = null;
    let done = false;

    const finish = (status: number, code: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.active.delete(stop);
      this.log(
        projectRef,
        record.name,
        record.version,
        {
          invocationId,
          level: status >= 500 ? 'error' : 'info',
          message: `${method} ${path} ${status}${code ? ` ${code}` : ''}`,
        },
        { method, path, status, code, durationMs: Math.round(performance.now() - startedAt) },
      );
      if (--instance.inflight === 0) this.settle(instance);
    };
    // Ends the invocation from outside (time limit, shutdown), even if nobody reads the body.
    const stop = (error: HearthError) => {
      stoppedBy = error;
      // Still reading the start of the upload: a caller that stops sending must not hold the invocation.
      if (!req) invocation.body?.destroy(error);
      req?.destroy(error);
      response?.destroy(error);
      finish(error.status, error.code);
    };
    const timer = setTimeout(() => {
      // The function may be spinning; nothing else should be sent to this process.
      instance.retired = true;
      this.dropSlot(`${projectRef}/${record.name}`, instance);
      stop(fail('function_timeout', `The function did not finish within ${this.timeoutMs} ms.`));
    }, this.timeoutMs).unref();
    this.active.add(stop);

    try {
      response = await instance.forward(invocation, invocationId, (r) => {
        req = r;
      });
    } catch (e) {
      // A caller that went away mid-upload is not a crash of the function.
      const error = stoppedBy ?? (invocation.callerGone() ? fail('client_cancelled') : await this.failure(instance, e));
      finish(error.status, error.code);
      throw error;
    }
    const res = response;
    const status = res.statusCode ?? 502;
    const failed = res.headers['x-hearth-error'];
    if (typeof failed === 'string') {
      res.resume();
      finish(500, failed);
      // The worker shim names what failed: no handler, or the handler threw.
      throw failed === 'function_no_handler'
        ? fail('function_no_handler')
        : fail('function_error', 'The function threw an error; its logs have the details.');
    }
    const headers = res.headers;
    delete headers.connection;
    delete headers['keep-alive'];
    delete headers['transfer-encoding'];
    const failure = async (e: unknown) => stoppedBy ?? (await this.failure(instance, e));
    if (NULL_BODY.has(status)) {
      res.resume();
      finish(status, null);
      return { status, headers, body: null, failure };
    }
    // An answer that arrived whole with its head (most API answers) is handed
    // over as a buffer: the caller gets head and body in one write, with no
    // stream to pipe. Only with both headers, which Fastify would otherwise add.
    if (res.complete && headers['content-length'] !== undefined && headers['content-type'] !== undefined) {
      const body = (res.read() as Buffer | null) ?? Buffer.alloc(0);
      finish(status, null);
      return { status, headers, body, failure };
    }
    res.once('end', () => finish(status, null));
    res.once('close', () => {
      if (done) return;
      // Destroyed without an error: the consumer (the caller) went away.
      if (!res.errored) return finish(status, 'client_cancelled');
      void failure(res.errored).then((error) => finish(status, error.code));
    });
    return { status, headers, body: res, failure };
  }

  /** Names why a forwarded request failed, once the process's fate is known. */
  private async failure(instance: Instance, error: unknown): Promise<HearthError> {
    if (error instanceof HearthError) return error;
    await Promise.race([instance.closed, new Promise((r) => setTimeout(r, 1000).unref())]);
    if (instance.exitReason === 'memory')
      return fail(
        'function_memory_limit',
        `The function exceeded its memory limit of ${this.memoryLimitMb} MB and was stopped.`,
      );
    // The process lives on: the function's own code failed, e.g. its response body stream threw.
    if (instance.alive) return fail('function_error');
    return fail('function_crashed');
  }

  /** Called when an instance has no request left: retired ones die now, others after idleMs. */
  private settle(instance: Instance): void {
    if (instance.retired || this.stopped) return void instance.kill();
    this.idleTimers.set(
      instance,
      setTimeout(() => {
        instance.retired = true;
        void instance.kill();
      }, this.idleMs).unref(),
    );
  }

  private log(
    projectRef: string,
    name: string,
    version: number,
    log: InstanceLog,
    request?: FunctionLogEntry['request'],
  ): void {
    const entry: FunctionLogEntry = {
      at: new Date().toISOString(),
      version,
      invocationId: log.invocationId,
      level: log.level,
      message: log.message,
    };
    if (request) entry.request = request;
    const key = `${projectRef}\u0000${name}`;
    const list = this.pendingLogs.get(key);
    if (list) list.push(entry);
    else this.pendingLogs.set(key, [entry]);
    this.flushTimer ??= setTimeout(() => void this.flushLogs(), LOG_FLUSH_MS).unref();
  }

  private flushLogs(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.pendingLogs;
    this.pendingLogs = new Map();
    this.flushing = this.flushing
      .then(() =>
        Promise.all(
          [...batch].map(([key, entries]) => {
            const [projectRef, name] = key.split('\u0000');
            return this.store
              .appendLogs(projectRef, name, entries)
              .catch((e) => process.emitWarning(`functions: could not store logs of ${name}: ${(e as Error).message}`));
          }),
        ),
      )
      .then(() => {});
    return this.flushing;
  }
}

export function createFunctionsRuntime(config: Config, options: FunctionsRuntimeOptions): FunctionsRuntime {
  return new FunctionsRuntime(config, options);
}
