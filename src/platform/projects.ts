/**
 * Projects: each has its own database hearth_<ref>, its own login role
 * hearth_<ref>_owner (not superuser, CONNECT only to its own database), an
 * ES256 signing key and two API keys. Creation either completes or leaves
 * nothing behind: a failure at any step drops what the earlier steps made.
 */
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import type { Platform } from '../context.ts';
import { migrate, migrationsDigest } from '../db/migrate.ts';
import type { Sql } from '../db/pools.ts';
import { announce } from './changes.ts';
import { randomToken, sha256 } from '../secrets.ts';
import { newSigningKey } from './signing-keys.ts';
import { newApiKey } from './api-keys.ts';
import { quoteIdent } from '../db/ident.ts';

export interface ProjectRow {
  id: string;
  ref: string;
  name: string;
  organization_id: string;
  db_name: string;
  owner_role: string;
  owner_password_sealed: string;
  is_default: boolean;
  created_at: Date;
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
export const REF_PATTERN = /^[a-z]{20}$/;
/**
 * The advisory lock (in the maintenance database) under which a new project's
 * first migration runs; exported so test fixtures that apply project
 * migrations themselves take turns with the platform too.
 */
export const CREATE_LOCK = 7_212_003;

export async function createProject(
  p: Platform,
  input: { name: string; organizationId: string; isDefault?: boolean },
): Promise<ProjectRow> {
  const ref = randomToken(20, LOWER);
  const dbName = `hearth_${ref}`;
  const owner = `hearth_${ref}_owner`;
  const ownerPassword = randomToken(32); // [A-Za-z0-9] only, so it is safe as a literal
  const admin = p.dbs.admin;
  let roleMade = false;
  let dbMade = false;
  try {
    await admin.unsafe(
      `create role ${quoteIdent(owner)} login password '${ownerPassword}' nosuperuser nocreatedb nocreaterole noreplication connection limit 50`,
    );
    roleMade = true;
    p.faults.hit('project.create.role', { ref });
    await admin.unsafe(`create database ${quoteIdent(dbName)}`);
    dbMade = true;
    await admin.unsafe(`revoke connect, temporary on database ${quoteIdent(dbName)} from public`);
    // CREATE: the owner may create schemas of its own, as Supabase's postgres role can (migration 021 for existing projects).
    await admin.unsafe(`grant connect, temporary, create on database ${quoteIdent(dbName)} to ${quoteIdent(owner)}`);
    await migrateNewProject(p, dbName, owner);
    p.faults.hit('project.create.migrated', { ref });

    const signing = await newSigningKey(p.master);
    const keys = [newApiKey('publishable'), newApiKey('secret')] as const;
    return (await p.dbs.control.begin(async (tx) => {
      const [row] = await tx`insert into platform.projects
          (ref, name, organization_id, db_name, owner_role, owner_password_sealed, is_default)
        values (${ref}, ${input.name}, ${input.organizationId}, ${dbName}, ${owner},
          ${p.master.encrypt(ownerPassword)}, ${input.isDefault ?? false})
        returning *`;
      await tx`insert into platform.signing_keys (project_id, kid, public_jwk, private_jwk_sealed)
        values (${row!.id}, ${signing.kid}, ${tx.json(signing.publicJwk as never)}, ${signing.privateSealed})`;
      for (const [i, type] of (['publishable', 'secret'] as const).entries()) {
        await tx`insert into platform.api_keys (project_id, name, type, key_hash, key_sealed)
          values (${row!.id}, 'default', ${type}, ${sha256(keys[i])}, ${p.master.encrypt(keys[i])})`;
      }
      p.faults.hit('project.create.rows', { ref });
      return row;
    })) as ProjectRow;
  } catch (err) {
    await p.dbs.closeProject(dbName);
    if (dbMade)
      await admin
        .unsafe(`drop database if exists ${quoteIdent(dbName)} with (force)`)
        .catch((e) => p.log.error(e, 'cleanup: drop database'));
    if (roleMade)
      await admin.unsafe(`drop role if exists ${quoteIdent(owner)}`).catch((e) => p.log.error(e, 'cleanup: drop role'));
    throw err;
  }
}

/**
 * The first migration of a project touches cluster-wide rows (the API roles,
 * their grants), which concurrent creations would update at once ("tuple
 * concurrently updated"): creations on one server take turns, under an
 * advisory lock held in the maintenance database that every creator shares.
 */
async function migrateNewProject(p: Platform, dbName: string, owner: string): Promise<void> {
  const lock = await p.dbs.admin.reserve();
  try {
    await lock`select pg_advisory_lock(${CREATE_LOCK})`;
    // On a connection of its own: it holds an advisory lock, and a project pool's idle connections may be closed under it (db/pools.ts).
    await p.dbs.briefly(dbName, (sql) => migrate(sql, 'project', { owner }));
  } finally {
    await lock`select pg_advisory_unlock(${CREATE_LOCK})`.catch(() => {});
    lock.release();
  }
}

export async function deleteProject(p: Platform, project: ProjectRow): Promise<void> {
  if (project.is_default) {
    throw fail('default_project');
  }
  await p.dbs.control.begin(async (tx) => {
    await tx`delete from platform.projects where id = ${project.id}`;
    await announce(tx, { kind: 'project', projectId: project.id });
  });
  await p.dbs.closeProject(project.db_name);
  await p.dbs.admin.unsafe(`drop database if exists ${quoteIdent(project.db_name)} with (force)`);
  await p.dbs.admin.unsafe(`drop role if exists ${quoteIdent(project.owner_role)}`);
}

export async function findProject(sql: Sql, ref: string): Promise<ProjectRow | undefined> {
  if (!REF_PATTERN.test(ref)) return undefined;
  const [row] = await sql`select * from platform.projects where ref = ${ref}`;
  return row as ProjectRow | undefined;
}

/** The projects of every organization the account is a member of, oldest first. */
export async function projectsOfAccount(sql: Sql, accountId: string): Promise<ProjectRow[]> {
  return (await sql`select pr.* from platform.projects pr
    join platform.members m on m.organization_id = pr.organization_id
    where m.account_id = ${accountId} order by pr.created_at`) as unknown as ProjectRow[];
}

/**
 * The project's id as a subquery, for an area's statement that names its
 * project by ref (one round trip; null when there is no such project).
 */
export const projectIdOf = (sql: Sql | postgres.TransactionSql, ref: string) =>
  sql`(select id from platform.projects where ref = ${ref})`;

/**
 * Locks the project's row against deletion until the transaction ends, so an
 * area can count and write a project's rows without racing its deletion or
 * another writer; undefined when there is no such project.
 */
export async function lockProject(tx: postgres.TransactionSql, ref: string): Promise<string | undefined> {
  const [row] = await tx`select id from platform.projects where ref = ${ref} for no key update`;
  return row?.id as string | undefined;
}

/** The refs of the given project ids (a deleted project is missing from the map). */
export async function projectRefs(sql: Sql, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await sql`select id, ref from platform.projects where id = any(${[...new Set(ids)]}::uuid[])`;
  return new Map(rows.map((r) => [r.id as string, r.ref as string]));
}

/** Every project, oldest first: what per-project background work iterates over. */
export async function listProjects(sql: Sql): Promise<Pick<ProjectRow, 'id' | 'ref' | 'db_name'>[]> {
  return (await sql`select id, ref, db_name from platform.projects order by created_at`) as unknown as Pick<
    ProjectRow,
    'id' | 'ref' | 'db_name'
  >[];
}

export async function defaultProject(sql: Sql): Promise<ProjectRow | undefined> {
  const [row] = await sql`select * from platform.projects where is_default`;
  return row as ProjectRow | undefined;
}

/** Project databases migrated at once at start: a restart with many projects waits for about a quarter of their sum. */
const MIGRATE_AT_ONCE = 4;

/**
 * Migrates every project database to the newest project migrations (at
 * start), MIGRATE_AT_ONCE at a time, each on a connection closed right after.
 * A database the control database records as migrated to the current files
 * (platform.projects.migrated: its OID and migrationsDigest, so one created
 * again under the same name is checked) is not connected to at all: a first
 * connection costs 25-70 ms right after PostgreSQL starts. After a failure no
 * other database is begun; the ones under way finish, then the first failure
 * is thrown.
 */
export async function migrateAllProjects(p: Platform): Promise<void> {
  const digest = migrationsDigest('project');
  const rows = await p.dbs.control`select db_name, owner_role, current from (
      select p.db_name, p.owner_role, p.migrated, p.created_at, d.oid::text || ':' || ${digest} as current
      from platform.projects p left join pg_database d on d.datname = p.db_name) r
    where migrated is distinct from current
    order by created_at`;
  let next = 0;
  const failures: unknown[] = [];
  const lane = async () => {
    while (next < rows.length && !failures.length) {
      const r = rows[next++]!;
      await p.dbs
        .briefly(r.db_name as string, (sql) => migrate(sql, 'project', { owner: r.owner_role as string }))
        .then(() => p.dbs.control`update platform.projects set migrated = ${r.current} where db_name = ${r.db_name}`)
        .catch((error: unknown) => failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.min(MIGRATE_AT_ONCE, rows.length) }, lane));
  if (failures.length) throw failures[0];
}
