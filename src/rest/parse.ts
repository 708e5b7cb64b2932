/**
 * Query string -> AST for the /rest/v1 grammar (SPEC 4.3, PostgREST's syntax).
 * Pure: no schema knowledge here. Names are kept as written; plan.ts checks them
 * against the schema cache and quotes them. Every malformed input is a 400
 * PGRST100 whose message names the parameter and whose details say where.
 */
import { fail } from '../errors.ts';

export interface JsonStep {
  arrow: '->' | '->>';
  key: string;
}
export interface Field {
  name: string;
  json: JsonStep[];
}

export type SelectItem = StarItem | ColumnItem | AggregateItem | EmbedItem;
export interface StarItem {
  type: 'star';
}
export interface ColumnItem {
  type: 'column';
  field: Field;
  alias: string | null;
  cast: string | null;
}
export const AGGREGATES = ['count', 'sum', 'avg', 'max', 'min'] as const;
export type AggregateFn = (typeof AGGREGATES)[number];
/** `col.sum()`, `col::numeric.avg()::int`, `count()` (field null: every row). */
export interface AggregateItem {
  type: 'aggregate';
  fn: AggregateFn;
  field: Field | null;
  /** Cast of the value going in. */
  inputCast: string | null;
  alias: string | null;
  /** Cast of the aggregate's result. */
  cast: string | null;
}
export interface EmbedItem {
  type: 'embed';
  relation: string;
  alias: string | null;
  hint: string | null;
  join: 'inner' | 'left';
  spread: boolean;
  select: SelectItem[];
}

/** Operators that compile to `<expr> <sql> <value>`. */
export const BINARY_OPERATORS = {
  eq: '=',
  neq: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
  like: 'LIKE',
  ilike: 'ILIKE',
  match: '~',
  imatch: '~*',
  cs: '@>',
  cd: '<@',
  ov: '&&',
  sl: '<<',
  sr: '>>',
  nxr: '&<',
  nxl: '&>',
  adj: '-|-',
} as const;
export type BinaryOp = keyof typeof BINARY_OPERATORS;
const QUANTIFIABLE = new Set<string>(['eq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch']);
export const FTS_OPERATORS = {
  fts: 'to_tsquery',
  plfts: 'plainto_tsquery',
  phfts: 'phraseto_tsquery',
  wfts: 'websearch_to_tsquery',
} as const;
export type FtsOp = keyof typeof FTS_OPERATORS;

export type Operation =
  | { op: BinaryOp; quantifier: 'any' | 'all' | null; value: string }
  | { op: 'in'; values: string[] }
  | { op: 'is'; value: 'null' | 'true' | 'false' | 'unknown' }
  | { op: 'isdistinct'; value: string }
  | { op: FtsOp; config: string | null; value: string };

export interface Filter {
  type: 'filter';
  field: Field;
  negate: boolean;
  operation: Operation;
}
export interface Logic {
  type: 'logic';
  op: 'and' | 'or';
  negate: boolean;
  children: Condition[];
}
export type Condition = Filter | Logic;

export interface OrderTerm {
  /** Set for `order=rel(col)`: the to-one embed whose column orders the rows. */
  relation: string | null;
  field: Field;
  direction: 'asc' | 'desc' | null;
  nulls: 'first' | 'last' | null;
}

/** Options aimed at one node of the embed tree. */
export interface NodeOptions {
  conditions: Condition[];
  order: OrderTerm[] | null;
  limit: number | null;
  offset: number | null;
}

export interface ParsedQuery {
  select: SelectItem[];
  /** Keyed by embed path: '' is the root, 'posts.comments' a nested embed. */
  nodes: Map<string, NodeOptions>;
  columns: string[] | null;
  onConflict: string[] | null;
  /** RPC arguments taken from the query string (GET /rpc/fn), every value of a repeated key in order. */
  args: Map<string, string[]>;
}

const parseError = (what: string, raw: string, details: string) =>
  fail('PGRST100', `failed to parse ${what} (${raw})`, { details });

/** A tiny cursor over one parameter value; errors name the parameter. */
class Cursor {
  pos = 0;
  constructor(
    readonly src: string,
    readonly what: string,
  ) {}
  get done() {
    return this.pos >= this.src.length;
  }
  peek(s: string) {
    return this.src.startsWith(s, this.pos);
  }
  eat(s: string) {
    if (!this.peek(s)) return false;
    this.pos += s.length;
    return true;
  }
  expect(s: string) {
    if (!this.eat(s)) throw this.fail(`expected "${s}"`);
  }
  fail(expected: string) {
    const found = this.done ? 'end of input' : `"${this.src[this.pos]}"`;
    return parseError(this.what, this.src, `unexpected ${found} at position ${this.pos + 1}, ${expected}`);
  }
}

// Characters that end an unquoted name anywhere in the grammar.
const NAME_STOP = new Set(['.', ',', ':', '(', ')', '!', '"']);

/** A double-quoted string with backslash escapes; the cursor is on the opening quote. */
function readQuoted(c: Cursor): string {
  c.expect('"');
  let out = '';
  while (!c.done && !c.peek('"')) {
    if (c.peek('\\') && c.pos + 1 < c.src.length) c.pos++;
    out += c.src[c.pos++];
  }
  c.expect('"');
  return out;
}

// A JSON key may hold more, as in PostgREST: only these (and "->") end it.
const JSON_KEY_STOP = new Set(['.', ',', ':', '(', ')']);

/** A name: `"quoted"` (with backslash escapes) or a run of ordinary characters. */
function readName(c: Cursor, expected = 'expected a name', stop = NAME_STOP): string {
  if (c.peek('"')) {
    const out = readQuoted(c);
    if (out === '') throw c.fail(expected);
    return out;
  }
  const start = c.pos;
  while (!c.done && !stop.has(c.src[c.pos]) && !c.peek('->')) c.pos++;
  const name = c.src.slice(start, c.pos).trim();
  if (name === '' || name === '*') {
    c.pos = start;
    throw c.fail(expected);
  }
  return name;
}

function readJsonPath(c: Cursor): JsonStep[] {
  const steps: JsonStep[] = [];
  while (c.peek('->')) {
    if (steps.at(-1)?.arrow === '->>') throw c.fail('"->>" must be the last step of a JSON path');
    let arrow: '->' | '->>' = '->>';
    if (!c.eat('->>')) {
      c.expect('->');
      arrow = '->';
    }
    steps.push({ arrow, key: readName(c, 'expected a JSON key', JSON_KEY_STOP) });
  }
  return steps;
}

function readField(c: Cursor): Field {
  const name = readName(c, 'expected a column name');
  return { name, json: readJsonPath(c) };
}

// ---------------------------------------------------------------- select

export function parseSelect(raw: string): SelectItem[] {
  const c = new Cursor(raw, 'select parameter');
  if (raw.trim() === '') return [];
  const items = readSelectList(c, 0);
  if (!c.done) throw c.fail('expected "," or end of input');
  return items;
}

const CAST = /^[A-Za-z_][A-Za-z0-9_]*(\[\])?/;
const MAX_EMBED_DEPTH = 16;

function readSelectList(c: Cursor, depth: number): SelectItem[] {
  if (depth > MAX_EMBED_DEPTH) throw c.fail(`embeds nest at most ${MAX_EMBED_DEPTH} levels deep`);
  const items: SelectItem[] = [];
  do {
    items.push(readSelectItem(c, depth));
  } while (c.eat(','));
  return items;
}

function readSelectItem(c: Cursor, depth: number): SelectItem {
  if (c.eat('*')) return { type: 'star' };
  if (c.eat('...')) {
    const relation = readName(c, 'expected a relation to spread');
    return readEmbed(c, relation, null, true, depth);
  }
  let alias: string | null = null;
  let name = readName(c, 'expected a column, an embed or "*"');
  if (c.peek(':') && !c.peek('::')) {
    c.pos++;
    alias = name;
    if (c.peek('...')) throw c.fail('a spread takes no alias; alias its columns instead');
    name = readName(c, 'expected a column or an embed after the alias');
  }
  // count() counts rows, as in PostgREST, even where a relation is named count.
  if (name === 'count' && c.eat('()'))
    return { type: 'aggregate', fn: 'count', field: null, inputCast: null, alias, cast: readCast(c) };
  if (c.peek('!') || c.peek('(')) return readEmbed(c, name, alias, false, depth);
  const field: Field = { name, json: readJsonPath(c) };
  const cast = readCast(c);
  if (c.eat('.')) {
    const m = /^([a-z]+)\(\)/.exec(c.src.slice(c.pos));
    if (!m || !(AGGREGATES as readonly string[]).includes(m[1]))
      throw c.fail(`expected an aggregate function: ${AGGREGATES.map((a) => `${a}()`).join(', ')}`);
    c.pos += m[0].length;
    return { type: 'aggregate', fn: m[1] as AggregateFn, field, inputCast: cast, alias, cast: readCast(c) };
  }
  return { type: 'column', field, alias, cast };
}

/** An optional `::type` (letters, digits, _ and an optional []). */
function readCast(c: Cursor): string | null {
  if (!c.eat('::')) return null;
  const m = CAST.exec(c.src.slice(c.pos));
  if (!m) throw c.fail('expected a type name (letters, digits, _ and an optional []) after "::"');
  c.pos += m[0].length;
  return m[0];
}

function readEmbed(c: Cursor, relation: string, alias: string | null, spread: boolean, depth: number): EmbedItem {
  let hint: string | null = null;
  let join: 'inner' | 'left' | null = null;
  while (c.eat('!')) {
    const word = readName(c, 'expected a hint, "inner" or "left" after "!"');
    if (word === 'inner' || word === 'left') {
      if (join) throw c.fail('only one of !inner and !left may be given');
      join = word;
    } else {
      if (hint) throw c.fail('only one !hint may be given');
      hint = word;
    }
  }
  c.expect('(');
  const select = c.peek(')') ? [] : readSelectList(c, depth + 1);
  c.expect(')');
  return { type: 'embed', relation, alias, hint, join: join ?? 'left', spread, select };
}

// ---------------------------------------------------------------- filters

const OPERATOR_NAMES = [...Object.keys(BINARY_OPERATORS), 'in', 'is', 'isdistinct', ...Object.keys(FTS_OPERATORS)];

/** The right-hand side of a filter: `[not.]op[(modifier)].value`. */
export function parseOperation(raw: string, what = `filter`): { negate: boolean; operation: Operation } {
  const c = new Cursor(raw, what);
  const negate = c.eat('not.');
  const operation = readOperation(c, (cur) => cur.src.slice(cur.pos));
  return { negate, operation };
}

/**
 * Reads `op[(mod)].value`; readValue decides where the value ends (the rest of
 * the parameter at top level, the next "," or ")" inside a logic tree).
 */
function readOperation(c: Cursor, readValue: (c: Cursor) => string): Operation {
  const m = /^[a-z]+/.exec(c.src.slice(c.pos));
  const op = m?.[0] ?? '';
  if (!OPERATOR_NAMES.includes(op)) throw c.fail(`expected an operator (${OPERATOR_NAMES.join(', ')}) or "not."`);
  c.pos += op.length;

  let modifier: string | null = null;
  if (c.eat('(')) {
    const end = c.src.indexOf(')', c.pos);
    if (end < 0) throw c.fail('expected ")"');
    modifier = c.src.slice(c.pos, end);
    c.pos = end + 1;
  }
  c.expect('.');

  if (op === 'in') {
    if (modifier !== null) throw c.fail('"in" takes no modifier');
    return { op, values: readList(c) };
  }
  if (op in FTS_OPERATORS) {
    if (modifier !== null && !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(modifier)) {
      throw c.fail('expected a text search configuration name, such as fts(english)');
    }
    return { op: op as FtsOp, config: modifier, value: readValue(c) };
  }
  if (op === 'is') {
    const value = readValue(c).toLowerCase();
    if (value !== 'null' && value !== 'true' && value !== 'false' && value !== 'unknown') {
      throw c.fail('"is" accepts null, true, false or unknown');
    }
    if (modifier !== null) throw c.fail('"is" takes no modifier');
    return { op: 'is', value };
  }
  if (op === 'isdistinct') {
    if (modifier !== null) throw c.fail('"isdistinct" takes no modifier');
    return { op, value: readValue(c) };
  }
  let quantifier: 'any' | 'all' | null = null;
  if (modifier !== null) {
    if ((modifier !== 'any' && modifier !== 'all') || !QUANTIFIABLE.has(op)) {
      throw c.fail(
        `"${op}" accepts only the modifiers (any) and (all), and only eq, gt, gte, lt, lte, like, ilike, match, imatch take one`,
      );
    }
    quantifier = modifier;
  }
  return { op: op as BinaryOp, quantifier, value: readValue(c) };
}

/** `(a,b,"c,d")`: items may be double-quoted with backslash escapes. */
function readList(c: Cursor): string[] {
  c.expect('(');
  const values: string[] = [];
  if (c.eat(')')) return values;
  do {
    values.push(readListValue(c, [',', ')']));
  } while (c.eat(','));
  c.expect(')');
  return values;
}

/** One value ending before any of `stops`; a double-quoted value may hold them. */
function readListValue(c: Cursor, stops: string[]): string {
  if (c.peek('"')) return readQuoted(c);
  const start = c.pos;
  let depth = 0; // braces of array and range literals may hold commas: {1,2}
  while (!c.done) {
    const ch = c.src[c.pos];
    if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if (depth <= 0 && stops.includes(ch)) break;
    c.pos++;
  }
  return c.src.slice(start, c.pos);
}

// ---------------------------------------------------------------- logic trees

/** `(a.eq.1,b.gt.2,and(c.is.null,not.d.eq.4))` for `or=` / `and=`. */
export function parseLogic(op: 'and' | 'or', negate: boolean, raw: string): Logic {
  const c = new Cursor(raw, 'logic tree');
  const children = readLogicChildren(c, 0);
  if (!c.done) throw c.fail('expected end of input after ")"');
  return { type: 'logic', op, negate, children };
}

function readLogicChildren(c: Cursor, depth: number): Condition[] {
  if (depth > MAX_EMBED_DEPTH) throw c.fail(`logic trees nest at most ${MAX_EMBED_DEPTH} levels deep`);
  c.expect('(');
  const children: Condition[] = [];
  do {
    children.push(readLogicChild(c, depth));
  } while (c.eat(','));
  c.expect(')');
  return children;
}

function readLogicChild(c: Cursor, depth: number): Condition {
  const start = c.pos;
  const negate = c.eat('not.');
  for (const op of ['and', 'or'] as const) {
    if (c.peek(`${op}(`)) {
      c.pos += op.length;
      return { type: 'logic', op, negate, children: readLogicChildren(c, depth + 1) };
    }
  }
  if (negate) c.pos = start; // "not" was a column name: not.eq.1
  const field = readField(c);
  c.expect('.');
  const childNegate = c.eat('not.');
  const operation = readOperation(c, (cur) => readListValue(cur, [',', ')']));
  return { type: 'filter', field, negate: childNegate, operation };
}

// ---------------------------------------------------------------- order, limit

export function parseOrder(raw: string): OrderTerm[] {
  const c = new Cursor(raw, 'order parameter');
  const terms: OrderTerm[] = [];
  do {
    let relation: string | null = null;
    let field = readField(c);
    if (field.json.length === 0 && c.eat('(')) {
      relation = field.name;
      field = readField(c);
      c.expect(')');
    }
    let direction: OrderTerm['direction'] = null;
    let nulls: OrderTerm['nulls'] = null;
    while (c.eat('.')) {
      if (!direction && !nulls && c.eat('asc')) direction = 'asc';
      else if (!direction && !nulls && c.eat('desc')) direction = 'desc';
      else if (!nulls && c.eat('nullsfirst')) nulls = 'first';
      else if (!nulls && c.eat('nullslast')) nulls = 'last';
      else {
        throw c.fail('expected asc, desc, nullsfirst or nullslast');
      }
    }
    terms.push({ relation, field, direction, nulls });
    if (!c.done && !c.peek(',')) throw c.fail('expected "," or a direction');
  } while (c.eat(','));
  if (!c.done) throw c.fail('expected end of input');
  return terms;
}

/** Past this a limit changes nothing (reads stop at MAX_LIMIT) and an offset finds no rows. */
const COUNT_CEILING = 1e15;

function parseCount(what: 'limit' | 'offset', raw: string): number {
  if (!/^\d+$/.test(raw)) {
    throw parseError(`${what} parameter`, raw, `${what} must be a non-negative integer`);
  }
  // Any integer is valid, as in PostgREST: a huge one is clamped, not refused.
  return Math.min(Number(raw), COUNT_CEILING);
}

/** `a,b,"c d"`: the columns= and on_conflict= lists. */
function parseNameList(what: string, raw: string): string[] {
  const c = new Cursor(raw, what);
  const names: string[] = [];
  do {
    names.push(readName(c, 'expected a column name'));
  } while (c.eat(','));
  if (!c.done) throw c.fail('expected "," or end of input');
  return names;
}

// ---------------------------------------------------------------- the whole query

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;

/**
 * A filter's value on GET /rpc/fn, read as PostgREST reads it: an operator
 * expression (`eq.1`, `not.in.(1,2)`) filters the function's result; anything
 * else is an argument, unless it starts like one and is malformed (`not.`,
 * `in.`, `is.`, `isdistinct.` followed by nonsense is 400, as there).
 */
function rpcFilterOrArgument(key: string, value: string): ReturnType<typeof parseOperation> | null {
  try {
    return parseOperation(value, `filter ${key}`);
  } catch (err) {
    if (/^(not|in|is|isdistinct)\./.test(value)) throw err;
    return null;
  }
}

/**
 * Splits the query string into parameters per embed path. With `rpcRead` (GET
 * /rpc/fn) a top-level parameter whose value is not an operator expression is
 * a function argument, not a filter.
 */
export function parseQuery(query: URLSearchParams, rpcRead = false): ParsedQuery {
  const parsed: ParsedQuery = {
    select: [{ type: 'star' }],
    nodes: new Map(),
    columns: null,
    onConflict: null,
    args: new Map(),
  };
  const node = (path: string) => {
    let n = parsed.nodes.get(path);
    if (!n) parsed.nodes.set(path, (n = { conditions: [], order: null, limit: null, offset: null }));
    return n;
  };
  node('');
  let selectSeen = false;
  for (const [key, value] of query) {
    // Postgres text cannot hold NUL; refuse it here rather than as a protocol error.
    if (key.includes('\u0000') || value.includes('\u0000')) {
      // The message shows NUL escaped.
      const nul = /\0/g;
      throw parseError(
        `parameter ${key.replace(nul, '\\0')}`,
        value.replace(nul, '\\0'),
        'the query string contains a NUL character',
      );
    }
    if (key === 'select') {
      if (selectSeen) throw parseError('select parameter', value, 'select may be given only once');
      selectSeen = true;
      parsed.select = parseSelect(value);
      continue;
    }
    if (key === 'columns') {
      parsed.columns = parseNameList('columns parameter', value);
      continue;
    }
    if (key === 'on_conflict') {
      parsed.onConflict = parseNameList('on_conflict parameter', value);
      continue;
    }
    const { path, last } = splitKey(key);
    const target = node(path);
    if (last === 'order') target.order = parseOrder(value);
    // An empty limit or offset is no limit or offset, as in PostgREST.
    else if (last === 'limit') target.limit = value === '' ? null : parseCount('limit', value);
    else if (last === 'offset') target.offset = value === '' ? null : parseCount('offset', value);
    else if (/^(not\.)?(and|or)$/.test(last)) {
      const negate = last.startsWith('not.');
      target.conditions.push(
        parseLogic(negate ? (last.slice(4) as 'and' | 'or') : (last as 'and' | 'or'), negate, value),
      );
    } else {
      const field = parseFilterField(last, key);
      const filter = rpcRead && path === '' ? rpcFilterOrArgument(key, value) : parseOperation(value, `filter ${key}`);
      if (filter) target.conditions.push({ type: 'filter', field, ...filter });
      else parsed.args.set(key, [...(parsed.args.get(key) ?? []), value]);
    }
  }
  return parsed;
}

const RESERVED_LAST = /^(order|limit|offset|(not\.)?(and|or))$/;

/** `posts.comments.body` -> path `posts.comments`, last `body`; JSON arrows stay in last. */
function splitKey(key: string): { path: string; last: string } {
  if (RESERVED_LAST.test(key)) return { path: '', last: key };
  const m = /^(.*?)\.((?:not\.)?(?:and|or)|order|limit|offset)$/.exec(key);
  if (m && !m[1].includes('->')) return { path: m[1].split('.').map(unquote).join('.'), last: m[2] };
  const c = new Cursor(key, 'filter');
  const segments: string[] = [];
  let start = 0;
  for (;;) {
    readName(c, 'expected a column name');
    if (!c.peek('.')) break;
    segments.push(key.slice(start, c.pos));
    c.pos++;
    start = c.pos;
  }
  return { path: segments.map(unquote).join('.'), last: key.slice(start) };
}

const unquote = (s: string) => (s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s);

function parseFilterField(raw: string, key: string): Field {
  const c = new Cursor(raw, `filter ${key}`);
  const field = readField(c);
  if (!c.done) throw c.fail('expected "=" and an operator after the column');
  return field;
}
