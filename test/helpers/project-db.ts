/**
 * A project database for tests (and benches) that drive a data-plane module
 * directly (REST's handleRest, pgmq's SQL) rather than through a running
 * Hearth. It is built by the real migrator (src/db/migrate.ts, every project
 * migration, as the platform builds a project), once per set of migrations
 * into a template database; each call copies the template with CREATE
 * DATABASE ... TEMPLATE, which is several times faster than migrating.
 *
 * Every copy belongs to one login role, OWNER (the template's migrations
 * were run for it); as for a real project, CONNECT is revoked from PUBLIC
 * and granted to OWNER. A template may have no other connection while it is
 * copied, so it is built under the platform's creation lock (which parallel
 * test processes and Hearth's own project creations share) and then closed
 * to connections for good. A template of an older set of migrations is
 * dropped when the next one is built; the current one is kept for the next
 * run.
 */
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { quoteIdent } from '../../src/db/ident.ts';
import { migrate, migrations } from '../../src/db/migrate.ts';
import { withCreateLock } from './create-lock.ts';

export const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The owner role of every copy; it logs in with its name as password (the embedded server asks for one). */
export const OWNER = 'hearth_test_owner';
const TEMPLATE_PREFIX = 'hearth_test_template_';

export interface ProjectDb {
  database: string;
  owner: string;
  /** The project's direct SQL connection string: the owner role. */
  ownerUrl: string;
  /** A superuser connection to the project database (the platform's view). */
  adminUrl: string;
  drop(): Promise<void>;
}

export function urlFor(database: string, user?: string, password = ''): string {
  const u = new URL(SERVER_URL);
  u.pathname = `/${database}`;
  if (user) {
    u.username = user;
    u.password = password;
  }
  return u.toString();
}

/** The template's name: it changes with any project migration's text. */
function templateName(): string {
  const hash = createHash('sha256');
  for (const m of migrations('project')) hash.update(`${m.id}:${m.checksum}\n`);
  return TEMPLATE_PREFIX + hash.digest('hex').slice(0, 16);
}

async function ensureTemplate(server: postgres.Sql, template: string): Promise<void> {
  const ready = async () =>
    (await server`select 1 from pg_database where datname = ${template} and datistemplate`).length > 0;
  if (await ready()) return;
  await withCreateLock(async () => {
    if (await ready()) return; // built by another test process meanwhile
    const stale = await server`select datname from pg_database where datname like ${`${TEMPLATE_PREFIX}%`}`;
    for (const { datname } of stale) {
      await server.unsafe(`alter database ${quoteIdent(datname)} is_template false`);
      await server.unsafe(`drop database ${quoteIdent(datname)} with (force)`);
    }
    await server.unsafe(
      `do $$ begin create role ${OWNER}; exception when duplicate_object or unique_violation then null; end $$`,
    );
    await server.unsafe(`alter role ${OWNER} login password '${OWNER}'`);
    await server.unsafe(`create database ${quoteIdent(template)}`);
    // The caller holds the creation lock already (the first migration updates cluster-wide rows).
    const sql = postgres(urlFor(template), { max: 1, onnotice: () => {} });
    try {
      await migrate(sql, 'project', { owner: OWNER });
    } finally {
      await sql.end();
    }
    await server.unsafe(`alter database ${quoteIdent(template)} with is_template true allow_connections false`);
  });
}

/** A fresh, fully migrated project database of its own. */
export async function createProjectDb(): Promise<ProjectDb> {
  const database = `hearth_test_${randomBytes(6).toString('hex')}`;
  const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  try {
    const template = templateName();
    await ensureTemplate(server, template);
    await server.unsafe(`create database ${quoteIdent(database)} template ${quoteIdent(template)}`);
    await server.unsafe(`revoke connect, temporary on database ${quoteIdent(database)} from public`);
    await server.unsafe(`grant connect, temporary, create on database ${quoteIdent(database)} to ${OWNER}`);
  } finally {
    await server.end();
  }
  return {
    database,
    owner: OWNER,
    ownerUrl: urlFor(database, OWNER, OWNER),
    adminUrl: urlFor(database),
    async drop() {
      const s = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
      try {
        await s.unsafe(`drop database if exists ${quoteIdent(database)} with (force)`);
      } finally {
        await s.end();
      }
    },
  };
}
