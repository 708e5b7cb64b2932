/**
 * AST + schema cache -> ONE SQL statement that builds the whole response body
 * in Postgres: rows as json_agg, embeds as LATERAL subqueries (one per embed,
 * never a query per row), the total count as a scalar subquery when asked.
 *
 * Safety: every identifier comes from the schema cache (a name the client
 * wrote is looked up first, then quoted) and every value, JSON key, limit and
 * offset is a bound parameter. Type names spliced after "::" come from the
 * catalog, or are a cast matched by parse.ts against [A-Za-z0-9_] only.
 *
 * The statement always answers one row: (total, page_total, body).
 */
import { quoteIdent } from '../db/ident.ts';
import { fail } from '../errors.ts';
import {
  type AggregateItem,
  BINARY_OPERATORS,
  DEFAULT_LIMIT,
  FTS_OPERATORS,
  MAX_LIMIT,
  type Condition,
  type EmbedItem,
  type Field,
  type Filter,
  type NodeOptions,
  type OrderTerm,
  type ParsedQuery,
  type SelectItem,
} from './parse.ts';
import { findRelationship, type Relationship } from './relationships.ts';
import type { Relation, RestFunction, SchemaCache } from './schema-cache.ts';

export interface Statement {
  text: string;
  values: unknown[];
}

/** How the body column is built: rows as JSON (json-stripped: without null fields) or CSV, bare values of a column, or none. */
export type BodyFormat = 'json' | 'json-stripped' | 'csv' | 'none';
/** exact: count(*) of every matching row; capped: count up to MAX_LIMIT + 1 (for count=estimated). */
export type CountMode = 'exact' | 'capped' | null;

export interface Plan {
  statement: Statement;
  /** Output keys of each row, in order (the CSV header). */
  keys: string[];
  /** The rows before limit/offset, for EXPLAIN (count=planned/estimated). */
  source: Statement | null;
}

const qualified = (r: { schema: string; name: string }) => `${quoteIdent(r.schema)}.${quoteIdent(r.name)}`;

/**
 * JSON travels as a text parameter cast in SQL: a parameter the server
 * describes as json would be JSON-encoded a second time by the driver. A value
 * parsed from the request body goes as the client's own text (withSourceText).
 */
const jsonParam = (ctx: Context, value: unknown) =>
  `${ctx.param((isObjectLike(value) && SOURCE.get(value)) || jsonText(value))}::text::json`;

/** The JSON text each parsed request body was read from. */
const SOURCE = new WeakMap<object, string>();

const isObjectLike = (v: unknown): v is object => typeof v === 'object' && v !== null;

/**
 * Marks `value` as parsed from `text`, so the SQL gets the text itself, as
 * PostgREST passes the body through: PostgreSQL then reads every number to its
 * last digit (bigint, numeric, json and jsonb values) and a json column keeps
 * the text as sent, where JSON.stringify of the parsed value would round
 * numbers to doubles (9007199254740993 → ...992) and drop `1.50`'s zero.
 */
export function withSourceText<T>(value: T, text: string): T {
  if (isObjectLike(value)) SOURCE.set(value, text);
  return value;
}

/** A body as rows: an array as it is, one object as an array of it (keeping its text). */
export function rowsOf(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  const text = isObjectLike(body) ? SOURCE.get(body) : undefined;
  return text === undefined ? [body] : withSourceText([body], `[${text}]`);
}

/** JSON.stringify recurses: a body nested thousands deep (which JSON.parse reads fine) overflows its stack. */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) throw fail('PGRST102', 'The JSON body is nested too deeply.');
    throw err;
  }
}

const NO_OPTIONS: NodeOptions = { conditions: [], order: null, limit: null, offset: null };

class Context {
  values: unknown[] = [];
  private aliases = 0;
  private used = new Set<string>();
  constructor(
    readonly cache: SchemaCache,
    readonly parsed: Pick<ParsedQuery, 'nodes'>,
  ) {}
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  alias(): string {
    return `"_h${this.aliases++}"`;
  }
  options(path: string): NodeOptions {
    this.used.add(path);
    return this.parsed.nodes.get(path) ?? NO_OPTIONS;
  }
  /** Parameters aimed at an embed that the select does not have are a 400. */
  checkAllOptionsUsed() {
    for (const [path, o] of this.parsed.nodes) {
      const empty = !o.conditions.length && !o.order && o.limit === null && o.offset === null;
      if (!this.used.has(path) && !empty) {
        throw fail('PGRST108', `'${path}' is not an embedded resource in this request`, {
          hint: `Verify that '${path}' is included in the 'select' query parameter.`,
        });
      }
    }
  }
}

interface Node {
  rel: Relation;
  alias: string;
  path: string;
  items: SelectItem[];
  embeds: Map<EmbedItem, Embed>;
  options: NodeOptions;
}

interface Embed {
  key: string;
  item: EmbedItem;
  relationship: Relationship;
  node: Node;
  lateral: string;
  /** Columns of this to-one embed that the parent orders by (order=rel(col)). */
  orderFields: Field[];
  /** Output keys a spread merges into the parent row (set when its join is built). */
  spreadKeys: string[];
  /**
   * A spread's aggregates, applied by the parent as if the columns were its
   * own (PostgREST hoists them): the lateral carries each input as a hidden
   * column, keyed here by that column's name.
   */
  hoisted?: Map<string, { key: string; fn: string; cast: string | null }>;
}

/** How deep a node is: 0 for the root, 1 for its embeds ... (PostgREST's table aliases carry it). */
const depthOf = (path: string) => (path ? path.split('.').length : 0);

function resolveNode(ctx: Context, rel: Relation, items: SelectItem[], path: string): Node {
  const node: Node = { rel, alias: ctx.alias(), path, items, embeds: new Map(), options: ctx.options(path) };
  const keys = new Set<string>();
  for (const item of items) {
    if (item.type !== 'embed') continue;
    const relationship = findRelationship(ctx.cache, rel, item.relation, item.hint);
    const key = item.alias ?? item.relation;
    if (keys.has(key)) {
      // Two embeds under one name: PostgREST's SQL names both laterals alike and Postgres refuses it.
      throw fail('42712', `table name "${rel.name}_${key}_${depthOf(path) + 1}" specified more than once`);
    }
    keys.add(key);
    if (item.spread && !relationship.toOne) {
      throw fail('PGRST119', `A spread operation on '${item.relation}' is not possible`, {
        details: `'${rel.name}' and '${item.relation}' do not form a many-to-one or one-to-one relationship`,
        hint: 'Spread only a to-one relationship; embed a to-many relationship as an array instead.',
      });
    }
    const child = resolveNode(ctx, relationship.target, item.select, path ? `${path}.${key}` : key);
    const o = child.options;
    if (item.spread && (o.order || o.limit !== null || o.offset !== null)) {
      throw fail('PGRST119', `order, limit and offset cannot be applied to the spread '${key}'`, {
        hint: 'Apply them to the parent instead.',
      });
    }
    node.embeds.set(item, {
      key,
      item,
      relationship,
      node: child,
      lateral: ctx.alias(),
      orderFields: [],
      spreadKeys: [],
    });
  }
  return node;
}

// ---------------------------------------------------------------- expressions

/** Postgres's 42703 as PostgREST's SQL draws it: an embedded table is aliased <table>_<depth>. */
const columnMissing = (node: Node, name: string) => {
  const depth = depthOf(node.path);
  return fail('42703', `column ${node.rel.name}${depth ? `_${depth}` : ''}.${name} does not exist`);
};

/** A JSON path step that indexes an array (`->0`, `->-1`) rather than naming a key. */
const isIndex = (key: string) => /^-?\d{1,9}$/.test(key);

function fieldExpr(ctx: Context, node: Node, field: Field): string {
  return typedFieldExpr(ctx, node, field).sql;
}

/** A column (and JSON path) as SQL, with the catalog type of its value. */
function typedFieldExpr(ctx: Context, node: Node, field: Field): { sql: string; type: string } {
  const computed = node.rel.columnMap.has(field.name) ? undefined : node.rel.computed.get(field.name);
  const column = computed ? { type: computed.returnType } : node.rel.columnMap.get(field.name);
  if (!column) throw columnMissing(node, field.name);
  // A computed field is its function applied to the row; ROW(alias.*) also
  // makes a write's RETURNING rows (a CTE, not the table) that row type.
  let sql = computed
    ? `${qualified(computed)}(ROW(${node.alias}.*)::${qualified(node.rel)})`
    : `${node.alias}.${quoteIdent(field.name)}`;
  // Arrows on any other column work on its JSON form, as in PostgREST: composite
  // fields, array elements, hstore keys (`location->>lat`, `languages->0`).
  const isJson = column.type === 'json' || column.type === 'jsonb';
  if (field.json.length && !isJson) sql = `to_jsonb(${sql})`;
  for (const step of field.json) {
    // An integer key indexes an array; any other key is a text parameter.
    const key = isIndex(step.key) ? step.key : `${ctx.param(step.key)}::text`;
    sql = `(${sql}${step.arrow}${key})`;
  }
  const last = field.json.at(-1);
  const type = !last ? column.type : last.arrow === '->>' ? 'text' : column.type === 'json' ? 'json' : 'jsonb';
  return { sql, type };
}

/**
 * A filter value, bound as text and cast in SQL to the type it is compared
 * with. Binding as text matters: postgres.js serializes a parameter by the type
 * the server describes (jsonb is JSON-encoded again, 'true' for a boolean
 * becomes 'f'), while text reaches Postgres verbatim and its own input
 * function parses it. Type names come from the catalog.
 */
const valueParam = (ctx: Context, value: string, type: string) => `${ctx.param(value)}::text::${type}`;

/**
 * The output key of a column item: alias, else the last JSON key, else the
 * column. A path ending in an array index (`langs->0`, `data->tags->1`) is
 * named after the last key before it, or the column, as in PostgREST.
 */
function columnKey(f: Field, alias: string | null): string {
  if (alias) return alias;
  if (!f.json.length) return f.name;
  return [...f.json].reverse().find((s) => !isIndex(s.key))?.key ?? f.name;
}

const likePattern = (v: string) => v.replace(/\*/g, '%');

function filterSql(ctx: Context, node: Node, f: Filter, onEmbedFilter: (e: Embed) => void): string {
  const op = f.operation;
  const embed =
    !f.field.json.length && !node.rel.columnMap.has(f.field.name) && !node.rel.computed.has(f.field.name)
      ? findEmbedByKey(node, f.field.name)
      : null;
  let sql: string;
  if (embed && op.op === 'is' && op.value === 'null' && !embed.item.spread) {
    // `embed=is.null` / `embed=not.is.null`: rows without / with a match.
    onEmbedFilter(embed);
    sql = embed.relationship.toOne ? `${embed.lateral}.body IS NULL` : `${embed.lateral}.n = 0`;
  } else if (embed) {
    throw fail('PGRST120', `Bad operator on the '${embed.key}' embedded resource`, {
      details: 'Only is null or not is null filters are allowed on embedded resources',
    });
  } else {
    const { sql: expr, type } = typedFieldExpr(ctx, node, f.field);
    switch (op.op) {
      case 'in':
        sql = op.values.length ? `${expr} IN (${op.values.map((v) => valueParam(ctx, v, type)).join(', ')})` : 'false';
        break;
      case 'is':
        sql = `${expr} IS ${op.value.toUpperCase()}`;
        break;
      case 'isdistinct':
        sql = `${expr} IS DISTINCT FROM ${valueParam(ctx, op.value, type)}`;
        break;
      case 'fts':
      case 'plfts':
      case 'phfts':
      case 'wfts': {
        const config = op.config === null ? '' : `${ctx.param(op.config)}::text::regconfig, `;
        const vector = type === 'tsvector' ? expr : `to_tsvector(${config}${expr})`;
        sql = `${vector} @@ ${FTS_OPERATORS[op.op]}(${config}${ctx.param(op.value)}::text)`;
        break;
      }
      default: {
        const isLike = op.op === 'like' || op.op === 'ilike';
        const value = isLike ? likePattern(op.value) : op.value;
        // Pattern operators take text patterns whatever the column's type.
        const valueType = isLike || op.op === 'match' || op.op === 'imatch' ? 'text' : type;
        sql = op.quantifier
          ? `${expr} ${BINARY_OPERATORS[op.op]} ${op.quantifier.toUpperCase()}(${valueParam(ctx, value, valueType.endsWith('[]') ? valueType : `${valueType}[]`)})`
          : `${expr} ${BINARY_OPERATORS[op.op]} ${valueParam(ctx, value, valueType)}`;
      }
    }
  }
  return f.negate ? `NOT (${sql})` : sql;
}

function conditionSql(ctx: Context, node: Node, c: Condition, onEmbedFilter: (e: Embed) => void): string {
  if (c.type === 'filter') return filterSql(ctx, node, c, onEmbedFilter);
  const inner = c.children
    .map((child) => conditionSql(ctx, node, child, onEmbedFilter))
    .join(c.op === 'and' ? ' AND ' : ' OR ');
  return c.negate ? `NOT (${inner})` : `(${inner})`;
}

const findEmbedByKey = (node: Node, key: string) => [...node.embeds.values()].find((e) => e.key === key) ?? null;

// ---------------------------------------------------------------- nodes

interface Emitted {
  columns: string[];
  keys: string[];
  joins: string[];
  /** The joins that can remove rows: the count must include them. */
  filterJoins: string[];
  where: string[];
  orderBy: string[];
  /** Set when the select has aggregates: the other output expressions, grouped by. */
  groupBy: string[] | null;
}

/** ` GROUP BY ...` of an aggregating node; none for plain rows or aggregates alone. */
const groupBySql = (em: Emitted) => (em.groupBy?.length ? ` GROUP BY ${em.groupBy.join(', ')}` : '');

/**
 * The aggregate an item asks for: `col.sum()`, `count()`, or PostgREST's
 * legacy bare `count` (as in `comments(count)`) on a relation without a
 * column of that name.
 */
function aggregateOf(node: Node, item: SelectItem): AggregateItem | null {
  if (item.type === 'aggregate') return item;
  if (
    item.type === 'column' &&
    item.field.name === 'count' &&
    !item.field.json.length &&
    !node.rel.columnMap.has('count')
  ) {
    return { type: 'aggregate', fn: 'count', field: null, inputCast: null, alias: item.alias, cast: item.cast };
  }
  return null;
}

function aggregateSql(ctx: Context, node: Node, a: AggregateItem): string {
  let input = '*';
  if (a.field) {
    const expr = fieldExpr(ctx, node, a.field);
    input = a.inputCast ? `(${expr})::${a.inputCast}` : expr;
  }
  const sql = `${a.fn}(${input})`;
  return a.cast ? `(${sql})::${a.cast}` : sql;
}

function orderSql(term: OrderTerm, expr: string): string {
  let sql = expr;
  if (term.direction) sql += term.direction === 'desc' ? ' DESC' : ' ASC';
  if (term.nulls) sql += term.nulls === 'first' ? ' NULLS FIRST' : ' NULLS LAST';
  return sql;
}

/** Whether a spread of this node carries aggregates up to its parent. */
const hoistsAggregates = (embed: Embed) =>
  embed.item.spread && embed.node.items.some((i) => aggregateOf(embed.node, i));

/**
 * `hoisted`: set for a spread whose aggregates its parent applies; each
 * aggregate's input is emitted as a hidden column and recorded there.
 */
function emitNode(ctx: Context, node: Node, hoisted?: Embed['hoisted']): Emitted {
  const aggregated = hoisted
    ? false
    : node.items.some(
        (item) => aggregateOf(node, item) || (item.type === 'embed' && hoistsAggregates(node.embeds.get(item)!)),
      );
  const out: Emitted = {
    columns: [],
    keys: [],
    joins: [],
    filterJoins: [],
    where: [],
    orderBy: [],
    groupBy: aggregated ? [] : null,
  };
  const grouped = (expr: string) => out.groupBy?.push(expr);

  // order=rel(col): the to-one embed carries the column out of its lateral.
  const relatedOrder = (node.options.order ?? []).map((term) => {
    if (!term.relation) return null;
    const embed = findEmbedByKey(node, term.relation);
    if (!embed) {
      throw fail('PGRST108', `'${term.relation}' is not an embedded resource in this request`, {
        hint: `Verify that '${term.relation}' is included in the 'select' query parameter.`,
      });
    }
    if (!embed.relationship.toOne || embed.item.spread) {
      throw fail('PGRST118', `A related order on '${term.relation}' is not possible`, {
        details: `'${node.rel.name}' and '${term.relation}' do not form a many-to-one or one-to-one relationship, or '${term.relation}' is a spread`,
      });
    }
    embed.orderFields.push(term.field);
    const expr = `${embed.lateral}."_hearth_o${embed.orderFields.length - 1}"`;
    // Grouped rows can be ordered by the to-one embed they are grouped on.
    grouped(expr);
    return expr;
  });

  const filtering = new Set<Embed>();
  for (const c of node.options.conditions) out.where.push(conditionSql(ctx, node, c, (e) => filtering.add(e)));

  for (const embed of node.embeds.values()) {
    const { join, inner } = embedJoin(ctx, node, embed);
    out.joins.push(join);
    if (inner || filtering.has(embed)) out.filterJoins.push(join);
  }

  for (const item of node.items) {
    const aggregate = aggregateOf(node, item);
    if (aggregate && hoisted) {
      const column = `_hearth_h${hoisted.size}`;
      const input = aggregate.field ? fieldExpr(ctx, node, aggregate.field) : '1';
      out.columns.push(
        `${aggregate.inputCast ? `(${input})::${aggregate.inputCast}` : input} AS ${quoteIdent(column)}`,
      );
      out.keys.push(column);
      hoisted.set(column, { key: aggregate.alias ?? aggregate.fn, fn: aggregate.fn, cast: aggregate.cast });
    } else if (aggregate) {
      const key = aggregate.alias ?? aggregate.fn;
      out.columns.push(`${aggregateSql(ctx, node, aggregate)} AS ${quoteIdent(key)}`);
      out.keys.push(key);
    } else if (item.type === 'star') {
      for (const col of node.rel.columns) {
        out.columns.push(`${node.alias}.${quoteIdent(col.name)} AS ${quoteIdent(col.name)}`);
        out.keys.push(col.name);
        grouped(`${node.alias}.${quoteIdent(col.name)}`);
      }
    } else if (item.type === 'column') {
      const expr = fieldExpr(ctx, node, item.field);
      const key = columnKey(item.field, item.alias);
      out.columns.push(`${item.cast ? `(${expr})::${item.cast}` : expr} AS ${quoteIdent(key)}`);
      out.keys.push(key);
      grouped(expr);
    } else if (item.type === 'embed') {
      const embed = node.embeds.get(item)!;
      if (item.spread) {
        for (const key of embed.spreadKeys) {
          const agg = embed.hoisted?.get(key);
          if (agg) {
            const sql = `${agg.fn}(${embed.lateral}.${quoteIdent(key)})`;
            out.columns.push(`${agg.cast ? `(${sql})::${agg.cast}` : sql} AS ${quoteIdent(agg.key)}`);
            out.keys.push(agg.key);
            continue;
          }
          out.columns.push(`${embed.lateral}.${quoteIdent(key)} AS ${quoteIdent(key)}`);
          out.keys.push(key);
          grouped(`${embed.lateral}.${quoteIdent(key)}`);
        }
      } else if (item.select.length && aggregated) {
        // json has no equality operator: an embed groups by its text.
        out.columns.push(`(${embed.lateral}.body::text)::json AS ${quoteIdent(embed.key)}`);
        out.keys.push(embed.key);
        grouped(`${embed.lateral}.body::text`);
      } else if (item.select.length) {
        out.columns.push(`${embed.lateral}.body AS ${quoteIdent(embed.key)}`);
        out.keys.push(embed.key);
      }
    }
  }

  (node.options.order ?? []).forEach((term, i) => {
    out.orderBy.push(orderSql(term, relatedOrder[i] ?? fieldExpr(ctx, node, term.field)));
  });
  return out;
}

/**
 * The node selects exactly its table's row: `*` alone, no embeds, no
 * aggregates, the columns the schema cache knows (it reloads on every DDL).
 * A computed relationship's row is a function's result: not taken whole.
 */
function selectsWholeRow(node: Node, computed: boolean): boolean {
  return (
    !computed &&
    node.items.length === 1 &&
    node.items[0]!.type === 'star' &&
    node.embeds.size === 0 &&
    node.rel.columns.length > 0
  );
}

/** The LATERAL join of one embed; its body is an object (to-one), an array (to-many) or columns (spread). */
function embedJoin(ctx: Context, parent: Node, embed: Embed): { join: string; inner: boolean } {
  const child = embed.node;
  const { relationship: r, item } = embed;
  if (item.spread && item.select.some((s) => s.type === 'star')) {
    throw fail('PGRST100', `failed to parse select parameter (...${item.relation}(*))`, {
      details: '"*" does not expand inside a spread; name the columns to merge.',
    });
  }
  if (hoistsAggregates(embed)) {
    if (child.embeds.size) {
      throw fail(
        'PGRST127',
        `Aggregate functions inside the spread '${embed.key}' cannot be combined with embeds inside it`,
        { hint: 'Select only columns and aggregates inside a spread that aggregates.' },
      );
    }
    embed.hoisted = new Map();
  }
  const em = emitNode(ctx, child, embed.hoisted);
  // A computed relationship's rows are its function applied to the parent row; a foreign key's are joined on its columns.
  const source = r.fn ? `${qualified(r.fn)}(ROW(${parent.alias}.*)::${qualified(parent.rel)})` : qualified(child.rel);
  const on = r.targetColumns.map(
    (col, i) => `${child.alias}.${quoteIdent(col)} = ${parent.alias}.${quoteIdent(r.parentColumns[i])}`,
  );
  const from = [`${source} AS ${child.alias}`, ...em.joins].join(' ');
  const where = [...on, ...em.where].join(' AND ') || 'TRUE';
  let sql: string;
  let inner = item.join === 'inner';
  if (item.spread) {
    embed.spreadKeys = em.keys;
    sql = `SELECT ${em.columns.join(', ')} FROM ${from} WHERE ${where}`;
    inner ||= child.options.conditions.length > 0; // a filter on a spread decides the parent row
  } else if (r.toOne && em.groupBy) {
    // Aggregates in a to-one embed aggregate its (at most one) row, grouped by its other columns, as in PostgREST.
    if (embed.orderFields.length) {
      throw fail('PGRST127', `order on '${embed.key}' is not supported: it aggregates`, {
        hint: 'Order by a column of an embed without aggregate functions.',
      });
    }
    sql = `SELECT row_to_json(_hearth_r) AS body FROM (SELECT ${em.columns.join(', ')} FROM ${from} WHERE ${where}${groupBySql(em)}) _hearth_r`;
  } else if (r.toOne) {
    const orderCols = embed.orderFields.map((f, i) => `, ${fieldExpr(ctx, child, f)} AS "_hearth_o${i}"`).join('');
    // `author(*)`: the row itself, without a subquery per parent row (what the projection would rebuild).
    const row = selectsWholeRow(child, r.fn !== null)
      ? `row_to_json(${child.alias})`
      : `(SELECT row_to_json(_hearth_r) FROM (SELECT ${em.columns.join(', ')}) _hearth_r)`;
    sql = `SELECT ${row} AS body${orderCols} FROM ${from} WHERE ${where}`;
  } else {
    const order = em.orderBy.length ? ` ORDER BY ${em.orderBy.join(', ')}` : '';
    const { limit, offset } = child.options;
    const page =
      (limit !== null ? ` LIMIT ${ctx.param(Math.min(limit, MAX_LIMIT))}` : '') +
      (offset !== null ? ` OFFSET ${ctx.param(offset)}` : '');
    sql =
      `SELECT coalesce(json_agg(_hearth_r), '[]') AS body, count(*) AS n FROM (SELECT ${em.columns.join(', ')} FROM ${from} WHERE ${where}${groupBySql(em)}${order}${page}) _hearth_r` +
      (inner ? ' HAVING count(*) > 0' : '');
  }
  return { join: `${inner ? 'INNER' : 'LEFT'} JOIN LATERAL (${sql}) AS ${embed.lateral} ON TRUE`, inner };
}

// ---------------------------------------------------------------- statements

function bodySql(format: BodyFormat, scalarColumn: string | null): string {
  if (format === 'none') return 'NULL::text';
  if (format === 'csv') {
    // The row's record text without its parentheses is a CSV line.
    return `coalesce(string_agg(substr(_hearth_t::text, 2, length(_hearth_t::text) - 2), E'\\n'), '')`;
  }
  if (scalarColumn) return `coalesce(json_agg(_hearth_t.${quoteIdent(scalarColumn)}), '[]')::text`;
  if (format === 'json-stripped') return `coalesce(json_agg(json_strip_nulls(to_json(_hearth_t))), '[]')::text`;
  return `coalesce(json_agg(_hearth_t), '[]')::text`;
}

interface ReadShape {
  from: string;
  count: CountMode;
  format: BodyFormat;
  /** For SETOF scalar functions: the body is an array of this column's values. */
  scalarColumn?: string | null;
  /** Root limit/offset after Range and defaults (handle.ts decides). */
  limit: number;
  offset: number;
}

function readStatement(ctx: Context, root: Node, shape: ReadShape): Plan {
  const em = emitNode(ctx, root);
  ctx.checkAllOptionsUsed();
  const where = em.where.length ? ` WHERE ${em.where.join(' AND ')}` : '';
  const order = em.orderBy.length ? ` ORDER BY ${em.orderBy.join(', ')}` : '';
  const source = `SELECT ${em.columns.join(', ')} FROM ${[shape.from, ...em.joins].join(' ')}${where}${groupBySql(em)}${order}`;
  // Parameters so far are all the source needs; limit and offset come last.
  const sourceStatement = { text: source, values: [...ctx.values] };
  // With aggregates the rows are the groups: count those.
  const counted = em.groupBy ? source : `SELECT 1 FROM ${[shape.from, ...em.filterJoins].join(' ')}${where}`;
  const total =
    shape.count === 'exact'
      ? `(SELECT count(*) FROM (${counted}) _hearth_c)`
      : shape.count === 'capped'
        ? `(SELECT count(*) FROM (${counted} LIMIT ${MAX_LIMIT + 1}) _hearth_c)`
        : 'NULL::bigint';
  // A select that reshapes a SETOF-scalar function's rows (count() ...) answers objects.
  const scalar =
    shape.scalarColumn && em.keys.length === 1 && em.keys[0] === shape.scalarColumn ? shape.scalarColumn : null;
  const text =
    `SELECT ${total} AS total, count(*) AS page_total, ${bodySql(shape.format, scalar)} AS body ` +
    `FROM (${source} LIMIT ${ctx.param(shape.limit)} OFFSET ${ctx.param(shape.offset)}) _hearth_t`;
  return { statement: { text, values: ctx.values }, keys: em.keys, source: sourceStatement };
}

export interface ReadOptions {
  count: CountMode;
  format: BodyFormat;
  limit: number;
  offset: number;
}

/** GET/HEAD on a table or view. */
export function planRead(cache: SchemaCache, rel: Relation, parsed: ParsedQuery, options: ReadOptions): Plan {
  const ctx = new Context(cache, parsed);
  const root = resolveNode(ctx, rel, parsed.select, '');
  return readStatement(ctx, root, { from: `${qualified(rel)} AS ${root.alias}`, ...options });
}

/** The root page: limit defaults to 100 and is capped at 1000 (SPEC 8). */
export function rootPage(parsed: ParsedQuery): { limit: number; offset: number } {
  const o = parsed.nodes.get('') ?? NO_OPTIONS;
  return { limit: Math.min(o.limit ?? DEFAULT_LIMIT, MAX_LIMIT), offset: o.offset ?? 0 };
}

// ---------------------------------------------------------------- writes

export type Returning = 'representation' | 'minimal' | 'headers-only';

export type Mutation =
  | {
      kind: 'insert';
      rows: Record<string, unknown>[];
      columns: string[];
      missingDefault: boolean;
      onConflict: { columns: string[]; resolution: 'merge' | 'ignore' } | null;
      /** PUT: only body rows whose key columns equal these values are written. */
      match?: { column: string; value: string }[];
    }
  | { kind: 'update'; patch: Record<string, unknown>; columns: string[] }
  | { kind: 'delete' };

export interface WriteOptions {
  returning: Returning;
  format: BodyFormat;
}

function checkColumns(rel: Relation, columns: string[]) {
  for (const name of columns) {
    if (!rel.columnMap.has(name)) {
      throw fail('PGRST204', `Could not find the '${name}' column of '${rel.name}' in the schema cache`);
    }
  }
}

/**
 * POST/PATCH/DELETE: the write in a CTE, the response built from its RETURNING
 * rows. return=minimal returns `1` only, so SELECT policies are not involved
 * (as in PostgREST); headers-only returns the primary key for Location.
 */
export function planWrite(
  cache: SchemaCache,
  rel: Relation,
  parsed: ParsedQuery,
  mutation: Mutation,
  options: WriteOptions,
): Plan {
  const ctx = new Context(cache, parsed);
  const select: SelectItem[] =
    options.returning === 'headers-only'
      ? rel.primaryKey.map((name) => ({ type: 'column', field: { name, json: [] }, alias: null, cast: null }))
      : parsed.select;
  const root = resolveNode(ctx, rel, options.returning === 'minimal' ? [] : select, '');
  const target = `${qualified(rel)} AS ${root.alias}`;

  // An insert takes no filters (PUT's key filters arrive as mutation.match).
  const conditions = mutation.kind === 'insert' ? [] : root.options.conditions;
  const filters = conditions.map((c) =>
    conditionSql(ctx, root, c, () => {
      throw fail('PGRST100', 'Filters on embedded resources cannot select the rows to write', {
        hint: 'Filter on the columns of the table itself.',
      });
    }),
  );
  const { order, limit, offset } = root.options;
  if (mutation.kind === 'insert' && (order || limit !== null || offset !== null)) {
    throw fail('PGRST127', 'order, limit and offset are not supported on inserts', {
      hint: 'Remove them from the query string.',
    });
  }
  let where = filters.length ? ` WHERE ${filters.join(' AND ')}` : '';
  if (limit !== null || offset !== null) where = limitedWhere(ctx, root, where, order ?? [], limit, offset);

  let write: string;
  if (mutation.kind === 'insert') {
    checkColumns(rel, mutation.columns);
    const cols = mutation.columns.map(quoteIdent).join(', ');
    const json = jsonParam(ctx, mutation.rows);
    let values: string;
    if (mutation.missingDefault) {
      // A key absent from a row takes the column default, not NULL: each row is
      // laid over an object of the defaults, as PostgREST does (so, as there,
      // every row evaluates them: a sequence advances once per row).
      const defaults = mutation.columns.flatMap((name) => {
        const dflt = rel.columnMap.get(name)!.default;
        return dflt ? [`${ctx.param(name)}::text, ${dflt}`] : [];
      });
      // jsonb_build_object takes at most 100 arguments: 50 columns per call.
      const chunks = [];
      for (let i = 0; i < defaults.length; i += 50)
        chunks.push(`jsonb_build_object(${defaults.slice(i, i + 50).join(', ')})`);
      const merged = `(${[...chunks, '_hearth_row.j::jsonb'].join(' || ')})::json`;
      values = `SELECT ${mutation.columns.map((c) => `_hearth_body.${quoteIdent(c)}`).join(', ')} FROM json_array_elements(${json}) AS _hearth_row(j) CROSS JOIN LATERAL json_populate_record(NULL::${qualified(rel)}, ${merged}) AS _hearth_body`;
    } else {
      values = `SELECT ${mutation.columns.map((c) => `_hearth_body.${quoteIdent(c)}`).join(', ')} FROM json_populate_recordset(NULL::${qualified(rel)}, ${json}) AS _hearth_body`;
    }
    if (mutation.match?.length) {
      values += ` WHERE ${mutation.match.map((m) => `_hearth_body.${quoteIdent(m.column)} = ${valueParam(ctx, m.value, rel.columnMap.get(m.column)!.type)}`).join(' AND ')}`;
    }
    write = `INSERT INTO ${target}${cols ? ` (${cols})` : ''} ${values}`;
    if (mutation.onConflict) {
      const oc = mutation.onConflict;
      checkColumns(rel, oc.columns);
      const updates = mutation.columns.filter((c) => !oc.columns.includes(c));
      // Updating a key column to itself keeps DO UPDATE (and RETURNING) when only keys were sent.
      const set = (updates.length ? updates : oc.columns.slice(0, 1))
        .map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`)
        .join(', ');
      write += ` ON CONFLICT (${oc.columns.map(quoteIdent).join(', ')}) ${oc.resolution === 'merge' ? `DO UPDATE SET ${set}` : 'DO NOTHING'}`;
    }
  } else if (mutation.kind === 'update') {
    checkColumns(rel, mutation.columns);
    const set = mutation.columns.map((c) => `${quoteIdent(c)} = _hearth_body.${quoteIdent(c)}`).join(', ');
    write = `UPDATE ${target} SET ${set} FROM json_populate_record(NULL::${qualified(rel)}, ${jsonParam(ctx, mutation.patch)}) AS _hearth_body${where}`;
  } else {
    write = `DELETE FROM ${target}${where}`;
  }

  // An upsert that merges counts the rows it inserted (xmax = 0: not an updated row
  // version), so that one which only updated answers 200 as PostgREST does.
  const merging = mutation.kind === 'insert' && mutation.onConflict?.resolution === 'merge';
  const inserted = `(${root.alias}.xmax = 0) AS _hearth_inserted`;
  if (options.returning === 'minimal') {
    ctx.checkAllOptionsUsed();
    const text = merging
      ? `WITH hearth_source AS (${write} RETURNING ${inserted}) SELECT NULL::bigint AS total, count(*) AS page_total, NULL::text AS body, count(*) FILTER (WHERE _hearth_inserted) AS inserted FROM hearth_source`
      : `WITH hearth_source AS (${write} RETURNING 1) SELECT NULL::bigint AS total, count(*) AS page_total, NULL::text AS body FROM hearth_source`;
    return { statement: { text, values: ctx.values }, keys: [], source: null };
  }
  // The filters already chose the rows (in the write); the rows are shaped only.
  const em = emitNode(ctx, { ...root, options: NO_OPTIONS });
  ctx.checkAllOptionsUsed();
  const rows = `SELECT ${em.columns.join(', ')} FROM ${[`hearth_source AS ${root.alias}`, ...em.joins].join(' ')}${groupBySql(em)}`;
  const body = `count(*) AS page_total, ${bodySql(options.format, null)} AS body FROM (${rows}) _hearth_t`;
  // hearth_source keeps exactly the relation's columns: computed fields take its rows as the relation's row type.
  const text = merging
    ? `WITH hearth_write AS (${write} RETURNING ${root.alias}.*, ${inserted}), hearth_source AS (SELECT ${rel.columns.map((c) => quoteIdent(c.name)).join(', ')} FROM hearth_write) ` +
      `SELECT NULL::bigint AS total, (SELECT count(*) FILTER (WHERE _hearth_inserted) FROM hearth_write) AS inserted, ${body}`
    : `WITH hearth_source AS (${write} RETURNING ${root.alias}.*) SELECT NULL::bigint AS total, ${body}`;
  return { statement: { text, values: ctx.values }, keys: em.keys, source: null };
}

/**
 * PATCH/DELETE with limit/offset (PostgREST's limited update/delete): the
 * filtered rows, ordered and paged in a subquery, picked out by primary key
 * (or ctid on a table without one). Without order, which rows is unspecified.
 */
function limitedWhere(
  ctx: Context,
  root: Node,
  where: string,
  order: OrderTerm[],
  limit: number | null,
  offset: number | null,
): string {
  const rel = root.rel;
  const keys = rel.primaryKey.length ? rel.primaryKey.map(quoteIdent) : rel.kind === 'table' ? ['ctid'] : null;
  if (!keys) {
    throw fail('PGRST127', `limit and offset on an update or delete of '${rel.name}' need a primary key`, {
      details: `'${rel.name}' is a ${rel.kind} without a primary key, so its rows cannot be picked out one by one.`,
      hint: 'Select the rows with filters instead.',
    });
  }
  const orderBy = order.map((term) => {
    if (term.relation)
      throw fail('PGRST127', 'order on an embedded resource is not supported on writes', {
        hint: 'Order by columns of the table itself.',
      });
    return orderSql(term, fieldExpr(ctx, root, term.field));
  });
  const page =
    (limit !== null ? ` LIMIT ${ctx.param(limit)}` : '') + (offset !== null ? ` OFFSET ${ctx.param(offset)}` : '');
  const own = keys.map((k) => `${root.alias}.${k}`).join(', ');
  const chosen = `SELECT ${own} FROM ${qualified(rel)} AS ${root.alias}${where}${orderBy.length ? ` ORDER BY ${orderBy.join(', ')}` : ''}${page}`;
  return ` WHERE (${own}) IN (${chosen})`;
}

// ---------------------------------------------------------------- rpc

/**
 * named: the JSON object's keys are argument names. single: the whole body is
 * the one unnamed argument, as text (JSON, text/plain, text/xml) or bytes
 * (application/octet-stream into bytea).
 */
export type RpcArgs = { kind: 'named'; values: Record<string, unknown> } | { kind: 'single'; value: string | Buffer };

/** The relation a function's rows look like: its table, or its OUT/TABLE columns. */
function functionRelation(fn: RestFunction): Relation {
  if (fn.relation) return fn.relation;
  const columns =
    fn.returns === 'composite' ? fn.columns : [{ name: fn.name, type: fn.returnType, nullable: true, default: null }];
  return {
    schema: fn.schema,
    name: fn.name,
    kind: 'view',
    columns,
    columnMap: new Map(columns.map((c) => [c.name, c])),
    primaryKey: [],
    uniqueKeys: [],
    comment: null,
    computed: new Map(),
    writable: { insert: false, update: false, delete: false },
  };
}

/** `fn("a" := _hearth_args."a", ...)`, arguments typed by json_to_record from one JSON parameter. */
function callSql(ctx: Context, fn: RestFunction, args: RpcArgs): { call: string; argsFrom: string | null } {
  const name = qualified(fn);
  if (args.kind === 'single') {
    const value =
      typeof args.value === 'string'
        ? `${ctx.param(args.value)}::text::${fn.args[0].type}`
        : `${ctx.param(args.value)}::bytea`;
    return { call: `${name}(${value})`, argsFrom: null };
  }
  const given = fn.args.filter((a) => a.name in args.values);
  if (!given.length) return { call: `${name}()`, argsFrom: null };
  const record = given.map((a) => `${quoteIdent(a.name)} ${a.type}`).join(', ');
  return {
    call: `${name}(${given.map((a) => `${a.variadic ? 'VARIADIC ' : ''}${quoteIdent(a.name)} := _hearth_args.${quoteIdent(a.name)}`).join(', ')})`,
    argsFrom: `json_to_record(${jsonParam(ctx, args.values)}) AS _hearth_args(${record})`,
  };
}

export interface RpcPlan extends Plan {
  /** set: an array; single: one object or null; scalar: the bare value; void: no body. */
  shape: 'set' | 'single' | 'scalar' | 'void';
}

export function planRpc(
  cache: SchemaCache,
  fn: RestFunction,
  args: RpcArgs,
  parsed: ParsedQuery,
  options: ReadOptions,
): RpcPlan {
  const ctx = new Context(cache, parsed);
  const { call, argsFrom } = callSql(ctx, fn, args);
  const from = (item: string) => (argsFrom ? `${argsFrom} CROSS JOIN LATERAL ${item}` : item);
  if (fn.returns === 'void' || (fn.returns === 'scalar' && !fn.returnsSet)) {
    ctx.checkAllOptionsUsed();
    const isVoid = fn.returns === 'void';
    const text = isVoid
      ? `SELECT NULL::bigint AS total, count(*) AS page_total, NULL::text AS body FROM ${from(`(SELECT ${call}) _hearth_v`)}`
      : `SELECT NULL::bigint AS total, 1 AS page_total, to_json(_hearth_v.v)::text AS body FROM ${from(`(SELECT ${call} AS v) _hearth_v`)}`;
    return { statement: { text, values: ctx.values }, keys: [], source: null, shape: isVoid ? 'void' : 'scalar' };
  }
  const rel = functionRelation(fn);
  const root = resolveNode(ctx, rel, parsed.select, '');
  const scalar = fn.returns === 'scalar';
  const item = scalar ? `${call} AS ${root.alias}(${quoteIdent(fn.name)})` : `${call} AS ${root.alias}`;
  const plan = readStatement(ctx, root, {
    from: from(item),
    ...options,
    scalarColumn: scalar && options.format !== 'csv' ? fn.name : null,
  });
  return { ...plan, shape: fn.returnsSet ? 'set' : 'single' };
}
