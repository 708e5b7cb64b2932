/**
 * The newcomer's path: `hearth start` on the embedded PostgreSQL 18 (no
 * DATABASE_URL), `hearth status`, a restart that keeps everything, a clean
 * stop on Ctrl-C, and /health turning 503 when the database goes away.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import postgres from 'postgres';
import { until } from '../helpers/poll.ts';
import { embeddedStartEnv } from '../helpers/ports.ts';

const bin = path.resolve('bin/hearth.js');
// A checkout: its data folder .hearth, and an app folder below it.
const root = mkdtempSync(path.join(tmpdir(), 'hearth-cli-'));
const dataDir = path.join(root, '.hearth');
const {
  env,
  port,
  spare: [otherPort],
} = await embeddedStartEnv(dataDir, 1);
let running: ChildProcess | null = null;

function start(): Promise<{ child: ChildProcess; output: string }> {
  // Its own process group, as a terminal's foreground job, so a test can press Ctrl-C.
  const child = spawn(process.execPath, [bin, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running = child;
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`start timed out:\n${output}`)), 120_000);
    const onData = (c: Buffer) => {
      output += c;
      if (output.includes('Ctrl-C stops')) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hearth start exited with ${code}:\n${output}`));
    });
  });
}

/** SIGTERM to Hearth alone, or, as Ctrl-C in a terminal does, SIGINT to its whole process group. */
function stop(child: ChildProcess, how: 'SIGTERM' | 'Ctrl-C' = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    if (how === 'Ctrl-C') process.kill(-child.pid!, 'SIGINT');
    else child.kill('SIGTERM');
  });
}

/**
 * A data-plane request that blocks in the database on an advisory lock held by
 * `sql`, until release(); returned once it is seen waiting.
 */
async function requestHeldOnLock(info: Record<string, string>, sql: postgres.Sql) {
  const LOCK = 4242;
  await sql`create function public.wait_for_lock() returns int language sql
    as $$ select pg_advisory_lock(4242); select pg_advisory_unlock(4242); select 1 $$`;
  await sql`grant execute on function public.wait_for_lock() to anon`;
  const call = () =>
    fetch(`${info.BASE_URL}/rest/v1/rpc/wait_for_lock`, {
      method: 'POST',
      headers: { apikey: info.PUBLISHABLE_KEY!, 'content-type': 'application/json' },
      body: '{}',
    });
  assert.equal((await until(call, (r) => r.status === 200, 10_000)).status, 200, 'the function is in the schema cache');
  const holder = await sql.reserve();
  await holder`select pg_advisory_lock(${LOCK})`;
  const inFlight = call();
  const waiting = () =>
    holder`select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = ${LOCK} and not granted`.then(
      (r) => r[0]!.n as number,
    );
  assert.equal(await until(waiting, (n) => n === 1, 10_000), 1, 'the request waits on the lock');
  return {
    inFlight,
    release: async () => {
      await holder`select pg_advisory_unlock(${LOCK})`;
      holder.release();
    },
  };
}

function status(format: string): string {
  const r = spawnSync(process.execPath, [bin, 'status', '-o', format], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

after(async () => {
  if (running && running.exitCode === null) await stop(running);
  // As root with a data folder the postgres user cannot reach, the cluster lives elsewhere behind a link.
  const cluster = path.join(dataDir, 'pg');
  if (existsSync(cluster)) rmSync(realpathSync(cluster), { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

test('start, status, restart with the same keys, clean stop, 503 when the database is gone', {
  timeout: 300_000,
}, async () => {
  const first = await start();
  for (const label of [
    'Base URL',
    'Management API',
    'Project ref',
    'Publishable key',
    'Secret key',
    'Database URL',
    'Owner sign-in',
  ]) {
    assert.match(first.output, new RegExp(label));
  }
  const info = JSON.parse(status('json'));
  assert.equal(info.BASE_URL, `http://127.0.0.1:${port}`);
  // Started on other ports than the defaults: the CLI finds both in the data folder (the cluster's
  // postmaster.pid, the server's server.json), given HEARTH_DATA_DIR alone, or in an app folder below
  // the checkout with no variable at all (the nearest .hearth above it).
  const { HEARTH_PORT: _port, HEARTH_DB_PORT: _dbPort, HEARTH_DATA_DIR: _dataDir, ...bare } = env;
  const app = path.join(root, 'examples', 'todo-app');
  mkdirSync(app, { recursive: true });
  for (const [how, opts] of [
    ['HEARTH_DATA_DIR alone', { env: { ...bare, HEARTH_DATA_DIR: dataDir } }],
    ['from an app folder below', { env: bare, cwd: app }],
  ] as const) {
    const r = spawnSync(process.execPath, [bin, 'status', '-o', 'json'], {
      ...opts,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, `${how}: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout).BASE_URL, info.BASE_URL, how);
  }
  const envLines = status('env').trim().split('\n');
  assert.deepEqual(
    envLines.map((l) => l.split('=')[0]),
    ['BASE_URL', 'API_URL', 'PROJECT_REF', 'PUBLISHABLE_KEY', 'SECRET_KEY', 'DB_URL', 'MANAGEMENT_TOKEN', 'JWKS_URL'],
  );

  // The management token works, the JWKS is served, the direct SQL URL connects as the non-superuser owner.
  const projects = await fetch(`${info.API_URL}/v1/projects`, {
    headers: { authorization: `Bearer ${info.MANAGEMENT_TOKEN}` },
  });
  assert.equal(projects.status, 200);
  assert.equal((await fetch(info.JWKS_URL)).status, 200);
  const sql = postgres(info.DB_URL, { max: 1, onnotice: () => {} });
  const [pgVersion] =
    await sql`select current_setting('server_version_num')::int as v, (select rolsuper from pg_roles where rolname = current_user) as su`;
  assert.ok(pgVersion!.v >= 180000, 'the embedded PostgreSQL is version 18');
  assert.equal(pgVersion!.su, false);
  // Least privilege on the cluster Hearth owns: the owner reaches its project's database only, neither
  // the maintenance databases nor the control one (Hearth and `hearth status`, the superuser, still do).
  for (const db of ['postgres', 'template1', env.HEARTH_CONTROL_DB ?? 'hearth']) {
    const url = new URL(info.DB_URL);
    url.pathname = `/${db}`;
    const elsewhere = postgres(url.href, { max: 1, onnotice: () => {} });
    await assert.rejects(elsewhere`select 1`, { code: '42501' }, db);
    await elsewhere.end();
  }

  // Ctrl-C while a request is in flight: the signal reaches Hearth's whole process group, yet
  // PostgreSQL (in a session of its own) keeps serving until Hearth has drained; then it stops.
  const { inFlight, release } = await requestHeldOnLock(info, sql);
  const exited = stop(first.child, 'Ctrl-C');
  const closed = await until(
    () =>
      fetch(`${info.API_URL}/health`).then(
        (r) => r.status,
        () => 'refused' as const,
      ),
    (s) => s === 'refused' || s === 503,
    10_000,
  );
  assert.ok(closed === 'refused' || closed === 503, 'the server stops taking requests');
  await release();
  await sql.end();
  assert.equal((await inFlight).status, 200, 'the in-flight request completes');
  // The client keeps its connection alive; Hearth still exits once the request is answered,
  // not after the server's 72-second keep-alive timeout.
  const hung = new Promise((resolve) => setTimeout(resolve, 30_000, 'still running 30 s after the last response')).then(
    String,
  );
  assert.equal(await Promise.race([exited, hung]), 0);
  assert.equal(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), false, 'PostgreSQL stopped cleanly');
  // Stopped: status says so in one line, not "connection refused" on some port.
  const stopped = spawnSync(process.execPath, [bin, 'status', '-o', 'json'], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(stopped.status, 1);
  assert.match(
    stopped.stderr,
    /^hearth: Hearth is not running on .* \(its PostgreSQL is stopped\): start it with `npm start`\.\n$/,
  );

  const second = await start();
  const again = JSON.parse(status('json'));
  for (const k of ['PROJECT_REF', 'PUBLISHABLE_KEY', 'SECRET_KEY', 'DB_URL']) assert.equal(again[k], info[k], k);
  assert.match(second.output, /ready in \d+\.\d s/);

  assert.deepEqual(await (await fetch(`${info.API_URL}/health`)).json(), { status: 'ok' });
  // PostgreSQL stopped under Hearth (a fast shutdown, as `pg_ctl stop` does: its Unix socket, which
  // the pools use, is gone too): /health and every area answer 503 database_unavailable, never 500.
  const pid = Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGINT');
  let code = 0;
  for (let i = 0; i < 50 && code !== 503; i++) {
    code = (await fetch(`${info.API_URL}/health`)).status;
    if (code !== 503) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(code, 503);
  await until(
    async () => existsSync(path.join(dataDir, 'pg', 'postmaster.pid')),
    (running) => !running,
    10_000,
  );
  const key = { apikey: info.SECRET_KEY, authorization: `Bearer ${info.SECRET_KEY}` };
  for (const [url, headers] of [
    [`${info.BASE_URL}/rest/v1/anything?select=*`, key],
    [`${info.BASE_URL}/storage/v1/bucket`, key],
    [`${info.API_URL}/v1/projects`, { authorization: `Bearer ${info.MANAGEMENT_TOKEN}` }],
  ] as const) {
    const res = await fetch(url, { headers });
    const body = JSON.stringify(await res.json());
    assert.equal(res.status, 503, `${url}: ${body}`);
    assert.match(body, /database_unavailable/, url);
    assert.equal(res.headers.get('retry-after'), '2', url);
  }
  await stop(second.child);
});

test('after Hearth is killed outright, the next start stops the PostgreSQL it left behind; a second Hearth on the same folder is refused', {
  timeout: 300_000,
}, async () => {
  const first = await start();
  const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
  const orphan = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  await new Promise((resolve) => {
    first.child.removeAllListeners('exit');
    first.child.once('exit', resolve);
    first.child.kill('SIGKILL');
  });
  process.kill(orphan, 0); // still running, holding the cluster's lock file
  // Its database answers, but the server.json left behind names a process that is gone: not running.
  const dead = spawnSync(process.execPath, [bin, 'status', '-o', 'json'], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(dead.status, 1, dead.stdout);
  assert.match(dead.stderr, /no Hearth server is listening .*start it with `npm start`/);
  assert.equal(dead.stdout, '');

  const second = await start();
  assert.throws(() => process.kill(orphan, 0), { code: 'ESRCH' }, 'the orphaned PostgreSQL was stopped');
  const info = JSON.parse(status('json'));
  assert.equal((await fetch(`${info.API_URL}/health`)).status, 200);

  const third = spawnSync(process.execPath, [bin, 'start'], {
    env: { ...env, HEARTH_PORT: String(otherPort) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(third.status, 1, third.stderr);
  assert.match(third.stderr, new RegExp(`Hearth \\(pid ${second.child.pid}\\) is already running on the data folder`));
  assert.doesNotMatch(third.stderr, /\n\s+at /, 'one line, no stack trace');
  assert.equal(
    (await fetch(`${info.API_URL}/health`)).status,
    200,
    'the running Hearth and its PostgreSQL are untouched',
  );
  assert.equal(await stop(second.child), 0);
});

test('a data folder deleted to start afresh starts again, with a new cluster (a relocated old one is moved aside)', {
  timeout: 300_000,
}, async () => {
  const first = await start();
  const cluster = realpathSync(path.join(dataDir, 'pg'));
  const relocated = cluster !== path.join(dataDir, 'pg'); // as root, when the postgres user cannot reach the folder
  assert.equal(await stop(first.child), 0);
  rmSync(dataDir, { recursive: true, force: true });

  const second = await start();
  const info = JSON.parse(status('json'));
  assert.equal((await fetch(`${info.API_URL}/health`)).status, 200);
  if (relocated) {
    const moved = new RegExp(`moved it to (${cluster}\\.left-\\S+)`).exec(second.output);
    assert.ok(moved, second.output);
    assert.ok(existsSync(path.join(moved[1]!, 'PG_VERSION')), 'the old cluster is kept aside');
    rmSync(moved[1]!, { recursive: true, force: true });
  }
  assert.equal(await stop(second.child), 0);
});
