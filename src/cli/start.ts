import { writeFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { Config } from '../config.ts';
import { fail } from '../errors.ts';
import { startEmbedded } from '../db/embedded.ts';
import { createLogger } from '../server/logger.ts';
import { firstOwner } from '../platform/accounts.ts';
import { connectionInfo } from '../platform/connection-info.ts';

/**
 * V8 grows its young generation (up to 2 x 16 MB) when many objects survive a
 * scavenge, as they do while the modules load and the server is set up, and
 * gives that memory back only when its memory reducer runs, 8 s to minutes
 * later: an idle Hearth held ~8 MB more than it needs. Start-up runs with the
 * young generation at its initial size (more, cheaper scavenges); once
 * listening, V8's default growth factor (2) is back, so a loaded server grows
 * it as before. V8 reads this flag each time it would grow the space.
 */
const holdYoungGeneration = (hold: boolean) => setFlagsFromString(`--semi-space-growth-factor=${hold ? 1 : 2}`);

/**
 * What start-up leaves behind (garbage and half-empty heap pages, ~5 MB) goes
 * back to the system when V8's memory reducer runs: 8 s after the last full
 * GC, but only if the allocation rate has dropped by then, which after a
 * start is often judged too early (it then waits 8 s more, and more). Until
 * the server is used, for 30 s at most, V8 favours memory
 * (--optimize-for-size), which lets the reducer run at its first chance. The
 * first request other than a health check ends that at once: the flag also
 * makes V8 collect more often, which costs a loaded server ~40% of its
 * throughput. (It also sets --max-semi-space-size, which V8 reads only when
 * it creates a heap; Hearth starts no worker threads.)
 */
function settleAfterStart(server: Server | undefined): void {
  setFlagsFromString('--optimize-for-size');
  const end = () => {
    clearTimeout(timer);
    server?.off('request', onRequest);
    setFlagsFromString('--no-optimize-for-size');
  };
  const onRequest = (req: IncomingMessage) => {
    if (!req.url?.startsWith('/health')) end();
  };
  const timer = setTimeout(end, 30_000).unref();
  server?.on('request', onRequest);
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
  holdYoungGeneration(true);
  // The embedded PostgreSQL starts while the server's modules load: a restart
  // waits for the slower of the two (a few hundred ms each), not their sum.
  const log = await createLogger(config);
  const embedded = config.databaseUrl ? undefined : startEmbedded(config.dataDir, config.dbPort, log);
  embedded?.catch(() => {}); // its failure is reported where startHearth awaits it
  const { startHearth } = await import('../server/runtime.ts');
  const hearth = await startHearth(config, { log, embedded }).catch((err) => {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw fail(
      'port_in_use',
      `${config.host}:${config.port} is already in use (another Hearth?): choose another port with HEARTH_PORT or --port.`,
    );
  });
  holdYoungGeneration(false);
  settleAfterStart(hearth.app?.server);
  const runtimeFile = path.join(config.dataDir, 'server.json');
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
    rmSync(runtimeFile, { force: true });
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
    writeFileSync(runtimeFile, `${JSON.stringify({ url: hearth.url, pid: process.pid })}\n`);
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
