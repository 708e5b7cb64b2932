/**
 * Object rows (storage.objects). Every function takes the transaction it runs
 * in: callers open it under the caller's role (withRole), so RLS decides what
 * each statement sees and may write.
 */
import type postgres from 'postgres';
import { type Caller, type RequestInfo, withRole, withRoleStatement } from '../db/with-role.ts';

type Tx = postgres.TransactionSql;

export interface ObjectRow {
  id: string;
  bucket: string;
  name: string;
  owner_sub: string | null;
  version: string;
  size: number;
  content_type: string;
  cache_control: string;
  content_hash: string;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface NewObject {
  id: string;
  bucket: string;
  name: string;
  ownerSub: string | null;
  version: string;
  size: number;
  contentType: string;
  cacheControl: string;
  /** `<algorithm>:<hex>`: blake3 for what Hearth hashes now, sha256 on rows from before migration 031. */
  contentHash: string;
  metadata: Record<string, unknown>;
}

/** The hash's hex digits, quoted: the algorithm is ours to change, not the client's to parse. */
export const etagOf = (o: ObjectRow) => `"${o.content_hash.slice(o.content_hash.indexOf(':') + 1)}"`;

export { objectNotFound } from './backend/types.ts';

const COLUMNS = `id, bucket, name, owner_sub, version, size::int as size, content_type, cache_control, content_hash, metadata, created_at, updated_at`;

const FIND = `select ${COLUMNS} from storage.objects where bucket = $1 and name = $2`;

export async function findObject(tx: Tx | postgres.Sql, bucket: string, name: string): Promise<ObjectRow | undefined> {
  const [row] = await tx.unsafe(FIND, [bucket, name]);
  return row as unknown as ObjectRow | undefined;
}

/**
 * A public download's only statement, on the platform's connection: the
 * bucket's public flag and the object's row (undefined when the name is not
 * stored) together; undefined when there is no such bucket.
 */
export async function findInBucket(
  sql: postgres.Sql,
  bucket: string,
  name: string,
): Promise<{ isPublic: boolean; object: ObjectRow | undefined } | undefined> {
  const [row] = await sql.unsafe(
    `select b.public as bucket_public, o.* from storage.buckets b left join (${FIND}) o on true where b.id = $1`,
    [bucket, name],
    { prepare: true },
  );
  if (!row) return undefined;
  const { bucket_public: isPublic, ...object } = row;
  return { isPublic: isPublic as boolean, object: object.id === null ? undefined : (object as unknown as ObjectRow) };
}

/**
 * findObject in a transaction of its own under the caller's role, sent with
 * BEGIN, the role settings and COMMIT in one round trip: a download's only query.
 */
export async function findObjectAs(
  sql: postgres.Sql,
  caller: Caller,
  bucket: string,
  name: string,
  request?: RequestInfo,
): Promise<ObjectRow | undefined> {
  const [row] = await withRoleStatement(sql, caller, FIND, [bucket, name], request);
  return row as unknown as ObjectRow | undefined;
}

/** Which of the bucket's objects `names` the caller may read: the policies on storage.objects decide. */
export async function visibleNames(
  sql: postgres.Sql,
  caller: Caller,
  bucket: string,
  names: string[],
  request?: RequestInfo,
): Promise<Set<string>> {
  const rows = await withRole(
    sql,
    caller,
    (tx) => tx`select name from storage.objects where bucket = ${bucket} and name = any(${names}::text[])`,
    request,
  );
  return new Set(rows.map((r) => r.name as string));
}

/**
 * Inserts the row; with `replace` an existing row of that name takes the new
 * bytes. False when the name is taken and replace is off. No RETURNING: under
 * RLS that would also demand a read policy, and a drop-box bucket may allow
 * insert without select.
 */
export async function insertObject(tx: Tx, o: NewObject, replace: boolean): Promise<boolean> {
  const { text, values } = insertStatement(o, replace);
  return (await tx.unsafe(text, values as never[])).count > 0;
}

/** insertObject's statement, for withRoleStatements: the row was written when its count is 1. */
export function insertStatement(o: NewObject, replace: boolean): { text: string; values: unknown[] } {
  const conflict = replace
    ? `on conflict (bucket, name) do update set version = excluded.version, size = excluded.size,
         content_type = excluded.content_type, cache_control = excluded.cache_control, content_hash = excluded.content_hash,
         metadata = excluded.metadata, owner_sub = excluded.owner_sub`
    : // No conflict target: with one, Postgres also applies read policies to the new row.
      // id and version are fresh uuids, so (bucket, name) is the only conflict there can be.
      'on conflict do nothing';
  return {
    text: `insert into storage.objects (id, bucket, name, owner_sub, version, size, content_type, cache_control, content_hash, metadata)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ${conflict}`,
    values: [
      o.id,
      o.bucket,
      o.name,
      o.ownerSub,
      o.version,
      o.size,
      o.contentType,
      o.cacheControl,
      o.contentHash,
      o.metadata,
    ],
  };
}

/** findObject's statement, for a pipeline. */
export const findStatement = (bucket: string, name: string) => ({ text: FIND, values: [bucket, name] });

/**
 * The project's quota for this transaction's object writes: the usage row's
 * total is checked against it at COMMIT (migration 032), which then fails
 * with HS001. Sent before the writes, in the same transaction.
 */
export const quotaStatement = (quotaBytes: number) => ({
  text: "select set_config('storage.quota_bytes', $1, true)",
  values: [String(quotaBytes)],
});

/** quotaStatement as a setting of withRoleStatement's prelude. */
export const quotaSetting = (quotaBytes: number) => ({ 'storage.quota_bytes': String(quotaBytes) });

/** The row as inserted, for callers that may not be allowed to read it back. */
export function insertedRow(o: NewObject, at: Date): ObjectRow {
  return {
    id: o.id,
    bucket: o.bucket,
    name: o.name,
    owner_sub: o.ownerSub,
    version: o.version,
    size: o.size,
    content_type: o.contentType,
    cache_control: o.cacheControl,
    content_hash: o.contentHash,
    metadata: o.metadata,
    created_at: at,
    updated_at: at,
  };
}

/** quotaStatement inside a transaction of withRole. */
export async function limitToQuota(tx: Tx, quotaBytes: number): Promise<void> {
  await tx.unsafe(quotaStatement(quotaBytes).text, quotaStatement(quotaBytes).values as string[]);
}

export const renameStatement = (bucket: string, from: string, to: string) => ({
  text: `update storage.objects set name = $3 where bucket = $1 and name = $2 returning ${COLUMNS}`,
  values: [bucket, from, to],
});

export async function renameObject(tx: Tx, bucket: string, from: string, to: string): Promise<ObjectRow | undefined> {
  const { text, values } = renameStatement(bucket, from, to);
  const [row] = await tx.unsafe(text, values as never);
  return row as unknown as ObjectRow | undefined;
}

export async function deleteObjects(tx: Tx, bucket: string, names: string[]): Promise<ObjectRow[]> {
  return (await tx.unsafe(
    `delete from storage.objects where bucket = $1 and name = any($2::text[]) returning ${COLUMNS}`,
    [bucket, names as never],
  )) as unknown as ObjectRow[];
}

/** The list-entry metadata storage-js expects (FileMetadata). */
export function fileMetadata(o: ObjectRow) {
  return {
    eTag: etagOf(o),
    size: o.size,
    mimetype: o.content_type,
    cacheControl: o.cache_control,
    lastModified: o.updated_at.toISOString(),
    contentLength: o.size,
    httpStatusCode: 200,
  };
}

/** A list entry (storage-js FileObject); removed objects are reported the same way. */
export const fileObject = (o: ObjectRow) => ({
  name: o.name,
  bucket_id: o.bucket,
  owner: o.owner_sub,
  id: o.id,
  updated_at: o.updated_at,
  created_at: o.created_at,
  last_accessed_at: null,
  metadata: fileMetadata(o),
  user_metadata: o.metadata,
});
