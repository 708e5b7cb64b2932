/**
 * The schema the migrations produce, as `pg_dump --schema-only` prints it, for
 * the committed snapshots in migrations/schema/ (one per PostgreSQL major
 * version, since pg_dump's text differs between them). `npm run schema:dump`
 * rewrites them; test/db/schema-snapshot.test.ts fails when the migrations
 * produce something else, so every schema change shows in review.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { withDatabase } from '../../src/db/pools.ts';
import { startTestHearth } from './hearth.ts';

export const SNAPSHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations/schema');

export const snapshotFile = (set: 'control' | 'project', major: number) =>
  path.join(SNAPSHOTS, `${set}.pg${major}.sql`);

/** Major versions of the server and of the pg_dump on PATH (null when there is none). */
export async function versions(serverUrl: string): Promise<{ server: number; pgDump: number | null }> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const [row] = await sql`select current_setting('server_version_num')::int / 10000 as major`;
  await sql.end();
  let pgDump: number | null = null;
  try {
    pgDump = Number(/(\d+)\.\d+/.exec(execFileSync('pg_dump', ['--version'], { encoding: 'utf8' }))![1]);
  } catch {
    /* no pg_dump */
  }
  return { server: row!.major as number, pgDump };
}

/** pg_dump's text with what differs between two builds of the same schema taken out. */
function normalise(dump: string, names: Record<string, string>): string {
  let text = dump
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line) && !/^-- Dumped (from|by) /.test(line))
    .join('\n');
  for (const [name, placeholder] of Object.entries(names)) text = text.replaceAll(name, placeholder);
  return text;
}

/** Builds a control and a project database through the real migrator and dumps both. */
export async function dumpSchemas(serverUrl: string): Promise<{ control: string; project: string }> {
  const h = await startTestHearth();
  try {
    const ref = h.hearth.project.ref;
    const names = {
      [`hearth_${ref}_owner`]: 'hearth_<ref>_owner',
      [`hearth_${ref}`]: 'hearth_<ref>',
      [h.config.controlDb]: '<control>',
    };
    const dump = (db: string) =>
      normalise(
        execFileSync('pg_dump', ['--schema-only', '--no-comments', withDatabase(serverUrl, db)], {
          encoding: 'utf8',
          maxBuffer: 64 * 1024 * 1024,
        }),
        names,
      );
    return { control: dump(h.config.controlDb), project: dump(h.hearth.project.db_name) };
  } finally {
    await h.close();
  }
}
