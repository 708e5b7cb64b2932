/**
 * A changed row's values as realtime reads them: filters compare by the
 * column's PostgreSQL type (Supabase Realtime casts a filter's value to the
 * column's type), and numbers too long for a JS number keep their digits.
 *
 * A filter's value is cast by PostgreSQL once, at join (so every spelling
 * PostgreSQL accepts works, and a bad one is refused there); each change then
 * only reads the row's value (to_jsonb's form) and compares.
 */
import type { Sql } from '../db/pools.ts';

/** How a column's values compare. Types not listed (text, varchar, enums, json, ...) compare as text. */
export type Kind = 'int' | 'float' | 'numeric' | 'bool' | 'uuid' | 'instant' | 'citext' | 'text';
const KINDS = new Map<string, Kind>([
  ['int2', 'int'],
  ['int4', 'int'],
  ['int8', 'int'],
  ['oid', 'int'],
  ['float4', 'float'],
  ['float8', 'float'],
  ['numeric', 'numeric'],
  ['bool', 'bool'],
  ['uuid', 'uuid'],
  ['date', 'instant'],
  ['timestamp', 'instant'],
  ['timestamptz', 'instant'],
  // (citext compares its values lower-cased.)
  ['citext', 'citext'],
]);

interface Decimal {
  /** -1 -Infinity, 0 a number, 1 Infinity, 2 NaN (PostgreSQL sorts NaN above everything). */
  rank: number;
  m: bigint;
  e: number;
  /** The same value as a JS number, when that is exact (15 digits or fewer). */
  approx?: number;
}
/** A point in time: milliseconds since 1970 (UTC, or wall time for timestamp and date) and the microseconds left. */
type Instant = [number, number];
export type Key = bigint | number | boolean | string | Decimal | Instant;

export function kindOf(type: string | undefined): Kind {
  return (type && KINDS.get(type)) || 'text';
}

export class CastError extends Error {}

/**
 * The filter's values as keys of the column's kind, cast by PostgreSQL.
 * Times are read in UTC, as Supabase's database reads them (an offset in the
 * value wins; a timestamp without time zone ignores it, as PostgreSQL does).
 */
export async function castValues(sql: Sql, type: string, kind: Kind, values: string[]): Promise<Key[]> {
  if (kind === 'text') return values;
  if (kind === 'citext') return values.map((v) => v.toLowerCase());
  try {
    const [, rows] = await sql.begin((tx) => [
      tx`set local timezone to 'UTC'`,
      // `type` is one of KINDS' names (checked by kind), never text from the request.
      tx.unsafe(`select to_jsonb(v::pg_catalog.${type}) #>> '{}' as v from unnest($1::text[]) v`, [values]),
    ]);
    return (rows as unknown as { v: string }[]).map((r) => readKey(kind, r.v)!);
  } catch (err) {
    const code = (err as { code?: string }).code;
    // Class 22 is data exception: invalid input syntax, out of range.
    if (typeof code === 'string' && code.startsWith('22')) throw new CastError((err as Error).message);
    throw err;
  }
}

/** A row's value (as JSON.parse gave it) as a key, or null when it is SQL null. */
export function readKey(kind: Kind, v: unknown): Key | null {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'int':
      return typeof v === 'number' ? v : BigInt(unmark(String(v)));
    case 'float':
      return typeof v === 'number' ? v : Number(unmark(String(v)));
    case 'numeric':
      return typeof v === 'number' ? v : decimal(unmark(String(v)));
    case 'bool':
      return v === true || v === 'true';
    case 'instant':
      return instant(String(v));
    case 'citext':
      return unmark(String(v)).toLowerCase();
    default:
      return typeof v === 'string' ? unmark(v) : typeof v === 'object' ? restoreNumbers(JSON.stringify(v)) : String(v);
  }
}

function cmp<T>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Row value against filter value: negative, 0 or positive. */
export function compareKeys(kind: Kind, row: Key, wanted: Key): number {
  switch (kind) {
    case 'float': {
      const a = row as number;
      const b = wanted as number;
      return Number.isNaN(a) || Number.isNaN(b) ? cmp(Number.isNaN(a), Number.isNaN(b)) : cmp(a, b);
    }
    case 'numeric': {
      const w = wanted as Decimal;
      if (typeof row === 'number' && w.approx !== undefined) return cmp(row, w.approx);
      return compareDecimals(typeof row === 'number' ? decimal(String(row))! : (row as Decimal), w);
    }
    case 'instant': {
      const a = row as Instant;
      const b = wanted as Instant;
      return cmp(a[0], b[0]) || cmp(a[1], b[1]);
    }
    default:
      // bigint and number compare exactly with each other; false < true; uuids are lower-case text.
      return cmp(row, wanted);
  }
}

const SPECIAL: Record<string, number> = { '-Infinity': -1, Infinity: 1, NaN: 2 };
const DECIMAL = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

function decimal(text: string): Decimal | null {
  if (Object.hasOwn(SPECIAL, text)) return { rank: SPECIAL[text]!, m: 0n, e: 0 };
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const frac = m[3] ?? '';
  const d: Decimal = { rank: 0, m: BigInt(m[1]! + (m[2] || '0') + frac), e: Number(m[4] ?? 0) - frac.length };
  if (text.replace(/\D/g, '').length <= 15) d.approx = Number(text);
  return d;
}

function compareDecimals(a: Decimal, b: Decimal): number {
  if (a.rank || b.rank) return cmp(a.rank, b.rank);
  const d = a.e - b.e;
  return d >= 0 ? cmp(a.m * 10n ** BigInt(d), b.m) : cmp(a.m, b.m * 10n ** BigInt(-d));
}

// to_jsonb's forms: 2024-06-01, 2024-06-01T10:00:00.123456, 2024-06-01T10:00:00+02:00, ... BC, infinity.
const INSTANT =
  /^(\d{4,})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?)?(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?( BC)?$/;

function instant(text: string): Instant | null {
  if (text === 'infinity' || text === '-infinity') return [text === 'infinity' ? Infinity : -Infinity, 0];
  const m = INSTANT.exec(text);
  if (!m) return null;
  const n = (i: number) => Number(m[i] ?? 0);
  const d = new Date(0);
  // (setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.)
  d.setUTCFullYear(m[12] ? 1 - n(1) : n(1), n(2) - 1, n(3));
  d.setUTCHours(n(4), n(5), n(6));
  const frac = (m[7] ?? '').padEnd(6, '0');
  const offset = m[8] ? (m[8] === '-' ? -1 : 1) * ((n(9) * 60 + n(10)) * 60 + n(11)) * 1000 : 0;
  return [d.getTime() + Number(frac.slice(0, 3)) - offset, Number(frac.slice(3))];
}

// ---- exact numbers

/**
 * JSON.parse turns a number of 16 digits or more into the nearest double
 * (9223372036854775807 becomes 9223372036854775808). A change whose text holds
 * such a literal is parsed again with those literals as marked strings
 * ("\u0000" and the digits: PostgreSQL text and jsonb never hold U+0000), and
 * `restoreNumbers` turns them back into the same literals in the JSON sent on.
 * Other changes keep their plain JSON.parse (the test costs one regex scan).
 */
const LONG_NUMBER = /\d[\d.]{15}/;
const STRING_OR_LONG_NUMBER = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d[\d.]{15,}(?:[eE][+-]?\d+)?/g;

/** The change's JSON parsed with its long numbers marked, or null when it has none. */
export function parseExact(text: string): Record<string, unknown> | null {
  if (!LONG_NUMBER.test(text)) return null;
  return JSON.parse(text.replace(STRING_OR_LONG_NUMBER, (t) => (t[0] === '"' ? t : `"\\u0000${t}"`)));
}

export function restoreNumbers(json: string): string {
  return json.includes('\\u0000') ? json.replace(/"\\u0000([^"]*)"/g, '$1') : json;
}

function unmark(text: string): string {
  return text.charCodeAt(0) === 0 ? text.slice(1) : text;
}
