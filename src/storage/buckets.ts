/**
 * Buckets (SPEC 2.6, 4.2). Managed with the secret key only, so these run as
 * the platform on the project database; the routes check the caller.
 */
import type { Sql } from '../db/pools.ts';
import { fail } from '../errors.ts';
import { checkBucketName, checkMimeList, parseSizeLimit } from './rules.ts';

export interface Bucket {
  id: string;
  /** Always STANDARD: Hearth has no analytics (Iceberg) or vector buckets. */
  type: 'STANDARD';
  name: string;
  owner: string | null;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export interface BucketInput {
  type?: unknown;
  public?: unknown;
  file_size_limit?: unknown;
  allowed_mime_types?: unknown;
}

/** A bucket row's columns as Bucket names them (exported for statements that read a bucket with other things). */
export const BUCKET_COLUMNS = `id, 'STANDARD' as type, name, owner_sub as owner, public, file_size_limit::int as file_size_limit, allowed_mime_types, created_at, updated_at`;

export const bucketNotFound = () => fail('bucket_not_found');

function checkPublic(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw fail('invalid_request', 'public must be true or false.');
  return value;
}

/** storage-js createBucket(id, {type}): STANDARD (or no type) is the only kind Hearth has. */
function checkType(value: unknown): void {
  if (value === undefined || value === null || value === 'STANDARD') return;
  if (value === 'ANALYTICS' || value === 'VECTOR') {
    throw fail(
      'not_implemented',
      `${value} buckets are not available in Hearth; create a STANDARD bucket (omit type).`,
    );
  }
  throw fail('invalid_request', 'type must be STANDARD (the only bucket type Hearth has), or left out.');
}

export async function createBucket(sql: Sql, name: unknown, input: BucketInput): Promise<Bucket> {
  checkType(input.type);
  const id = checkBucketName(name);
  const isPublic = checkPublic(input.public) ?? false;
  const limit = parseSizeLimit(input.file_size_limit);
  const mimes = checkMimeList(input.allowed_mime_types);
  const [row] = await sql.unsafe(
    `insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types) values ($1, $1, $2, $3, $4)
     on conflict (id) do nothing returning ${BUCKET_COLUMNS}`,
    [id, isPublic, limit, mimes as never],
  );
  if (!row) throw fail('bucket_exists', undefined, { hint: `A bucket named "${id}" already exists.` });
  return row as unknown as Bucket;
}

export async function getBucket(sql: Sql, id: string): Promise<Bucket> {
  const [row] = await sql.unsafe(`select ${BUCKET_COLUMNS} from storage.buckets where id = $1`, [id]);
  if (!row) throw bucketNotFound();
  return row as unknown as Bucket;
}

const SORTABLE = new Set(['id', 'name', 'created_at', 'updated_at']);

export async function listBuckets(
  sql: Sql,
  q: { limit?: string; offset?: string; search?: string; sortColumn?: string; sortOrder?: string },
): Promise<Bucket[]> {
  const limit = q.limit === undefined ? 1000 : Number(q.limit);
  const offset = q.offset === undefined ? 0 : Number(q.offset);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000 || !Number.isSafeInteger(offset) || offset < 0) {
    throw fail('invalid_request', 'limit must be 1-1000 and offset 0 or more.');
  }
  const column = q.sortColumn ?? 'name';
  const order = (q.sortOrder ?? 'asc').toLowerCase();
  if (!SORTABLE.has(column) || (order !== 'asc' && order !== 'desc')) {
    throw fail('invalid_request', 'sortColumn must be id, name, created_at or updated_at and sortOrder asc or desc.');
  }
  // column and order are checked against fixed lists above.
  return (await sql.unsafe(
    // Names are lower case, so this matches case-insensitively, as Supabase's ilike does.
    `select ${BUCKET_COLUMNS} from storage.buckets where ($1::text is null or strpos(name, lower($1)) > 0)
     order by ${column} ${order}, id limit $2 offset $3`,
    [q.search ?? null, limit, offset],
  )) as unknown as Bucket[];
}

export async function updateBucket(sql: Sql, id: string, input: BucketInput): Promise<void> {
  const isPublic = checkPublic(input.public);
  const setLimit = 'file_size_limit' in input;
  const setMimes = 'allowed_mime_types' in input;
  const rows = await sql`update storage.buckets set
      public = coalesce(${isPublic ?? null}::boolean, public),
      file_size_limit = case when ${setLimit} then ${setLimit ? parseSizeLimit(input.file_size_limit) : null}::bigint else file_size_limit end,
      allowed_mime_types = case when ${setMimes} then ${(setMimes ? checkMimeList(input.allowed_mime_types) : null) as never}::text[] else allowed_mime_types end,
      updated_at = now()
    where id = ${id} returning id`;
  if (rows.length === 0) throw bucketNotFound();
}

/** Deletes every object row; their bytes are queued for removal by the same statement. */
export async function emptyBucket(sql: Sql, id: string): Promise<number> {
  await getBucket(sql, id);
  const rows = await sql`delete from storage.objects where bucket = ${id} returning 1`;
  return rows.length;
}

export async function deleteBucket(sql: Sql, id: string): Promise<void> {
  const rows = await sql`delete from storage.buckets b where b.id = ${id}
    and not exists (select 1 from storage.objects o where o.bucket = b.id) returning id`;
  if (rows.length) return;
  await getBucket(sql, id);
  throw fail(
    'bucket_not_empty',
    `The bucket "${id}" still holds objects; empty it first (POST /storage/v1/bucket/${id}/empty).`,
  );
}
