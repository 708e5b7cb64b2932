/**
 * Connection pools: one to the server's maintenance database (CREATE DATABASE
 * and roles), one to the control database, and one per project database,
 * created on first use and closed when the project goes away.
 */
import postgres from 'postgres';

export type Sql = postgres.Sql;

const quiet = { onnotice: () => {} } as const;

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
      sql = postgres(withDatabase(this.serverUrl, dbName), { ...quiet, max: this.projectPoolSize, idle_timeout: 60 });
      this.projects.set(dbName, sql);
    }
    return sql;
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
    await admin.unsafe(`create database "${name.replaceAll('"', '""')}"`);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') throw err;
  }
}
