/**
 * Connection pools: one to the server's maintenance database (CREATE DATABASE
 * and roles), one to the control database, and one per project database,
 * created on first use and closed when the project goes away.
 *
 * A server hosts many mostly idle projects and max_connections is shared by
 * all of them, so a project pool drops a connection after a few idle seconds
 * (a busy project keeps its connections; reconnecting costs milliseconds),
 * and background work that visits every project uses a connection of its own,
 * closed as soon as it is done (briefly), rather than waking the pool.
 *
 * Every connection of the process takes a slot of one ConnectionBudget
 * (budget.ts, HEARTH_DB_MAX_CONNECTIONS), so many projects hit at once queue
 * briefly for connections instead of exhausting max_connections. Project pool
 * connections (and the REST schema listeners, which take the pool's options)
 * hold no session state between requests, so the budget may close them while
 * idle to make room; the control, admin and background connections may hold
 * advisory locks or LISTEN, and are never closed under them. So that an idle
 * platform connection can never keep every project waiting, the platform's
 * pools are sized from the budget (platformPoolSizes).
 */
import postgres from 'postgres';
import { quoteIdent } from './ident.ts';
import { ConnectionBudget } from './budget.ts';

export type Sql = postgres.Sql;

/** Budget before the server's max_connections is known (fitToServer): enough for start-up. */
const START_BUDGET = 8;
/** The default budget takes this share of the server's non-reserved connections (docs/configuration.md). */
const DEFAULT_SHARE = 0.5;
/** A project's pool: at most this many connections, and at most a quarter of the budget. */
const PROJECT_POOL_MAX = 10;
/** The platform's pools at most (control, admin): their sizes under the default budget. */
const CONTROL_POOL_MAX = 10;
const ADMIN_POOL_MAX = 2;
/** The platform's connections outside its pools: the control database's LISTEN connection and the storage writer lock. */
const PLATFORM_OTHER = 2;

/**
 * The sizes of the platform's pools under a budget: with its other
 * connections they take at most half of it (5, its least, under a budget of
 * 10), so project pools keep the rest, and the control pool holds at least
 * 2 (bootstrap holds one under its lock while it queries on another). From a
 * budget of 28 on they are the default sizes. Under the default budget (null:
 * a share of the server's max_connections) they are the default sizes too.
 */
export function platformPoolSizes(budget: number | null): { control: number; admin: number } {
  if (budget === null) return { control: CONTROL_POOL_MAX, admin: ADMIN_POOL_MAX };
  const share = Math.floor(budget / 2) - PLATFORM_OTHER;
  const admin = share >= CONTROL_POOL_MAX + ADMIN_POOL_MAX ? ADMIN_POOL_MAX : 1;
  return { control: Math.max(2, Math.min(CONTROL_POOL_MAX, share - admin)), admin };
}

/**
 * Reconnect delay after failed connects, in seconds: short and capped, since
 * a failed connect fails the queries waiting for it (scripts/patch-postgres.js)
 * and the next request retries; postgres.js's default grows to 20 s.
 */
const backoff = (retries: number) => Math.min(0.05 * 2 ** retries, 0.5);

/** Seconds a project pool keeps an unused connection open. */
export const PROJECT_IDLE_SECONDS = 5;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

export interface Limits {
  /** HEARTH_DB_MAX_CONNECTIONS; null: a share of the server's max_connections (fitToServer). */
  maxConnections?: number | null;
  /** HEARTH_DB_QUEUE_TIMEOUT_MS: how long a request waits for a connection slot before 503. */
  queueMs?: number;
  /** The server's Unix socket (the embedded cluster's): the pools connect there instead of the URL's host and port. */
  socketPath?: string | null;
}

export class Databases {
  readonly admin: Sql;
  readonly control: Sql;
  readonly budget: ConnectionBudget;
  private readonly projects = new Map<string, Sql>();

  constructor(
    readonly serverUrl: string,
    readonly controlDb: string,
    private readonly limits: Limits = {},
  ) {
    this.budget = new ConnectionBudget(limits.maxConnections ?? START_BUDGET, limits.queueMs ?? 5000);
    const sizes = platformPoolSizes(limits.maxConnections ?? null);
    this.admin = postgres(serverUrl, {
      ...this.connectionOptions('$admin', { first: true }),
      max: sizes.admin,
      idle_timeout: 30,
    });
    this.control = postgres(withDatabase(serverUrl, controlDb), {
      ...this.connectionOptions(controlDb, { first: true }),
      max: sizes.control,
      idle_timeout: 60,
    });
  }

  /**
   * Options every pool of this process takes: connections through the budget
   * (`key` is the database they count against; `evictable` only for
   * connections that keep no session state between queries, `first` for the
   * platform's own pools), a 5 s connect timeout and a short reconnect backoff.
   */
  connectionOptions(key: string, kind: { evictable?: boolean; first?: boolean } = {}) {
    return {
      onnotice: () => {},
      connect_timeout: 5,
      backoff,
      socket: this.budget.socket(key, kind),
      ...(this.limits.socketPath ? { path: this.limits.socketPath } : {}),
    };
  }

  /**
   * Sizes the budget: HEARTH_DB_MAX_CONNECTIONS, else a share of what the
   * server allows. Asked on the control database, whose connection a start
   * opens anyway (the admin pool's would be one more, ~50 ms right after
   * PostgreSQL starts).
   */
  async fitToServer(): Promise<number> {
    if (this.limits.maxConnections) return this.budget.max;
    const [row] = await this.control`select current_setting('max_connections')::int
      - current_setting('superuser_reserved_connections')::int as available`;
    this.budget.max = Math.max(START_BUDGET, Math.floor((row!.available as number) * DEFAULT_SHARE));
    return this.budget.max;
  }

  /** Connections one pool of a project database may hold: at most a quarter of the budget. */
  get projectPoolMax(): number {
    return Math.min(PROJECT_POOL_MAX, Math.max(2, Math.floor(this.budget.max / 4)));
  }

  /** The pool of one project database, opened on first use. */
  project(dbName: string): Sql {
    let sql = this.projects.get(dbName);
    if (!sql) {
      sql = postgres(withDatabase(this.serverUrl, dbName), {
        ...this.connectionOptions(dbName, { evictable: true }),
        max: this.projectPoolMax,
        idle_timeout: PROJECT_IDLE_SECONDS,
      });
      this.projects.set(dbName, sql);
    }
    return sql;
  }

  /**
   * Runs fn on a one-connection pool of the project database, closed when fn
   * settles: for background passes over every project, which would otherwise
   * leave a connection open in each project's pool at once.
   */
  async briefly<T>(dbName: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
    const sql = postgres(withDatabase(this.serverUrl, dbName), {
      ...this.connectionOptions(dbName),
      max: 1,
      idle_timeout: PROJECT_IDLE_SECONDS,
    });
    try {
      return await fn(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }

  async closeProject(dbName: string): Promise<void> {
    const sql = this.projects.get(dbName);
    this.projects.delete(dbName);
    await sql?.end({ timeout: 5 });
  }

  async close(): Promise<void> {
    await Promise.all([...this.projects.keys()].map((db) => this.closeProject(db)));
    await Promise.all([this.control.end({ timeout: 5 }), this.admin.end({ timeout: 5 })]);
  }
}

/** CREATE DATABASE unless it exists; safe when two processes race to it. */
export async function ensureDatabase(admin: Sql, name: string): Promise<void> {
  const [found] = await admin`select 1 from pg_database where datname = ${name}`;
  if (found) return;
  try {
    await admin.unsafe(`create database ${quoteIdent(name)}`);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err;
  }
}
