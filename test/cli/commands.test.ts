/**
 * The `hearth` command line itself: help, usage errors and exit statuses, as
 * a newcomer meets them before anything runs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

const bin = path.resolve('bin/hearth.js');
const root = mkdtempSync(path.join(tmpdir(), 'hearth-cmd-'));
const dataDir = path.join(root, 'data');
// An unreachable server: should a command try to start Hearth, it fails fast instead of starting PostgreSQL.
const env: NodeJS.ProcessEnv = {
  ...process.env,
  HEARTH_DATA_DIR: dataDir,
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  HEARTH_LOG_LEVEL: 'silent',
};

function hearth(...args: string[]) {
  return spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8', timeout: 60_000 });
}

after(() => rmSync(root, { recursive: true, force: true }));

test('--version and -v print the version of the checkout and exit 0', () => {
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const r = hearth(flag);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), version);
  }
});

test('help: no command, help, --help and -h after a command print the usage and exit 0 without starting anything', () => {
  for (const args of [[], ['--help']]) {
    const r = hearth(...args);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /^Usage: hearth <command> \[options\]/, args.join(' '));
    for (const command of [
      'start',
      'status',
      'login',
      'link',
      'projects',
      'keys',
      'gen',
      'init',
      'migration',
      'db',
      'functions',
      'secrets',
      'workflows',
      'cron',
      'push',
    ]) {
      assert.match(r.stdout, new RegExp(`^  ${command}\\b`, 'm'), `${command} is listed`);
    }
  }
  // Every command's own help: its usage, options and examples.
  for (const args of [
    ['start', '-h'],
    ['help', 'status'],
    ['db', 'push', '--help'],
    ['gen', 'types', '--help'],
    ['functions', 'deploy', '--help'],
  ]) {
    const r = hearth(...args);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    const name = args.filter((a) => !a.startsWith('-') && a !== 'help').join(' ');
    assert.match(r.stdout, new RegExp(`^Usage: hearth ${name} `), args.join(' '));
    assert.match(r.stdout, /\nExamples:\n {2}\$ hearth /, args.join(' '));
  }
  assert.match(hearth('status', '--help').stdout, /-o, --output <format> .*choices: "text", "env", "json"/s);
  assert.equal(existsSync(dataDir), false, 'nothing was started');
});

test('usage errors exit 2 and name the problem: unknown command, unknown option, stray argument, missing or refused value', () => {
  for (const [args, message] of [
    [['bogus'], /unknown command "bogus"/],
    [['status', '--bogus'], /unknown option "--bogus" for `hearth status`/],
    [['start', '--output', 'json'], /unknown option "--output" for `hearth start`/],
    [['status', 'now'], /unexpected argument "now"/],
    [['status', '-o'], /option -o needs a value/],
    [['start', '--port'], /option --port needs a value/],
    [['status', '-o', 'yaml'], /option -o must be text, env, json, not "yaml"/],
    [['start', '--role=boss'], /option --role must be all, api, worker, not "boss"/],
    [['projects'], /^Usage: hearth projects \[options\] \[command\]/],
    [['migration', 'new'], /`hearth migration new` needs <name>/],
    // A value an argument or option does not take.
    [
      ['gen', 'types', 'python'],
      /^hearth: Only TypeScript types are generated: `hearth gen types typescript`, not "python"\.\n/,
    ],
    [['gen', 'types', 'typescript', '--schema', ','], /option --schema needs at least one schema name/],
    [['db', 'dump', '--schema', ' '], /option --schema needs at least one schema name/],
    [['secrets', 'set', 'A=1', 'API_KEY'], /^hearth: Write each secret as NAME=value, not "API_KEY"\.\n/],
    [['secrets', 'set', '=x'], /Write each secret as NAME=value: one has no NAME/],
    [
      ['migration', 'new', 'drop!'],
      /A migration name uses letters, digits and underscores \(at most 100\), not "drop!"/,
    ],
    [['functions', 'deploy', 'Hello'], /A function name is 1-64 characters .*, not "Hello"/],
    [['functions', 'delete', '_shared'], /A function name is .*, not "_shared"/],
    [['functions', 'logs', 'hello', '--limit', '0'], /option --limit must be an integer from 1 to 1000, not "0"/],
    [['workflows', 'deploy', '../x'], /A workflow name is .*, not "\.\.\/x"/],
    [['login', '--url', 'example.com'], /option --url must be an http:\/\/ or https:\/\/ URL .*, not "example\.com"/],
    [['start', '--port', 'http'], /option --port must be an integer from 0 to 65535, not "http"/],
    [['link'], /Say which project: `hearth link --project-ref <ref>`/],
  ] as const) {
    const r = hearth(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message);
    assert.match(r.stderr, /Usage:/);
  }
});

test('failures exit 1 with one line saying what to do', () => {
  const embedded = spawnSync(process.execPath, [bin, 'status', '-o', 'json'], {
    env: { ...env, DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(embedded.status, 1, embedded.stderr);
  assert.match(embedded.stderr, /No Hearth data in .*run `npm start` first/);
  assert.equal(embedded.stdout, '');

  const unreachable = hearth('start', '--port', '0');
  assert.equal(unreachable.status, 1, unreachable.stderr);
  assert.match(unreachable.stderr, /^hearth: /);
});
