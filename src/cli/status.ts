import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { Config } from '../config.ts';
import { Faults, systemClock, type Platform } from '../context.ts';
import { Databases } from '../db/pools.ts';
import { fail } from '../errors.ts';
import { connectionInfo, type ConnectionInfo } from '../platform/connection-info.ts';
import { defaultProject, findProject } from '../platform/projects.ts';
import { MasterKey } from '../secrets.ts';
import { firstOwner } from '../platform/accounts.ts';

/**
 * The default project's connection details (or those of the project `ref`),
 * read from the same data folder / DATABASE_URL as the server (with a fresh
 * management token): what `hearth status` prints and how the other commands
 * reach the local Hearth.
 */
export async function localConnection(config: Config, ref?: string): Promise<ConnectionInfo> {
  let url = config.databaseUrl;
  if (!url) {
    const pwFile = path.join(config.dataDir, 'pg-password');
    if (!existsSync(pwFile)) throw fail('not_started', `No Hearth data in ${config.dataDir}: run \`npm start\` first.`);
    url = `postgres://postgres:${readFileSync(pwFile, 'utf8').trim()}@127.0.0.1:${config.dbPort}/postgres`;
  }
  const runtimeFile = path.join(config.dataDir, 'server.json');
  if (existsSync(runtimeFile))
    config.publicUrl ??= (JSON.parse(readFileSync(runtimeFile, 'utf8')) as { url: string }).url;
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
