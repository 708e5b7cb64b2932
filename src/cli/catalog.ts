/**
 * What `gen types` and `db dump` read from a project's catalog, in one query
 * through POST /v1/projects/{ref}/database/query (so it works the same on a
 * remote Hearth): relations with their columns, types, enums, foreign keys and
 * functions of the chosen schemas.
 */
import { sql, type Target } from './api.ts';
import { literal } from './sql-text.ts';

export interface CatalogColumn {
  name: string;
  num: number;
  type_oid: number;
  /** format_type(): the column's SQL type as written in DDL. */
  sql_type: string;
  not_null: boolean;
  default: string | null;
  /** 'a' (always), 'd' (by default) or '' (not an identity column). */
  identity: string;
  /** 's' for a stored generated column, else ''. */
  generated: string;
  updatable: boolean;
  comment: string | null;
}

export interface CatalogRelation {
  oid: number;
  schema: string;
  name: string;
  /** r table, p partitioned table, v view, m materialized view, f foreign table, c composite type. */
  kind: string;
  /** pg_relation_is_updatable(): 8 insert, 4 update, 16 delete. */
  updatable: number;
  columns: CatalogColumn[];
  /** Column sets that are unique (primary key and unique indexes), for a foreign key's cardinality. */
  unique_sets: string[][];
  comment: string | null;
  /** A view's or materialized view's query (pg_rewrite.ev_action, a pg_node_tree), for viewColumnOrigins(); else null. */
  rule?: string | null;
}

export interface CatalogType {
  oid: number;
  schema: string;
  name: string;
  /** b base, c composite, d domain, e enum, r range, m multirange, p pseudo. */
  type: string;
  elem: number;
  base: number;
  relid: number;
  category: string;
  /** format_type() of a table's, view's or composite type's row type (schema-qualified when not on the search path); else null. */
  format: string | null;
}

export interface CatalogForeignKey {
  name: string;
  schema: string;
  table: string;
  columns: string[];
  ref_schema: string;
  ref_table: string;
  ref_columns: string[];
}

export interface CatalogFunction {
  schema: string;
  name: string;
  /** Argument names ('' when unnamed), types and modes (i, o, b, v, t) of every argument. */
  arg_names: string[];
  arg_types: number[];
  arg_modes: string[];
  /** How many of the trailing input arguments have defaults. */
  n_defaults: number;
  returns: number;
  returns_set: boolean;
  /** pg_get_function_arguments() and pg_get_function_result(), to order overloads. */
  arguments?: string;
  result?: string;
  /** ROWS estimate of a set-returning function (null when it returns one value). */
  rows: number | null;
}

export interface Catalog {
  relations: CatalogRelation[];
  types: CatalogType[];
  enums: { oid: number; labels: string[] }[];
  foreign_keys: CatalogForeignKey[];
  functions: CatalogFunction[];
}

const CATALOG_QUERY = `
with nsp as (
  select oid, nspname from pg_namespace where nspname = any($SCHEMAS)
),
rels as (
  select c.oid, n.nspname as schema, c.relname as name, c.relkind::text as kind,
    case when c.relkind in ('v', 'f') then pg_relation_is_updatable(c.oid, false) else 0 end as updatable,
    obj_description(c.oid, 'pg_class') as comment
  from pg_class c join nsp n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p', 'v', 'm', 'f', 'c')
)
select json_build_object(
  'relations', coalesce((select json_agg(json_build_object(
      'oid', r.oid, 'schema', r.schema, 'name', r.name, 'kind', r.kind, 'updatable', r.updatable, 'comment', r.comment,
      'rule', (select w.ev_action::text from pg_rewrite w where w.ev_class = r.oid and w.rulename = '_RETURN' and r.kind in ('v', 'm')),
      'columns', coalesce((select json_agg(json_build_object(
          'name', a.attname, 'num', a.attnum, 'type_oid', a.atttypid, 'sql_type', format_type(a.atttypid, a.atttypmod),
          'not_null', a.attnotnull, 'default', pg_get_expr(d.adbin, d.adrelid),
          'identity', a.attidentity::text, 'generated', a.attgenerated::text,
          'updatable', case when r.kind in ('v', 'f') then pg_column_is_updatable(r.oid, a.attnum, false) else true end,
          'comment', col_description(r.oid, a.attnum)) order by a.attnum)
        from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped), '[]'),
      'unique_sets', coalesce((select json_agg((select array_agg(a.attname order by a.attname) from pg_attribute a
          where a.attrelid = i.indrelid and a.attnum = any(i.indkey)))
        from pg_index i where i.indrelid = r.oid and i.indisunique and i.indpred is null and i.indexprs is null), '[]')
    ) order by r.schema, r.name) from rels r), '[]'),
  'types', (select json_agg(json_build_object('oid', t.oid, 'schema', n.nspname, 'name', t.typname, 'type', t.typtype::text,
      'elem', t.typelem, 'base', t.typbasetype, 'relid', t.typrelid, 'category', t.typcategory::text,
      'format', case when t.typrelid <> 0 then format_type(t.oid, null) end))
    from pg_type t join pg_namespace n on n.oid = t.typnamespace
    where n.nspname = any($SCHEMAS) or n.nspname = 'pg_catalog' or t.typtype in ('e', 'd')
      or t.oid in (select a.atttypid from pg_attribute a join rels r on r.oid = a.attrelid)),
  'enums', coalesce((select json_agg(json_build_object('oid', e.enumtypid, 'labels', e.labels))
    from (select enumtypid, array_agg(enumlabel order by enumsortorder) as labels from pg_enum group by enumtypid) e), '[]'),
  'foreign_keys', coalesce((select json_agg(json_build_object('name', k.conname, 'schema', n.nspname, 'table', c.relname,
      'columns', (select array_agg(a.attname order by x.i) from unnest(k.conkey) with ordinality x(num, i)
        join pg_attribute a on a.attrelid = k.conrelid and a.attnum = x.num),
      'ref_schema', fn.nspname, 'ref_table', fc.relname,
      'ref_columns', (select array_agg(a.attname order by x.i) from unnest(k.confkey) with ordinality x(num, i)
        join pg_attribute a on a.attrelid = k.confrelid and a.attnum = x.num)) order by n.nspname, c.relname, k.conname)
    from pg_constraint k join pg_class c on c.oid = k.conrelid join nsp n on n.oid = c.relnamespace
    join pg_class fc on fc.oid = k.confrelid join pg_namespace fn on fn.oid = fc.relnamespace
    where k.contype = 'f' and k.conparentid = 0), '[]'),
  'functions', coalesce((select json_agg(json_build_object('schema', n.nspname, 'name', p.proname,
      'arg_names', coalesce(p.proargnames, array_fill(''::text, array[coalesce(array_length(p.proallargtypes, 1), p.pronargs)])),
      'arg_types', coalesce(p.proallargtypes::oid[], p.proargtypes::oid[]),
      'arg_modes', coalesce(p.proargmodes::text[], array_fill('i'::text, array[p.pronargs])),
      'n_defaults', p.pronargdefaults, 'returns', p.prorettype, 'returns_set', p.proretset,
      'rows', case when p.proretset then nullif(p.prorows, 0) end,
      'arguments', pg_get_function_arguments(p.oid), 'result', pg_get_function_result(p.oid)) order by n.nspname, p.proname, p.oid)
    from pg_proc p join nsp n on n.oid = p.pronamespace
    where p.prokind = 'f' and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype)
      and not exists (select 1 from pg_depend dep where dep.objid = p.oid and dep.deptype = 'e')), '[]')
) as catalog`;

/** A view column shown unchanged from a column of a table or view: the view's column number, that relation's oid and column number. */
export interface ViewColumnOrigin {
  num: number;
  table: number;
  column: number;
}

/**
 * The columns a view shows unchanged from a table or another view, as PostgREST finds them to
 * give views the relationships of their tables: the entries of its query's own target list
 * (not of its subqueries) carry the relation and column they come from (resorigtbl, resorigcol).
 * The rule is a pg_node_tree: `({QUERY ... :targetList ({TARGETENTRY ... :resno 1 ...
 * :resorigtbl 16390 :resorigcol 2 :resjunk false} ...) ...})`, where `\` escapes a character.
 */
export function viewColumnOrigins(rule: string): ViewColumnOrigin[] {
  const origins: ViewColumnOrigin[] = [];
  const tokens = rule.match(/[{}()]|(?:\\[\s\S]|[^\s{}()\\])+/g) ?? [];
  // Depth 2 is inside the query ( `(` then `{QUERY` ), 4 inside an entry of its target list.
  let depth = 0;
  let inTargets = false;
  let entry: Record<string, string> | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '{' || token === '(') {
      depth++;
      if (inTargets && depth === 4 && token === '{') entry = {};
    } else if (token === '}' || token === ')') {
      if (entry && depth === 4) {
        const [num, table, column] = [entry[':resno'], entry[':resorigtbl'], entry[':resorigcol']].map(Number);
        if (entry[':resjunk'] !== 'true' && table) origins.push({ num: num!, table, column: column! });
        entry = null;
      }
      depth--;
      if (inTargets && depth === 2) return origins;
    } else if (depth === 2 && token === ':targetList') {
      inTargets = true;
    } else if (entry && depth === 4 && token.startsWith(':')) {
      entry[token] = tokens[i + 1] ?? '';
    }
  }
  return origins;
}

export function catalogQuery(schemas: string[]): string {
  return CATALOG_QUERY.replaceAll('$SCHEMAS', `array[${schemas.map(literal).join(', ')}]::name[]`);
}

export async function readCatalog(t: Target, schemas: string[]): Promise<Catalog> {
  const [row] = await sql<{ catalog: Catalog }>(t, catalogQuery(schemas), 600_000);
  return row!.catalog;
}
