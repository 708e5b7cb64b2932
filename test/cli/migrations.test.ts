/**
 * The schema as files: init, migration new/list, db push (in order, each in
 * a transaction, with checksums; refusals when history diverged; a failing
 * file named with its line and rolled back), db dump (round trip into a fresh
 * project) and db reset (local only).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { localEnv, remoteEnv, runHearth } from './run.ts';

let th: TestHearth;
let env: NodeJS.ProcessEnv;
const app = mkdtempSync(path.join(tmpdir(), 'hearth-app-'));
const migrations = path.join(app, 'hearth', 'migrations');
before(async () => {
  th = await startTestHearth();
  env = remoteEnv(th);
});
after(async () => {
  await th.close();
  rmSync(app, { recursive: true, force: true });
});

const hearth = (...args: string[]) => runHearth(args, { env, cwd: app });

async function query(q: string, ref = th.info.PROJECT_REF) {
  const r = await th.api('POST', `/v1/projects/${ref}/database/query`, { body: { query: q } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body as Record<string, unknown>[];
}

const history = async () =>
  (await query('select version, name from supabase_migrations.schema_migrations order by version')).map(
    (r) => `${r.version}_${r.name}`,
  );

test('init, migration new, db push in order with history; a failing file stops the push, rolled back, named with its line', async () => {
  const init = await hearth('init');
  assert.equal(init.status, 0, init.stderr);
  for (const p of ['migrations', 'functions', 'workflows', 'seed.sql', 'config.toml', '.gitignore'])
    assert.ok(existsSync(path.join(app, 'hearth', p)), p);
  const again = await hearth('init');
  assert.match(again.stdout, /already complete/);

  const created = await hearth('migration', 'new', 'Create todos');
  assert.equal(created.status, 0, created.stderr);
  const [file] = readdirSync(migrations);
  assert.match(file!, /^\d{14}_create_todos\.sql$/);
  const stamp = file!.slice(0, 14);
  const now = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  assert.ok(Math.abs(Number(now) - Number(stamp)) < 200, `${stamp} is the UTC time`);
  rmSync(path.join(migrations, file!));

  writeFileSync(
    path.join(migrations, '20260101000001_todos.sql'),
    'create table todos (id bigint generated always as identity primary key, title text not null);\n',
  );
  const second = path.join(migrations, '20260101000002_app_schema.sql');
  const secondText =
    'create schema app;\ncreate table app.things (id int primary key);\nalter table todos add column done boolean not null default false;\n';
  writeFileSync(second, `${secondText}\ninsert into nosuch values (1);\n`);
  const failed = await hearth('db', 'push');
  assert.equal(failed.status, 1);
  assert.equal(
    failed.stderr,
    `hearth: hearth/migrations/20260101000002_app_schema.sql:5: relation "nosuch" does not exist (SQLSTATE 42P01). The 1 migration before it stays applied; this one was rolled back. Fix the file and run \`hearth db push\` again.\n`,
  );
  assert.deepEqual(await history(), ['20260101000001_todos']);
  assert.deepEqual(await query(`select to_regclass('todos')::text as todos, to_regnamespace('app') as app`), [
    { todos: 'todos', app: null },
  ]);

  // A syntax error fails the whole request before anything runs: the files before it are still applied.
  writeFileSync(second, secondText);
  writeFileSync(path.join(migrations, '20260101000003_broken.sql'), 'create table partial (id int);\nselec 1;\n');
  const syntax = await hearth('db', 'push');
  assert.equal(syntax.status, 1);
  assert.equal(
    syntax.stderr,
    'hearth: hearth/migrations/20260101000003_broken.sql:2: syntax error at or near "selec" (SQLSTATE 42601). The 1 migration before it stays applied; this one was rolled back. Fix the file and run `hearth db push` again.\n',
  );
  assert.deepEqual(await history(), ['20260101000001_todos', '20260101000002_app_schema']);
  assert.deepEqual(await query(`select to_regclass('partial') as t, to_regclass('app.things')::text as things`), [
    { t: null, things: 'app.things' },
  ]);

  writeFileSync(
    path.join(migrations, '20260101000003_broken.sql'),
    "create table partial (id int);\ncomment on table partial is 'it''s a \\\\ backslash';\n",
  );
  const ok = await hearth('db', 'push');
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, `Applied 1 migration to ${th.info.PROJECT_REF}:\n  20260101000003_broken.sql\n`);
  const none = await hearth('db', 'push');
  assert.equal(none.stdout, `Project ${th.info.PROJECT_REF} is up to date: no pending migrations.\n`);
  const [row] = await query(
    `select checksum, statements from supabase_migrations.schema_migrations where version = '20260101000003'`,
  );
  const third = readFileSync(path.join(migrations, '20260101000003_broken.sql'), 'utf8');
  assert.equal(row!.checksum, createHash('sha256').update(third).digest('hex'));
  assert.deepEqual(row!.statements, [third]);
  assert.deepEqual(await query(`select obj_description('partial'::regclass) as c`), [{ c: "it's a \\\\ backslash" }]);
});

test('migration list, and push refusing a changed file, a missing file and an out-of-order file', async () => {
  writeFileSync(path.join(migrations, '20260101000004_pending.sql'), 'create table later (id int);\n');
  const list = await hearth('migration', 'list', '-o', 'json');
  assert.equal(list.status, 0, list.stderr);
  assert.deepEqual(
    JSON.parse(list.stdout).map((r: { version: string; status: string }) => `${r.version} ${r.status}`),
    ['20260101000001 applied', '20260101000002 applied', '20260101000003 applied', '20260101000004 pending'],
  );
  assert.equal(JSON.parse(list.stdout)[0].local, true);

  const first = path.join(migrations, '20260101000001_todos.sql');
  const text = readFileSync(first, 'utf8');
  writeFileSync(first, `${text}-- edited\n`);
  const changed = await hearth('db', 'push');
  assert.equal(changed.status, 1);
  assert.equal(
    changed.stderr,
    'hearth: hearth/migrations/20260101000001_todos.sql was changed after it was applied (checksum differs): restore it as applied and put the change in a new migration (`hearth migration new <name>`).\n',
  );
  const table = await hearth('migration', 'list');
  assert.match(table.stdout, /^20260101000001\s+todos\s+yes\s+\S+\s+changed since applied$/m);

  renameSync(first, path.join(app, 'moved.sql'));
  const missing = await hearth('db', 'push');
  assert.equal(missing.status, 1);
  assert.match(
    missing.stderr,
    /^hearth: The project's history has diverged: migration 20260101000001_todos is applied but hearth\/migrations\/ has no file for it\./,
  );
  writeFileSync(first, text);

  writeFileSync(path.join(migrations, '20250101000000_old.sql'), 'select 1;\n');
  const early = await hearth('db', 'push');
  assert.equal(early.status, 1);
  assert.match(
    early.stderr,
    /^hearth: The project's history has diverged: hearth\/migrations\/20250101000000_old\.sql is older than 20260101000003_broken, which is already applied\./,
  );
  rmSync(path.join(migrations, '20250101000000_old.sql'));
  assert.deepEqual(await history(), ['20260101000001_todos', '20260101000002_app_schema', '20260101000003_broken']);
});

test('db dump prints SQL that rebuilds the same schema in a fresh project', async () => {
  await query(`
    create type app.color as enum ('red', 'green');
    create domain app.positive as int check (value > 0);
    create table app.items (id serial primary key, color app.color not null default 'red', n app.positive, thing int references app.things, note text, unique (note));
    create index items_color on app.items (color) where note is not null;
    create function app.double(x int) returns int language sql immutable as 'select x * 2';
    create view app.item_colors as select id, color, app.double(id) as twice from app.items;
    alter table app.items enable row level security;
    create policy "read own" on app.items for select to authenticated using (note = auth.uid()::text);
    comment on table app.items is 'things with colors';
    create publication app_items for table app.items (id, color) where (id > 0) with (publish = 'insert, update');
    alter publication supabase_realtime add table app.things;`);
  const dump = await hearth('db', 'dump');
  assert.equal(dump.status, 0, dump.stderr);
  for (const piece of [
    'create schema if not exists app;',
    "create type app.color as enum ('red', 'green');",
    'create policy "read own" on app.items as permissive for select to authenticated using',
    'CREATE INDEX items_color ON app.items',
    "create publication app_items with (publish = 'insert, update', publish_via_partition_root = false);",
    'alter publication app_items add table only app.items (id, color) where ((id > 0));',
    'alter publication supabase_realtime add table only app.things;',
  ]) {
    assert.ok(dump.stdout.includes(piece), piece);
  }
  // Hearth's own realtime capture triggers come back with the publication, not from the dump (the owner may not create them).
  assert.doesNotMatch(dump.stdout, /realtime_capture|capture_changes/);

  const created = await th.api('POST', '/v1/projects', {
    body: { name: 'Copy', organization_id: (await th.api('GET', '/v1/organizations')).body[0].id },
  });
  assert.equal(created.status, 201);
  const copy = created.body.ref as string;
  await query(dump.stdout, copy);
  const again = await hearth('db', 'dump', '--project-ref', copy);
  const body = (s: string) => s.split('\n').slice(2).join('\n');
  assert.equal(body(again.stdout), body(dump.stdout));
  assert.deepEqual(
    await query(
      `select count(*)::int as n from pg_trigger where tgrelid = 'app.things'::regclass and tgname like 'realtime_capture_%'`,
      copy,
    ),
    [{ n: 3 }],
    "the copy's app.things sends realtime changes",
  );
});

test('db reset: refused without --yes off a terminal and against a remote; replays migrations and seed on the local Hearth', async () => {
  writeFileSync(path.join(app, 'hearth', 'seed.sql'), "insert into todos (title) values ('seeded');\n");
  // A migration making a publication and adding a table to Realtime's: the replay makes them again.
  writeFileSync(
    path.join(migrations, '20260101000005_publications.sql'),
    'create publication todo_changes for table todos;\nalter publication supabase_realtime add table todos;\n',
  );
  const published = await hearth('db', 'push');
  assert.equal(published.status, 0, published.stderr);
  await query(`create table stray (id int); insert into todos (title) values ('old')`);
  const local = localEnv(th);
  const asks = await runHearth(['db', 'reset'], { env: local, cwd: app });
  assert.equal(asks.status, 1);
  assert.match(asks.stderr, /Pass --yes to confirm when not at a terminal\.\n$/);
  const remote = await hearth('db', 'reset', '--yes');
  assert.equal(remote.status, 1);
  assert.match(remote.stderr, /only resets the local Hearth/);

  const reset = await runHearth(['db', 'reset', '--yes'], { env: local, cwd: app });
  assert.equal(reset.status, 0, reset.stderr);
  assert.equal(reset.stdout, `Reset project ${th.info.PROJECT_REF}: 5 migrations applied, seed.sql run.\n`);
  assert.deepEqual(
    await query(`select pubname, tablename from pg_publication_tables where schemaname = 'public' order by 1`),
    [
      { pubname: 'supabase_realtime', tablename: 'todos' },
      { pubname: 'todo_changes', tablename: 'todos' },
    ],
  );
  assert.deepEqual(await query(`select pubname from pg_publication order by 1`), [
    { pubname: 'supabase_realtime' },
    { pubname: 'todo_changes' },
  ]);
  assert.deepEqual(await query(`select title from todos`), [{ title: 'seeded' }]);
  assert.deepEqual(
    await query(
      `select to_regclass('stray') as stray, to_regclass('app.items') as items, to_regclass('later')::text as later`,
    ),
    [{ stray: null, items: null, later: 'later' }],
  );
  // The API roles still reach the new public schema's tables.
  assert.deepEqual(await query(`select has_table_privilege('anon', 'todos', 'select') as anon`), [{ anon: true }]);
  // pgmq_public is the owner's, as on Supabase, but the platform made it: a reset keeps it.
  assert.deepEqual(await query(`select to_regprocedure('pgmq_public.pop(text)') is not null as kept`), [
    { kept: true },
  ]);
  assert.equal((await history()).length, 5);
});

test('a file with its own begin/commit is refused before anything runs; quotes, comments and function bodies are not mistaken for one', async () => {
  writeFileSync(
    path.join(migrations, '20260101000006_look_alikes.sql'),
    `-- commit; in a comment
/* begin; /* nested */ rollback; */
create table tx_ok (note text default 'commit; end;', "begin" int);
create function tx_sql(x int) returns int language sql
begin atomic
  select case when x > 0 then x else 0 end;
end;
create function tx_plpgsql() returns void language plpgsql as $body$
begin
  perform 1;
end
$body$;
do $$ begin perform 1; end $$;
select E'it\\'s; commit;';
savepoint inner_one;
rollback to savepoint inner_one;
`,
  );
  const ok = await hearth('db', 'push');
  assert.equal(ok.status, 0, ok.stderr);
  assert.deepEqual(await query(`select tx_sql(3) as n`), [{ n: 3 }]);

  writeFileSync(
    path.join(migrations, '20260101000007_own_commit.sql'),
    'create table tx_partial (id int);\n\nCOMMIT;\ncreate table tx_after (id int);\n',
  );
  const before = await history();
  for (const args of [
    ['db', 'push'],
    ['db', 'push', '--dry-run'],
  ]) {
    const refused = await hearth(...args);
    assert.equal(refused.status, 1, args.join(' '));
    assert.equal(
      refused.stderr,
      "hearth: hearth/migrations/20260101000007_own_commit.sql:3: a migration must not contain `commit`: each file runs in one transaction with its history row. Remove the file's own begin/commit; nothing was applied.\n",
    );
  }
  assert.deepEqual(await history(), before);
  assert.deepEqual(await query(`select to_regclass('tx_partial') as t`), [{ t: null }]);
  rmSync(path.join(migrations, '20260101000007_own_commit.sql'));
});

test('two pushes of the same migrations at once: one applies them, the other says another push is at work', async () => {
  writeFileSync(
    path.join(migrations, '20260101000008_slow.sql'),
    'select pg_sleep(3);\ncreate table raced (id int);\n',
  );
  const [a, b] = await Promise.all([hearth('db', 'push'), hearth('db', 'push')]);
  const results = [a!, b!].sort((x, y) => (x.status ?? 0) - (y.status ?? 0));
  assert.equal(results[0]!.status, 0, results[0]!.stderr);
  assert.match(results[0]!.stdout, /Applied 1 migration/);
  assert.equal(results[1]!.status, 1, results[1]!.stdout);
  assert.equal(
    results[1]!.stderr,
    `hearth: Another push is applying the migrations of project ${th.info.PROJECT_REF} (it applied 20260101000008 meanwhile): let it finish, then run \`hearth db push\` again for what is left.\n`,
  );
  assert.equal((await history()).at(-1), '20260101000008_slow');
});
