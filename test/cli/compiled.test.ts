/**
 * `hearth` runs the compiled build in dist/server (scripts/build-server.js),
 * not the TypeScript sources: every command is run here with a module hook
 * that refuses to load any .ts file, so a fall back to tsx would fail them.
 * Also: an edited source makes the next command rebuild before it runs.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { until } from '../helpers/poll.ts';
import { embeddedStartEnv } from '../helpers/ports.ts';

const bin = path.resolve('bin/hearth.js');
const manifest = path.resolve('dist/server/build.json');
// Registered before bin/hearth.js runs; its load hook throws on any TypeScript module.
const hooks = `export async function load(url, context, next) { if (/\\.tsx?$/.test(new URL(url).pathname)) throw new Error('loaded TypeScript: ' + url); return next(url, context); }`;
const noTypeScript = `data:text/javascript,${encodeURIComponent(`import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`)}`;
const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-compiled-'));
const { env, port } = await embeddedStartEnv(dataDir);

const hearth = (args: string[]) =>
  spawnSync(process.execPath, ['--import', noTypeScript, bin, ...args], { env, encoding: 'utf8' });

after(() => rmSync(dataDir, { recursive: true, force: true }));

test('the compiled build starts on the embedded PostgreSQL, answers, reports its status and stops cleanly', {
  timeout: 300_000,
}, async () => {
  assert.equal(
    spawnSync(process.execPath, ['scripts/build-server.js'], { encoding: 'utf8' }).status,
    0,
    'npm run build',
  );
  const child = spawn(process.execPath, ['--import', noTypeScript, bin, 'start'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await until(async () => output.includes('Ctrl-C stops') || child.exitCode !== null, Boolean, 240_000);
    assert.match(output, /Hearth is running/, output);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.deepEqual([health.status, await health.json()], [200, { status: 'ok' }]);
    const status = hearth(['status', '-o', 'json']);
    assert.equal(status.status, 0, status.stderr);
    const info = JSON.parse(status.stdout);
    assert.equal(info.API_URL, `http://127.0.0.1:${port}`);
    const projects = await fetch(`${info.API_URL}/v1/projects`, {
      headers: { authorization: `Bearer ${info.MANAGEMENT_TOKEN}` },
    });
    assert.equal(projects.status, 200);
    assert.equal((await projects.json())[0].ref, info.PROJECT_REF);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, output);
});

test('a source file changed since the build: the next command rebuilds, then runs the new build', {
  timeout: 120_000,
}, () => {
  const before = JSON.parse(readFileSync(manifest, 'utf8')) as {
    built_at: string;
    inputs: Record<string, [number, number]>;
  };
  const source = path.resolve('src/errors.ts');
  const { atime } = statSync(source);
  utimesSync(source, atime, new Date()); // what an editor's save does to the build's view of it
  const help = hearth(['--help']);
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /Usage: hearth <command>/);
  const afterBuild = JSON.parse(readFileSync(manifest, 'utf8')) as {
    built_at: string;
    inputs: Record<string, [number, number]>;
  };
  assert.notEqual(afterBuild.built_at, before.built_at);
  assert.equal(afterBuild.inputs['src/errors.ts']![1], statSync(source).mtimeMs);
});

test('a restart loads none of the libraries kept for first use (passwords, uploads, schemas, S3, mail, sign-in, prompts, deploys)', {
  timeout: 120_000,
}, async () => {
  // Every package the process imports or requires by name, written to a file as it loads.
  const seen = path.join(dataDir, 'modules.txt');
  const recorder = `import Module from 'node:module'; import { appendFileSync } from 'node:fs';
const load = Module._load;
Module._load = function (request, ...rest) { appendFileSync(${JSON.stringify(seen)}, request + '\\n'); return load.call(this, request, ...rest); };
Module.register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(`import { appendFileSync } from 'node:fs'; export async function resolve(specifier, context, next) { appendFileSync(${JSON.stringify(seen)}, specifier + '\\n'); return next(specifier, context); }`)}`)});`;
  const child = spawn(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(recorder)}`, bin, 'start'],
    {
      env,
      stdio: 'ignore',
    },
  );
  try {
    await until(
      () =>
        fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.status === 200,
          () => false,
        ),
      Boolean,
      60_000,
    );
    const loaded = new Set(readFileSync(seen, 'utf8').split('\n'));
    assert.ok(loaded.has('postgres') || loaded.has('pino'), 'the recorder saw the packages the server does load');
    const firstUse = [
      'argon2',
      '@napi-rs/blake-hash',
      '@fastify/ajv-compiler',
      '@fastify/fast-json-stringify-compiler',
      '@aws-sdk/client-s3',
      'nodemailer',
      'openid-client',
      '@simplewebauthn/server',
      '@inquirer/prompts',
      'esbuild',
    ];
    assert.deepEqual(
      firstUse.filter((name) => loaded.has(name)),
      [],
    );
  } finally {
    child.kill('SIGTERM');
  }
});
