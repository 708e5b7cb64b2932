/**
 * Text checks for management input. PostgreSQL cannot store some strings:
 * text refuses U+0000, and jsonb refuses the \u escape JSON.stringify writes
 * for an unpaired UTF-16 surrogate (in a text column the driver would silently
 * turn it into U+FFFD). Input is checked before it reaches the database, so
 * such a value is a 400 naming the field rather than a 500.
 */
import { HearthError } from '../errors.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function unstorableText(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain a NUL character (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must not contain an unpaired UTF-16 surrogate';
  return null;
}

/** The name of an organization or a project: 1-64 characters after trimming, storable. */
export function checkDisplayName(name: unknown): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 64) {
    throw new HearthError(400, 'invalid_name', 'name must be a non-empty string of at most 64 characters.');
  }
  const unstorable = unstorableText(name);
  if (unstorable) throw new HearthError(400, 'invalid_name', `name ${unstorable}.`);
  return name.trim();
}
