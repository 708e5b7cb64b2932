/**
 * Runs the real `hearth` command (bin/hearth.js) as a child process, without
 * blocking the test's own event loop (the Hearth under test runs in it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestHearth } from '../helpers/hearth.ts';

export const bin = path.resolve('bin/hearth.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runHearth(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * The environment of a user of `th` through the management API: a config folder
 * of their own (no login yet) and no local Hearth (an unreachable database), so a
 * command that wrongly fell back to the data folder fails.
 */
export function remoteEnv(th: TestHearth, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: mkdtempSync(path.join(tmpdir(), 'hearth-home-')),
    XDG_CONFIG_HOME: mkdtempSync(path.join(tmpdir(), 'hearth-config-')),
    HEARTH_API_URL: th.url,
    HEARTH_ACCESS_TOKEN: th.info.MANAGEMENT_TOKEN,
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    HEARTH_LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** The environment of `hearth` run beside th's data folder: the local Hearth, no login. */
export function localEnv(th: TestHearth, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: mkdtempSync(path.join(tmpdir(), 'hearth-home-')),
    XDG_CONFIG_HOME: mkdtempSync(path.join(tmpdir(), 'hearth-config-')),
    HEARTH_DATA_DIR: th.config.dataDir,
    DATABASE_URL: process.env.DATABASE_URL,
    HEARTH_CONTROL_DB: th.config.controlDb,
    HEARTH_PUBLIC_URL: th.url,
    HEARTH_LOG_LEVEL: 'silent',
    ...extra,
  };
}
