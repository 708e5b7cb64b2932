/**
 * What realtime needs to know of a table: its columns and their type names
 * (realtime-js converts values by them), primary key, whether RLS is on, its
 * replica identity, and which API roles may select it. Cached per project
 * for a short while and re-read when a change carries a column the cache
 * does not know.
 */
import { cachedLoad, newCache, type Cache } from '../cache.ts';
import type { Clock } from '../context.ts';
import { quoteIdent } from '../db/ident.ts';
import type { Sql } from '../db/pools.ts';
import type { DbRole } from '../db/with-role.ts';

export interface Relation {
  relid: number;
  schema: string;
  table: string;
  columns: { name: string; type: string }[];
  primaryKey: string[];
  rls: boolean;
  /** REPLICA IDENTITY FULL: `old` carries the whole row. */
  replicaFull: boolean;
  selectable: Record<DbRole, boolean>;
  /** SQL run as a subscriber by realtime.visible_to: is the row with this primary key ($1, JSON) visible? */
  visibleSql: string | null;
}

const TTL_MS = 10_000;

function visibleSql(schema: string, table: string, primaryKey: string[]): string | null {
  if (!primaryKey.length) return null;
  const rel = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  const cols = primaryKey.map(quoteIdent);
  return `select exists (select 1 from only ${rel} t where (${cols.map((c) => `t.${c}`).join(', ')}) =
    (select ${cols.map((c) => `r.${c}`).join(', ')} from jsonb_populate_record(null::${rel}, $1) r))`;
}

const QUERY = `select c.oid::int8 as relid, n.nspname as schema, c.relname as table, c.relrowsecurity as rls,
    c.relreplident = 'f' as replica_full,
    has_table_privilege('anon', c.oid, 'select') as anon,
    has_table_privilege('authenticated', c.oid, 'select') as authenticated,
    has_table_privilege('service_role', c.oid, 'select') as service_role,
    coalesce((select json_agg(json_build_object('name', a.attname, 'type', t.typname) order by a.attnum)
      from pg_attribute a join pg_type t on t.oid = a.atttypid
      where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '[]') as columns,
    coalesce((select json_agg(a.attname order by array_position(i.indkey, a.attnum))
      from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = c.oid and i.indisprimary), '[]') as primary_key
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p')`;

export class RelationCache {
  /** Tables by oid, for TTL_MS (grants and columns change without telling). */
  private readonly cache: Cache<number, Promise<Relation | null>>;

  constructor(
    private readonly sql: Sql,
    clock: Clock,
  ) {
    this.cache = newCache({ max: 1000, ttlMs: TTL_MS, clock });
  }

  private load(where: string, values: unknown[]): Promise<Relation | null> {
    return this.sql.unsafe(`${QUERY} and ${where}`, values as never[]).then(([r]) => {
      if (!r) return null;
      const primaryKey = r.primary_key as string[];
      return {
        relid: Number(r.relid),
        schema: r.schema as string,
        table: r.table as string,
        columns: r.columns as Relation['columns'],
        primaryKey,
        rls: r.rls as boolean,
        replicaFull: r.replica_full as boolean,
        selectable: {
          anon: r.anon,
          authenticated: r.authenticated,
          service_role: r.service_role,
        } as Relation['selectable'],
        visibleSql: visibleSql(r.schema as string, r.table as string, primaryKey),
      };
    });
  }

  /** A table by name, read fresh (joins are rare; they must see the current grants). */
  byName(schema: string, table: string): Promise<Relation | null> {
    return this.load('n.nspname = $1 and c.relname = $2', [schema, table]);
  }

  /** A table by oid, from the cache; `record` (a changed row) with a column not in the cache reloads it. */
  async byId(relid: number, record?: Record<string, unknown>): Promise<Relation | null> {
    const entry = this.cache.get(relid);
    let rel = entry ? await entry.catch(() => null) : null;
    if (!rel || (record && Object.keys(record).some((k) => !rel!.columns.some((c) => c.name === k)))) {
      this.cache.delete(relid);
      rel = await cachedLoad(this.cache, relid, () => this.load('c.oid = $1', [relid]));
    }
    return rel;
  }
}
