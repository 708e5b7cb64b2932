/**
 * The default backend: one file per key under <dataDir>/storage, fanned out by
 * the first two characters of the version so no folder grows huge.
 */
import { createWriteStream, writeFile } from 'node:fs';
import { copyFile, mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { fail } from '../../errors.ts';
import { type ByteRange, type BytesBackend, objectNotFound } from './types.ts';

/**
 * Bytes a file stream moves per system call. Node's defaults (16 KiB written,
 * 64 KiB read) cost a thread-pool round trip per socket chunk. Writes: chunks
 * that arrive while one is on disk go out together in one writev, up to 1 MiB.
 * Reads: 256 KiB fills the socket in fewer steps while a slow reader still
 * holds little. Measured in bench/storage.ts (docs/storage.md, Performance).
 */
const WRITE_BUFFER = 1024 * 1024;
const READ_BUFFER = 256 * 1024;

/**
 * Bytes gathered whole go through the callback API: fs/promises' writeFile
 * opens a FileHandle (an object to create, track and finalise) and costs
 * ~20 us more CPU per file here, a few percent of a small upload.
 */
const writeWhole = promisify(writeFile);

const missing = (err: unknown) => {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fail('not_found', 'The object bytes are missing.');
  return err;
};

export class FsBackend implements BytesBackend {
  private readonly made = new Set<string>();

  constructor(private readonly root: string) {}

  private file(key: string): string {
    const [ref, version] = key.split('/') as [string, string];
    return path.join(this.root, ref, version.slice(0, 2), version);
  }

  private async dirFor(file: string): Promise<void> {
    const dir = path.dirname(file);
    if (this.made.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.made.add(dir);
  }

  async write(key: string, body: Readable | Buffer): Promise<void> {
    const file = this.file(key);
    await this.dirFor(file);
    try {
      if (Buffer.isBuffer(body)) await writeWhole(file, body, { flag: 'wx' });
      else await pipeline(body, createWriteStream(file, { flags: 'wx', highWaterMark: WRITE_BUFFER }));
    } catch (err) {
      await rm(file, { force: true });
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const handle = await open(this.file(key), 'r');
      return handle.createReadStream({
        ...(range ? { start: range.start, end: range.end } : {}),
        highWaterMark: READ_BUFFER,
      });
    } catch (err) {
      throw missing(err);
    }
  }

  async readBuffer(key: string, range?: ByteRange): Promise<Buffer> {
    try {
      if (!range) return await readFile(this.file(key));
      const handle = await open(this.file(key), 'r');
      try {
        const bytes = Buffer.allocUnsafe(range.end - range.start + 1);
        const { bytesRead } = await handle.read(bytes, 0, bytes.length, range.start);
        return bytes.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    } catch (err) {
      throw missing(err);
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  /** A file is written whole or removed: an upload leaves nothing else behind. */
  removeAbandoned(key: string): Promise<void> {
    return this.remove(key);
  }

  async removeProject(ref: string): Promise<void> {
    await rm(path.join(this.root, ref), { recursive: true, force: true });
    this.made.clear(); // folders it had made may be gone; mkdir again costs one call each
  }

  async copy(from: string, to: string): Promise<void> {
    const target = this.file(to);
    await this.dirFor(target);
    try {
      await copyFile(this.file(from), target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw objectNotFound();
      throw err;
    }
  }

  close(): void {}
}
