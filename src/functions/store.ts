/**
 * Where function sources, secrets and logs live. The runtime only talks to the
 * FunctionStore interface. A Hearth server uses DbFunctionStore (db-store.ts,
 * the control database, shared by every process); the runtime tests and its
 * benchmark use test/functions/dir-store.ts, which keeps files in a folder.
 */
import { createHash } from 'node:crypto';
import { fail } from '../errors.ts';

export interface FunctionRecord {
  name: string;
  version: number;
  entrypoint: string;
  verifyJwt: boolean;
  files: Record<string, string>;
  /** The bundled ES module, built once at deploy so no process re-bundles. */
  bundle: string;
  createdAt: string;
}

export type FunctionDraft = Omit<FunctionRecord, 'name' | 'version' | 'createdAt'>;

export interface ProjectSecrets {
  values: Record<string, string>;
  /** Changes whenever values change, so running instances know they are stale. */
  revision: string;
}

export type LogLevel = 'log' | 'info' | 'debug' | 'warn' | 'error';

export interface FunctionLogEntry {
  at: string;
  version: number;
  invocationId: string | null;
  level: LogLevel;
  message: string;
  /** Present on the one entry that closes an invocation. */
  request?: { method: string; path: string; status: number; code: string | null; durationMs: number };
  /** Set on entries read back: where the next page starts (`readLogs(..., before)`). */
  cursor?: string;
}

/**
 * A log cursor is `<microseconds since the epoch>-<sequence>`: the entry's
 * time and a number that orders entries of the same time. Anything else is a
 * 400, not an empty page.
 */
export function parseLogCursor(cursor: string): { micros: string; seq: string } {
  const m = /^(\d{1,16})-(\d{1,18})$/.exec(cursor);
  if (!m) throw fail('invalid_request', 'before must be the "id" of a log entry already read.');
  return { micros: m[1]!, seq: m[2]! };
}

export interface FunctionStore {
  /** Stores a new version and makes it current in one step; returns it. */
  publish(projectRef: string, name: string, draft: FunctionDraft): Promise<FunctionRecord>;
  /** The current version, or null when the function does not exist. */
  get(projectRef: string, name: string): Promise<FunctionRecord | null>;
  list(projectRef: string): Promise<FunctionRecord[]>;
  remove(projectRef: string, name: string): Promise<boolean>;
  getSecrets(projectRef: string): Promise<ProjectSecrets>;
  /** Upserts `set` and deletes `unset`, atomically. */
  updateSecrets(projectRef: string, set: Record<string, string>, unset: string[]): Promise<void>;
  appendLogs(projectRef: string, name: string, entries: FunctionLogEntry[]): Promise<void>;
  /** Newest first, each with its cursor; with `before`, only entries older than the one of that cursor. */
  readLogs(projectRef: string, name: string, limit: number, before?: string): Promise<FunctionLogEntry[]>;
}

export function secretsRevision(values: Record<string, string>): string {
  const sorted = Object.keys(values)
    .sort()
    .map((k) => [k, values[k]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}
