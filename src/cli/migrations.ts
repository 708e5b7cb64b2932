/**
 * The app's schema as files: `hearth init`, `hearth migration new|list`,
 * `hearth db push|reset|dump`. Migrations are applied through database/query
 * as the project's owner role, each file with its history row in one
 * transaction; the history lives in the project database under Supabase's
 * name, supabase_migrations.schema_migrations, with each file's checksum.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { confirmed } from './access.ts';
import { SqlError, sql, target, type Target } from './api.ts';
import { appFolder, GITIGNORE, requireAppFolder, type AppFolder } from './app-folder.ts';
import { dumpSchema } from './dump.ts';
import { CliError, print, progress, progressDone, type Output } from './output.ts';
import { accepts, act, examples, optionsOf, outputOption, schemaNames, schemaOption } from './program.ts';
import { topLevelStatements } from './sql-statements.ts';
import { lineOf, literal } from './sql-text.ts';

export interface LocalMigration {
  version: string;
  name: string;
  file: string;
  text: string;
  checksum: string;
}

interface AppliedMigration {
  version: string;
  name: string;
  checksum: string;
  applied_at: string;
}

const FILE = /^(\d{14})_([a-z0-9_]+)\.sql$/;

const relative = (file: string) => path.relative(process.cwd(), file) || file;
const checksum = (text: string) => createHash('sha256').update(text).digest('hex');

export function localMigrations(folder: AppFolder): LocalMigration[] {
  if (!existsSync(folder.migrations)) return [];
  const out: LocalMigration[] = [];
  for (const f of readdirSync(folder.migrations).sort()) {
    if (!f.endsWith('.sql')) continue;
    const m = FILE.exec(f);
    if (!m)
      throw new CliError(
        `${relative(path.join(folder.migrations, f))}: a migration is named <14-digit UTC timestamp>_<lower_case_name>.sql; create one with \`hearth migration new <name>\`.`,
      );
    const file = path.join(folder.migrations, f);
    const text = readFileSync(file, 'utf8');
    out.push({ version: m[1]!, name: m[2]!, file, text, checksum: checksum(text) });
  }
  for (let i = 1; i < out.length; i++) {
    if (out[i]!.version === out[i - 1]!.version)
      throw new CliError(
        `Two migrations have version ${out[i]!.version}: ${relative(out[i - 1]!.file)} and ${relative(out[i]!.file)}; rename one.`,
      );
  }
  return out;
}

async function appliedMigrations(t: Target): Promise<AppliedMigration[]> {
  try {
    return await sql<AppliedMigration>(
      t,
      // applied_at in ISO 8601 UTC (database/query sends a timestamptz as PostgreSQL prints it, with a space).
      `select version, name, checksum,
              to_char(applied_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as applied_at
         from supabase_migrations.schema_migrations order by version`,
    );
  } catch (err) {
    if (err instanceof SqlError && err.failure.sqlstate === '42P01') {
      throw new CliError(
        `${t.api.url} has no migration history table in project ${t.project.ref} (a Hearth older than this CLI): update that Hearth.`,
      );
    }
    throw err;
  }
}

/** What push would do, or why it must not: applied files changed or missing, pending files older than applied ones. */
export function plan(local: LocalMigration[], applied: AppliedMigration[]): LocalMigration[] {
  const byVersion = new Map(local.map((m) => [m.version, m]));
  for (const a of applied) {
    const file = byVersion.get(a.version);
    if (!file) {
      throw new CliError(
        `The project's history has diverged: migration ${a.version}_${a.name} is applied but hearth/migrations/ has no file for it. Restore the file (from git), or repair the history in supabase_migrations.schema_migrations.`,
      );
    }
    if (file.checksum !== a.checksum) {
      throw new CliError(
        `${relative(file.file)} was changed after it was applied (checksum differs): restore it as applied and put the change in a new migration (\`hearth migration new <name>\`).`,
      );
    }
  }
  const done = new Set(applied.map((a) => a.version));
  const pending = local.filter((m) => !done.has(m.version));
  const last = applied.at(-1);
  const early = last && pending.find((m) => m.version < last.version);
  if (early) {
    throw new CliError(
      `The project's history has diverged: ${relative(early.file)} is older than ${last.version}_${last.name}, which is already applied. Give it a newer timestamp (rename it, or move its SQL into \`hearth migration new <name>\`).`,
    );
  }
  return pending;
}

/** The statement that starts or ends a transaction (`commit`, `start transaction`, ...), or null. */
function transactionControl([first, second]: string[]): string | null {
  switch (first) {
    case 'begin':
    case 'commit':
    case 'end':
    case 'abort':
      return first;
    case 'rollback':
      return second === 'to' ? null : first; // rollback to savepoint stays inside the transaction
    case 'start':
    case 'prepare':
      return second === 'transaction' ? `${first} transaction` : null;
    default:
      return null;
  }
}

/**
 * Refuses, before anything runs, a file that starts or ends transactions of
 * its own: each file runs in one transaction with its history row, and a
 * `commit` in it would commit its first part and leave the rest outside, so a
 * failure later in the file could no longer be rolled back.
 */
function refuseTransactionControl(migrations: LocalMigration[]): void {
  for (const m of migrations) {
    for (const statement of topLevelStatements(m.text)) {
      const control = transactionControl(statement.words);
      if (control)
        throw new CliError(
          `${relative(m.file)}:${statement.line}: a migration must not contain \`${control}\`: each file runs in one transaction with its history row. Remove the file's own begin/commit; nothing was applied.`,
        );
    }
  }
}

/** A file's history row: inserted in the file's own transaction. */
function historyRow(m: LocalMigration): string {
  return `insert into supabase_migrations.schema_migrations (version, name, statements, checksum)
values (${literal(m.version)}, ${literal(m.name)}, array[${literal(m.text)}], ${literal(m.checksum)})`;
}

/**
 * Files sent per request. A request carries several files, each between its own
 * begin and commit: PostgreSQL commits each block of a multi-statement query on
 * its own and stops at the first error, rolling back only that block (each
 * request costs a login as the owner role, so one per file is slow).
 */
const BATCH_FILES = 25;
const BATCH_CHARS = 512 * 1024;

function batches(pending: LocalMigration[]): LocalMigration[][] {
  const out: LocalMigration[][] = [];
  let current: LocalMigration[] = [];
  let size = 0;
  for (const m of pending) {
    if (current.length && (current.length >= BATCH_FILES || size + m.text.length > BATCH_CHARS)) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(m);
    size += m.text.length;
  }
  if (current.length) out.push(current);
  return out;
}

/** A refused statement as `file:line: message`, for the one-line error. */
function sqlFailure(err: SqlError, file: string, text: string, after: string, offset = 0): CliError {
  const f = err.failure;
  const position = f.position === null ? null : f.position - offset;
  const where =
    position !== null && position >= 1 && position <= Array.from(text).length + 1 ? `:${lineOf(text, position)}` : '';
  const extra = [f.detail, f.hint ? `Hint: ${f.hint}` : null].filter(Boolean).join(' ');
  return new CliError(
    `${relative(file)}${where}: ${f.message} (SQLSTATE ${f.sqlstate})${extra ? `. ${extra}` : ''}. ${after}`,
  );
}

/**
 * One request: each file of the batch between its own begin and commit, its
 * history row inserted first. A second push of the same file at the same time
 * then waits on that row's key and fails on it once the first commits
 * (schema_migrations_pkey), before running any of the file: two pushes never
 * run one file side by side.
 */
function batchQuery(batch: LocalMigration[]): { query: string; starts: number[] } {
  let query = '';
  let chars = 0;
  const starts: number[] = [];
  for (const m of batch) {
    const head = `begin;\n${historyRow(m)};\n`;
    const tail = '\n;\ncommit;\n';
    const headChars = Array.from(head).length; // PostgreSQL's positions count characters
    starts.push(chars + headChars);
    query += head + m.text + tail;
    chars += headChars + Array.from(m.text).length + tail.length;
  }
  return { query, starts };
}

/** Applies pending migrations in order; stops at the first failure (which is rolled back). */
export async function pushMigrations(
  t: Target,
  folder: AppFolder,
  opts: { dryRun?: boolean } = {},
): Promise<LocalMigration[]> {
  const pending = plan(localMigrations(folder), await appliedMigrations(t));
  refuseTransactionControl(pending);
  if (opts.dryRun) return pending;
  const applied: LocalMigration[] = [];
  const apply = async (batch: LocalMigration[]): Promise<void> => {
    progress(
      `Applying migrations ${applied.length + 1}-${applied.length + batch.length} of ${pending.length}: ${path.basename(batch[0]!.file)}...`,
    );
    const { query, starts } = batchQuery(batch);
    try {
      await sql(t, query, 600_000);
      applied.push(...batch);
      return;
    } catch (err) {
      if (!(err instanceof SqlError)) throw err;
      // The files before the failing one committed: the history says which one failed.
      const done = new Set((await appliedMigrations(t)).map((a) => a.version));
      const index = batch.findIndex((m) => !done.has(m.version));
      // Nothing ran: a syntax error fails the whole text before any of it runs. File by file, then.
      if (index === 0 && batch.length > 1) {
        for (const m of batch) await apply([m]);
        return;
      }
      applied.push(...batch.slice(0, Math.max(0, index)));
      const m = batch[Math.max(0, index)]!;
      if (err.failure.sqlstate === '23505' && /schema_migrations_pkey/.test(err.failure.message)) {
        const version = /\((\d{14})\)/.exec(err.failure.detail ?? '')?.[1];
        throw new CliError(
          `Another push is applying the migrations of project ${t.project.ref}${version ? ` (it applied ${version} meanwhile)` : ''}: let it finish, then run \`hearth db push\` again for what is left.`,
        );
      }
      const kept = applied.length
        ? `${applied.length === 1 ? 'The 1 migration before it stays' : `The ${applied.length} migrations before it stay`} applied; this one was rolled back.`
        : 'It was rolled back.';
      throw sqlFailure(
        err,
        m.file,
        m.text,
        `${kept} Fix the file and run \`hearth db push\` again.`,
        starts[Math.max(0, index)],
      );
    }
  };
  try {
    for (const batch of batches(pending)) await apply(batch);
  } finally {
    progressDone();
  }
  return applied;
}

export async function runSeed(t: Target, folder: AppFolder): Promise<boolean> {
  if (!existsSync(folder.seed)) return false;
  const text = readFileSync(folder.seed, 'utf8');
  if (text.replace(/--.*$/gm, '').trim() === '') return false;
  try {
    await sql(t, text, 600_000);
  } catch (err) {
    if (err instanceof SqlError) throw sqlFailure(err, folder.seed, text, 'The seed was rolled back.');
    throw err;
  }
  return true;
}

/**
 * `db reset`: drops the publications the owner made (never the platform's
 * supabase_realtime, whose tables leave it with their schemas) and every
 * schema the owner role owns (public and the app's own; never auth, storage
 * and the platform's, which it does not own, nor pgmq_public, which the
 * platform makes though the owner owns it), makes public again as a new
 * project has it, and empties the history: the migrations then run as on a
 * new project.
 */
const RESET = `
do $$
declare s text;
begin
  for s in select pubname from pg_publication where pubowner = current_user::regrole and pubname <> 'supabase_realtime' loop
    execute format('drop publication %I', s);
  end loop;
  for s in select nspname from pg_namespace
      where nspowner = current_user::regrole and nspname not in ('supabase_migrations', 'pgmq_public') loop
    execute format('drop schema %I cascade', s);
  end loop;
end $$;
create schema public;
grant usage on schema public to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges in schema public grant execute on functions to anon, authenticated, service_role;
truncate supabase_migrations.schema_migrations;`;

const INIT_FILES: [string, string][] = [
  ['seed.sql', '-- Rows for development: `hearth db reset` runs this after the migrations.\n'],
  ['.gitignore', GITIGNORE],
  [
    'config.toml',
    `# Settings and cron jobs of the project, applied by \`hearth push\` (docs/cli.md).

# [settings.<area>] is PATCHed into config/<area> of the management API
# (api, auth, limits, realtime, storage, workflows; docs/management-api.md).
# [settings.workflows]
# enabled = true

# Each [[cron]] entry is a cron job (docs/cron.md); a changed entry is recreated.
# [[cron]]
# name = "nightly-report"
# schedule = "0 3 * * *"
# target_kind = "workflow"   # enqueue, webhook or workflow
# target = "report"
# payload = { kind = "daily" }
`,
  ],
];

function init(folder: AppFolder): string[] {
  const created: string[] = [];
  for (const dir of [folder.root, folder.migrations, folder.functions, folder.workflows]) {
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true });
      created.push(`${relative(dir)}/`);
    }
  }
  for (const [name, text] of INIT_FILES) {
    const file = path.join(folder.root, name);
    if (!existsSync(file)) {
      writeFileSync(file, text);
      created.push(relative(file));
    }
  }
  return created;
}

/** A migration file's name part: lower case, spaces and dashes made underscores. */
const migrationName = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

function utcStamp(d = new Date()): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

export function registerMigrations(program: Command): void {
  const initCmd = program
    .command('init')
    .description('create the app folder hearth/ (migrations/, seed.sql, functions/, workflows/, config.toml)')
    .action(
      act(async (...args) => {
        const created = init(appFolder(optionsOf(args).workdir));
        console.log(
          created.length ? `Created ${created.join(', ')}` : 'hearth/ is already complete: nothing to create.',
        );
      }),
    );
  examples(initCmd, [['hearth init', 'in the root of your app']]);

  const migration = program.command('migration').description('create and list migration files');
  examples(migration, [
    ['hearth migration new create_todos', 'an empty migration file'],
    ['hearth migration list', 'local files against the project'],
  ]);
  const newCmd = migration
    .command('new')
    .argument(
      '<name>',
      'letters, digits and underscores (spaces and dashes become underscores)',
      accepts(
        (v) => /^[a-z0-9_]{1,100}$/.test(migrationName(v)),
        (v) => `A migration name uses letters, digits and underscores (at most 100), not "${v}".`,
      ),
    )
    .description('create hearth/migrations/<UTC timestamp>_<name>.sql')
    .action(
      act(async (name: string, ...args) => {
        const folder = requireAppFolder(optionsOf(args).workdir);
        const clean = migrationName(name);
        mkdirSync(folder.migrations, { recursive: true });
        const file = path.join(folder.migrations, `${utcStamp()}_${clean}.sql`);
        if (existsSync(file))
          throw new CliError(`${relative(file)} exists already: wait a second or choose another name.`);
        writeFileSync(file, `-- ${clean}: applied once, in one transaction, by \`hearth db push\`.\n`);
        console.log(relative(file));
      }),
    );
  examples(newCmd, [['hearth migration new add_due_date_to_todos', 'prints the new file']]);

  const listCmd = migration
    .command('list')
    .description('local migration files and what the project has applied')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const folder = requireAppFolder(opts.workdir);
        const local = localMigrations(folder);
        const t = await target(opts);
        const applied = new Map((await appliedMigrations(t)).map((a) => [a.version, a]));
        const versions = [...new Set([...local.map((m) => m.version), ...applied.keys()])].sort();
        const rows = versions.map((v) => {
          const l = local.find((m) => m.version === v);
          const a = applied.get(v);
          const status = !a
            ? 'pending'
            : !l
              ? 'missing locally'
              : l.checksum !== a.checksum
                ? 'changed since applied'
                : 'applied';
          return {
            version: v,
            name: l?.name ?? a!.name,
            local: l !== undefined,
            applied_at: a?.applied_at ?? null,
            status,
          };
        });
        print(
          opts.output === 'json' ? rows : rows.map((r) => ({ ...r, local: r.local ? 'yes' : 'no' })),
          ['version', 'name', 'local', 'applied_at', 'status'],
          opts.output,
        );
      }),
    );
  examples(listCmd, [['hearth migration list -o json', 'for scripts']]);

  const db = program.command('db').description("apply, reset and dump the project's schema");
  examples(db, [
    ['hearth db push', 'apply pending migrations'],
    ['hearth db reset --yes', 'recreate the local schema from the files'],
    ['hearth db dump > schema.sql', 'the schema as SQL'],
  ]);
  const push = db
    .command('push')
    .description('apply pending migrations in order, each in a transaction; refuses when history diverged')
    .option('--dry-run', 'only list what would be applied')
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ dryRun?: boolean }>(args);
        const folder = requireAppFolder(opts.workdir);
        const t = await target(opts);
        const done = await pushMigrations(t, folder, opts);
        if (done.length === 0) console.log(`Project ${t.project.ref} is up to date: no pending migrations.`);
        else
          console.log(
            `${opts.dryRun ? 'Would apply' : 'Applied'} ${done.length} migration${done.length === 1 ? '' : 's'} to ${t.project.ref}:\n${done.map((m) => `  ${path.basename(m.file)}`).join('\n')}`,
          );
      }),
    );
  examples(push, [
    ['hearth db push', 'to the linked or default project'],
    ['hearth db push --dry-run --project-ref <ref>', 'what a remote project lacks'],
  ]);

  const reset = db
    .command('reset')
    .description('local Hearth only: drop public and your schemas, replay the migrations, then seed.sql')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ yes?: boolean }>(args);
        const folder = requireAppFolder(opts.workdir);
        refuseTransactionControl(localMigrations(folder)); // before anything is dropped
        const t = await target(opts);
        if (!t.api.local)
          throw new CliError(
            `\`hearth db reset\` only resets the local Hearth; you are logged in to ${t.api.url} (\`hearth logout\` to use the local one).`,
          );
        if (
          !(await confirmed(
            `Drop every table and schema of project ${t.project.ref} you created, and rebuild it from hearth/?`,
            opts.yes,
          ))
        )
          return 1;
        await sql(t, RESET);
        const applied = await pushMigrations(t, folder);
        const seeded = await runSeed(t, folder);
        console.log(
          `Reset project ${t.project.ref}: ${applied.length} migration${applied.length === 1 ? '' : 's'} applied${seeded ? ', seed.sql run' : ''}.`,
        );
      }),
    );
  examples(reset, [['hearth db reset --yes', 'without a question']]);

  const dump = db
    .command('dump')
    .description('print the schema (tables, types, functions, views, policies, ...) as SQL, from the catalog')
    .addOption(schemaOption('comma-separated schemas (default: every schema you own)'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ schema?: string }>(args);
        const t = await target(opts);
        process.stdout.write(await dumpSchema(t, opts.schema === undefined ? undefined : schemaNames(opts.schema)));
      }),
    );
  examples(dump, [
    ['hearth db dump > schema.sql', 'every schema you own'],
    ['hearth db dump --schema public', 'one schema'],
  ]);
}
