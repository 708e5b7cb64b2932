/**
 * One upload, streamed end to end:
 * 1. bucket, limits, MIME type and quota checks on what the request declares,
 *    while the new version is staged (storage.pending_bytes, this writer) and
 *    committed before any byte is written, so a crash leaves a record;
 * 2. the body streams through the Meter (size, BLAKE3 hash, limit) to the backend
 *    while an RLS dry run under the caller's role (rolled back) asks whether
 *    the row may be written; a refusal stops the stream at once (roles that
 *    bypass RLS, and bodies declared at most 1 MiB, need no dry run); a body
 *    declared at most 64 KiB is read whole instead and stored in one write;
 * 3. the row is written under the caller's role with the real size and hash,
 *    claiming the staged version; the quota is checked when that transaction
 *    commits (migration 032).
 * Any failure after step 1 began removes the bytes and the staging record; if
 * the process dies first, the sweeper does it (sweeper.ts). Every round trip
 * here delays the body or the answer, so independent ones go out together.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import type { Sql } from '../db/pools.ts';
import { type Caller, type RequestInfo, rowsOf, withRoleStatement, withRoleStatements } from '../db/with-role.ts';
import { fail } from '../errors.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import { BUCKET_COLUMNS, bucketNotFound, type Bucket } from './buckets.ts';
import { bytesKey, type StorageContext } from './context.ts';
import { contentHashOf, Meter, tooLarge } from './meter.ts';
import {
  findObjectAs,
  findStatement,
  insertedRow,
  insertStatement,
  type NewObject,
  type ObjectRow,
  quotaSetting,
  quotaStatement,
} from './objects.ts';
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

/** Declared lengths above this get the RLS dry run before their body is stored. */
const DRY_RUN_FROM_BYTES = 1024 * 1024;

/**
 * A body declared this small is read whole while the bucket is looked up, then
 * hashed and stored in one piece: a Meter, a stream pipeline and a file stream
 * cost more CPU per upload here than the bytes themselves (docs/storage.md).
 */
const GATHER_UP_TO = 64 * 1024;

async function gather(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

const SERVICE: Caller = { role: 'service_role', claims: { role: 'service_role' } };

const duplicate = () =>
  fail('duplicate', undefined, {
    hint: 'An object of that name holds different bytes. Upload with x-upsert: true (or PUT) to replace it.',
  });
const takenUnreadable = () =>
  fail('duplicate', undefined, {
    hint: 'An object of that name is already in the bucket, one your policies do not let you read. Upload with x-upsert: true (or PUT) to replace it, if your policies allow that.',
  });

/** SPEC 4.2: a signed upload URL never overwrites, so x-upsert or PUT is no way out here. */
const takenForSignedUpload = () =>
  fail('duplicate', undefined, {
    hint: 'A signed upload URL cannot overwrite an object (x-upsert does not apply). Delete the object first, or sign a URL for another name.',
  });

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

/**
 * The quota check before any byte moves; the binding one is in the commit. A
 * replace frees the bytes of the object it replaces: `replaced` reads that
 * object only when the check would otherwise refuse (near the quota), under
 * the caller's role, so a size the caller may not read never changes the answer.
 */
async function refuseOverQuota(
  usedBytes: number,
  adding: number,
  quotaBytes: number,
  replaced: (() => Promise<ObjectRow | undefined>) | null,
): Promise<void> {
  if (usedBytes + adding <= quotaBytes) return;
  const freed = (replaced && (await replaced())?.size) ?? 0;
  if (usedBytes - freed + adding > quotaBytes) throw storageError({ code: 'HS001' });
}

/** refuseOverQuota on the project's byte total read now (copies, which stage on their own). */
export async function checkQuotaEarly(
  sql: Sql,
  quotaBytes: number,
  adding: number,
  replaced: (() => Promise<ObjectRow | undefined>) | null,
): Promise<void> {
  const [row] = await sql`select bytes::float8 as bytes from storage.usage`;
  await refuseOverQuota(row!.bytes as number, adding, quotaBytes, replaced);
}

export async function stage(
  s: StorageContext,
  project: ProjectRuntime,
  version: string = randomUUID(),
): Promise<string> {
  await project.sql`insert into storage.pending_bytes (version, writer) values (${version}, ${s.writer})`;
  return version;
}

/** The value of a settled promise, or its error thrown. */
function settled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

/**
 * Removes staged bytes that no row will claim. When that fails (the store is
 * down), the record is handed to the sweeper by dropping its writer: the
 * periodic sweep takes only records without one, or of writers that are gone,
 * so a live process's record would otherwise wait for its restart.
 */
export async function discard(s: StorageContext, project: ProjectRuntime, version: string): Promise<void> {
  try {
    s.p.faults.hit('storage.upload.discard', { version });
    await s.backend.remove(bytesKey(project, version));
    await project.sql`delete from storage.pending_bytes where version = ${version} and writer = ${s.writer}`;
  } catch (err) {
    s.p.log.warn({ err, version }, 'storage: staged bytes left for the sweeper');
    await project.sql`update storage.pending_bytes set writer = null where version = ${version} and writer = ${s.writer}`.catch(
      // Still ours: swept once this process is gone (by the next one's start).
      (e: unknown) => s.p.log.warn({ err: e, version }, 'storage: staged record kept by this writer'),
    );
  }
}

/**
 * RLS dry run: would this caller be allowed to write the row? The insert and,
 * for a taken name, the read of what holds it go out with the ROLLBACK in one
 * round trip (withRoleStatements).
 */
async function dryRun(
  project: ProjectRuntime,
  by: Extract<Uploader, { kind: 'caller' }>,
  row: NewObject,
  replace: boolean,
  length: number | null,
): Promise<void> {
  const [insert, find] = await withRoleStatements(
    project.sql,
    by.caller,
    [insertStatement(row, replace), findStatement(row.bucket, row.name)],
    'rollback',
    by.request,
    0, // the insert locks the usage row until the ROLLBACK
  );
  if (rowsOf(insert!).count > 0) return;
  // Name taken (nothing changed, so the row read is the one that was there):
  // only a visible object of the same size may turn out to be a replay.
  const visible = rowsOf(find!)[0] as unknown as ObjectRow | undefined;
  if (!visible || (length !== null && visible.size !== length)) throw duplicate();
}

/**
 * Minting a signed upload URL: the RLS dry run of inserting `row`, rolled
 * back. Postgres checks the insert policy before the name's uniqueness, so no
 * row written means the caller may insert and the name is taken: 409 whether
 * or not the caller can read what holds it, as the upload would answer.
 */
export async function dryRunSignedUpload(
  project: ProjectRuntime,
  by: Extract<Uploader, { kind: 'caller' }>,
  row: NewObject,
): Promise<void> {
  const [insert] = await withRoleStatements(
    project.sql,
    by.caller,
    [insertStatement(row, false)],
    'rollback',
    by.request,
    0,
  );
  if (rowsOf(insert!).count === 0) throw takenForSignedUpload();
}

/**
 * Whether the caller's role skips RLS (service_role, when Hearth could give it
 * BYPASSRLS): a dry run could refuse nothing then, and the commit still finds a
 * taken name. Asked once per project; if the question fails, the dry run runs.
 */
function bypassesRls(project: ProjectRuntime, caller: Caller): Promise<boolean> {
  if (caller.role !== 'service_role') return Promise.resolve(false);
  return project.cached('storage.serviceBypassesRls', () =>
    project.sql`select rolbypassrls as bypass from pg_roles where rolname = 'service_role'`.then(
      ([row]) => row?.bypass === true,
      () => false,
    ),
  );
}

/**
 * The staging record, the bucket and the project's byte total in one
 * statement: one round trip and one commit before the body flows, where three
 * separate queries cost three connections, writes and server wake-ups per
 * upload. The record is committed (a crash leaves it for the sweeper) even
 * when the bucket turns out not to exist: the caller's failure path removes it.
 */
async function stageAndLook(
  s: StorageContext,
  project: ProjectRuntime,
  bucketId: string,
  version: string,
): Promise<{ bucket: Bucket | null; usedBytes: number }> {
  const [row] = await project.sql.unsafe(
    `with staged as (insert into storage.pending_bytes (version, writer) values ($1, $2))
     select u.bytes::float8 as used_bytes, b.* from storage.usage u left join (select ${BUCKET_COLUMNS} from storage.buckets where id = $3) b on true`,
    [version, s.writer, bucketId],
    { prepare: true },
  );
  const { used_bytes: usedBytes, ...bucket } = row!;
  return { bucket: bucket.id === null ? null : (bucket as unknown as Bucket), usedBytes: usedBytes as number };
}

export async function upload(s: StorageContext, project: ProjectRuntime, u: UploadRequest): Promise<Uploaded> {
  checkObjectName(u.name);
  const version = randomUUID();
  const gathered = u.length !== null && u.length <= GATHER_UP_TO ? gather(u.body) : null;
  gathered?.catch(() => {}); // awaited below; a refusal before that leaves its failure unread
  try {
    const { bucket, usedBytes } = await stageAndLook(s, project, u.bucket, version);
    // Refusals in the order the checks were always reported: bucket, type, size, quota.
    if (!bucket) throw bucketNotFound();
    const limits = await limitsFor(project, bucket);
    checkContentType(u.contentType, bucket.allowed_mime_types);
    if (u.length !== null && u.length > limits.maxBytes) throw tooLarge(limits.maxBytes);
    const by = u.by;
    await refuseOverQuota(
      usedBytes,
      u.length ?? 0,
      limits.quotaBytes,
      u.replace && by.kind === 'caller'
        ? () => findObjectAs(project.sql, by.caller, bucket.id, u.name, by.request)
        : null,
    );
    const row: NewObject = {
      id: randomUUID(),
      bucket: bucket.id,
      name: u.name,
      ownerSub: u.by.kind === 'signed' ? u.by.ownerSub : ((u.by.caller.claims.sub as string | undefined) ?? null),
      version,
      size: u.length ?? 0,
      contentType: u.contentType,
      cacheControl: u.cacheControl,
      contentHash: '',
      metadata: u.metadata,
    };
    // The body starts streaming while the RLS dry run is out: its round trips (and any
    // wait for the usage row) then cost no time. A refusal stops the stream at once (unless it is over).
    // A body declared small has no transfer worth stopping: the commit's insert is the
    // only RLS check then, and the usage row is locked once per upload, not twice.
    if (gathered) {
      // The declared length was checked against the limit, and Node's HTTP parser ends the body there.
      const bytes = await gathered;
      await s.backend.write(bytesKey(project, version), bytes, bytes.length);
      row.size = bytes.length;
      row.contentHash = contentHashOf(bytes);
    } else {
      const needsDryRun =
        u.by.kind === 'caller' &&
        (u.length === null || u.length > DRY_RUN_FROM_BYTES) &&
        !(await bypassesRls(project, u.by.caller));
      const meter = new Meter(limits.maxBytes);
      const written = s.backend.write(
        bytesKey(project, version),
        pipeline(u.body, meter, () => {}),
        u.length,
      );
      const allowed =
        needsDryRun && u.by.kind === 'caller' ? dryRun(project, u.by, row, u.replace, u.length) : Promise.resolve();
      allowed.catch((err: Error) => {
        // Only while bytes are still to come: once the whole body has gone through, the write is
        // let finish, so the removal below comes after the store kept it. A PUT aborted after its
        // last byte may still be stored by the server after that removal, and its bytes then
        // stay for good (no staging record is left to sweep them).
        if (!meter.writableFinished) meter.destroy(err);
      });
      // The refusal is the answer even when the stream failed too (it was stopped for it).
      const [refused, stored] = await Promise.allSettled([allowed, written]);
      settled(refused);
      settled(stored);
      row.size = meter.size;
      row.contentHash = meter.contentHash();
    }
    s.p.faults.hit('storage.upload.written', { version });
    s.p.faults.hit('storage.upload.commit', { version });
    // The usage is checked against the quota when the insert commits, whose HS001 is thrown
    // here: over quota is the answer even for a taken name, as the early check gives it.
    const caller = u.by.kind === 'caller' ? u.by.caller : SERVICE;
    const request = u.by.kind === 'caller' ? u.by.request : {};
    let inserted: boolean;
    let readBack: ObjectRow | undefined;
    if (u.replace) {
      // The quota, the upsert and the read-back (the row keeps its id; upsert needs a read
      // policy anyway) with BEGIN and COMMIT in one round trip (withRoleStatements); the
      // upsert locks the usage row, so it goes out in one write with the COMMIT (lockingFrom 1).
      const statements = [
        quotaStatement(limits.quotaBytes),
        insertStatement(row, true),
        findStatement(row.bucket, row.name),
      ];
      const [quota, insert, found] = await withRoleStatements(project.sql, caller, statements, 'commit', request, 1);
      rowsOf(quota!);
      inserted = rowsOf(insert!).count > 0;
      readBack = rowsOf(found!)[0] as unknown as ObjectRow | undefined;
    } else {
      // One statement: the settings and the quota go ahead of the insert in one write, and it
      // commits on its own (withRoleStatement), so the usage row it locks is held only while
      // the server runs it and commits.
      const { text, values } = insertStatement(row, false);
      const quota = quotaSetting(limits.quotaBytes);
      inserted = (await withRoleStatement(project.sql, caller, text, values, request, { settings: quota })).count > 0;
    }
    const committed = inserted
      ? { object: readBack ?? insertedRow(row, new Date()) }
      : // Name taken (nothing was written): a replay when the visible object holds these bytes.
        { taken: await findObjectAs(project.sql, caller, row.bucket, row.name, request) };
    if ('taken' in committed) {
      if (u.by.kind === 'signed' && !(committed.taken && (await holdsSameBytes(s, project, committed.taken, row))))
        throw takenForSignedUpload();
      // An object the caller may not read: whether it holds these bytes is not told (no oracle on its content).
      if (!committed.taken) throw takenUnreadable();
      if (!(await holdsSameBytes(s, project, committed.taken, row))) throw duplicate();
      await discard(s, project, version);
      return { object: committed.taken, replayed: true };
    }
    if (u.replace) s.drain(project);
    return { object: committed.object, replayed: false };
  } catch (err) {
    await discard(s, project, version);
    throw storageError(err);
  }
}

/**
 * Whether the stored object holds exactly the bytes just uploaded. Rows from
 * before migration 031 carry a SHA-256: the new bytes are read back and hashed
 * with it (only then, and only when the sizes match).
 */
async function holdsSameBytes(
  s: StorageContext,
  project: ProjectRuntime,
  existing: ObjectRow,
  row: NewObject,
): Promise<boolean> {
  if (existing.size !== row.size) return false;
  if (!existing.content_hash.startsWith('sha256:')) return existing.content_hash === row.contentHash;
  const hash = createHash('sha256');
  for await (const chunk of await s.backend.read(bytesKey(project, row.version))) hash.update(chunk as Buffer);
  return existing.content_hash === `sha256:${hash.digest('hex')}`;
}
