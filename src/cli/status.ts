import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { loadConfig, type Config } from '../config.ts';
import { Faults, systemClock, type Platform } from '../context.ts';
import { runningPort } from '../db/embedded.ts';
import { Databases } from '../db/pools.ts';
import { fail } from '../errors.ts';
import { connectionInfo, type ConnectionInfo } from '../platform/connection-info.ts';
import { defaultProject, findProject } from '../platform/projects.ts';
import { MasterKey } from '../secrets.ts';
import { readServerRecord, type ServerRecord } from './server-file.ts';
import { firstOwner } from '../platform/accounts.ts';

/**
 * The data folder of the local Hearth: HEARTH_DATA_DIR, else the nearest
 * `.hearth` in the working folder or above it (as git finds .git), so a
 * command run in an app folder inside the checkout (examples/todo-app) finds
 * the checkout's Hearth; else ./.hearth, for the error that says to start it.
 * `hearth start` does not search: it makes ./.hearth where it is run.
 */
export function findDataDir(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  if (env.HEARTH_DATA_DIR !== undefined) return path.resolve(env.HEARTH_DATA_DIR);
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, '.hearth');
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
    if (path.dirname(dir) === dir) return path.resolve(cwd, '.hearth');
  }
}

/**
 * The local Hearth's configuration as the CLI sees it: the server's
 * variables, with what the running server left in its data folder standing
 * in for those not given: the embedded cluster's port (its postmaster.pid)
 * for HEARTH_DB_PORT, the server's URL (server.json) for HEARTH_PORT (or 0).
 * So a Hearth started on other ports is found from HEARTH_DATA_DIR alone; a
 * variable given still wins.
 */
export function localConfig(env: NodeJS.ProcessEnv): Config {
  const config = loadConfig({ ...env, HEARTH_DATA_DIR: findDataDir(env) });
  if (!config.databaseUrl && !env.HEARTH_DB_PORT) config.dbPort = runningPort(config.dataDir) ?? config.dbPort;
  // HEARTH_PORT=0 let the server pick its port: only server.json knows it.
  const server = runningServer(config.dataDir);
  if (!(Number(env.HEARTH_PORT) > 0) && server) config.publicUrl ??= server.url;
  return config;
}

/**
 * The server `hearth start` recorded in the data folder (server.json, written
 * once it listens and removed when it stops), or null when there is none or
 * its process is gone (killed outright, so the file stayed).
 */
export function runningServer(dataDir: string): ServerRecord | null {
  const server = readServerRecord(dataDir);
  if (!server) return null;
  try {
    process.kill(server.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return null;
  }
  return server;
}

/**
 * The default project's connection details (or those of the project `ref`),
 * read from the same data folder / DATABASE_URL as the server (localConfig;
 * with a fresh management token): what `hearth status` prints and how the other commands
 * reach the local Hearth.
 */
export async function localConnection(config: Config, ref?: string): Promise<ConnectionInfo> {
  let url = config.databaseUrl;
  if (!url) {
    const pwFile = path.join(config.dataDir, 'pg-password');
    if (!existsSync(pwFile))
      throw fail(
        'not_started',
        `No Hearth data in ${config.dataDir}: run \`npm start\` first (commands look for .hearth in the working folder and the folders above it; HEARTH_DATA_DIR names another).`,
      );
    // Its cluster runs while postmaster.pid names a live server; otherwise say so, rather than
    // "connection refused" on a port (the default one, as the stopped cluster's is not known).
    if (runningPort(config.dataDir) === null)
      throw fail(
        'not_running',
        `Hearth is not running on ${config.dataDir} (its PostgreSQL is stopped): start it with \`npm start\`.`,
      );
    url = `postgres://postgres:${readFileSync(pwFile, 'utf8').trim()}@127.0.0.1:${config.dbPort}/postgres`;
  }
  const dbs = new Databases(url, config.controlDb);
  const p: Platform = {
    config,
    dbs,
    master: MasterKey.load(config.masterKey, config.dataDir),
    clock: systemClock,
    log: pino({ level: 'silent' }),
    faults: new Faults(),
  };
  try {
    const project = await (ref === undefined ? defaultProject(dbs.control) : findProject(dbs.control, ref)).catch(
      (err) => {
        throw fail(
          'not_running',
          `Cannot reach Hearth's database (${(err as Error).message}). Is Hearth running? Start it with \`npm start\`.`,
        );
      },
    );
    if (!project && ref !== undefined)
      throw fail('not_found', `This Hearth has no project "${ref}": \`hearth projects list\` shows them.`);
    if (!project) throw fail('not_started');
    return await connectionInfo(p, project, (await firstOwner(p.dbs.control, project.organization_id)).id);
  } finally {
    await dbs.close();
  }
}

/** `hearth status`: the default project's details (or `ref`'s) as text, env lines or JSON. */
export async function runStatus(config: Config, output: string, ref?: string): Promise<number> {
  const info = await localConnection(config, ref);
  // The embedded database can be up while no server listens: still starting (its URL is not
  // known yet), or the server was killed and left PostgreSQL behind. Both are "not running",
  // so a script polling status until it succeeds gets the URL of a server that answers.
  // (With DATABASE_URL the server may run on another machine: the settings are trusted.)
  if (!config.databaseUrl && !runningServer(config.dataDir))
    throw fail(
      'not_running',
      `Hearth's database is up but no Hearth server is listening on ${config.dataDir} (still starting, or stopped): start it with \`npm start\`, or wait for it to print "Hearth is running".`,
    );
  if (output === 'json') console.log(JSON.stringify(info, null, 2));
  else if (output === 'env')
    console.log(
      Object.entries(info)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
  else
    console.log(
      Object.entries(info)
        .map(([k, v]) => `${k.padEnd(18)}${v}`)
        .join('\n'),
    );
  return 0;
}
