/**
 * One upload, streamed end to end:
 * 1. bucket, limits, MIME type and quota checks on what the request declares;
 * 2. the new version is staged (storage.pending_bytes, this writer) and
 *    committed before any byte is written, so a crash leaves a record;
 * 3. an RLS dry run under the caller's role (rolled back) refuses a
 *    forbidden upload before its body is read;
 * 4. the body streams through the Meter (size, SHA-256, limit) to the backend;
 * 5. the row is written under the caller's role with the real size and hash,
 *    claiming the staged version; the quota is asserted in that transaction.
 * Any failure after step 2 removes the bytes and the staging record; if the
 * process dies first, the sweeper does it (sweeper.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import type { Sql } from '../db/pools.ts';
import { withRole, type Caller, type RequestInfo } from '../db/with-role.ts';
import { HearthError } from '../errors.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import { getBucket, type Bucket } from './buckets.ts';
import { bytesKey, type StorageContext } from './context.ts';
import { Meter, tooLarge } from './meter.ts';
import { assertQuota, findObject, insertedRow, insertObject, type NewObject, type ObjectRow } from './objects.ts';
import { storageError } from './pg-errors.ts';
import { checkContentType, checkObjectName, MAX_OBJECT_BYTES } from './rules.ts';

export type Uploader =
  | { kind: 'caller'; caller: Caller; request: RequestInfo }
  /** A signed upload URL: permission was checked when it was minted. */
  | { kind: 'signed'; ownerSub: string | null };

export interface UploadRequest {
  bucket: string;
  name: string;
  body: Readable;
  contentType: string;
  /** Declared length, when the request has one. */
  length: number | null;
  cacheControl: string;
  metadata: Record<string, unknown>;
  replace: boolean;
  by: Uploader;
}

export interface Uploaded {
  object: ObjectRow;
  replayed: boolean;
}

export const SERVICE: Caller = { role: 'service_role', claims: { role: 'service_role' } };

export const duplicate = () =>
  new HearthError(409, 'duplicate', 'The resource already exists: an object of that name holds different bytes. Upload with x-upsert: true (or PUT) to replace it.');

/** Thrown inside a transaction to end it without writing. */
class Rollback extends Error {
  constructor(readonly existing?: ObjectRow) {
    super('rollback');
  }
}

export interface Limits {
  maxBytes: number;
  quotaBytes: number;
}

export async function limitsFor(project: ProjectRuntime, bucket: Bucket): Promise<Limits> {
  const settings = await project.settings('storage');
  return {
    maxBytes: Math.min(MAX_OBJECT_BYTES, settings.file_size_limit as number, bucket.file_size_limit ?? Infinity),
    quotaBytes: settings.quota_bytes as number,
  };
}

/** The quota check before any byte moves; the binding one is in the commit. */
export async function checkQuotaEarly(sql: Sql, quotaBytes: number, adding: number): Promise<void> {
  const [row] = await sql`select bytes::float8 as bytes from storage.usage`;
  if ((row!.bytes as number) + adding > quotaBytes) throw storageError({ code: 'HS001' });
}

export async function stage(s: StorageContext, project: ProjectRuntime): Promise<string> {
  const version = randomUUID();
  await project.sql`insert into storage.pending_bytes (version, writer) values (${version}, ${s.writer})`;
  return version;
}

/** Removes staged bytes that no row will claim. A failure here is finished by the sweeper. */
export async function discard(s: StorageContext, project: ProjectRuntime, version: string): Promise<void> {
  try {
    s.p.faults.hit('storage.upload.discard', { version });
    await s.backend.remove(bytesKey(project, version));
    await project.sql`delete from storage.pending_bytes where version = ${version} and writer = ${s.writer}`;
  } catch (err) {
    s.p.log.warn({ err, version }, 'storage: staged bytes left for the sweeper');
  }
}

/** RLS dry run: would this caller be allowed to write the row? Rolled back either way. */
export async function dryRun(project: ProjectRuntime, by: Extract<Uploader, { kind: 'caller' }>, row: NewObject, replace: boolean, length: number | null): Promise<void> {
  try {
    await withRole(
      project.sql,
      by.caller,
      async (tx) => {
        const visible = replace ? undefined : await findObject(tx, row.bucket, row.name);
        const inserted = await insertObject(tx, row, replace);
        // Name taken: only a visible object of the same size may turn out to be a replay.
        if (!inserted && (!visible || (length !== null && visible.size !== length))) throw duplicate();
        throw new Rollback();
      },
      by.request,
    );
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
}

export async function upload(s: StorageContext, project: ProjectRuntime, u: UploadRequest): Promise<Uploaded> {
  checkObjectName(u.name);
  const bucket = await getBucket(project.sql, u.bucket);
  const limits = await limitsFor(project, bucket);
  checkContentType(u.contentType, bucket.allowed_mime_types);
  if (u.length !== null && u.length > limits.maxBytes) throw tooLarge(limits.maxBytes);
  await checkQuotaEarly(project.sql, limits.quotaBytes, u.length ?? 0);

  const version = await stage(s, project);
  const row: NewObject = {
    id: randomUUID(),
    bucket: bucket.id,
    name: u.name,
    ownerSub: u.by.kind === 'signed' ? u.by.ownerSub : ((u.by.caller.claims.sub as string | undefined) ?? null),
    version,
    size: u.length ?? 0,
    contentType: u.contentType,
    cacheControl: u.cacheControl,
    sha256: '',
    metadata: u.metadata,
  };
  try {
    if (u.by.kind === 'caller') await dryRun(project, u.by, row, u.replace, u.length);
    const meter = new Meter(limits.maxBytes);
    await s.backend.write(bytesKey(project, version), pipeline(u.body, meter, () => {}), u.length);
    s.p.faults.hit('storage.upload.written', { version });
    row.size = meter.size;
    row.sha256 = meter.sha256();
    const object = await withRole(
      project.sql,
      u.by.kind === 'caller' ? u.by.caller : SERVICE,
      async (tx) => {
        if (!(await insertObject(tx, row, u.replace))) {
          const existing = await findObject(tx, row.bucket, row.name);
          throw existing && existing.sha256 === row.sha256 && existing.size === row.size ? new Rollback(existing) : duplicate();
        }
        await assertQuota(tx, limits.quotaBytes);
        s.p.faults.hit('storage.upload.commit', { version });
        // A replaced row keeps its id; read it back (upsert needs a read policy anyway).
        return (u.replace && (await findObject(tx, row.bucket, row.name))) || insertedRow(row, new Date());
      },
      u.by.kind === 'caller' ? u.by.request : {},
    );
    if (u.replace) s.drain(project);
    return { object, replayed: false };
  } catch (err) {
    await discard(s, project, version);
    if (err instanceof Rollback && err.existing) return { object: err.existing, replayed: true };
    throw storageError(err);
  }
}
