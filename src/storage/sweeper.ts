/**
 * Bytes that no object row references are listed in storage.pending_bytes
 * (see migrations/project/030_storage.sql) and removed here:
 * - entries with no writer: bytes a delete or replace left behind; removed
 *   right after the request's commit (drain) and by the periodic sweep;
 * - entries of a writer that is gone: uploads of a process that crashed
 *   between writing bytes and committing the row; removed by the sweep at
 *   start and every minute after, with the S3 multipart upload a chunked
 *   body may have left open for the key (backend removeAbandoned).
 * A process is alive while it holds its session advisory lock on the control
 * database (WRITER_LOCK_CLASS, writer id), so any process can tell a crashed
 * writer from a busy one. An entry is locked while its bytes are removed, and
 * an upload's commit deletes the same entry, so a sweep and a commit can never
 * both win.
 */
import { randomInt } from 'node:crypto';
import postgres from 'postgres';
import type { Platform } from '../context.ts';
import { withDatabase, type Sql } from '../db/pools.ts';
import { listProjects } from '../platform/projects.ts';
import type { BytesBackend } from './backend/index.ts';
import { bytesKey } from './context.ts';

const WRITER_LOCK_CLASS = 7_212_030;
const BATCH = 100;

export interface WriterLock {
  id: number;
  release(): Promise<void>;
}

/** Takes a fresh writer id and holds its lock on a dedicated connection for the process's life. */
export async function acquireWriterLock(p: Platform): Promise<WriterLock> {
  const conn = postgres(withDatabase(p.dbs.serverUrl, p.config.controlDb), {
    ...p.dbs.connectionOptions(p.config.controlDb, { first: true }),
    max: 1,
    idle_timeout: 0,
  });
  for (;;) {
    const id = randomInt(1, 2 ** 31 - 1);
    const [row] = await conn`select pg_try_advisory_lock(${WRITER_LOCK_CLASS}, ${id}) as got`;
    if (row!.got) return { id, release: () => conn.end({ timeout: 5 }) };
  }
}

async function deadWriters(control: Sql, writers: number[]): Promise<Set<number>> {
  const dead = new Set<number>();
  for (const w of writers) {
    // Taken and released within this statement's own transaction: true only when nobody holds it.
    const [row] = await control`select pg_try_advisory_xact_lock(${WRITER_LOCK_CLASS}, ${w}) as free`;
    if (row!.free) dead.add(w);
  }
  return dead;
}

export interface SweepOptions {
  /** Also reclaim uploads of writers that are gone (not only bytes left by deletes). */
  crashed: boolean;
  /** This process's writer id: its own uploads are never swept. */
  self: number;
}

/** Sweeps one project database; returns how many byte versions were removed. */
export async function sweepProject(
  p: Platform,
  backend: BytesBackend,
  ref: string,
  sql: Sql,
  opts: SweepOptions,
): Promise<number> {
  let removed = 0;
  for (;;) {
    const done = (await sql.begin(async (tx) => {
      const rows = opts.crashed
        ? await tx`select version, writer from storage.pending_bytes where writer is null or writer <> ${opts.self}
            order by created_at limit ${BATCH} for update skip locked`
        : await tx`select version, writer from storage.pending_bytes where writer is null
            order by created_at limit ${BATCH} for update skip locked`;
      const writers = [...new Set(rows.map((r) => r.writer as number | null).filter((w): w is number => w !== null))];
      const dead = writers.length ? await deadWriters(p.dbs.control, writers) : new Set<number>();
      const swept = rows.filter((r) => r.writer === null || dead.has(r.writer as number));
      const targets = swept.map((r) => r.version as string);
      if (targets.length === 0) return { selected: rows.length, targets: 0 };
      // A referenced version is never removed, whatever an entry says.
      const live = new Set(
        (await tx`select version from storage.objects where version = any(${targets}::uuid[])`).map(
          (r) => r.version as string,
        ),
      );
      for (const { version, writer } of swept) {
        p.faults.hit('storage.sweep.remove', { version });
        if (live.has(version)) continue;
        // A dead writer's upload may have stopped mid-body, with a multipart upload still open on S3.
        const key = bytesKey({ ref }, version as string);
        await (writer === null ? backend.remove(key) : backend.removeAbandoned(key));
      }
      await tx`delete from storage.pending_bytes where version = any(${targets}::uuid[])`;
      return { selected: rows.length, targets: targets.length };
    })) as { selected: number; targets: number };
    removed += done.targets;
    if (done.selected < BATCH || done.targets === 0) return removed;
  }
}

/** Sweeps every project (at start and periodically), one at a time, each on a connection closed right after (Databases.briefly). */
export async function sweepAll(p: Platform, backend: BytesBackend, self: number): Promise<number> {
  let removed = 0;
  for (const row of await listProjects(p.dbs.control)) {
    try {
      removed += await p.dbs.briefly(row.db_name, (sql) =>
        sweepProject(p, backend, row.ref, sql, { crashed: true, self }),
      );
    } catch (err) {
      p.log.error({ err, ref: row.ref }, 'storage sweep failed for a project');
    }
  }
  return removed;
}
