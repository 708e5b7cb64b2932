/**
 * CLI benchmark: what a user waits for, each beside a bare reference.
 * - `hearth gen types typescript` on a 200-table schema (every command is a
 *   child process, start-up included), against the same catalog query sent
 *   straight to the project database with postgres.js;
 * - `hearth db push` of 100 migration files (a table and an index each),
 *   against applying the same files over one direct connection, each in a
 *   transaction with its history row;
 * - the full `hearth push` of examples/todo-app on a fresh project, against
 *   `hearth --help` (the CLI's own start-up).
 * Bounded at a few minutes on a busy 2-core machine.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { catalogQuery } from '../src/cli/catalog.ts';
import { remoteEnv, runHearth } from '../test/cli/run.ts';
import { withHearth } from './lib.ts';

const TABLES = 200;
const MIGRATIONS = 100;

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const out = await fn();
  return [performance.now() - started, out];
}

const line = (name: string, hearth: number, bare: number, bareName: string) =>
  `${name}: hearth ${(hearth / 1000).toFixed(2)} s, ${bareName} ${(bare / 1000).toFixed(2)} s, ratio ${(hearth / bare).toFixed(1)}`;

export async function cliBench(): Promise<string[]> {
  return withHearth(async (h) => {
    const out: string[] = [];
    const env = remoteEnv(h);
    const org = (await h.api('GET', '/v1/organizations')).body[0].id;
    const project = async (name: string) =>
      (await h.api('POST', '/v1/projects', { body: { name, organization_id: org } })).body.ref as string;
    const dbUrl = async (ref: string) => {
      const [row] = await h.hearth.p.dbs.control`select db_name from platform.projects where ref = ${ref}`;
      const u = new URL(process.env.DATABASE_URL!);
      u.pathname = `/${row!.db_name}`;
      return u.toString();
    };

    // gen types on 200 tables
    const typesRef = await project('Types');
    const ddl = Array.from(
      { length: TABLES },
      (_, i) =>
        `create table t${i} (id bigint generated always as identity primary key, parent bigint${i ? ` references t${i - 1}` : ''}, name text not null, tags text[], data jsonb, created_at timestamptz not null default now(), price numeric, done boolean default false);`,
    ).join('\n');
    await h.api('POST', `/v1/projects/${typesRef}/database/query`, { body: { query: ddl, timeout_ms: 600_000 } });
    const [genMs, gen] = await timed(() =>
      runHearth(['gen', 'types', 'typescript', '--project-ref', typesRef], { env }),
    );
    if (gen.status !== 0) throw new Error(gen.stderr);
    const direct = postgres(await dbUrl(typesRef), { max: 1 });
    const catalogSql = catalogQuery(['public']);
    const [bareGenMs] = await timed(() => direct.unsafe(catalogSql));
    await direct.end();
    out.push(
      line(
        `gen types, ${TABLES} tables (${Math.round(gen.stdout.length / 1024)} KiB of types)`,
        genMs,
        bareGenMs,
        'catalog query alone',
      ),
    );

    // db push of 100 migrations
    const app = mkdtempSync(path.join(tmpdir(), 'hearth-bench-cli-'));
    mkdirSync(path.join(app, 'hearth', 'migrations'), { recursive: true });
    const files = Array.from({ length: MIGRATIONS }, (_, i) => {
      const version = `2026010100${String(i).padStart(4, '0')}`;
      const text = `create table m${i} (id bigint generated always as identity primary key, body text not null, at timestamptz default now());\ncreate index m${i}_at on m${i} (at);\n`;
      writeFileSync(path.join(app, 'hearth', 'migrations', `${version}_m${i}.sql`), text);
      return { version, text };
    });
    const pushRef = await project('Push');
    const [pushMs, push] = await timed(() => runHearth(['db', 'push', '--project-ref', pushRef], { env, cwd: app }));
    if (push.status !== 0) throw new Error(push.stderr);
    const bareRef = await project('Bare');
    const bare = postgres(await dbUrl(bareRef), { max: 1, onnotice: () => {} });
    const [barePushMs] = await timed(async () => {
      for (const f of files) {
        await bare.begin(async (tx) => {
          await tx.unsafe(f.text);
          await tx`insert into supabase_migrations.schema_migrations (version, name, statements, checksum) values (${f.version}, 'm', ${[f.text]}, 'x')`;
        });
      }
    });
    await bare.end();
    out.push(line(`db push, ${MIGRATIONS} migrations`, pushMs, barePushMs, 'same files over one direct connection'));
    rmSync(app, { recursive: true, force: true });

    // the example app
    const example = mkdtempSync(path.join(tmpdir(), 'hearth-bench-example-'));
    cpSync(path.resolve('examples/todo-app'), example, { recursive: true });
    const exampleRef = await project('Example');
    const [fullMs, full] = await timed(() => runHearth(['push', '--project-ref', exampleRef], { env, cwd: example }));
    if (full.status !== 0) throw new Error(full.stderr);
    const [helpMs] = await timed(() => runHearth(['--help'], { env }));
    out.push(
      line(
        'hearth push of examples/todo-app (3 migrations, 2 settings, 1 function, 1 workflow, 1 cron job)',
        fullMs,
        helpMs,
        '`hearth --help`',
      ),
    );
    rmSync(example, { recursive: true, force: true });
    return out;
  });
}
