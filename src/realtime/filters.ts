/**
 * postgres_changes filters, as Supabase Realtime reads them (its
 * parse_subscription_params and realtime.check_equality_op, PostgREST's
 * operators): `column=[not.]op.value` conditions joined by commas, all of
 * which must hold (AND). Operators: eq, neq, lt, lte, gt, gte, in, like,
 * ilike, is, match, imatch, isdistinct; `not.` negates any of them. A value
 * may be double-quoted ("b,c" is the value b,c; backslash escapes); an `in`
 * list is a PostgreSQL array literal in parentheses, read by PostgreSQL.
 *
 * Values are cast to the column's type by PostgreSQL at join and compared in
 * Node by that type (values.ts); like, ilike, match and imatch are evaluated
 * by PostgreSQL (its LIKE and its POSIX regular expressions, with a statement
 * timeout), the row's value and the pattern bound as parameters.
 */
import type { Sql } from '../db/pools.ts';
import type { Relation } from './relations.ts';
import { CastError, castValues, compareKeys, type Key, type Kind, kindOf, readKey } from './values.ts';

const OPS = ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in', 'like', 'ilike', 'is', 'match', 'imatch', 'isdistinct'];
const PATTERN_OPS = new Set(['like', 'ilike', 'match', 'imatch']);
const IS_VALUES = new Set(['null', 'true', 'false', 'unknown']);
/** Column types like/ilike/match/imatch apply to (citext's operators ignore case, as in PostgreSQL). */
const TEXT_TYPES = new Set(['text', 'varchar', 'bpchar', 'name', 'citext']);
/** Supabase's bound on an `in` list. */
const MAX_IN_VALUES = 100;
/** A pattern check (PostgreSQL regex) that runs longer than this does not match. */
const PATTERN_TIMEOUT_MS = 1000;

/** A binding the join refuses (InvalidPostgresChanges), with the reason. */
export class BindingError extends Error {}

export interface Condition {
  column: string;
  op: string;
  negate: boolean;
  kind: Kind;
  /** eq ... gte, isdistinct: one value; in: the list's non-null values (read as the column's type). */
  keys: Key[];
  /** An `in` list holding NULL: `x in (1, null)` is never false, only true or null. */
  inHasNull: boolean;
  /** is: null, true, false or unknown. like, ilike, match, imatch: the pattern, and the operator PostgreSQL applies. */
  text: string;
  sqlOp: string;
}

/** A filter's conditions as written, before they are checked against the table. */
interface RawCondition {
  column: string;
  op: string;
  negate: boolean;
  value: string;
}

/** Splits on commas outside double quotes and parentheses (Supabase's split_top_level). */
function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  let prev = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '\\' && i + 1 < text.length) {
        current += ch + text[++i];
        prev = text[i]!;
        continue;
      }
      if (ch === '"') quoted = false;
      current += ch;
      prev = ch;
      continue;
    }
    // A quote opens a quoted value only where a value starts: after `.`, `(` or `,`.
    if (ch === '"' && (prev === '.' || prev === '(' || prev === ',')) quoted = true;
    else if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (ch === ',' && depth === 0) {
      out.push(current);
      current = '';
      prev = '';
      continue;
    }
    current += ch;
    prev = ch;
  }
  out.push(current);
  return out;
}

/** "a\"b" is a"b; a value that is not wholly one quoted string stays as written. */
function unquote(value: string): string {
  if (!value.startsWith('"')) return value;
  let out = '';
  for (let i = 1; i < value.length; i++) {
    const ch = value[i]!;
    if (ch === '\\' && i + 1 < value.length) out += value[++i];
    else if (ch === '"') return i === value.length - 1 ? out : value;
    else out += ch;
  }
  return value;
}

/** The conditions of a filter string; an empty (or blank) filter has none. */
function parseFilterText(filter: string): RawCondition[] {
  if (!filter.trim()) return [];
  return splitTopLevel(filter.trim()).map((segment) => {
    const s = segment.trim();
    if (!s) throw new BindingError(`filter "${filter.slice(0, 100)}" has an empty condition (check for extra commas)`);
    const eq = s.indexOf('=');
    const dot = eq < 0 ? -1 : s.indexOf('.', eq + (s.startsWith('not.', eq + 1) ? 5 : 1));
    if (eq <= 0 || dot < 0)
      throw new BindingError(
        `filter condition "${s.slice(0, 100)}" must be column=op.value or column=not.op.value, with op one of ${OPS.join(', ')}`,
      );
    const column = s.slice(0, eq);
    const negate = s.startsWith('not.', eq + 1);
    const op = s.slice(eq + 1 + (negate ? 4 : 0), dot);
    if (!OPS.includes(op))
      throw new BindingError(
        `filter operator "${op.slice(0, 50)}" in "${s.slice(0, 100)}" is not one of ${OPS.join(', ')} (optionally after not.)`,
      );
    let value = s.slice(dot + 1);
    if (op === 'in') {
      if (!(value.length >= 2 && value.startsWith('(') && value.endsWith(')')))
        throw new BindingError(`an "in" filter takes a list in parentheses, e.g. id=in.(1,2,3) ("${s.slice(0, 100)}")`);
      value = `{${value.slice(1, -1)}}`;
    } else value = unquote(value);
    return { column, op, negate, value };
  });
}

async function arrayElements(sql: Sql, literal: string): Promise<(string | null)[]> {
  try {
    const rows = await sql`select e from unnest(${literal}::text[]) e`;
    return rows.map((r) => r.e as string | null);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('22')) throw new CastError((err as Error).message);
    throw err;
  }
}

/**
 * Checks a pattern as PostgreSQL reads it: a regular expression must compile;
 * a LIKE pattern must not end with its escape character (PostgreSQL's one
 * LIKE error, raised only when matching reaches it).
 */
async function checkPattern(sql: Sql, op: string, pattern: string): Promise<void> {
  if (op === 'like' || op === 'ilike') {
    for (let i = 0; i < pattern.length; i++)
      if (pattern[i] === '\\' && ++i === pattern.length)
        throw new BindingError(`invalid pattern for ${op} filter: LIKE pattern must not end with escape character`);
    return;
  }
  try {
    await sql`select '' ~ ${pattern}`;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('22'))
      throw new BindingError(`invalid pattern for ${op} filter: ${(err as Error).message}`);
    throw err;
  }
}

const SQL_OPS: Record<string, string> = { like: '~~', ilike: '~~*', match: '~', imatch: '~*' };
/** citext's LIKE and regex operators ignore case. */
const CITEXT_OPS: Record<string, string> = { like: '~~*', ilike: '~~*', match: '~*', imatch: '~*' };

/** The filter's conditions checked against the table: columns exist, values are of their types. */
export async function checkFilter(filter: string, rel: Relation, sql: Sql): Promise<Condition[]> {
  const out: Condition[] = [];
  for (const raw of parseFilterText(filter)) {
    const { column, op, negate, value } = raw;
    const col = rel.columns.find((c) => c.name === column);
    if (!col)
      throw new BindingError(`filter column "${column.slice(0, 100)}" does not exist in ${rel.schema}.${rel.table}`);
    const kind = kindOf(col.type);
    const cond: Condition = { column, op, negate, kind, keys: [], inHasNull: false, text: '', sqlOp: '' };
    if (op === 'is') {
      if (!IS_VALUES.has(value))
        throw new BindingError(`invalid value for is filter on "${column}": must be null, true, false, or unknown`);
      if (value !== 'null' && kind !== 'bool')
        throw new BindingError(`is ${value} filter requires a boolean column; "${column}" is ${col.type}`);
      cond.text = value;
    } else if (PATTERN_OPS.has(op)) {
      if (!TEXT_TYPES.has(col.type))
        throw new BindingError(
          `operator ${op} requires a text column (text, varchar, char, name, citext); "${column}" is ${col.type}`,
        );
      await checkPattern(sql, op, value);
      cond.text = value;
      cond.sqlOp = (col.type === 'citext' ? CITEXT_OPS : SQL_OPS)[op]!;
    } else {
      try {
        let values = [value];
        if (op === 'in') {
          const elements = await arrayElements(sql, value);
          if (elements.length > MAX_IN_VALUES)
            throw new BindingError(`too many values for "in" filter on "${column}": at most ${MAX_IN_VALUES}`);
          cond.inHasNull = elements.includes(null);
          values = elements.filter((e) => e !== null);
        }
        cond.keys = await castValues(sql, col.type, kind, values);
      } catch (err) {
        if (!(err instanceof CastError)) throw err;
        throw new BindingError(`filter value for "${column}" is not a valid ${col.type}: ${err.message}`);
      }
    }
    out.push(cond);
  }
  return out;
}

/** A pattern condition to be evaluated by PostgreSQL: the row's value as text, the operator, the pattern. */
export interface PatternTest {
  value: string;
  sqlOp: string;
  pattern: string;
  negate: boolean;
}

/**
 * The conditions that Node can decide, on one row: false when one fails;
 * otherwise the pattern tests still to pass (none: the row matches).
 */
export function evaluate(conditions: Condition[], row: Record<string, unknown> | undefined): PatternTest[] | false {
  if (!row) return false;
  const tests: PatternTest[] = [];
  for (const c of conditions) {
    // A column the subscriber is not sent (a DELETE's old record under RLS) matches nothing, negated or not.
    if (!(c.column in row)) return false;
    const v = readKey(c.kind, row[c.column]);
    if (PATTERN_OPS.has(c.op)) {
      if (v === null) return false; // SQL null: null, not true
      tests.push({ value: String(v), sqlOp: c.sqlOp, pattern: c.text, negate: c.negate });
      continue;
    }
    const result = holds(c, v);
    // SQL's three values: null (unknown) is not true, negated or not.
    if (result === null || result === c.negate) return false;
  }
  return tests;
}

function holds(c: Condition, v: Key | null): boolean | null {
  switch (c.op) {
    case 'is':
      if (c.text === 'null' || c.text === 'unknown') return v === null;
      return v === (c.text === 'true');
    case 'isdistinct':
      return v === null || compareKeys(c.kind, v, c.keys[0]!) !== 0;
    case 'in':
      if (v === null) return null;
      if (c.keys.some((w) => compareKeys(c.kind, v, w) === 0)) return true;
      return c.inHasNull ? null : false;
  }
  if (v === null) return null;
  const d = compareKeys(c.kind, v, c.keys[0]!);
  switch (c.op) {
    case 'eq':
      return d === 0;
    case 'neq':
      return d !== 0;
    case 'lt':
      return d < 0;
    case 'lte':
      return d <= 0;
    case 'gt':
      return d > 0;
    default:
      return d >= 0;
  }
}

/**
 * Runs pattern tests in PostgreSQL, all in one statement, and says which
 * passed. The values and patterns are bound parameters; the operator is one
 * of four fixed ones. A statement timeout bounds a costly regular expression:
 * past it, none of the tests pass.
 */
export async function runPatternTests(sql: Sql, tests: PatternTest[]): Promise<boolean[]> {
  if (!tests.length) return [];
  try {
    const [, rows] = await sql.begin((tx) => [
      tx`select set_config('statement_timeout', ${`${PATTERN_TIMEOUT_MS}ms`}, true)`,
      tx`select coalesce(array_agg(i order by i), '{}') as ok from unnest(
          ${tests.map((t) => t.value)}::text[], ${tests.map((t) => t.sqlOp)}::text[],
          ${tests.map((t) => t.pattern)}::text[], ${tests.map((t) => (t.negate ? 't' : 'f'))}::text[]
        ) with ordinality as t(v, op, p, neg, i)
        where (case op when '~~' then v like p when '~~*' then v ilike p when '~' then v ~ p else v ~* p end) <> (neg = 't')`,
    ]);
    const ok = new Set((rows as unknown as { ok: (number | string)[] }[])[0]!.ok.map(Number));
    return tests.map((_, i) => ok.has(i + 1));
  } catch (err) {
    if ((err as { code?: string }).code === '57014') return tests.map(() => false); // statement timeout
    throw err;
  }
}
