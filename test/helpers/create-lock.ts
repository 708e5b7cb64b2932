/**
 * Fixtures that apply project migrations by hand (REST, queues) run beside
 * servers creating projects in other test files. The first migration updates
 * cluster-wide rows (the API roles), so concurrent runs fail with "tuple
 * concurrently updated": hold the platform's own creation lock meanwhile.
 */
import postgres from 'postgres';
import { CREATE_LOCK } from '../../src/platform/projects.ts';

const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function withCreateLock<T>(fn: () => Promise<T>): Promise<T> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${CREATE_LOCK})`;
    return await fn();
  } finally {
    await sql.end();
  }
}
