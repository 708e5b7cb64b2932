/**
 * What the CLI last deployed from files, kept in the project database
 * (supabase_migrations.hearth_deploys, project migration 070): a file whose
 * checksum and deployed version still match publishes nothing new.
 */
import { createHash } from 'node:crypto';
import { sql, type Target } from './api.ts';
import { literal } from './sql-text.ts';

export type DeployKind = 'function' | 'workflow';

export interface Deployed {
  checksum: string;
  version: number;
}

export const checksumOf = (value: unknown) =>
  createHash('sha256')
    .update(typeof value === 'string' ? value : JSON.stringify(value))
    .digest('hex');

export async function deployedState(t: Target, kind: DeployKind): Promise<Map<string, Deployed>> {
  const rows = await sql<{ name: string; checksum: string; version: number }>(
    t,
    `select name, checksum, version from supabase_migrations.hearth_deploys where kind = ${literal(kind)}`,
  );
  return new Map(rows.map((r) => [r.name, { checksum: r.checksum, version: r.version }]));
}

export async function recordDeploy(t: Target, kind: DeployKind, name: string, d: Deployed): Promise<void> {
  await sql(
    t,
    `insert into supabase_migrations.hearth_deploys (kind, name, checksum, version) values (${literal(kind)}, ${literal(name)}, ${literal(d.checksum)}, ${d.version})
    on conflict (kind, name) do update set checksum = excluded.checksum, version = excluded.version, deployed_at = now()`,
  );
}

export async function forgetDeploy(t: Target, kind: DeployKind, name: string): Promise<void> {
  await sql(
    t,
    `delete from supabase_migrations.hearth_deploys where kind = ${literal(kind)} and name = ${literal(name)}`,
  );
}
