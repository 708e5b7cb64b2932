/**
 * A FunctionStore in a folder (`<root>/projects/<ref>/...`), for the functions
 * runtime used alone: its tests and its benchmark. A Hearth server uses
 * DbFunctionStore (src/functions/db-store.ts).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import {
  secretsRevision,
  parseLogCursor,
  type FunctionDraft,
  type FunctionLogEntry,
  type FunctionRecord,
  type FunctionStore,
  type ProjectSecrets,
} from '../../src/functions/store.ts';
import { assertProjectRef, checkSecretCount } from '../../src/functions/validate.ts';

const LOG_FILE_MAX = 4 * 1024 * 1024;

/** The sequence number of a stored line (0 for a line written before lines had cursors). */
const seqOf = (e: FunctionLogEntry) => (e.cursor ? Number(e.cursor.slice(e.cursor.indexOf('-') + 1)) : 0);

async function writeAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(tmp, data, { mode: 0o600 });
  await fs.rename(tmp, file);
}

async function readJson<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * One writer per data directory: the in-memory maps mirror the files this
 * process wrote, which is what makes reads on the invoke path free.
 */
export class DirFunctionStore implements FunctionStore {
  private readonly current = new Map<string, FunctionRecord | null>();
  private readonly secrets = new Map<string, ProjectSecrets>();
  // Serialises writes per function/project so version numbers never collide.
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly logSeq = new Map<string, number>();

  constructor(private readonly root: string) {}

  private projectDir(ref: string): string {
    assertProjectRef(ref);
    return path.join(this.root, 'projects', ref);
  }

  private fnDir(ref: string, name: string): string {
    return path.join(this.projectDir(ref), 'functions', name);
  }

  private locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.locks.get(key) ?? Promise.resolve()).then(fn, fn);
    this.locks.set(
      key,
      run.catch(() => {}),
    );
    return run;
  }

  publish(ref: string, name: string, draft: FunctionDraft): Promise<FunctionRecord> {
    return this.locked(`${ref}/${name}`, async () => {
      const dir = this.fnDir(ref, name);
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      const pointer = await readJson<{ version: number }>(path.join(dir, 'current.json'));
      const versions = (await fs.readdir(dir))
        .map((f) => /^v(\d+)\.json$/.exec(f)?.[1])
        .filter(Boolean)
        .map(Number);
      const version = Math.max(0, pointer?.version ?? 0, ...versions) + 1;
      const record: FunctionRecord = { name, version, ...draft, createdAt: new Date().toISOString() };
      await writeAtomic(path.join(dir, `v${version}.json`), JSON.stringify(record));
      // The rename of the pointer is the publish: readers see the old or the new version, never a mix.
      await writeAtomic(path.join(dir, 'current.json'), JSON.stringify({ version }));
      this.current.set(`${ref}/${name}`, record);
      return record;
    });
  }

  async get(ref: string, name: string): Promise<FunctionRecord | null> {
    const key = `${ref}/${name}`;
    const cached = this.current.get(key);
    if (cached !== undefined) return cached;
    const dir = this.fnDir(ref, name);
    const pointer = await readJson<{ version: number }>(path.join(dir, 'current.json'));
    const record = pointer ? await readJson<FunctionRecord>(path.join(dir, `v${pointer.version}.json`)) : null;
    this.current.set(key, record);
    return record;
  }

  async list(ref: string): Promise<FunctionRecord[]> {
    const names = await fs.readdir(path.join(this.projectDir(ref), 'functions')).catch(() => [] as string[]);
    const records = await Promise.all(names.sort().map((n) => this.get(ref, n)));
    return records.filter((r): r is FunctionRecord => r !== null);
  }

  remove(ref: string, name: string): Promise<boolean> {
    return this.locked(`${ref}/${name}`, async () => {
      const existed = (await this.get(ref, name)) !== null;
      await fs.rm(this.fnDir(ref, name), { recursive: true, force: true });
      this.current.set(`${ref}/${name}`, null);
      return existed;
    });
  }

  async getSecrets(ref: string): Promise<ProjectSecrets> {
    const cached = this.secrets.get(ref);
    if (cached) return cached;
    const values = (await readJson<Record<string, string>>(path.join(this.projectDir(ref), 'secrets.json'))) ?? {};
    const secrets = { values, revision: secretsRevision(values) };
    this.secrets.set(ref, secrets);
    return secrets;
  }

  updateSecrets(ref: string, set: Record<string, string>, unset: string[]): Promise<void> {
    return this.locked(ref, async () => {
      const values = { ...(await this.getSecrets(ref)).values, ...set };
      for (const n of unset) delete values[n];
      if (Object.keys(set).length) checkSecretCount(Object.keys(values).length);
      await fs.mkdir(this.projectDir(ref), { recursive: true, mode: 0o700 });
      await writeAtomic(path.join(this.projectDir(ref), 'secrets.json'), JSON.stringify(values));
      this.secrets.set(ref, { values, revision: secretsRevision(values) });
    });
  }

  appendLogs(ref: string, name: string, entries: FunctionLogEntry[]): Promise<void> {
    return this.locked(`${ref}/${name}`, async () => {
      const dir = this.fnDir(ref, name);
      const file = path.join(dir, 'logs.jsonl');
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      // Each line carries its cursor; the sequence continues from the file's last line.
      let seq = this.logSeq.get(file);
      if (seq === undefined) {
        const last = (await fs.readFile(file, 'utf8').catch(() => '')).trimEnd().split('\n').pop();
        seq = last ? seqOf(JSON.parse(last) as FunctionLogEntry) : 0;
      }
      const lines = entries.map((e) => `${JSON.stringify({ ...e, cursor: `${Date.parse(e.at) * 1000}-${++seq!}` })}\n`);
      this.logSeq.set(file, seq);
      await fs.appendFile(file, lines.join(''), { mode: 0o600 });
      // Bounded retention: past the cap keep the newer half.
      const { size } = await fs.stat(file);
      if (size > LOG_FILE_MAX) {
        const text = await fs.readFile(file, 'utf8');
        await writeAtomic(file, text.slice(text.indexOf('\n', text.length - LOG_FILE_MAX / 2) + 1));
      }
    });
  }

  async readLogs(ref: string, name: string, limit: number, before?: string): Promise<FunctionLogEntry[]> {
    const below = before === undefined ? Infinity : Number(parseLogCursor(before).seq);
    const text = await fs.readFile(path.join(this.fnDir(ref, name), 'logs.jsonl'), 'utf8').catch(() => '');
    const entries = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as FunctionLogEntry);
    // Lines are in sequence order, so the entries before the cursor are a prefix.
    const end = entries.findIndex((e) => seqOf(e) >= below);
    return entries
      .slice(0, end < 0 ? entries.length : end)
      .slice(-limit)
      .reverse();
  }
}
