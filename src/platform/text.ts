/**
 * Text and JSON checks for management input. PostgreSQL cannot store some
 * strings: text refuses U+0000, and jsonb refuses the \u escape JSON.stringify
 * writes for an unpaired UTF-16 surrogate (in a text column the driver would
 * silently turn it into U+FFFD). Of JSON it also cannot keep a number beyond a
 * double (it would come back as null), and nesting deeper than MAX_JSON_DEPTH
 * runs the jsonb parser out of stack long before the body limit. Input is
 * checked before it reaches the database, so such a value is a 400 naming the
 * field rather than a 500.
 */
import { fail } from '../errors.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function unstorableText(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain a NUL character (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must not contain an unpaired UTF-16 surrogate';
  return null;
}

/**
 * Why an outbound URL cannot be saved as written, or null. A URL parser drops
 * white space around it and tabs or newlines inside it, and percent-encodes a
 * space or control character elsewhere, so the URL called would not be the
 * one saved and shown: such a URL is refused rather than silently changed.
 */
export function urlNotAsWritten(url: string): string | null {
  if (/[\s\p{Cc}]/u.test(url))
    return 'holds white space or a control character, which would not be sent as written; percent-encode it (a space is %20)';
  return unstorableText(url);
}

export const MAX_JSON_DEPTH = 512;

/** A path for a message: a deep one keeps its start and end (the whole could run to kilobytes). */
const shown = (path: string) => (path.length > 200 ? `${path.slice(0, 120)}…${path.slice(-60)}` : path);

/** Where and why `value` cannot be stored (`input.items[2] must not contain ...`), or null. */
export function unstorableJson(value: unknown, path: string): string | null {
  // Depth first without recursion, so a hostile nesting cannot overflow the stack here either.
  const pending: Array<[unknown, string, number]> = [[value, path, 1]];
  while (pending.length) {
    const [v, at, depth] = pending.pop()!;
    if (typeof v === 'string') {
      const why = unstorableText(v);
      if (why) return `${shown(at)} ${why}`;
    } else if (typeof v === 'number' && !Number.isFinite(v)) {
      // JSON.parse turns a number too large for a double (1e999) into Infinity, which JSON.stringify writes as null.
      return `${shown(at)} is a number too large to represent`;
    } else if (v !== null && typeof v === 'object') {
      if (depth > MAX_JSON_DEPTH) return `${shown(at)} is nested more than ${MAX_JSON_DEPTH} levels deep`;
      if (Array.isArray(v)) {
        v.forEach((item, i) => {
          pending.push([item, `${at}[${i}]`, depth + 1]);
        });
      } else {
        for (const [key, item] of Object.entries(v)) {
          const why = unstorableText(key);
          if (why) return `a key of ${shown(at)} ${why}`;
          pending.push([item, `${at}.${key}`, depth + 1]);
        }
      }
    }
  }
  return null;
}

/**
 * The name of an organization or a project: 1-64 characters (code points, so
 * an emoji is one) after trimming, storable, and without control characters
 * (a newline or an escape sequence in a name would garble the CLI's tables).
 */
export function checkDisplayName(name: unknown): string {
  if (typeof name !== 'string' || name.trim().length === 0 || [...name].length > 64) {
    throw fail('invalid_name', 'name must be a non-empty string of at most 64 characters.');
  }
  const unstorable = unstorableText(name);
  if (unstorable) throw fail('invalid_name', `name ${unstorable}.`);
  if (/\p{Cc}/u.test(name)) throw fail('invalid_name', 'name must not contain control characters (newlines, tabs…).');
  return name.trim();
}

/** A misspelt field (`organisation_id`, `descripton`) is refused rather than silently ignored. */
export function refuseUnknownFields(body: object, known: readonly string[], what: string): void {
  const unknown = Object.keys(body).find((f) => !known.includes(f));
  if (unknown !== undefined)
    throw fail('unknown_field', `${what} has no field "${unknown}"; it takes ${known.join(', ')}.`);
}
