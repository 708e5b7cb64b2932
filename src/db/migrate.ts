/**
 * Numbered plain-SQL migrations (migrations/control, migrations/project),
 * applied in order, each in its own transaction, under an advisory lock so
 * concurrent starts are safe. Applied files are recorded with a checksum; an
 * applied file whose text changed later stops the start with a message naming
 * it (a schema that differs from its files is never run on silently).
 * Placeholders `{{name}}` in a file are replaced with the given variables
 * (only identifiers the platform generates itself, never user input).
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../errors.ts';
import type { Sql } from './pools.ts';

export type MigrationSet = 'control' | 'project';

interface Migration {
  id: string;
  text: string;
  checksum: string;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
const cache = new Map<MigrationSet, Migration[]>();

export function migrations(set: MigrationSet): Migration[] {
  let list = cache.get(set);
  if (!list) {
    const dir = path.join(root, set);
    list = readdirSync(dir)
      .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
      .sort()
      .map((f) => {
        const text = readFileSync(path.join(dir, f), 'utf8');
        return { id: f.replace(/\.sql$/, ''), text, checksum: createHash('sha256').update(text).digest('hex') };
      });
    cache.set(set, list);
  }
  return list;
}

/**
 * One value for the whole set of files (their names and checksums): equal
 * digests mean the same migrations, so a database recorded as migrated to it
 * needs no check.
 */
export function migrationsDigest(set: MigrationSet): string {
  const hash = createHash('sha256');
  for (const m of migrations(set)) hash.update(`${m.id} ${m.checksum}\n`);
  return hash.digest('hex');
}

const LOCK_KEY = 7_212_001; // any constant; advisory locks are per database

export async function migrate(sql: Sql, set: MigrationSet, vars: Record<string, string> = {}): Promise<string[]> {
  const applied: string[] = [];
  const reserved = await sql.reserve();
  try {
    await reserved`select pg_advisory_lock(${LOCK_KEY})`;
    await reserved.unsafe(`create schema if not exists hearth;
      create table if not exists hearth.migrations (
        id text primary key, checksum text not null, applied_at timestamptz not null default now())`);
    const done = new Map(
      (await reserved`select id, checksum from hearth.migrations`).map((r) => [r.id as string, r.checksum as string]),
    );
    for (const m of migrations(set)) {
      const checksum = done.get(m.id);
      if (checksum === m.checksum) continue;
      if (checksum !== undefined) {
        throw fail(
          'migration_changed',
          `migrations/${set}/${m.id}.sql was changed after it was applied to this database (checksum ${checksum.slice(0, 12)}, now ${m.checksum.slice(0, 12)}): restore the file as it was and put the change in a new migration.`,
        );
      }
      const text = m.text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
        const value = vars[name];
        if (value === undefined) throw new Error(`migration ${m.id} needs the variable ${name}`);
        return value;
      });
      await reserved.unsafe('begin');
      try {
        await reserved.unsafe(text);
        await reserved`insert into hearth.migrations (id, checksum) values (${m.id}, ${m.checksum})`;
        await reserved.unsafe('commit');
      } catch (err) {
        await reserved.unsafe('rollback');
        throw new Error(`migration ${set}/${m.id} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.id);
    }
  } finally {
    await reserved`select pg_advisory_unlock(${LOCK_KEY})`.catch(() => {});
    reserved.release();
  }
  return applied;
}
