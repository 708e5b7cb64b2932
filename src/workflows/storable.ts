/**
 * What PostgreSQL cannot store of a JSON value taken from a request: a string
 * or key holding U+0000 or an unpaired UTF-16 surrogate (text and jsonb
 * refuse both), a number beyond a double (it would come back as null), or
 * nesting deeper than MAX_JSON_DEPTH (the jsonb parser runs
 * out of stack long before the body limit). Checked before anything is
 * written, so such input is a 400 that says where it is, never a 500.
 */
export const MAX_JSON_DEPTH = 512;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unstorableText(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain a NUL character (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must not contain an unpaired UTF-16 surrogate';
  return null;
}

/** Where and why `value` cannot be stored (`input.items[2] must not contain ...`), or null. */
export function unstorableJson(value: unknown, path: string): string | null {
  // Depth first without recursion, so a hostile nesting cannot overflow the stack here either.
  const pending: Array<[unknown, string, number]> = [[value, path, 1]];
  while (pending.length) {
    const [v, at, depth] = pending.pop()!;
    if (typeof v === 'string') {
      const why = unstorableText(v);
      if (why) return `${at} ${why}`;
    } else if (typeof v === 'number' && !Number.isFinite(v)) {
      // JSON.parse turns a number too large for a double (1e999) into Infinity, which JSON.stringify writes as null.
      return `${at} is a number too large to represent`;
    } else if (v !== null && typeof v === 'object') {
      if (depth > MAX_JSON_DEPTH) return `${at} is nested more than ${MAX_JSON_DEPTH} levels deep`;
      if (Array.isArray(v)) {
        v.forEach((item, i) => pending.push([item, `${at}[${i}]`, depth + 1]));
      } else {
        for (const [key, item] of Object.entries(v)) {
          const why = unstorableText(key);
          if (why) return `a key of ${at} ${why}`;
          pending.push([item, `${at}.${key}`, depth + 1]);
        }
      }
    }
  }
  return null;
}
