/**
 * `<data>/server.json`: the URL and pid of the Hearth server listening on a
 * data folder, written by `hearth start` once it listens and removed by that
 * process when it stops. `hearth status` and the other local commands read it
 * for the server's URL. Several processes may share a data folder (scale-out
 * with fs storage): the last to start is named, and each removes only its own.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ServerRecord {
  url: string;
  pid: number;
}

const fileOf = (dataDir: string) => path.join(dataDir, 'server.json');

export function readServerRecord(dataDir: string): ServerRecord | null {
  try {
    return JSON.parse(readFileSync(fileOf(dataDir), 'utf8')) as ServerRecord;
  } catch {
    return null;
  }
}

export function writeServerRecord(dataDir: string, url: string): void {
  // (With DATABASE_URL and HEARTH_MASTER_KEY given, nothing else may have made the folder.)
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(fileOf(dataDir), `${JSON.stringify({ url, pid: process.pid } satisfies ServerRecord)}\n`);
}

/** Removes the record if it names this process. */
export function removeOwnServerRecord(dataDir: string): void {
  if (readServerRecord(dataDir)?.pid === process.pid) rmSync(fileOf(dataDir), { force: true });
}
