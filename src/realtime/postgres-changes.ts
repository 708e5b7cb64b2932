/**
 * postgres_changes: a channel's bindings (event, schema, optional table and
 * filter), checked at join, and the shaping of one captured change into the
 * payload realtime-js expects: {ids, data: {schema, table, commit_timestamp,
 * type, columns, record, old_record, errors}}.
 */
import type { Sql } from '../db/pools.ts';
import type { DbRole } from '../db/with-role.ts';
import type { Relation, RelationCache } from './relations.ts';
import { CastError, castValues, compareKeys, type Key, type Kind, kindOf, readKey } from './values.ts';

export type ChangeEvent = 'INSERT' | 'UPDATE' | 'DELETE';
const EVENTS = new Set(['INSERT', 'UPDATE', 'DELETE', '*']);
const OPS = new Set(['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in']);

export interface Filter {
  column: string;
  op: string;
  /** How the column's values compare (by its PostgreSQL type). */
  kind: Kind;
  /** One value, or several for `in`, read as the column's type at join. */
  keys: Key[];
}

export interface Binding {
  id: number;
  event: ChangeEvent | '*';
  schema: string;
  table: string | null;
  filter: Filter | null;
  /** As the client sent them, echoed in the join reply (realtime-js compares them). */
  echo: { event: string; schema: string; table?: string; filter?: string };
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

export class BindingError extends Error {}

let nextId = 1;

/** `in` lists: (a,b,"c d"). */
function listValues(text: string): string[] {
  const m = /^\((.*)\)$/s.exec(text);
  if (!m) throw new BindingError(`an "in" filter takes a list in parentheses, e.g. id=in.(1,2,3)`);
  return m[1]!.split(',').map((v) => v.trim().replace(/^"(.*)"$/s, '$1'));
}

async function parseFilter(text: string, rel: Relation, sql: Sql): Promise<Filter> {
  const m = /^([^=]+)=([a-z]+)\.(.*)$/s.exec(text);
  if (!m || !OPS.has(m[2]!))
    throw new BindingError(
      `filter "${text.slice(0, 100)}" must be column=op.value with op one of eq, neq, lt, lte, gt, gte, in`,
    );
  const [, column, op, raw] = m as unknown as [string, string, string, string];
  const col = rel.columns.find((c) => c.name === column);
  if (!col)
    throw new BindingError(`filter column "${column.slice(0, 100)}" does not exist in ${rel.schema}.${rel.table}`);
  const values = op === 'in' ? listValues(raw) : [raw];
  const kind = kindOf(col.type);
  try {
    return { column, op, kind, keys: await castValues(sql, col.type, kind, values) };
  } catch (err) {
    if (!(err instanceof CastError)) throw err;
    throw new BindingError(`filter value for "${column}" is not a valid ${col.type}: ${err.message}`);
  }
}

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
    const { event, schema, table, filter } = b as Record<string, unknown>;
    const ev = typeof event === 'string' ? event.toUpperCase() : '';
    if (!EVENTS.has(ev)) throw new BindingError('event must be one of INSERT, UPDATE, DELETE, *');
    if (typeof schema !== 'string' || !schema || schema.length > 63)
      throw new BindingError('schema must be a schema name or *');
    if (table !== undefined && table !== null && (typeof table !== 'string' || table.length > 63))
      throw new BindingError('table must be a table name');
    if (filter !== undefined && filter !== null && (typeof filter !== 'string' || filter.length > 1000))
      throw new BindingError('filter must be a string of at most 1000 characters');
    const tableName = (table as string | undefined) || null;
    if (tableName === '*' && filter) throw new BindingError('a filter needs a table');
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
    } else if (filter) throw new BindingError('a filter needs a table');
    out.push({
      id: nextId++,
      event: ev as Binding['event'],
      schema,
      table: tableName === '*' ? null : tableName,
      filter: filter && rel ? await parseFilter(filter as string, rel, sql) : null,
      echo: {
        event: event as string,
        schema,
        ...(table ? { table: table as string } : {}),
        ...(filter ? { filter: filter as string } : {}),
      },
    });
  }
  return out;
}

function matchesFilter(f: Filter, row: Record<string, unknown> | undefined): boolean {
  if (!row || !(f.column in row)) return false;
  // A null (SQL null) matches no comparison, as in SQL.
  const v = readKey(f.kind, row[f.column]);
  if (v === null) return false;
  if (f.op === 'in') return f.keys.some((w) => compareKeys(f.kind, v, w) === 0);
  const c = compareKeys(f.kind, v, f.keys[0]!);
  switch (f.op) {
    case 'eq':
      return c === 0;
    case 'neq':
      return c !== 0;
    case 'lt':
      return c < 0;
    case 'lte':
      return c <= 0;
    case 'gt':
      return c > 0;
    default:
      return c >= 0;
  }
}

/**
 * Does the binding want this change? Its filter sees only what the
 * subscriber receives: the new row, or for a DELETE the old record as sent
 * (oldRecord). Matching a DELETE against columns it does not carry would
 * tell the subscriber their values: whether `body=eq.<guess>` delivers the
 * key or not. Supabase filters a DELETE by the old row in the WAL: the key
 * under the default replica identity, as here; under REPLICA IDENTITY FULL
 * with RLS it matches the whole row yet sends only the key, which here the
 * filter does not see either.
 */
export function bindingMatches(b: Binding, c: Change, rel: Relation): boolean {
  if (!bindingCovers(b, c)) return false;
  if (!b.filter) return true;
  return matchesFilter(b.filter, c.type === 'DELETE' ? oldRecord(c, rel) : c.record);
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

/** The `data` part of a change as a subscriber sees it. */
/** Supabase Realtime's bound on one change (its max_record_bytes) and on the fields kept past it. */
const MAX_RECORD_BYTES = 1024 * 1024;
const MAX_KEPT_FIELD_BYTES = 64;

/**
 * The change's payload as JSON. One over 1 MiB goes out as Supabase Realtime
 * sends it: only the fields of at most 64 bytes (keys, flags, short values)
 * in its records, and `errors: ["Error 413: Payload Too Large"]`, so a
 * client learns of the change and can read the row itself.
 */
export function changeJson(c: Change, rel: Relation): string {
  const json = JSON.stringify(changeData(c, rel));
  // (String length first: only a long one can be over in bytes.)
  if (json.length * 3 <= MAX_RECORD_BYTES || Buffer.byteLength(json) <= MAX_RECORD_BYTES) return json;
  const small = (r: Record<string, unknown> | undefined) =>
    r &&
    Object.fromEntries(
      Object.entries(r).filter(([, v]) => Buffer.byteLength(JSON.stringify(v) ?? 'null') <= MAX_KEPT_FIELD_BYTES),
    );
  const data = changeData({ ...c, record: small(c.record), old_record: small(c.old_record) }, rel);
  data.errors = ['Error 413: Payload Too Large'];
  return JSON.stringify(data);
}

function changeData(c: Change, rel: Relation): Record<string, unknown> {
  const data: Record<string, unknown> = {
    schema: c.schema,
    table: c.table,
    commit_timestamp: c.ts,
    type: c.type,
    columns: rel.columns,
    errors: null,
  };
  if (c.type !== 'DELETE') data.record = c.record;
  if (c.type !== 'INSERT') data.old_record = oldRecord(c, rel);
  return data;
}
