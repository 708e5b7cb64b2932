/**
 * Listing (SPEC 4.2): the immediate children of a prefix, every sub-folder
 * collapsed to one entry (id and metadata null), folders first, then files.
 * It is a plain select under the caller's role, so it shows exactly the rows
 * the read policies admit. A prefix is always a folder ("a" lists "a/...").
 */
import type postgres from 'postgres';
import { HearthError } from '../errors.ts';
import { fileMetadata, type ObjectRow } from './objects.ts';

export interface ListOptions {
  prefix?: unknown;
  limit?: unknown;
  offset?: unknown;
  sortBy?: { column?: unknown; order?: unknown };
  search?: unknown;
}

const SORT_COLUMNS: Record<string, string> = { name: 'child', created_at: 'created_at', updated_at: 'updated_at', last_accessed_at: 'updated_at' };

function checkOptions(o: ListOptions) {
  const bad = (why: string) => new HearthError(400, 'invalid_request', `Invalid list request: ${why}.`);
  const given = o.prefix ?? '';
  if (typeof given !== 'string') throw bad('prefix must be a string');
  let prefix = given.replace(/^\/+/, '');
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  const limit = o.limit ?? 100;
  const offset = o.offset ?? 0;
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 1000) throw bad('limit must be an integer from 1 to 1000');
  if (!Number.isInteger(offset) || (offset as number) < 0) throw bad('offset must be a non-negative integer');
  const column = o.sortBy?.column ?? 'name';
  const order = String(o.sortBy?.order ?? 'asc').toLowerCase();
  if (typeof column !== 'string' || !(column in SORT_COLUMNS)) throw bad(`sortBy.column must be one of ${Object.keys(SORT_COLUMNS).join(', ')}`);
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
      ? { name: r.child as string, id: null, updated_at: null, created_at: null, last_accessed_at: null, metadata: null }
      : {
          name: r.child as string,
          id: r.id as string,
          updated_at: r.updated_at as Date,
          created_at: r.created_at as Date,
          last_accessed_at: null,
          metadata: fileMetadata(r as unknown as ObjectRow),
          user_metadata: r.metadata,
        },
  );
}
