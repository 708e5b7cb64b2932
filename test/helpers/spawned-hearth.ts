/**
 * A `hearth start` in a process of its own, on the test server (DATABASE_URL)
 * with a control database and data folder of its own, removed after the file's
 * tests: for tests of what a started process does (its logs, `npm start`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import postgres from 'postgres';
import { withDatabase } from '../../src/db/pools.ts';
import { randomToken } from '../../src/secrets.ts';
import { dropEverything, serverUrl } from './hearth.ts';
import { freePorts } from './ports.ts';

const runs: { controlDb: string; dataDir: string }[] = [];

/** Drops a control database with the project databases and roles it lists, and removes the data folder. */
export async function dropDeployment(controlDb: string, dataDir: string): Promise<void> {
  const control = postgres(withDatabase(serverUrl(), controlDb), { max: 1, onnotice: () => {} });
  const projects = await control`select db_name, owner_role from platform.projects`.catch(() => []);
  await control.end();
  await dropEverything(
    controlDb,
    projects.map((r) => ({ db: r.db_name as string, role: r.owner_role as string })),
  );
  rmSync(dataDir, { recursive: true, force: true });
}

after(async () => {
  for (const { controlDb, dataDir } of runs) await dropDeployment(controlDb, dataDir);
});

/**
 * Runs `command` (by default `node bin/hearth.js start`) with these variables;
 * resolves once it is ready, with its output so far. `detached`: a process
 * group of its own, as a terminal gives `npm start`.
 */
export async function startSpawned(
  env: Record<string, string>,
  command: [string, ...string[]] = [process.execPath, 'bin/hearth.js', 'start'],
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const run = {
    controlDb: `hearth_t_${randomToken(10, 'abcdefghijklmnopqrstuvwxyz')}`,
    dataDir: mkdtempSync(path.join(tmpdir(), 'hearth-spawned-')),
  };
  runs.push(run);
  const [port] = await freePorts(1);
  const child = spawn(command[0], command.slice(1), {
    env: {
      ...process.env,
      DATABASE_URL: serverUrl(),
      HEARTH_CONTROL_DB: run.controlDb,
      HEARTH_DATA_DIR: run.dataDir,
      HEARTH_PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c;
      if (out.includes('Ctrl-C stops')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`hearth start exited ${code}:\n${out}`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => out };
}

export async function stopSpawned(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
