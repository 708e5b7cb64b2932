/**
 * A throw-away project database for queue tests and the queue benchmark: a
 * fresh database and a non-superuser login role for its owner, with
 * 001_base.sql, 040_pgmq.sql, 041_pgmq_compat.sql and 043 applied by a superuser
 * as the platform does (the pgmq files twice, to prove they are idempotent).
 * CONNECT is revoked from PUBLIC, as for a real project, so other roles cannot
 * reach it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { withCreateLock } from '../helpers/create-lock.ts';

const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations/project');

export function urlFor(database: string, user?: string, password = ''): string {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  if (user) {
    u.username = user;
    u.password = password;
  }
  return u.toString();
}

export interface ProjectDb {
  database: string;
  owner: string;
  /** The project's direct SQL connection string: the owner role. */
  ownerUrl: string;
  /** A superuser connection to the project database (the platform's view). */
  adminUrl: string;
  drop(): Promise<void>;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createProjectDb(): Promise<ProjectDb> {
  const tag = randomBytes(5).toString('hex');
  const database = `hearth_qtest_${tag}`;
  const owner = `hearth_qtest_${tag}_owner`;
  // A password, so this also works where the server asks for one (the embedded
  // cluster uses scram-sha-256).
  const password = randomBytes(12).toString('hex');
  await withClient(serverUrl, async (c) => {
    await c.query(`create role "${owner}" login password '${password}'`);
    await c.query(`create database "${database}"`);
    await c.query(`revoke connect on database "${database}" from public`);
    await c.query(`grant connect on database "${database}" to "${owner}"`);
  });
  const adminUrl = urlFor(database);
  await withCreateLock(() => withClient(adminUrl, async (c) => {
    for (const file of ['001_base.sql', '040_pgmq.sql', '041_pgmq_compat.sql', '043_pgmq_queue_name_message.sql', '040_pgmq.sql', '041_pgmq_compat.sql', '043_pgmq_queue_name_message.sql']) {
      const text = readFileSync(path.join(migrationsDir, file), 'utf8').replaceAll('{{owner}}', owner);
      await c.query('begin');
      await c.query(text);
      await c.query('commit');
    }
  }));
  return {
    database,
    owner,
    ownerUrl: urlFor(database, owner, password),
    adminUrl,
    drop: () =>
      withClient(serverUrl, async (c) => {
        await c.query(`drop database if exists "${database}" with (force)`);
        await c.query(`drop role if exists "${owner}"`);
      }),
  };
}
