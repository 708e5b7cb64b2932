// Gives `npm test` and `npm run bench` a PostgreSQL: DATABASE_URL when set,
// else one embedded PostgreSQL in .hearth-test/ for the run.
import path from 'node:path';

export async function ensureDatabaseUrl(): Promise<() => Promise<void>> {
  if (process.env.DATABASE_URL) return async () => {};
  const { startEmbedded } = await import('../src/db/embedded.ts');
  const cluster = await startEmbedded(
    path.resolve('.hearth-test'),
    Number(process.env.HEARTH_TEST_DB_PORT ?? 54329),
    console,
  );
  process.env.DATABASE_URL = cluster.url;
  return cluster.stop;
}
