// Shared set-up for the functions tests: a runtime over a fresh data dir, and
// a check that no workerd process outlives the test file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import {
  createFunctionsRuntime,
  type FunctionsRuntime,
  type FunctionsRuntimeOptions,
} from '../../src/functions/runtime.ts';
import { until } from '../helpers/poll.ts';
import { DirFunctionStore } from './dir-store.ts';

export interface Harness {
  runtime: FunctionsRuntime;
  config: Config;
  close(): Promise<void>;
}

export function startRuntime(options: Partial<FunctionsRuntimeOptions> = {}, overrides: Partial<Config> = {}): Harness {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-fn-test-'));
  const config = loadConfig({}, { dataDir, ...overrides });
  const runtime = createFunctionsRuntime(config, {
    store: new DirFunctionStore(path.join(dataDir, 'functions')),
    timeoutMs: 5000,
    ...options,
  });
  return {
    runtime,
    config,
    async close() {
      await runtime.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** This process's live children as "pid name". */
export function childProcesses(): string[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[1]) === process.pid && fields[0] !== 'Z';
      } catch {
        return false;
      }
    })
    .map((pid) => `${pid} ${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}`);
}

export const get = (name: string, suffix = '', init?: RequestInit) =>
  new Request(`http://localhost/${name}${suffix}`, init);

/**
 * workerd children still alive after `ms`. esbuild's helper is left out: tsx's
 * own transpiler runs one in this process too, and it is not ours to stop.
 */
export async function leftoverChildren(ms = 3000): Promise<string[]> {
  const ours = () => childProcesses().filter((p) => p.endsWith(' workerd'));
  return until(
    async () => ours(),
    (list) => list.length === 0,
    ms,
  );
}
