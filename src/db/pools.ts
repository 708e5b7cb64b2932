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
 */
import postgres from 'postgres';
import { quoteIdent } from './ident.ts';

export type Sql = postgres.Sql;

const quiet = { onnotice: () => {} } as const;

/** Seconds a project pool keeps an unused connection open. */
export const PROJECT_IDLE_SECONDS = 5;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = '/' + encodeURIComponent(database);
  return u.toString();
}

export class Databases {
  readonly admin: Sql;
  readonly control: Sql;
  private readonly projects = new Map<string, Sql>();

  constructor(
    readonly serverUrl: string,
    readonly controlDb: string,
    private readonly projectPoolSize = 10,
  ) {
    this.admin = postgres(serverUrl, { ...quiet, max: 2, idle_timeout: 30 });
    this.control = postgres(withDatabase(serverUrl, controlDb), { ...quiet, max: 10, idle_timeout: 60 });
  }

  /** The pool of one project database, opened on first use. */
  project(dbName: string): Sql {
    let sql = this.projects.get(dbName);
    if (!sql) {
      sql = postgres(withDatabase(this.serverUrl, dbName), { ...quiet, max: this.projectPoolSize, idle_timeout: PROJECT_IDLE_SECONDS });
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
    const sql = postgres(withDatabase(this.serverUrl, dbName), { ...quiet, max: 1, idle_timeout: PROJECT_IDLE_SECONDS });
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
