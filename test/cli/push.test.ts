/**
 * Deploys from files: `hearth push` of examples/todo-app on a fresh project
 * (migrations, settings, a function with imports, a workflow, a cron job),
 * again with nothing changed, then with one change; the example's typed client
 * compiles against the generated types; functions, secrets and workflows
 * commands and their one-line refusals.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { remoteEnv, runHearth } from './run.ts';

let th: TestHearth;
let env: NodeJS.ProcessEnv;
let ref: string;
const app = mkdtempSync(path.join(tmpdir(), 'hearth-example-'));
before(async () => {
  th = await startTestHearth();
  env = remoteEnv(th);
  cpSync(path.resolve('examples/todo-app'), app, { recursive: true });
  rmSync(path.join(app, 'src', 'database.types.ts'), { force: true });
  const org = (await th.api('GET', '/v1/organizations')).body[0].id;
  const created = await th.api('POST', '/v1/projects', { body: { name: 'Todo', organization_id: org } });
  assert.equal(created.status, 201);
  ref = created.body.ref;
});
after(async () => {
  await th.close();
  rmSync(app, { recursive: true, force: true });
});

const hearth = (...args: string[]) => runHearth([...args, '--project-ref', ref], { env, cwd: app });

test('hearth push of the example on a fresh project applies everything in order and says what changed', async () => {
  const r = await hearth('push', '-o', 'json');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [
    { what: 'migration 20260101000000_todos.sql', detail: 'applied' },
    { what: 'migration 20260101000100_summaries.sql', detail: 'applied' },
    { what: 'migration 20260101000200_events_queue.sql', detail: 'applied' },
    { what: 'settings workflows', detail: 'set enabled' },
    { what: 'settings auth', detail: 'set site_url' },
    { what: 'function hello', detail: 'deployed version 1' },
    { what: 'workflow daily-summary', detail: 'published version 1' },
    { what: 'cron job daily-summary', detail: 'created' },
  ]);
  const project = (await th.api('GET', `/v1/projects/${ref}`)).body;
  const hello = await fetch(`${project.base_url}/functions/v1/hello`, {
    method: 'POST',
    body: JSON.stringify({ name: 'Ada' }),
  });
  assert.equal(hello.status, 200);
  assert.deepEqual(await hello.json(), { message: 'Hello Ada!' });
  const job = (await th.api('GET', `/v1/projects/${ref}/cron-jobs/daily-summary`)).body;
  assert.deepEqual(
    [job.schedule, job.target_kind, job.target, job.payload],
    ['0 6 * * *', 'workflow', 'daily-summary', { source: 'cron' }],
  );
  assert.equal((await th.api('GET', `/v1/projects/${ref}/config/auth`)).body.site_url, 'http://localhost:5173');

  const again = await hearth('push');
  assert.equal(again.status, 0, again.stderr);
  assert.equal(
    again.stdout,
    [
      'WHAT                    DETAIL',
      'migrations              up to date',
      'settings workflows      unchanged',
      'settings auth           unchanged',
      'function hello          unchanged (version 1)',
      'workflow daily-summary  unchanged (version 1)',
      'cron job daily-summary  unchanged',
      '',
    ].join('\n'),
  );

  writeFileSync(
    path.join(app, 'hearth/functions/hello/greeting.ts'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the function's own source, written as text.
    'export const greeting = (name: string) => `Hi ${name}!`;\n',
  );
  const toml = path.join(app, 'hearth/config.toml');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace('0 6 * * *', '30 6 * * *'));
  const changed = await hearth('push', '-o', 'json');
  assert.equal(changed.status, 0, changed.stderr);
  const details = Object.fromEntries(
    JSON.parse(changed.stdout).map((c: { what: string; detail: string }) => [c.what, c.detail]),
  );
  assert.equal(details['function hello'], 'deployed version 2');
  assert.equal(details['cron job daily-summary'], 'recreated');
  assert.equal(details['workflow daily-summary'], 'unchanged (version 1)');
  const hi = await fetch(`${project.base_url}/functions/v1/hello`, {
    method: 'POST',
    body: JSON.stringify({ name: 'Ada' }),
  });
  assert.deepEqual(await hi.json(), { message: 'Hi Ada!' });
});

test("the example's typed client compiles against the generated types", async () => {
  const types = await hearth('gen', 'types', 'typescript');
  assert.equal(types.status, 0, types.stderr);
  writeFileSync(path.join(app, 'src', 'database.types.ts'), types.stdout);
  symlinkSync(path.resolve('node_modules'), path.join(app, 'node_modules'));
  const out = await new Promise<{ status: number | null; text: string }>((resolve) => {
    const child = spawn(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', app]);
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('close', (status) => resolve({ status, text }));
  });
  assert.equal(out.status, 0, out.text);
});

test('functions, secrets and workflows commands, and their one-line refusals', async () => {
  const list = await hearth('functions', 'list', '-o', 'json');
  assert.deepEqual(
    JSON.parse(list.stdout).map((f: { name: string; version: number }) => `${f.name}@${f.version}`),
    ['hello@2'],
  );

  mkdirSync(path.join(app, 'hearth/functions/empty'));
  writeFileSync(path.join(app, 'hearth/functions/empty/util.ts'), 'export const x = 1;\n');
  const noEntry = await hearth('functions', 'deploy', 'empty');
  assert.equal(noEntry.status, 1);
  assert.equal(
    noEntry.stderr,
    'hearth: hearth/functions/empty/ has no entry point: write hearth/functions/empty/index.ts (Deno.serve(...) or export default { fetch }); function empty was not deployed.\n',
  );
  writeFileSync(
    path.join(app, 'hearth/functions/empty/index.ts'),
    "import { y } from './missing.ts';\nDeno.serve(() => new Response(String(y)));\n",
  );
  const broken = await hearth('functions', 'deploy', 'empty');
  assert.equal(broken.status, 1);
  assert.match(
    broken.stderr,
    /^hearth: hearth\/functions\/empty\/index\.ts:1:\d+: Cannot resolve import "\.\/missing\.ts".*; function empty was not deployed\.\n$/,
  );
  rmSync(path.join(app, 'hearth/functions/empty'), { recursive: true });

  // Several functions are all or nothing: one that fails (sorted after a changed, good one) deploys none,
  // and `hearth push` stops before its migrations.
  const greeting = path.join(app, 'hearth/functions/hello/greeting.ts');
  const greetingText = readFileSync(greeting, 'utf8');
  writeFileSync(greeting, "export const greeting = (name: string) => 'Hey ' + name;\n");
  mkdirSync(path.join(app, 'hearth/functions/later'));
  writeFileSync(path.join(app, 'hearth/functions/later/index.ts'), 'Deno.serve(() => new Response(1 +));\n');
  const all = await hearth('functions', 'deploy');
  assert.equal(all.status, 1);
  assert.match(all.stderr, /^hearth: hearth\/functions\/later\/index\.ts:1:\d+: .*; no function was deployed\.\n$/);
  rmSync(path.join(app, 'hearth/functions/later/index.ts'));
  const migration = path.join(app, 'hearth/migrations/20270101000000_later.sql');
  writeFileSync(migration, 'create table later (id int);\n');
  const pushed = await hearth('push');
  assert.equal(pushed.status, 1);
  assert.match(pushed.stderr, /^hearth: hearth\/functions\/later\/ has no entry point: .*; nothing was pushed\.\n$/);
  assert.deepEqual(
    JSON.parse((await hearth('functions', 'list', '-o', 'json')).stdout).map(
      (f: { name: string; version: number }) => `${f.name}@${f.version}`,
    ),
    ['hello@2'],
  );
  const history = JSON.parse((await hearth('migration', 'list', '-o', 'json')).stdout);
  assert.equal(history.find((m: { version: string }) => m.version === '20270101000000').status, 'pending');
  rmSync(path.join(app, 'hearth/functions/later'), { recursive: true });
  rmSync(migration);
  writeFileSync(greeting, greetingText);

  const set = await hearth('secrets', 'set', 'API_KEY=s3cret-value', 'OTHER=x');
  assert.equal(set.status, 0, set.stderr);
  assert.ok(!set.stdout.includes('s3cret-value'));
  const secrets = await hearth('secrets', 'list');
  assert.match(secrets.stdout, /^NAME\s+DIGEST\nAPI_KEY\s+[0-9a-f]{64}\nOTHER\s+[0-9a-f]{64}\n$/);
  assert.ok(!secrets.stdout.includes('s3cret-value'));
  const unset = await hearth('secrets', 'unset', 'OTHER', 'NOPE');
  assert.equal(unset.status, 1);
  assert.equal(unset.stdout, `Removed OTHER from project ${ref}.\n`);
  assert.equal(
    unset.stderr,
    `hearth: Project ${ref} has no secret NOPE (\`hearth secrets list\`); the others were removed.\n`,
  );
  assert.deepEqual(
    (await th.api('GET', `/v1/projects/${ref}/secrets`)).body.map((s: { name: string }) => s.name),
    ['API_KEY'],
  );
  const none = await hearth('secrets', 'unset', 'NOPE');
  assert.equal(none.status, 1);
  assert.equal(none.stdout, '');
  assert.equal(none.stderr, `hearth: Project ${ref} has no secret NOPE (\`hearth secrets list\`).\n`);

  // A [functions.<name>] section without its folder (a misspelt name) is refused, not ignored.
  const toml = path.join(app, 'hearth/config.toml');
  const tomlText = readFileSync(toml, 'utf8');
  writeFileSync(toml, `${tomlText}\n[functions.helo]\nverify_jwt = false\n`);
  const misspelt = await hearth('functions', 'deploy');
  assert.equal(misspelt.status, 1);
  assert.equal(
    misspelt.stderr,
    'hearth: hearth/config.toml: [functions.helo] names no function: there is no folder hearth/functions/helo/ (rename the section or remove it).\n',
  );
  writeFileSync(toml, tomlText);
  // A settings area the server does not have: its answer names the ones it has (realtime among them).
  writeFileSync(toml, `${tomlText}\n[settings.realtme]\nenabled = true\n`);
  const noArea = await hearth('push');
  assert.equal(noArea.status, 1);
  assert.match(noArea.stderr, /\[settings\.realtme\]: There is no config area "realtme"; areas are .*\brealtime\b/);
  // A file TOML cannot read: the line and column where it stopped.
  const unclosed = `${tomlText}\nunclosed = [\n`;
  writeFileSync(toml, unclosed);
  const unreadable = await hearth('push');
  assert.equal(unreadable.status, 1);
  const last = unclosed.split('\n').length;
  assert.match(unreadable.stderr, new RegExp(`^hearth: hearth/config\\.toml:${last}:\\d+: Invalid TOML document`));
  writeFileSync(toml, tomlText);

  writeFileSync(
    path.join(app, 'hearth/workflows/bad.json'),
    JSON.stringify({
      steps: [
        { key: 'a', kind: 'sql', target: 'select 1' },
        { key: 'b', kind: 'sleep', sleep_for: 'forever' },
      ],
    }),
  );
  const bad = await hearth('workflows', 'deploy', 'bad');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^hearth: hearth\/workflows\/bad\.json: .*\bb\b.*\(invalid_definition\)\n$/);
  writeFileSync(path.join(app, 'hearth/workflows/bad.json'), '{"steps": [');
  const json = await hearth('workflows', 'deploy', 'bad');
  assert.match(json.stderr, /^hearth: hearth\/workflows\/bad\.json: not valid JSON/);
  rmSync(path.join(app, 'hearth/workflows/bad.json'));

  await fetch(`${(await th.api('GET', `/v1/projects/${ref}`)).body.base_url}/functions/v1/hello`, {
    method: 'POST',
    body: '{}',
  });
  const logs = await until(
    () => hearth('functions', 'logs', 'hello'),
    (r) => /POST/.test(r.stdout),
    30_000,
  );
  assert.match(logs.stdout, /^\S+ info\s+POST \/hello.* \(200, \d+ ms\)$/m);
  const jsonLogs = await hearth('functions', 'logs', 'hello', '-o', 'json');
  const entries = JSON.parse(jsonLogs.stdout);
  assert.ok(
    Array.isArray(entries) && entries.some((e: { message: string }) => /POST/.test(e.message)),
    jsonLogs.stdout,
  );
  const del = await hearth('functions', 'delete', 'hello');
  assert.equal(del.status, 0, del.stderr);
  const gone = await hearth('functions', 'delete', 'hello');
  assert.equal(gone.stderr, `hearth: Project ${ref} has no function "hello" (\`hearth functions list\`).\n`);
});

test('a push that fails part way names the item and says what it changed before it, which stays', async () => {
  const migration = path.join(app, 'hearth/migrations/20270201000000_more.sql');
  writeFileSync(migration, 'create table more_things (id int);\n');
  // Sorted after hello (deleted above, so deployed again): over the server's 10 MiB of sources.
  mkdirSync(path.join(app, 'hearth/functions/zz-big'));
  writeFileSync(
    path.join(app, 'hearth/functions/zz-big/index.ts'),
    `const blob = ${JSON.stringify('x'.repeat(11 * 1024 * 1024))};\nDeno.serve(() => new Response(blob.slice(0, 1)));\n`,
  );
  const pushed = await hearth('push');
  assert.equal(pushed.status, 1, pushed.stdout);
  assert.match(
    pushed.stderr,
    /^hearth: function zz-big: The sources total \d+ bytes; the limit is 10485760\. \(function_too_large\) Before it: 1 migration applied, function hello deployed version \d+ \(these stay\); fix it and run `hearth push` again \(unchanged items are skipped\)\.\n$/,
  );
  const functions = JSON.parse((await hearth('functions', 'list', '-o', 'json')).stdout);
  assert.deepEqual(
    functions.map((f: { name: string }) => f.name),
    ['hello'],
  );
  // Nothing changed before it: the line names the function alone.
  const deployed = await hearth('functions', 'deploy');
  assert.equal(deployed.status, 1);
  assert.match(deployed.stderr, /^hearth: function zz-big: The sources total \d+ bytes; .*\(function_too_large\)\n$/);
  rmSync(path.join(app, 'hearth/functions/zz-big'), { recursive: true });
});
