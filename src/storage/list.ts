/**
 * Listing (SPEC 4.2): the immediate children of a prefix, every sub-folder
 * collapsed to one entry (id and metadata null), folders first, then files.
 * It is a plain select under the caller's role, so it shows exactly the rows
 * the read policies admit. A prefix is always a folder ("a" lists "a/...").
 */
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import { fileMetadata, type ObjectRow } from './objects.ts';

export interface ListOptions {
  prefix?: unknown;
  limit?: unknown;
  offset?: unknown;
  sortBy?: { column?: unknown; order?: unknown };
  search?: unknown;
}

const SORT_COLUMNS: Record<string, string> = {
  name: 'child',
  created_at: 'created_at',
  updated_at: 'updated_at',
  last_accessed_at: 'updated_at',
};

function checkOptions(o: ListOptions) {
  const bad = (why: string) => fail('invalid_request', `Invalid list request: ${why}.`);
  const given = o.prefix ?? '';
  if (typeof given !== 'string') throw bad('prefix must be a string');
  let prefix = given.replace(/^\/+/, '');
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  const limit = o.limit ?? 100;
  const offset = o.offset ?? 0;
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 1000)
    throw bad('limit must be an integer from 1 to 1000');
  if (!Number.isSafeInteger(offset) || (offset as number) < 0)
    throw bad('offset must be a non-negative integer below 2^53');
  const column = o.sortBy?.column ?? 'name';
  const order = String(o.sortBy?.order ?? 'asc').toLowerCase();
  if (typeof column !== 'string' || !(column in SORT_COLUMNS))
    throw bad(`sortBy.column must be one of ${Object.keys(SORT_COLUMNS).join(', ')}`);
  if (order !== 'asc' && order !== 'desc') throw bad('sortBy.order must be asc or desc');
  const search = o.search ?? '';
  if (typeof search !== 'string') throw bad('search must be a string');
  return { prefix, limit: limit as number, offset: offset as number, column: SORT_COLUMNS[column]!, order, search };
}

export async function listObjects(tx: postgres.TransactionSql, bucket: string, options: ListOptions) {
  const o = checkOptions(options);
  // o.column and o.order come from the fixed lists in checkOptions.
  const rows = await tx.unsafe(
    `with matched as (
       select *, substr(name, length($2) + 1) as rest from storage.objects
       where bucket = $1 and starts_with(name, $2) and starts_with(lower(substr(name, length($2) + 1)), lower($3))
     ), entries as (
       select split_part(rest, '/', 1) as child, null::uuid as id, null::timestamptz as created_at,
              null::timestamptz as updated_at, 0 as kind, null::text as oid
       from matched where strpos(rest, '/') > 0 group by 1
       union all
       select rest, id, created_at, updated_at, 1, id::text from matched where strpos(rest, '/') = 0
     )
     select e.child, e.kind, m.id, m.bucket, m.name, m.owner_sub, m.version, m.size::int as size, m.content_type,
            m.cache_control, m.content_hash, m.metadata, m.created_at, m.updated_at
     from entries e left join matched m on m.id = e.id
     order by e.kind, ${o.column === 'child' ? 'e.child' : `e.${o.column}`} ${o.order}, e.child
     limit $4 offset $5`,
    [bucket, o.prefix, o.search, o.limit, o.offset],
  );
  return rows.map((r) =>
    r.kind === 0
      ? {
          name: r.child as string,
          id: null,
          updated_at: null,
          created_at: null,
          last_accessed_at: null,
          metadata: null,
        }
      : fileEntry(r, r.child as string),
  );
}

/** A file's entry in a listing (storage-js FileObject). */
function fileEntry(r: postgres.Row, name: string) {
  return {
    name,
    id: r.id as string,
    updated_at: r.updated_at as Date,
    created_at: r.created_at as Date,
    last_accessed_at: null,
    metadata: fileMetadata(r as unknown as ObjectRow),
    user_metadata: r.metadata,
  };
}

/**
 * list-v2 (storage-js `listV2`), as Supabase Storage answers it: one page of
 * `{hasNext, folders, objects, nextCursor?}` in keyset order, so pages stay
 * stable while objects come and go. The prefix is a plain string prefix (as
 * in S3); `with_delimiter` collapses what lies below the next `/` into one
 * folder entry. A select under the caller's role, like list.
 */
export interface ListV2Options {
  prefix?: unknown;
  limit?: unknown;
  cursor?: unknown;
  with_delimiter?: unknown;
  sortBy?: { column?: unknown; order?: unknown };
}

const V2_COLUMNS = new Set(['name', 'created_at', 'updated_at']);

/** Where a page ended: the sort it was made with and the last entry's sort key. */
interface Cursor {
  c: string;
  o: string;
  d: boolean;
  /** 0 for folders (and for every entry when sorting by name), 1 for files. */
  k: number;
  /** The timestamp sorted by, ISO 8601 to the microsecond (as Postgres keeps it); null for name order and folders. */
  t: string | null;
  n: string;
}

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decodeCursor(value: string): Cursor {
  const bad = () =>
    fail(
      'invalid_request',
      'Invalid list-v2 request: cursor is not one this server issued (pass nextCursor unchanged).',
    );
  let c: Cursor;
  try {
    c = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const ok =
    c !== null &&
    typeof c === 'object' &&
    V2_COLUMNS.has(c.c) &&
    (c.o === 'asc' || c.o === 'desc') &&
    typeof c.d === 'boolean' &&
    (c.k === 0 || c.k === 1) &&
    (c.t === null || (typeof c.t === 'string' && ISO_MICROS.test(c.t) && !Number.isNaN(Date.parse(c.t)))) &&
    typeof c.n === 'string';
  if (!ok) throw bad();
  return c;
}

function checkV2Options(o: ListV2Options) {
  const bad = (why: string) => fail('invalid_request', `Invalid list-v2 request: ${why}.`);
  const prefix = o.prefix ?? '';
  if (typeof prefix !== 'string') throw bad('prefix must be a string');
  const limit = o.limit ?? 1000;
  if (!Number.isInteger(limit) || (limit as number) < 1) throw bad('limit must be a positive integer');
  if (o.with_delimiter !== undefined && typeof o.with_delimiter !== 'boolean')
    throw bad('with_delimiter must be true or false');
  if (o.cursor !== undefined && (typeof o.cursor !== 'string' || o.cursor === ''))
    throw bad('cursor must be the nextCursor of an earlier page');
  const cursor = typeof o.cursor === 'string' ? decodeCursor(o.cursor) : null;
  // A follow-up call may send only the cursor (as storage-js's example does): the page continues in the cursor's order.
  const column = o.sortBy?.column ?? cursor?.c ?? 'name';
  const order = String(o.sortBy?.order ?? cursor?.o ?? 'asc').toLowerCase();
  const delimiter = (o.with_delimiter as boolean | undefined) ?? cursor?.d ?? false;
  if (typeof column !== 'string' || !V2_COLUMNS.has(column))
    throw bad('sortBy.column must be one of name, created_at, updated_at');
  if (order !== 'asc' && order !== 'desc') throw bad('sortBy.order must be asc or desc');
  if (cursor && (cursor.c !== column || cursor.o !== order || cursor.d !== delimiter)) {
    throw bad('the cursor belongs to a listing with another sortBy or with_delimiter');
  }
  // Supabase Storage caps a page at 1000 entries.
  return {
    prefix: prefix.replace(/^\/+/, ''),
    limit: Math.min(limit as number, 1000),
    cursor,
    column,
    order,
    delimiter,
  };
}

const lastSegment = (key: string) => key.replace(/\/$/, '').split('/').pop()!;

export async function listObjectsV2(tx: postgres.TransactionSql, bucket: string, options: ListV2Options) {
  const o = checkV2Options(options);
  const byName = o.column === 'name';
  const op = o.order === 'asc' ? '>' : '<';
  // o.column, o.order and op come from the fixed lists in checkV2Options. Entries sort by
  // (kind, timestamp, key): folders first when sorting by a timestamp, interleaved by name otherwise.
  const rows = await tx.unsafe(
    `with matched as (
       select *, substr(name, length($2) + 1) as rest from storage.objects where bucket = $1 and starts_with(name, $2)
     ), entries as (
       select $2 || split_part(rest, '/', 1) || '/' as key, 0 as kind, '-infinity'::timestamptz as ts, null::uuid as id
       from matched where $3 and strpos(rest, '/') > 0 group by 1
       union all
       select name, ${byName ? 0 : 1}, ${byName ? `'-infinity'::timestamptz` : o.column}, id
       from matched where not $3 or strpos(rest, '/') = 0
     )
     select e.key, e.kind, to_char(e.ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ts,
            m.id, m.bucket, m.name, m.owner_sub, m.version, m.size::int as size, m.content_type, m.cache_control, m.content_hash, m.metadata, m.created_at, m.updated_at
     from entries e left join matched m on m.id = e.id
     where $5::int is null or e.kind > $5
        or (e.kind = $5 and (e.ts ${op} $6::text::timestamptz or (e.ts = $6::text::timestamptz and e.key collate "C" ${op} $7)))
     order by e.kind, e.ts ${o.order}, e.key collate "C" ${o.order}
     limit $4`,
    [bucket, o.prefix, o.delimiter, o.limit + 1, o.cursor?.k ?? null, o.cursor?.t ?? '-infinity', o.cursor?.n ?? ''],
  );
  const hasNext = rows.length > o.limit;
  const page = rows.slice(0, o.limit);
  const folders = [];
  const objects = [];
  for (const r of page) {
    // As Supabase Storage answers: `name` is the full path (a folder's ends in `/`), `key` its last segment.
    const name = r.key as string;
    const key = lastSegment(name);
    if (r.id === null) folders.push({ name, key });
    else objects.push({ ...fileEntry(r, name), key });
  }
  const last = page[page.length - 1];
  if (!hasNext || !last) return { hasNext, folders, objects };
  const nextCursor = encodeCursor({
    c: o.column,
    o: o.order,
    d: o.delimiter,
    k: last.kind as number,
    t: last.ts as string | null,
    n: last.key as string,
  });
  return { hasNext, folders, objects, nextCursor };
}
