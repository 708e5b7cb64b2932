/**
 * First-start setup, safe when several processes start at once: the control
 * database and its migrations (openControl), then (bootstrap, under an
 * advisory lock) the owner account, the default organization and the default
 * project. Later starts find them and only apply new migrations.
 *
 * A restart opens as few connections as it can, one after the other: right
 * after PostgreSQL starts each new one takes 25-70 ms (a backend, its caches,
 * the first one in a database rebuilding that database's relation cache file).
 * So a restart never connects to the maintenance database (the admin pool),
 * and the control database's checks share one connection.
 */
import { fail } from '../errors.ts';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Platform } from '../context.ts';
import { migrate } from '../db/migrate.ts';
import { ensureDatabase, type Sql } from '../db/pools.ts';
import {
  checkEmail,
  checkNewPassword,
  createAccount,
  createOrganization,
  findAccountByEmail,
  firstOwner,
} from '../platform/accounts.ts';
import { createProject, defaultProject, migrateAllProjects, type ProjectRow } from '../platform/projects.ts';
import { randomToken } from '../secrets.ts';
import { quoteIdent } from '../db/ident.ts';

const BOOTSTRAP_LOCK = 7_212_002;

export interface OwnerCredentials {
  email: string;
  /** Known only when Hearth generated it or it came from HEARTH_OWNER_PASSWORD. */
  password: string | null;
}

function ownerFile(p: Platform) {
  return path.join(p.config.dataDir, 'owner.json');
}

export function readOwnerCredentials(p: Platform): OwnerCredentials | null {
  if (p.config.ownerEmail) return { email: p.config.ownerEmail, password: p.config.ownerPassword };
  const file = ownerFile(p);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as OwnerCredentials) : null;
}

/**
 * HEARTH_OWNER_EMAIL and HEARTH_OWNER_PASSWORD must be what the members API
 * would accept: otherwise the first start would create an owner no one could
 * add the same way, and print it as if all were well.
 */
function checkOwnerVariables(p: Platform): void {
  const refuse = (variable: string, rule: string) => {
    throw fail('invalid_config', `${variable} ${rule}.`);
  };
  const { ownerEmail, ownerPassword } = p.config;
  if (ownerEmail) {
    try {
      checkEmail(ownerEmail);
    } catch {
      refuse('HEARTH_OWNER_EMAIL', `must be an e-mail address, got "${ownerEmail}"`);
    }
  }
  if (ownerPassword) {
    try {
      checkNewPassword(ownerPassword);
    } catch {
      refuse('HEARTH_OWNER_PASSWORD', 'must be 10 to 128 characters long');
    }
  }
}

/**
 * The control database, created (through the maintenance database) only when
 * its first connection finds it missing, then migrated. Once this resolves
 * the app may be readied (storage's writer lock needs the control database,
 * not the default project).
 */
export async function openControl(p: Platform): Promise<void> {
  checkOwnerVariables(p);
  await p.dbs.control`select 1`.catch(async (err: { code?: string }) => {
    if (err.code !== '3D000') throw err; // 3D000: no such database
    await ensureDatabase(p.dbs.admin, p.config.controlDb);
  });
  // Privileges on a database are granted from any database of the server: these run on the control connection.
  await p.dbs.control.unsafe(`revoke connect on database ${quoteIdent(p.config.controlDb)} from public`);
  // On the cluster Hearth owns (embedded, no DATABASE_URL) no role but the superuser Hearth connects as
  // needs the maintenance databases, which PostgreSQL opens to every role: a project's owner role could
  // log in there. An operator's server is left as it is: its other users may rely on that default.
  if (!p.config.databaseUrl) await p.dbs.control`revoke connect on database postgres, template1 from public`;
  await migrate(p.dbs.control, 'control');
}

/** After openControl: the owner, the default organization and project (first start), and every project's migrations. */
export async function bootstrap(p: Platform): Promise<{ project: ProjectRow; owner: OwnerCredentials }> {
  const found = await defaultProjectAndOwner(p);
  await migrateAllProjects(p);
  return found;
}

async function defaultProjectAndOwner(p: Platform): Promise<{ project: ProjectRow; owner: OwnerCredentials }> {
  const reserved = await p.dbs.control.reserve();
  try {
    await reserved`select pg_advisory_lock(${BOOTSTRAP_LOCK})`;
    let project = await defaultProject(reserved);
    let owner = readOwnerCredentials(p);
    if (!project) {
      if (!owner) {
        owner = { email: 'owner@hearth.local', password: randomToken(20) };
        // With DATABASE_URL and HEARTH_MASTER_KEY nothing else has made the data folder yet.
        mkdirSync(p.config.dataDir, { recursive: true, mode: 0o700 });
        writeFileSync(ownerFile(p), `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o600 });
      }
      const account =
        (await findAccountByEmail(p.dbs.control, owner.email)) ??
        (await createAccount(p.dbs.control, owner.email, owner.password ?? randomToken(20)));
      const org = await createOrganization(p.dbs.control, 'Default organization', account.id);
      project = await createProject(p, { name: 'Default project', organizationId: org.id, isDefault: true });
      p.log.info({ ref: project.ref }, 'created the default project');
    }
    // A process given another deployment's master key would otherwise listen, then fail on
    // every sealed value it reads (keys, passwords) with "unable to authenticate data".
    try {
      p.master.decrypt(project.owner_password_sealed);
    } catch {
      throw fail(
        'invalid_config',
        `HEARTH_MASTER_KEY (or ${p.config.dataDir}/master.key) is not the key this deployment's database was sealed with: every Hearth process of one deployment needs the same master key.`,
      );
    }
    return { project, owner: owner ?? { email: await firstOwnerEmail(reserved, project), password: null } };
  } finally {
    await reserved`select pg_advisory_unlock(${BOOTSTRAP_LOCK})`.catch(() => {});
    reserved.release();
  }
}

async function firstOwnerEmail(sql: Sql, project: ProjectRow): Promise<string> {
  return (await firstOwner(sql, project.organization_id)).email;
}
