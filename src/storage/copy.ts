/**
 * Copy and move (SPEC 4.2). A copy gets its own bytes (a new version), so
 * the two objects live and die independently. A same-bucket move is a rename
 * of the row; a cross-bucket move copies the bytes, then inserts the new row
 * and deletes the old one in one transaction. All of it runs under the
 * caller's role: reading the source, inserting or renaming, deleting.
 */
import { randomUUID } from 'node:crypto';
import { rowsOf, withRole, withRoleStatements, type Caller, type RequestInfo } from '../db/with-role.ts';
import { fail } from '../errors.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import { getBucket } from './buckets.ts';
import { bytesKey, type StorageContext } from './context.ts';
import { tooLarge } from './meter.ts';
import {
  deleteObjects,
  findObject,
  findObjectAs,
  insertedRow,
  insertObject,
  limitToQuota,
  objectNotFound,
  renameObject,
  renameStatement,
  type NewObject,
  type ObjectRow,
} from './objects.ts';
import { storageError } from './pg-errors.ts';
import { checkContentType, checkObjectName } from './rules.ts';
import { checkQuotaEarly, discard, limitsFor, stage } from './upload.ts';

export interface CopyRequest {
  bucket: string;
  from: string;
  toBucket: string;
  to: string;
  /** x-upsert: replace an existing destination. */
  replace: boolean;
  caller: Caller;
  request: RequestInfo;
}

export function checkCopyBody(body: unknown): {
  bucketId: string;
  sourceKey: string;
  destinationKey: string;
  destinationBucket?: string;
} {
  const b = (body ?? {}) as Record<string, unknown>;
  for (const field of ['bucketId', 'sourceKey', 'destinationKey']) {
    if (typeof b[field] !== 'string' || b[field] === '') {
      throw fail(
        'invalid_request',
        `${field} is required: send {bucketId, sourceKey, destinationKey, destinationBucket?}.`,
      );
    }
  }
  if (b.destinationBucket !== undefined && b.destinationBucket !== null && typeof b.destinationBucket !== 'string') {
    throw fail('invalid_request', 'destinationBucket must be a bucket name.');
  }
  return {
    bucketId: b.bucketId as string,
    sourceKey: checkObjectName(b.sourceKey),
    destinationKey: checkObjectName(b.destinationKey),
    destinationBucket: (b.destinationBucket as string | null | undefined) ?? undefined,
  };
}

/** A copy or move onto an object that exists: 409, saying what the caller can do about it. */
function destinationTaken(c: CopyRequest, moving: boolean) {
  if (c.toBucket === c.bucket && c.to === c.from) {
    return fail(
      'duplicate',
      'sourceKey and destinationKey name the same object: copy it to another name, or send x-upsert: true to rewrite it in place.',
    );
  }
  return fail(
    'duplicate',
    moving
      ? 'An object already exists at destinationKey: a move does not overwrite it. Remove it first, or choose another destinationKey.'
      : 'An object already exists at destinationKey: copy with x-upsert: true to replace it, or choose another destinationKey.',
  );
}

export async function copyObject(
  s: StorageContext,
  project: ProjectRuntime,
  c: CopyRequest,
  removeSource: boolean,
): Promise<ObjectRow> {
  await getBucket(project.sql, c.bucket);
  const source = await findObjectAs(project.sql, c.caller, c.bucket, c.from, c.request);
  if (!source) throw objectNotFound();
  const dest = await getBucket(project.sql, c.toBucket);
  const limits = await limitsFor(project, dest);
  checkContentType(source.content_type, dest.allowed_mime_types);
  if (source.size > limits.maxBytes) throw tooLarge(limits.maxBytes);
  await checkQuotaEarly(
    project.sql,
    limits.quotaBytes,
    removeSource ? 0 : source.size, // a move frees the source's bytes in the same transaction
    c.replace ? () => findObjectAs(project.sql, c.caller, dest.id, c.to, c.request) : null,
  );

  const version = await stage(s, project);
  const row: NewObject = {
    id: randomUUID(),
    bucket: dest.id,
    name: c.to,
    ownerSub: (c.caller.claims.sub as string | undefined) ?? null,
    version,
    size: source.size,
    contentType: source.content_type,
    cacheControl: source.cache_control,
    contentHash: source.content_hash,
    metadata: source.metadata,
  };
  try {
    await s.backend.copy(bytesKey(project, source.version), bytesKey(project, version));
    const copied = await withRole(
      project.sql,
      c.caller,
      async (tx) => {
        // The usage is checked against it when this commits (migration 032).
        await limitToQuota(tx, limits.quotaBytes);
        if (!(await insertObject(tx, row, c.replace))) throw destinationTaken(c, removeSource);
        if (removeSource && (await deleteObjects(tx, c.bucket, [c.from])).length === 0) throw objectNotFound();
        return (c.replace && (await findObject(tx, row.bucket, row.name))) || insertedRow(row, new Date());
      },
      c.request,
    );
    if (removeSource || c.replace) s.drain(project);
    return copied;
  } catch (err) {
    await discard(s, project, version);
    throw storageError(err);
  }
}

export async function moveObject(s: StorageContext, project: ProjectRuntime, c: CopyRequest): Promise<void> {
  if (c.toBucket !== c.bucket) {
    await copyObject(s, project, c, true);
    return;
  }
  await getBucket(project.sql, c.bucket);
  if (c.to === c.from) {
    // As Supabase's moveObject: the permission check, then nothing. The rename asks the
    // update policy and is rolled back, so the row (updated_at too) stays as it was.
    const [renamed] = await withRoleStatements(
      project.sql,
      c.caller,
      [renameStatement(c.bucket, c.from, c.to)],
      'rollback',
      c.request,
    );
    if (rowsOf(renamed!).count === 0) throw objectNotFound();
    return;
  }
  try {
    const row = await withRole(project.sql, c.caller, (tx) => renameObject(tx, c.bucket, c.from, c.to), c.request);
    if (!row) throw objectNotFound();
  } catch (err) {
    throw (err as { code?: string }).code === '23505' ? destinationTaken(c, true) : storageError(err);
  }
}
