import type { IncomingMessage, Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import type { Config } from '../config.ts';
import { fail } from '../errors.ts';
import { launchEmbedded } from '../db/embedded.ts';
import { removeOwnServerRecord, writeServerRecord } from './server-file.ts';

/**
 * Settings that keep a server small until it is used: the first request other
 * than a health check, or the first realtime handshake, ends them (a worker,
 * which serves none, ends them once started).
 * - V8 grows its young generation (up to 2 x 16 MB) when many objects survive
 *   a scavenge, as they do while the modules load and the server is set up,
 *   and gives that memory back only when its memory reducer runs, 8 s to
 *   minutes later. Until used, the young generation stays at its initial size
 *   (more, cheaper scavenges); V8 reads this flag each time it would grow it.
 * - Until used, V8's optimising compiler TurboFan is off (--no-turbofan, also
 *   on `npm start`'s command line so that it holds from the first module): a
 *   few functions hot only at start-up (path normalisation while the build is
 *   checked, Buffer's pool) brought it in, and its ~3.3 MB of machine code
 *   stayed counted in an idle server's RSS; background ticks run well enough
 *   in the baseline tier. (Not --max-opt: lowering it turns TurboFan off too,
 *   and raising it again does not turn it back on.)
 */
const lean = (on: boolean) => {
  setFlagsFromString(`--semi-space-growth-factor=${on ? 1 : 2}`);
  setFlagsFromString(on ? '--no-turbofan' : '--turbofan');
};

function leanUntilUsed(server: Server | undefined): void {
  if (!server) {
    lean(false);
    return;
  }
  // A realtime socket's handshake is an 'upgrade', not a 'request'.
  const onUse = (req: IncomingMessage) => {
    if (req.url?.startsWith('/health')) return;
    server.off('request', onUse);
    server.off('upgrade', onUse);
    lean(false);
  };
  server.on('request', onUse);
  server.on('upgrade', onUse);
}

/**
 * Not at once: the first requests (a script polling /health for the start to
 * finish) would wait behind the collection.
 */
const COLLECT_AFTER_MS = 250;

/**
 * What start-up leaves behind (garbage, half-empty heap pages, a grown young
 * generation: ~5 MB) would go back to the system only when V8's memory
 * reducer runs, 8 s or more after the last full GC and only once the
 * allocation rate has dropped. Instead, shortly after listening (COLLECT_AFTER_MS),
 * Hearth asks V8 for the collection it makes under memory pressure (the
 * inspector's collectGarbage, which Node 20 offers no other way to reach;
 * ~20-50 ms), with all bytecode not
 * running flushed (--stress-flush-code for that collection only): most of it
 * ran once, at start-up, and what requests need is compiled again on use.
 * The session is disconnected on the next turn: disconnecting inside the
 * callback deadlocks. A node built without the inspector skips this (the
 * reducer gets there later).
 */
async function collectStartGarbage(): Promise<void> {
  const inspector = await import('node:inspector').catch(() => undefined);
  if (!inspector) return;
  const session = new inspector.Session();
  session.connect();
  setFlagsFromString('--stress-flush-code');
  session.post('HeapProfiler.collectGarbage', () =>
    setImmediate(() => {
      setFlagsFromString('--no-stress-flush-code');
      session.disconnect();
    }),
  );
}

/** Shutdown signals Hearth handles itself: drain requests, stop workers, then stop PostgreSQL. */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * A stop that has not finished this long after the signal is cut short, as a
 * second signal does. The drain itself ends after DRAIN_SECONDS (runtime.ts);
 * the rest (workers, pools, PostgreSQL) normally takes a second or two.
 */
const STOP_LIMIT_SECONDS = 20;

/** `hearth start`: runs until SIGINT/SIGTERM/SIGHUP, then drains and stops cleanly. Returns -1 (keep running). */
export async function runStart(config: Config): Promise<number> {
  const started = Date.now();
  lean(true);
  // The embedded PostgreSQL starts first, while the logger and the server's modules load: a
  // restart waits for the slower of the two (a few hundred ms each), not their sum. So this
  // module imports nothing else up front, and PostgreSQL's one message (initdb) waits for the logger.
  const logging = import('../server/logger.ts').then(({ createLogger }) => createLogger(config));
  const embedded = config.databaseUrl
    ? undefined
    : launchEmbedded(config.dataDir, config.dbPort, {
        info: (message) => void logging.then((log) => log.info(message)),
        warn: (message) => void logging.then((log) => log.warn(message)),
      });
  embedded?.catch(() => {}); // its failure is reported where startHearth awaits it
  const log = await logging;
  const { startHearth } = await import('../server/runtime.ts');
  const hearth = await startHearth(config, { log, embedded }).catch((err) => {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw fail(
      'port_in_use',
      `${config.host}:${config.port} is already in use (another Hearth?): choose another port with HEARTH_PORT or --port.`,
    );
  });
  leanUntilUsed(hearth.app?.server);
  setTimeout(() => void collectStartGarbage(), COLLECT_AFTER_MS).unref();
  let stopping = false;
  let forced = false;
  /** A second signal, or a stop past its bound: stop the embedded PostgreSQL (never left running) and exit now. */
  const force = async (why: string) => {
    if (forced) return;
    forced = true;
    hearth.p.log.warn(`${why}: exiting without waiting for the rest of the stop`);
    await (await embedded)?.stop().catch(() => {});
    process.exit(1);
  };
  const shutdown = async (signal: string) => {
    if (stopping) return force(`${signal} received again`);
    stopping = true;
    hearth.p.log.info(`${signal} received: draining requests and stopping (${signal} again exits at once)`);
    removeOwnServerRecord(config.dataDir);
    // The drain is bounded (DRAIN_SECONDS); this catches anything else that would hold the stop.
    setTimeout(
      () => void force(`still stopping ${STOP_LIMIT_SECONDS} s after ${signal}`),
      STOP_LIMIT_SECONDS * 1000,
    ).unref();
    await hearth.stop();
    process.exit(0);
  };
  for (const signal of SIGNALS) process.on(signal, () => void shutdown(signal));

  if (hearth.app) {
    writeServerRecord(config.dataDir, hearth.url);
    const [{ firstOwner }, { connectionInfo }] = await Promise.all([
      import('../platform/accounts.ts'),
      import('../platform/connection-info.ts'),
    ]);
    const owner = await firstOwner(hearth.p.dbs.control, hearth.project.organization_id);
    const info = await connectionInfo(hearth.p, hearth.project, owner.id);
    const password = hearth.owner.password ? ` / ${hearth.owner.password}` : '';
    console.log(`
Hearth is running (role ${config.role}, ready in ${((Date.now() - started) / 1000).toFixed(1)} s).

  Base URL          ${info.BASE_URL}
  Management API    ${info.API_URL}   (routes /v1/..., Authorization: Bearer <management token>)
  Project ref       ${info.PROJECT_REF}
  Publishable key   ${info.PUBLISHABLE_KEY}
  Secret key        ${info.SECRET_KEY}
  Database URL      ${info.DB_URL}
  JWKS URL          ${info.JWKS_URL}
  Owner sign-in     ${owner.email}${password}   (POST ${info.API_URL}/v1/login)

Data folder ${config.dataDir}${config.databaseUrl ? '' : ` (embedded PostgreSQL on 127.0.0.1:${config.dbPort})`}.
\`npx hearth status -o env\` prints these again, with a management token (MANAGEMENT_TOKEN). Ctrl-C stops.
`);
  } else {
    console.log(`Hearth worker is running (role ${config.role}). Ctrl-C stops.`);
  }
  return -1;
}
