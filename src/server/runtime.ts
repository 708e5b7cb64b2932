/**
 * One Hearth process: PostgreSQL (embedded unless DATABASE_URL), bootstrap,
 * the HTTP server (roles all/api) and the background workers (roles
 * all/worker). stop() drains in-flight requests, stops workers, closes pools
 * and stops the embedded PostgreSQL cleanly.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { Faults, systemClock, type Clock, type Platform } from '../context.ts';
import { assertDriverPatched } from '../db/driver-patch.ts';
import { launchEmbedded, type LaunchedCluster } from '../db/embedded.ts';
import { Databases } from '../db/pools.ts';
import { startFunctions, type FunctionsService } from '../functions/index.ts';
import { listenForChanges } from '../platform/changes.ts';
import type { ProjectRow } from '../platform/projects.ts';
import { ProjectRegistry } from '../platform/registry.ts';
import { MasterKey } from '../secrets.ts';
import { serverUrl } from '../platform/urls.ts';
import { buildApp } from './app.ts';
import { createLogger } from './logger.ts';
import { registerConfigAreas } from './config-areas.ts';
import { bootstrap, openControl, type OwnerCredentials } from './bootstrap.ts';
import type { Worker } from '../periodic.ts';
import { startWorkers } from './workers.ts';

export interface Hearth {
  p: Platform;
  registry: ProjectRegistry;
  app: FastifyInstance | null;
  url: string;
  databaseUrl: string;
  project: ProjectRow;
  owner: OwnerCredentials;
  stop(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
  faults?: Faults;
  /** The embedded PostgreSQL, already starting (`hearth start` begins it before loading this module); else started here when there is no DATABASE_URL. */
  embedded?: Promise<LaunchedCluster>;
}

/**
 * How long a stop waits for in-flight requests before it closes their
 * connections (a slow upload, a client that never sends the rest of its body,
 * a request stuck on a store): the rest of the stop (workers, pools,
 * PostgreSQL) then runs as usual. Below Docker's 10 s between SIGTERM and
 * SIGKILL, so PostgreSQL still stops cleanly there (README, docs/architecture.md).
 */
export const DRAIN_SECONDS = 8;

/**
 * Stops taking requests and resolves once the in-flight ones have finished,
 * or DRAIN_SECONDS have passed and their connections were closed.
 * Fastify closes idle keep-alive connections once, when closing starts; a
 * connection whose request was still in flight goes idle only later, and would
 * hold the process open for the whole keep-alive timeout (72 s), so idle
 * connections are swept until the server has closed.
 */
async function closeServer(app: FastifyInstance, log: Logger): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
  const cut = setTimeout(() => {
    log.warn(`requests still in flight after ${DRAIN_SECONDS} s of draining: closing their connections`);
    app.server.closeAllConnections();
  }, DRAIN_SECONDS * 1000);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}

export async function startHearth(config: Config, opts: StartOptions = {}): Promise<Hearth> {
  assertDriverPatched();
  registerConfigAreas();
  const log = opts.log ?? (await createLogger(config));
  let embedded: LaunchedCluster | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await (opts.embedded ?? launchEmbedded(config.dataDir, config.dbPort, log));
    databaseUrl = embedded.url;
  }
  if (config.outboundAllow.length) {
    log.warn(
      { allow: config.outboundAllow },
      'HEARTH_OUTBOUND_ALLOW re-opens these ranges to webhooks and functions despite the SSRF guard: use it for development and tests only',
    );
  }
  const dbs = new Databases(databaseUrl, config.controlDb, {
    maxConnections: config.dbMaxConnections,
    queueMs: config.dbQueueTimeoutMs,
    socketPath: embedded?.socketPath,
  });
  const p: Platform = {
    config,
    dbs,
    master: MasterKey.load(config.masterKey, config.dataDir),
    clock: opts.clock ?? systemClock,
    log,
    faults: opts.faults ?? new Faults(),
  };
  let app: FastifyInstance | null = null;
  let workers: Worker[] = [];
  let unlisten: (() => Promise<void>) | null = null;
  let functions: FunctionsService | null = null;
  const registry = new ProjectRegistry(p);
  const stop = async () => {
    if (app) await closeServer(app, log);
    await Promise.all(workers.map((w) => w.stop()));
    await functions?.stop();
    registry.close();
    await unlisten?.().catch(() => {});
    await dbs.close();
    await embedded?.stop();
  };
  // The routes are built while PostgreSQL finishes starting: Node's own work (~100 ms), which
  // needs only the database's address. What needs the database waits for app.ready() below.
  const building = config.role !== 'worker' ? buildApp(p, registry) : null;
  building?.catch(() => {}); // awaited below, also when another step fails first
  try {
    await embedded?.ready;
    await openControl(p);
    log.info({ max: await dbs.fitToServer() }, 'database connection budget (HEARTH_DB_MAX_CONNECTIONS)');
    // The rest waits mostly on PostgreSQL (new connections, the project databases' migrations
    // check): side by side. Nothing is served before all of it is done: LISTEN for changes is
    // up before the registry loads a project.
    const [booted, changes, started, readied] = await Promise.allSettled([
      bootstrap(p),
      listenForChanges(dbs.control, (c) => registry.onChange(c)),
      startFunctions(p, registry),
      building?.then((built) => built.ready()),
    ]);
    // What did start is kept for stop(), also when another part failed.
    if (changes.status === 'fulfilled') unlisten = changes.value;
    if (started.status === 'fulfilled') functions = started.value;
    if (booted.status === 'rejected') throw booted.reason;
    for (const part of [changes, started, readied]) if (part.status === 'rejected') throw part.reason;
    app = await building;
    const { project, owner } = booted.value;
    if (app) {
      await app.listen({ host: config.host, port: config.port });
      const address = app.server.address();
      if (address && typeof address === 'object') config.port = address.port;
    }
    if (config.role !== 'api') workers = startWorkers(p, registry);
    return { p, registry, app, url: serverUrl(config), databaseUrl, project, owner, stop };
  } catch (err) {
    app ??= (await building?.catch(() => null)) ?? null;
    await stop().catch(() => {});
    throw err;
  }
}
