/**
 * Test harness: a real Hearth (HTTP on an ephemeral port) on a fresh control
 * database of its own, on the server named by DATABASE_URL (scripts/test.ts
 * starts an embedded one when none is given). close() stops it and drops
 * every database and role it made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { loadConfig, type Config } from '../../src/config.ts';
import { Faults, type Clock } from '../../src/context.ts';
import { connectionInfo, type ConnectionInfo } from '../../src/platform/connection-info.ts';
import { randomToken } from '../../src/secrets.ts';
import { firstOwner } from '../../src/platform/accounts.ts';
import { startHearth, type Hearth } from '../../src/server/runtime.ts';

export class TestClock implements Clock {
  private offset = 0;
  now(): Date {
    return new Date(Date.now() + this.offset);
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run tests with `npm test`, which provides a PostgreSQL.');
  return url;
}

export interface TestHearth {
  hearth: Hearth;
  url: string;
  info: ConnectionInfo;
  clock: TestClock;
  faults: Faults;
  config: Config;
  /** fetch against the server with JSON in and out. */
  api(
    method: string,
    path: string,
    opts?: { body?: unknown; token?: string | null; headers?: Record<string, string>; raw?: string },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export interface TestOptions {
  env?: Record<string, string>;
  /** Reuse another TestHearth's control database (a second process on the same data). */
  controlDb?: string;
  dataDir?: string;
  keepData?: boolean;
  /** The process's logger (default: pino at HEARTH_TEST_LOG, else silent). */
  log?: pino.Logger;
}

export async function startTestHearth(opts: TestOptions = {}): Promise<TestHearth> {
  const controlDb = opts.controlDb ?? `hearth_t_${randomToken(10, 'abcdefghijklmnopqrstuvwxyz')}`;
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'hearth-test-'));
  const config = loadConfig({
    DATABASE_URL: serverUrl(),
    HEARTH_DATA_DIR: dataDir,
    HEARTH_PORT: '0',
    HEARTH_CONTROL_DB: controlDb,
    HEARTH_LOG_LEVEL: process.env.HEARTH_TEST_LOG ?? 'silent',
    ...opts.env,
  });
  const clock = new TestClock();
  const faults = new Faults();
  const hearth = await startHearth(config, { clock, faults, log: opts.log ?? pino({ level: config.logLevel }) });
  const owner = await firstOwner(hearth.p.dbs.control, hearth.project.organization_id);
  const info = await connectionInfo(hearth.p, hearth.project, owner.id);
  const url = hearth.url;

  return {
    hearth,
    url,
    info,
    clock,
    faults,
    config,
    async api(method, p, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      const token = o.token === undefined ? info.MANAGEMENT_TOKEN : o.token;
      if (token) headers.authorization = `Bearer ${token}`;
      let body: string | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(url + p, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      const dbs = await hearth.p.dbs.control`select db_name, owner_role from platform.projects`.catch(() => []);
      await hearth.stop();
      if (opts.controlDb || opts.keepData) return;
      await dropEverything(
        controlDb,
        dbs.map((r) => ({ db: r.db_name as string, role: r.owner_role as string })),
      );
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function dropEverything(controlDb: string, projects: { db: string; role: string }[]): Promise<void> {
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  try {
    for (const { db, role } of projects) {
      await admin.unsafe(`drop database if exists "${db}" with (force)`);
      await admin.unsafe(`drop role if exists "${role}"`);
    }
    await admin.unsafe(`drop database if exists "${controlDb}" with (force)`);
  } finally {
    await admin.end();
  }
}
