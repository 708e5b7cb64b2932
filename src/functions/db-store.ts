/**
 * The FunctionStore of a Hearth deployment: versions, secrets and logs in the
 * control database (migrations/control/060_functions.sql, 061), so every
 * Hearth process can serve every function. Secret values are sealed with the
 * master key; only their SHA-256 digest is stored in the clear.
 *
 * The invoke path reads the current version and the project's secrets on
 * every request, so both are cached per process. A write announces itself
 * with NOTIFY in its transaction and every process drops its copy on commit;
 * a short TTL covers a notification lost while the listening connection was
 * down. A load is cached from the moment it starts, so a drop that arrives
 * while it runs removes it too: what it read cannot stick.
 */
import type postgres from 'postgres';
import { cachedLoad, newCache, type Cache } from '../cache.ts';
import type { Platform } from '../context.ts';
import type { Sql } from '../db/pools.ts';
import { lockProject, projectIdOf } from '../platform/projects.ts';
import { sha256 } from '../secrets.ts';
import { checkSecretCount } from './validate.ts';
import {
  parseLogCursor,
  secretsRevision,
  type FunctionDraft,
  type FunctionLogEntry,
  type FunctionRecord,
  type FunctionStore,
  type LogLevel,
  type ProjectSecrets,
} from './store.ts';

export const FUNCTIONS_CHANNEL = 'hearth_functions';
const TTL_MS = 5_000;

/** What a write changed: one function, or (no name) the project's secrets. */
interface Announcement {
  ref: string;
  name?: string;
}

function toRecord(r: postgres.Row): FunctionRecord {
  return {
    name: r.name as string,
    version: r.version as number,
    entrypoint: r.entrypoint as string,
    verifyJwt: r.verify_jwt as boolean,
    files: r.files as Record<string, string>,
    bundle: r.bundle as string,
    createdAt: (r.created_at as Date).toISOString(),
  };
}

function toLogEntry(r: postgres.Row): FunctionLogEntry {
  const entry: FunctionLogEntry = {
    at: (r.created_at as Date).toISOString(),
    version: r.version as number,
    invocationId: (r.invocation_id as string | null) ?? null,
    level: r.level as LogLevel,
    message: r.message as string,
    cursor: r.cursor as string,
  };
  if (r.status !== null) {
    entry.request = {
      method: r.method as string,
      path: r.path as string,
      status: r.status as number,
      code: (r.error_code as string | null) ?? null,
      durationMs: r.duration_ms as number,
    };
  }
  return entry;
}

export class DbFunctionStore implements FunctionStore {
  /** The current version of each function (by ref/name) and each project's secrets (by ref), for TTL_MS. */
  private readonly current: Cache<string, Promise<FunctionRecord | null>>;
  private readonly secrets: Cache<string, Promise<ProjectSecrets>>;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly p: Platform) {
    this.current = newCache({ max: 5000, ttlMs: TTL_MS, clock: p.clock });
    this.secrets = newCache({ max: 1000, ttlMs: TTL_MS, clock: p.clock });
  }

  private get sql(): Sql {
    return this.p.dbs.control;
  }

  /** Subscribes to other processes' writes. */
  async start(): Promise<void> {
    const { unlisten } = await this.sql.listen(FUNCTIONS_CHANNEL, (payload) => {
      try {
        this.drop(JSON.parse(payload) as Announcement);
      } catch {
        /* not ours: ignore */
      }
    });
    this.unlisten = unlisten;
  }

  async close(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
  }

  private drop(a: Announcement): void {
    if (a.name === undefined) this.secrets.delete(a.ref);
    else this.current.delete(`${a.ref}/${a.name}`);
  }

  private async announce(tx: postgres.TransactionSql, a: Announcement): Promise<void> {
    await tx`select pg_notify(${FUNCTIONS_CHANNEL}, ${JSON.stringify(a)})`;
  }

  async publish(ref: string, name: string, draft: FunctionDraft): Promise<FunctionRecord> {
    const record = await this.sql.begin(async (tx) => {
      // The counter row serialises concurrent deploys of one name and never goes back (061).
      const [counter] = await tx`insert into platform.function_version_counters (project_id, name, last_version)
        values (${projectIdOf(tx, ref)}, ${name}, 1)
        on conflict (project_id, name) do update set last_version = platform.function_version_counters.last_version + 1
        returning last_version`;
      const [row] =
        await tx`insert into platform.functions (project_id, name, version, entrypoint, verify_jwt, files, bundle, created_at)
        values (${projectIdOf(tx, ref)}, ${name}, ${counter!.last_version as number}, ${draft.entrypoint}, ${draft.verifyJwt},
          ${tx.json(draft.files)}, ${draft.bundle}, ${this.p.clock.now()})
        returning name, version, entrypoint, verify_jwt, files, bundle, created_at`;
      await this.announce(tx, { ref, name });
      return toRecord(row!);
    });
    this.drop({ ref, name });
    return record;
  }

  get(ref: string, name: string): Promise<FunctionRecord | null> {
    return cachedLoad(this.current, `${ref}/${name}`, async (previous) => {
      // After the TTL, refetch the (possibly large) record only if the version moved.
      const old = previous ? await previous.catch(() => null) : null;
      const [head] = await this.sql`select version from platform.functions
        where project_id = ${projectIdOf(this.sql, ref)} and name = ${name} order by version desc limit 1`;
      if (!head) return null;
      if (old?.version === head.version) return old;
      const [row] = await this
        .sql`select name, version, entrypoint, verify_jwt, files, bundle, created_at from platform.functions
        where project_id = ${projectIdOf(this.sql, ref)} and name = ${name} order by version desc limit 1`;
      return row ? toRecord(row) : null;
    });
  }

  async list(ref: string): Promise<FunctionRecord[]> {
    const rows = await this
      .sql`select distinct on (name) name, version, entrypoint, verify_jwt, files, bundle, created_at
      from platform.functions where project_id = ${projectIdOf(this.sql, ref)} order by name, version desc`;
    return rows.map(toRecord);
  }

  async remove(ref: string, name: string): Promise<boolean> {
    const removed = await this.sql.begin(async (tx) => {
      const rows =
        await tx`delete from platform.functions where project_id = ${projectIdOf(tx, ref)} and name = ${name} returning version`;
      await tx`delete from platform.function_logs where project_id = ${projectIdOf(tx, ref)} and function_name = ${name}`;
      await this.announce(tx, { ref, name });
      return rows.length > 0;
    });
    this.drop({ ref, name });
    return removed;
  }

  getSecrets(ref: string): Promise<ProjectSecrets> {
    return cachedLoad(this.secrets, ref, async () => {
      const rows = await this.sql`select name, value_encrypted from platform.function_secrets
        where project_id = ${projectIdOf(this.sql, ref)} order by name`;
      const values: Record<string, string> = {};
      for (const r of rows)
        values[r.name as string] = this.p.master.decrypt((r.value_encrypted as Buffer).toString('utf8'));
      return { values, revision: secretsRevision(values) };
    });
  }

  async updateSecrets(ref: string, set: Record<string, string>, unset: string[]): Promise<void> {
    const names = Object.keys(set);
    await this.sql.begin(async (tx) => {
      // The lock serialises the project's secret writes, so two concurrent ones cannot both pass the cap.
      const projectId = await lockProject(tx, ref);
      if (!projectId) throw new Error(`no project with ref ${ref}`);
      if (unset.length)
        await tx`delete from platform.function_secrets where project_id = ${projectId} and name = any(${unset})`;
      if (names.length) {
        const rows = names.map((n) => ({
          project_id: projectId,
          name: n,
          value_encrypted: Buffer.from(this.p.master.encrypt(set[n]!), 'utf8'),
          value_sha256: sha256(set[n]!).toString('hex'),
          updated_at: this.p.clock.now(),
        }));
        await tx`insert into platform.function_secrets ${tx(rows)}
          on conflict (project_id, name) do update set value_encrypted = excluded.value_encrypted,
            value_sha256 = excluded.value_sha256, updated_at = excluded.updated_at`;
      }
      if (names.length) {
        const [{ count }] =
          await tx`select count(*)::int as count from platform.function_secrets where project_id = ${projectId}`;
        checkSecretCount(count as number);
      }
      await this.announce(tx, { ref });
    });
    this.drop({ ref });
  }

  /**
   * One statement of fixed text whatever the batch size (rows travel as one
   * JSON parameter), so it is prepared once per connection rather than once
   * per distinct row count, and the project lookup rides along.
   */
  async appendLogs(ref: string, name: string, entries: FunctionLogEntry[]): Promise<void> {
    if (!entries.length) return;
    const rows = entries.map((e) => ({
      version: e.version,
      invocation_id: e.invocationId,
      level: e.level,
      // Postgres text cannot hold NUL; a function may print one.
      message: e.message.replaceAll('\u0000', '\uFFFD'),
      method: e.request?.method ?? null,
      path: e.request?.path ?? null,
      status: e.request?.status ?? null,
      error_code: e.request?.code ?? null,
      duration_ms: e.request?.durationMs ?? null,
      created_at: e.at,
    }));
    // A project deleted while the function ran matches no row: its logs go with it. So does a
    // version deleted meanwhile: its late lines never show under a function redeployed with the name.
    await this.sql`insert into platform.function_logs
        (project_id, function_name, version, invocation_id, level, message, method, path, status, error_code, duration_ms, created_at)
      select p.id, ${name}, r.version, r.invocation_id, r.level, r.message, r.method, r.path, r.status, r.error_code, r.duration_ms, r.created_at
      from (select ${projectIdOf(this.sql, ref)} as id) p, jsonb_to_recordset(${this.sql.json(rows)}::jsonb) as r(version integer, invocation_id uuid, level text,
        message text, method text, path text, status integer, error_code text, duration_ms integer, created_at timestamptz)
      where exists (select 1 from platform.functions f where f.project_id = p.id and f.name = ${name} and f.version = r.version)`;
  }

  /** Keyset paging on (created_at, id), the order of the function_logs_recent index. */
  async readLogs(ref: string, name: string, limit: number, before?: string): Promise<FunctionLogEntry[]> {
    const cursor = before === undefined ? null : parseLogCursor(before);
    const rows = await this
      .sql`select version, invocation_id, level, message, method, path, status, error_code, duration_ms, created_at,
        (extract(epoch from created_at) * 1000000)::bigint::text || '-' || id::text as cursor
      from platform.function_logs where project_id = ${projectIdOf(this.sql, ref)} and function_name = ${name}
      ${cursor ? this.sql`and (created_at, id) < (timestamptz 'epoch' + ${cursor.micros}::bigint * interval '1 microsecond', ${cursor.seq}::bigint)` : this.sql``}
      order by created_at desc, id desc limit ${limit}`;
    return rows.map(toLogEntry);
  }
}

/** How long invocation logs are kept, and how many rows per function at most. */
export const LOG_RETENTION_MS = 7 * 86400_000;
export const LOG_ROWS_PER_FUNCTION = 10_000;

/** Deletes logs past the retention age, then the oldest rows of functions over the per-function cap. */
export async function pruneFunctionLogs(p: Platform, now: Date = p.clock.now()): Promise<number> {
  const sql = p.dbs.control;
  const aged =
    await sql`delete from platform.function_logs where created_at < ${new Date(now.getTime() - LOG_RETENTION_MS)}`;
  const capped = await sql`delete from platform.function_logs l
    using (
      select f.project_id, f.function_name,
        (select id from platform.function_logs x where x.project_id = f.project_id and x.function_name = f.function_name
          order by id desc offset ${LOG_ROWS_PER_FUNCTION} limit 1) as last_dropped
      from platform.function_logs f group by f.project_id, f.function_name having count(*) > ${LOG_ROWS_PER_FUNCTION}
    ) over_cap
    where l.project_id = over_cap.project_id and l.function_name = over_cap.function_name and l.id <= over_cap.last_dropped`;
  return aged.count + capped.count;
}
