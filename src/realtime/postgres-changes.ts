/**
 * postgres_changes: a channel's bindings (event, schema, optional table and
 * filter), checked at join, and the shaping of one captured change into the
 * payload realtime-js expects: {ids, data: {schema, table, commit_timestamp,
 * type, columns, record, old_record, errors}}.
 */
import type { Sql } from '../db/pools.ts';
import type { DbRole } from '../db/with-role.ts';
import type { Relation, RelationCache } from './relations.ts';
import { BindingError, checkFilter, type Condition, evaluate, type PatternTest } from './filters.ts';

export { BindingError };

export type ChangeEvent = 'INSERT' | 'UPDATE' | 'DELETE';
const EVENTS = new Set(['INSERT', 'UPDATE', 'DELETE', '*']);
export interface Binding {
  id: number;
  event: ChangeEvent | '*';
  schema: string;
  table: string | null;
  /** The filter's conditions (all must hold), or null for none. */
  filter: Condition[] | null;
  /** `select`: the columns sent (with the primary key), in table order; null for the whole row. */
  select: string[] | null;
  /** As the client sent them, echoed in the join reply (realtime-js compares them). */
  echo: { event: string; schema: string; table?: string; filter?: string; select?: string[] };
}

/** A captured change as the capture trigger relays it (whole rows). */
export interface Change {
  type: ChangeEvent;
  schema: string;
  table: string;
  relid: number;
  ts: string;
  record?: Record<string, unknown>;
  old_record?: Record<string, unknown>;
  /** Long numbers in the records are marked strings, to be restored when sent on (values.ts). */
  exact?: boolean;
}

let nextId = 1;

/**
 * The channel's bindings, each checked against the database: the table must
 * exist and the role may select it, the filter's column must exist and its
 * value be one of the column's type.
 */
export async function parseBindings(
  raw: unknown,
  role: DbRole,
  relations: RelationCache,
  sql: Sql,
): Promise<Binding[]> {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new BindingError('config.postgres_changes must be a list');
  if (raw.length > 100) throw new BindingError('at most 100 postgres_changes bindings per channel');
  const out: Binding[] = [];
  for (const b of raw) {
    if (typeof b !== 'object' || b === null) throw new BindingError('each postgres_changes binding must be an object');
    const { event, schema, table, filter, select } = b as Record<string, unknown>;
    const ev = typeof event === 'string' ? event.toUpperCase() : '';
    if (!EVENTS.has(ev)) throw new BindingError('event must be one of INSERT, UPDATE, DELETE, *');
    if (typeof schema !== 'string' || !schema || schema.length > 63)
      throw new BindingError('schema must be a schema name or *');
    if (table !== undefined && table !== null && (typeof table !== 'string' || table.length > 63))
      throw new BindingError('table must be a table name');
    if (filter !== undefined && filter !== null && (typeof filter !== 'string' || filter.length > 1000))
      throw new BindingError('filter must be a string of at most 1000 characters');
    // (An empty or blank filter is no filter, as on Supabase: realtime-js sends '' for an empty filter builder.)
    const hasFilter = typeof filter === 'string' && filter.trim() !== '';
    const columns = selectedColumns(select);
    const tableName = (table as string | undefined) || null;
    if (columns && (schema === '*' || !tableName || tableName === '*'))
      throw new BindingError(
        'Column selection is not supported for wildcard subscriptions. Provide an explicit schema and table name.',
      );
    if (tableName === '*' && hasFilter) throw new BindingError('a filter needs a table');
    let rel: Relation | null = null;
    if (tableName && tableName !== '*') {
      if (schema === '*') throw new BindingError('a table needs a schema');
      rel = await relations.byName(schema, tableName);
      if (!rel?.selectable[role]) {
        throw new BindingError(
          `Unable to subscribe to changes of ${schema}.${tableName}: the table does not exist or role ${role} may not select it`,
        );
      }
      if (rel.rls && role !== 'service_role' && !rel.primaryKey.length) {
        throw new BindingError(
          `${schema}.${tableName} has row level security but no primary key: changes are checked against RLS by primary key`,
        );
      }
    } else if (hasFilter) throw new BindingError('a filter needs a table');
    const conditions = hasFilter && rel ? await checkFilter(filter as string, rel, sql) : null;
    out.push({
      id: nextId++,
      event: ev as Binding['event'],
      schema,
      table: tableName === '*' ? null : tableName,
      filter: conditions?.length ? conditions : null,
      select: columns && rel ? selectOf(rel, columns) : null,
      echo: {
        event: event as string,
        schema,
        ...(table ? { table: table as string } : {}),
        ...(typeof filter === 'string' ? { filter } : {}),
        ...(columns ? { select: columns } : {}),
      },
    });
  }
  return out;
}

/**
 * `select`, as Supabase reads it: a list of column names (other items are
 * ignored; none left is no selection); anything else is refused.
 */
function selectedColumns(select: unknown): string[] | null {
  if (select === undefined || select === null) return null;
  if (!Array.isArray(select))
    throw new BindingError('select must be a list of column names, e.g. select: ["id", "title"]');
  const names = select.filter((c): c is string => typeof c === 'string');
  if (names.length > 1600) throw new BindingError('select names at most 1600 columns');
  return names.length ? names : null;
}

/** The columns sent for a `select`: those named and the primary key, in table order. */
function selectOf(rel: Relation, names: string[]): string[] {
  for (const n of names)
    if (!rel.columns.some((c) => c.name === n))
      throw new BindingError(`select column "${n.slice(0, 100)}" does not exist in ${rel.schema}.${rel.table}`);
  return rel.columns.filter((c) => names.includes(c.name) || rel.primaryKey.includes(c.name)).map((c) => c.name);
}

/**
 * Does the binding want this change? Its filter sees only what the
 * subscriber receives: the new row, or for a DELETE the old record as sent
 * (oldRecord). Matching a DELETE against columns it does not carry would
 * tell the subscriber their values: whether `body=eq.<guess>` delivers the
 * key or not. Supabase filters a DELETE by the old row in the WAL: the key
 * under the default replica identity, as here; under REPLICA IDENTITY FULL
 * with RLS it matches the whole row yet sends only the key, which here the
 * filter does not see either. The answer: false, or the pattern tests
 * (like, match, ...) PostgreSQL must still pass (runPatternTests); none: yes.
 */
export function bindingMatches(b: Binding, c: Change, rel: Relation): PatternTest[] | false {
  if (!bindingCovers(b, c)) return false;
  if (!b.filter) return [];
  return evaluate(b.filter, c.type === 'DELETE' ? oldRecord(c, rel) : c.record);
}

/** The binding's event, schema and table, without its filter: whether the change is worth a look at its table. */
export function bindingCovers(b: Binding, c: Change): boolean {
  return (
    (b.event === '*' || b.event === c.type) &&
    (b.schema === '*' || b.schema === c.schema) &&
    (!b.table || b.table === c.table)
  );
}

function pick(row: Record<string, unknown> | undefined, columns: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (row) for (const c of columns) if (c in row) out[c] = row[c];
  return out;
}

/**
 * `old_record` as subscribers receive it: the primary key, or the whole old
 * row under REPLICA IDENTITY FULL — except a DELETE on a table with RLS,
 * which carries only the key (the deleted row can no longer be checked
 * against the policies).
 */
function oldRecord(c: Change, rel: Relation): Record<string, unknown> {
  const whole = rel.replicaFull && !(c.type === 'DELETE' && rel.rls);
  return whole && c.old_record ? c.old_record : pick(c.old_record, rel.primaryKey);
}

/** Supabase Realtime's bound on one change (its max_record_bytes) and on the fields kept past it. */
const MAX_RECORD_BYTES = 1024 * 1024;
const MAX_KEPT_FIELD_BYTES = 64;

/**
 * The change's payload as JSON. One over 1 MiB goes out as Supabase Realtime
 * sends it: only the fields of at most 64 bytes (keys, flags, short values)
 * in its records, and `errors: ["Error 413: Payload Too Large"]`, so a
 * client learns of the change and can read the row itself. With a binding's
 * `select`, the records and columns hold only those columns (and the key).
 */
export function changeJson(c: Change, rel: Relation, select: string[] | null = null): string {
  const json = JSON.stringify(changeData(c, rel, select));
  // (String length first: only a long one can be over in bytes.)
  if (json.length * 3 <= MAX_RECORD_BYTES || Buffer.byteLength(json) <= MAX_RECORD_BYTES) return json;
  const small = (r: Record<string, unknown> | undefined) =>
    r &&
    Object.fromEntries(
      Object.entries(r).filter(([, v]) => Buffer.byteLength(JSON.stringify(v) ?? 'null') <= MAX_KEPT_FIELD_BYTES),
    );
  const data = changeData({ ...c, record: small(c.record), old_record: small(c.old_record) }, rel, select);
  data.errors = ['Error 413: Payload Too Large'];
  return JSON.stringify(data);
}

/** The `data` part of a change as a subscriber sees it. */
function changeData(c: Change, rel: Relation, select: string[] | null): Record<string, unknown> {
  const data: Record<string, unknown> = {
    schema: c.schema,
    table: c.table,
    commit_timestamp: c.ts,
    type: c.type,
    columns: select ? rel.columns.filter((col) => select.includes(col.name)) : rel.columns,
    errors: null,
  };
  if (c.type !== 'DELETE') data.record = select ? pick(c.record, select) : c.record;
  if (c.type !== 'INSERT') data.old_record = select ? pick(oldRecord(c, rel), select) : oldRecord(c, rel);
  return data;
}
