/**
 * The REST schema cache: what the exposed schemas hold (relations, columns,
 * keys, foreign keys, functions), read from pg_catalog in four queries on one connection. The
 * planner checks every identifier of a request against it, so nothing a client
 * names reaches SQL unless the database has it. Reloaded when the database
 * says its schema changed (NOTIFY pgrst, sent by migration 020's event trigger
 * or by the user), so DDL over the direct connection shows up without restart.
 */
import type postgres from 'postgres';
import { listenOwnConnection } from '../db/listen.ts';
import { pipelined, rowsOf } from '../db/with-role.ts';

export interface Column {
  name: string;
  /** format_type() text, safe to splice after "::" (it comes from the catalog). */
  type: string;
  nullable: boolean;
  /** The default expression (pg_get_expr), used for Prefer: missing=default. */
  default: string | null;
}

export interface Relation {
  schema: string;
  name: string;
  kind: 'table' | 'view' | 'materialized view' | 'foreign table' | 'partitioned table';
  columns: Column[];
  columnMap: Map<string, Column>;
  primaryKey: string[];
  /** Primary key and unique constraints: column sets that identify one row. */
  uniqueKeys: string[][];
  comment: string | null;
  /**
   * PostgREST's computed fields: functions of this relation's row (one
   * argument, not set-returning), selectable, filterable and orderable by
   * name like columns; `*` leaves them out. A real column of the name wins.
   */
  computed: Map<string, RestFunction>;
  /**
   * Which writes the relation can take, whatever the caller's privileges: a
   * table every one, a view what it is auto-updatable for or has INSTEAD OF
   * triggers for (pg_relation_is_updatable). Answers OPTIONS' Allow header.
   */
  writable: { insert: boolean; update: boolean; delete: boolean };
}

/** A foreign key, possibly seen through views that expose its columns. */
export interface ForeignKey {
  constraint: string;
  from: Relation;
  fromColumns: string[];
  to: Relation;
  toColumns: string[];
}

export interface FunctionArg {
  name: string;
  type: string;
  hasDefault: boolean;
  /** VARIADIC: called with `VARIADIC name := array`; GET collects repeated parameters into it. */
  variadic: boolean;
}

export interface RestFunction {
  schema: string;
  name: string;
  /** Input arguments in call order (IN, INOUT and VARIADIC). */
  args: FunctionArg[];
  returnType: string;
  returnsSet: boolean;
  /** scalar: one value; composite: a row type; void: nothing. */
  returns: 'scalar' | 'composite' | 'void';
  /** Columns of a composite result (row type, OUT or TABLE parameters). */
  columns: Column[];
  /** The exposed table or view whose row type the function returns, for embeds. */
  relation: Relation | null;
  /** The exposed table or view whose row is the function's only argument (a computed field). */
  rowArgument: Relation | null;
  volatility: 'immutable' | 'stable' | 'volatile';
  comment: string | null;
  /**
   * Callable over /rpc, as PostgREST decides: every input argument named, or
   * exactly one unnamed one of type json, jsonb, text, xml or bytea. Others
   * (an unnamed int, a row-type argument) can still be computed fields and
   * computed relationships.
   */
  callable: boolean;
  /** Returns at most one row: not SETOF, or SETOF declared ROWS 1 (a to-one computed relationship). */
  singleRow: boolean;
}

export interface SchemaCache {
  schemas: string[];
  relations: Map<string, Relation>;
  foreignKeys: ForeignKey[];
  functions: Map<string, RestFunction[]>;
}

export const relationKey = (schema: string, name: string) => `${schema}\u0000${name}`;

const RELATIONS_SQL = `
select n.nspname as schema, c.relname as name, c.relkind as kind,
  obj_description(c.oid, 'pg_class') as comment,
  pg_relation_is_updatable(c.oid, true) as updatable,
  coalesce((
    select json_agg(json_build_object(
      'name', a.attname,
      'type', format_type(a.atttypid, a.atttypmod),
      'nullable', not a.attnotnull,
      -- An identity column's default is its sequence; a generated column has none to give.
      'default', case
        when a.attidentity = 'd' then format('nextval(%L)', pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname))
        when a.attgenerated <> '' then null
        else pg_get_expr(d.adbin, d.adrelid) end) order by a.attnum)
    from pg_attribute a
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '[]') as columns,
  coalesce((
    select json_agg(json_build_object('type', k.contype, 'name', k.conname, 'columns',
      (select json_agg(a.attname order by u.ord)
         from unnest(k.conkey) with ordinality u(num, ord)
         join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.num)))
    from pg_constraint k where k.conrelid = c.oid and k.contype in ('p', 'u')), '[]') as keys
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = any($1::text[]) and c.relkind in ('r', 'v', 'm', 'f', 'p')
order by 1, 2`;

const FOREIGN_KEYS_SQL = `
select k.conname as constraint,
  fn.nspname as from_schema, f.relname as from_name,
  (select json_agg(a.attname order by u.ord) from unnest(k.conkey) with ordinality u(num, ord)
     join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.num) as from_columns,
  tn.nspname as to_schema, t.relname as to_name,
  (select json_agg(a.attname order by u.ord) from unnest(k.confkey) with ordinality u(num, ord)
     join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.num) as to_columns
from pg_constraint k
join pg_class f on f.oid = k.conrelid join pg_namespace fn on fn.oid = f.relnamespace
join pg_class t on t.oid = k.confrelid join pg_namespace tn on tn.oid = t.relnamespace
where k.contype = 'f' and fn.nspname = any($1::text[]) and tn.nspname = any($1::text[])
order by 1`;

// Which base-table columns each view reads (pg_depend on the view's rewrite
// rule); a view column of the same name as a read column maps back to it, so
// foreign keys of the base table also join the view.
const VIEW_COLUMNS_SQL = `
select distinct vn.nspname as view_schema, v.relname as view_name,
  tn.nspname as table_schema, t.relname as table_name, a.attname as column
from pg_class v
join pg_namespace vn on vn.oid = v.relnamespace
join pg_rewrite r on r.ev_class = v.oid
join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = r.oid
  and d.refclassid = 'pg_class'::regclass and d.refobjsubid > 0 and d.refobjid <> v.oid
join pg_class t on t.oid = d.refobjid join pg_namespace tn on tn.oid = t.relnamespace
join pg_attribute a on a.attrelid = t.oid and a.attnum = d.refobjsubid
where v.relkind in ('v', 'm') and vn.nspname = any($1::text[])`;

const FUNCTIONS_SQL = `
select n.nspname as schema, p.proname as name, p.provolatile as volatility, p.proretset as returns_set, p.prorows as rows,
  format_type(p.prorettype, null) as return_type, rt.typtype as return_typtype,
  rn.nspname as return_schema, rc.relname as return_relation,
  obj_description(p.oid, 'pg_proc') as comment, p.pronargs as nargs, p.pronargdefaults as ndefaults,
  coalesce(p.proargnames, '{}') as arg_names,
  coalesce(p.proargmodes::text[], array_fill('i'::text, array[p.pronargs::int])) as arg_modes,
  (select array_agg(format_type(x.t, null) order by x.o)
     from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality x(t, o)) as arg_types,
  (select json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
            'nullable', true, 'default', null) order by a.attnum)
     from pg_attribute a where a.attrelid = rt.typrelid and a.attnum > 0 and not a.attisdropped) as row_columns,
  (select json_build_object('schema', an.nspname, 'name', ac.relname)
     from pg_type at join pg_class ac on ac.oid = at.typrelid join pg_namespace an on an.oid = ac.relnamespace
     where p.pronargs = 1 and at.oid = p.proargtypes[0]) as row_argument
from pg_proc p
join pg_namespace n on n.oid = p.pronamespace
join pg_type rt on rt.oid = p.prorettype
left join pg_class rc on rc.oid = rt.typrelid left join pg_namespace rn on rn.oid = rc.relnamespace
where n.nspname = any($1::text[]) and p.prokind = 'f'
  and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype)
order by 1, 2, p.oid`;

const KINDS: Record<string, Relation['kind']> = {
  r: 'table',
  v: 'view',
  m: 'materialized view',
  f: 'foreign table',
  p: 'partitioned table',
};

/**
 * The four catalog reads, on one connection (a cold project's first request
 * opens one, not four: docs/architecture.md, "Connections") and in one
 * snapshot, written at once with BEGIN and COMMIT: one round trip.
 */
async function readCatalog(sql: postgres.Sql, schemas: string[]): Promise<postgres.RowList<postgres.Row[]>[]> {
  const reads = [RELATIONS_SQL, FOREIGN_KEYS_SQL, VIEW_COLUMNS_SQL, FUNCTIONS_SQL].map((text) => ({
    text,
    values: [schemas],
  }));
  const results = await pipelined(sql, 'begin isolation level repeatable read read only', reads, 'commit');
  return results.map(rowsOf).slice(1, -1);
}

export async function loadSchemaCache(sql: postgres.Sql, schemas: string[]): Promise<SchemaCache> {
  const [rels, fks, viewCols, fns] = (await readCatalog(sql, schemas)) as [
    postgres.RowList<postgres.Row[]>,
    postgres.RowList<postgres.Row[]>,
    postgres.RowList<postgres.Row[]>,
    postgres.RowList<postgres.Row[]>,
  ];

  const relations = new Map<string, Relation>();
  for (const r of rels) {
    const columns = r.columns as Column[];
    const keys = r.keys as { type: 'p' | 'u'; columns: string[] }[];
    relations.set(relationKey(r.schema, r.name), {
      schema: r.schema,
      name: r.name,
      kind: KINDS[r.kind],
      columns,
      columnMap: new Map(columns.map((c) => [c.name, c])),
      primaryKey: keys.find((k) => k.type === 'p')?.columns ?? [],
      uniqueKeys: keys.map((k) => k.columns),
      comment: r.comment,
      computed: new Map(),
      // Bits of pg_relation_is_updatable: 1 << CMD_UPDATE (2), CMD_INSERT (3), CMD_DELETE (4).
      writable: { update: (r.updatable & 4) !== 0, insert: (r.updatable & 8) !== 0, delete: (r.updatable & 16) !== 0 },
    });
  }

  // view -> base table -> columns read; a view exposes a base column when it has
  // a column of that name and reads that column of exactly one base table.
  const exposes = new Map<string, Map<string, Set<string>>>();
  for (const v of viewCols) {
    const view = relationKey(v.view_schema, v.view_name);
    const perTable = exposes.get(view) ?? new Map<string, Set<string>>();
    exposes.set(view, perTable);
    const table = relationKey(v.table_schema, v.table_name);
    perTable.set(table, (perTable.get(table) ?? new Set()).add(v.column));
  }
  const viewsExposing = (table: Relation, columns: string[]): Relation[] => {
    const out: Relation[] = [];
    for (const [viewKey, perTable] of exposes) {
      const view = relations.get(viewKey);
      const read = perTable.get(relationKey(table.schema, table.name));
      if (!view || !read) continue;
      const unique = (col: string) => [...perTable.entries()].filter(([, cols]) => cols.has(col)).length === 1;
      if (columns.every((col) => read.has(col) && view.columnMap.has(col) && unique(col))) out.push(view);
    }
    return out;
  };
  for (const [key, view] of relations) {
    const perTable = exposes.get(key);
    if (view.kind !== 'view' && view.kind !== 'materialized view') continue;
    if (!perTable || view.uniqueKeys.length) continue;
    // A view shows its base table's keys when it exposes all their columns.
    for (const [tableKey] of perTable) {
      const base = relations.get(tableKey);
      if (!base) continue;
      const shown = base.uniqueKeys.filter((k) => viewsExposing(base, k).includes(view));
      view.uniqueKeys.push(...shown);
      if (!view.primaryKey.length && viewsExposing(base, base.primaryKey).includes(view))
        view.primaryKey = base.primaryKey;
    }
  }

  const foreignKeys: ForeignKey[] = [];
  for (const fk of fks) {
    const from = relations.get(relationKey(fk.from_schema, fk.from_name));
    const to = relations.get(relationKey(fk.to_schema, fk.to_name));
    if (!from || !to) continue;
    const fromColumns = fk.from_columns as string[];
    const toColumns = fk.to_columns as string[];
    for (const f of [from, ...viewsExposing(from, fromColumns)]) {
      for (const t of [to, ...viewsExposing(to, toColumns)]) {
        foreignKeys.push({ constraint: fk.constraint, from: f, fromColumns, to: t, toColumns });
      }
    }
  }

  const functions = new Map<string, RestFunction[]>();
  for (const f of fns) {
    const fn = toFunction(f, relations);
    const key = relationKey(fn.schema, fn.name);
    functions.set(key, [...(functions.get(key) ?? []), fn]);
    const owner = fn.rowArgument;
    if (
      owner &&
      !fn.returnsSet &&
      fn.returns !== 'void' &&
      !owner.columnMap.has(fn.name) &&
      !owner.computed.has(fn.name)
    )
      owner.computed.set(fn.name, fn);
  }
  return { schemas, relations, foreignKeys, functions };
}

const VOLATILITY = { i: 'immutable', s: 'stable', v: 'volatile' } as const;

/** The types an unnamed argument may have for its function to stay callable over /rpc (PostgREST's rule). */
const SINGLE_UNNAMED_TYPES = new Set(['json', 'jsonb', 'text', 'xml', 'bytea']);

function toFunction(f: postgres.Row, relations: Map<string, Relation>): RestFunction {
  const names = f.arg_names as string[];
  const modes = f.arg_modes as string[];
  const types = f.arg_types as string[] | null;
  const args: FunctionArg[] = [];
  const outColumns: Column[] = [];
  modes.forEach((mode, i) => {
    const name = names[i] ?? '';
    const type = types?.[i] ?? 'unknown';
    if (mode === 'i' || mode === 'b' || mode === 'v')
      args.push({ name, type, hasDefault: false, variadic: mode === 'v' });
    if (mode === 'o' || mode === 'b' || mode === 't') outColumns.push({ name, type, nullable: true, default: null });
  });
  // The last pronargdefaults input arguments have defaults.
  args.forEach((a, i) => {
    a.hasDefault = i >= args.length - f.ndefaults;
  });
  const unnamed = args.filter((a) => a.name === '');
  const callable = unnamed.length === 0 || (unnamed.length === 1 && SINGLE_UNNAMED_TYPES.has(unnamed[0].type));

  const relation = f.return_relation ? (relations.get(relationKey(f.return_schema, f.return_relation)) ?? null) : null;
  const rowArg = f.row_argument as { schema: string; name: string } | null;
  const rowArgument = rowArg ? (relations.get(relationKey(rowArg.schema, rowArg.name)) ?? null) : null;
  let returns: RestFunction['returns'] = 'scalar';
  let columns: Column[] = [];
  if (f.return_type === 'void') returns = 'void';
  else if (f.row_columns) {
    returns = 'composite';
    columns = relation?.columns ?? (f.row_columns as Column[]);
  } else if (f.return_type === 'record' && outColumns.length) {
    returns = 'composite';
    columns = outColumns;
  }
  return {
    schema: f.schema,
    name: f.name,
    args,
    returnType: f.return_type,
    returnsSet: f.returns_set,
    returns,
    columns,
    relation,
    rowArgument,
    volatility: VOLATILITY[f.volatility as keyof typeof VOLATILITY],
    comment: f.comment,
    callable,
    singleRow: !f.returns_set || Number(f.rows) === 1,
  };
}

export const RELOAD_CHANNEL = 'pgrst';

/**
 * How long a project's REST API may go without a request before its schema
 * listener is closed: the listener is a connection of its own, and idle
 * projects must hold none (see src/db/pools.ts).
 */
export const LISTENER_IDLE_MS = 60_000;

/** Read when a store is created; tests shorten idleMs rather than wait a minute. */
export const schemaListener = { idleMs: LISTENER_IDLE_MS };

/**
 * LISTENs on the `pgrst` channel (PostgREST's) and calls onReload for
 * 'reload schema' (or an empty payload), and onLost if that connection drops
 * (notifications may have been missed then). Returns the function that closes
 * the connection.
 */
export function watchSchemaChanges(
  sql: postgres.Sql,
  onReload: () => void,
  onLost: () => void = onReload,
): Promise<() => Promise<void>> {
  // Nice to have: with no connection to spare, the store reads the schema per request instead.
  return listenOwnConnection(
    sql,
    RELOAD_CHANNEL,
    (payload) => {
      if (payload === '' || payload === 'reload schema') onReload();
    },
    onLost,
    { failWhenBusy: true },
  );
}

/**
 * A project's cache holder: loads lazily and drops the cache on notification,
 * so a burst of DDL costs one introspection, on the next request. A request
 * already holding the old cache finishes with it.
 *
 * The listener runs only while the API is in use: after idleMs without a
 * get() or loaded(), it is closed and the cache dropped with it, since nobody
 * would tell it of changes. The next get() listens again before it reads the
 * schema, so no change is missed, and requests arriving meanwhile share that
 * one reload.
 */
export interface SchemaCacheStore {
  get(): Promise<SchemaCache>;
  /** The loaded cache, if it is current: lets the hot path skip an await. */
  loaded(): SchemaCache | null;
  /** Marks the cache stale; the next get() reloads. */
  invalidate(): void;
  close(): Promise<void>;
}

export async function createSchemaCacheStore(
  sql: postgres.Sql,
  schemas: string[],
  opts: { idleMs?: number } = {},
): Promise<SchemaCacheStore> {
  const idleMs = opts.idleMs ?? schemaListener.idleMs;
  let current: Promise<SchemaCache> | null = null;
  let ready: SchemaCache | null = null;
  let listener: Promise<() => Promise<void>> | null = null;
  // The previous listener's close, awaited before listening again.
  let closing: Promise<unknown> = Promise.resolve();
  let lastUsed = Date.now();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const invalidate = () => {
    current = null;
    ready = null;
  };
  const stopListening = () => {
    const l = listener;
    listener = null;
    invalidate(); // unwatched from here on: the next request must read the schema again
    if (timer) clearTimeout(timer);
    timer = null;
    closing = Promise.all([closing, l?.then((stop) => stop())]).catch(() => {});
    return closing;
  };
  const checkIdle = () => {
    timer = null;
    const idle = Date.now() - lastUsed;
    if (idle >= idleMs) void stopListening();
    else (timer = setTimeout(checkIdle, idleMs - idle)).unref();
  };
  const listen = () => {
    if (listener) return listener;
    const l = closing.then(() => watchSchemaChanges(sql, invalidate, () => listener === l && void stopListening()));
    l.catch(() => listener === l && (listener = null)); // retried by the next load
    timer ??= setTimeout(checkIdle, idleMs).unref();
    return (listener = l);
  };
  const load = () => {
    // Listening first: a change made during the read then drops what it returns. Without a
    // listener (the process's connection budget had none to spare) the read serves the requests
    // waiting for it and is not kept: the next request reads again, and tries to listen again.
    let watched = false;
    const p = listen()
      .then(
        () => (watched = true),
        () => {},
      )
      .then(() => loadSchemaCache(sql, schemas));
    p.then(
      (cache) => {
        if (current !== p) return;
        if (watched) ready = cache;
        else current = null;
      },
      () => {
        if (current === p) current = null; // retry on the next request
      },
    );
    return p;
  };
  await listen().catch(() => {}); // early, when there is a connection to spare
  return {
    get: () => {
      if (closed) return loadSchemaCache(sql, schemas); // a request that outlived its project: read once, listen no more
      lastUsed = Date.now();
      return (current ??= load());
    },
    loaded: () => {
      if (ready) lastUsed = Date.now();
      return ready;
    },
    invalidate,
    close: () => {
      closed = true; // no longer told of changes: the hot path must not keep serving it
      return stopListening().then(() => {});
    },
  };
}
