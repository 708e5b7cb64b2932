/**
 * Input rules of the auth endpoints: e-mail shape, password length (SPEC 8:
 * 10-128 characters) and the leaked-password refusal (SPEC 5).
 */
import { fail, HearthError } from '../errors.ts';
import { isLeakedPassword } from './leaked.ts';

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 128;

/**
 * GoTrue's address format (the dot-atom of RFC 5322: ASCII letters, digits and
 * !#$%&'*+/=?^_`{|}~.- before the `@`; host-name labels after it), plus a dot
 * in the domain. Nothing a mail header could read as a display name, a group
 * or a second recipient (`<`, `,`, `;`, `:`, quotes, white space) gets in.
 */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const EMAIL = new RegExp(`^[A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-]+@${LABEL}(?:\\.${LABEL})+$`);

export const invalid = (message: string) => fail('validation_failed', message);

/** Deeper JSON than any auth request needs; also keeps JSON.stringify of metadata off the stack limit. */
const MAX_DEPTH = 32;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** U+0000 or a lone UTF-16 surrogate: PostgreSQL's text and jsonb cannot hold them. */
const unstorable = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

/**
 * Refuses, with 400 validation_failed, a value PostgreSQL would reject
 * mid-request (a 500): strings or keys with U+0000 or lone surrogates, and
 * nesting deeper than MAX_DEPTH.
 */
function checkStorable(value: unknown, depth: number): void {
  if (typeof value === 'string') {
    if (unstorable(value))
      throw invalid('Strings in the request must not contain U+0000 or unpaired UTF-16 surrogates.');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_DEPTH) throw invalid(`The request body nests deeper than ${MAX_DEPTH} levels.`);
  for (const [key, v] of Object.entries(value)) {
    checkStorable(key, depth);
    checkStorable(v, depth + 1);
  }
}

export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('The body must be a JSON object.');
  checkStorable(body, 0);
  return body as Record<string, unknown>;
}

/** A query parameter value PostgreSQL can store, else 400 validation_failed. */
export function storableQueryValue(name: string, value: string): string {
  if (unstorable(value)) throw invalid(`The query parameter ${name.slice(0, 60)} must not contain U+0000.`);
  return value;
}

/** A present, non-empty string field, or undefined when absent or empty. */
export function optionalString(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw invalid(`${name} must be a string.`);
  return v;
}

/** A boolean field, or undefined when absent or null; 400 validation_failed for anything else (a string "false" is not false). */
export function optionalBoolean(body: Record<string, unknown>, name: string): boolean | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(`${name} must be true or false.`);
  return v;
}

export function requiredString(body: Record<string, unknown>, name: string): string {
  const v = optionalString(body, name);
  if (v === undefined) throw invalid(`${name} is required.`);
  return v;
}

/**
 * The shape every e-mail address Hearth takes must have: at most 254
 * characters, 64 before the @ (what SMTP can carry, RFC 5321 4.5.3.1).
 */
export const isEmailAddress = (v: string): boolean => v.length <= 254 && EMAIL.test(v) && v.lastIndexOf('@') <= 64;

/** Lower-cased and trimmed; 400 validation_failed when it is not an address. */
export function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (!isEmailAddress(email)) throw invalid('Unable to validate email address: invalid format');
  return email;
}

/**
 * A refused new password. `reasons` are GoTrue's (`length`, `pwned`): the
 * auth error handler sends them as `weak_password: {reasons}`, which
 * supabase-js turns into AuthWeakPasswordError.reasons.
 */
export class PasswordRefused extends HearthError {
  constructor(
    code: 'weak_password' | 'leaked_password',
    message: string | undefined,
    readonly reasons: string[],
  ) {
    super(code, message);
  }
}

/** Length (422 weak_password) and breach list (400 leaked_password), checked before any hashing. */
export function checkNewPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    // GoTrue's texts, with this project's limits.
    const message =
      length < PASSWORD_MIN
        ? `Password should be at least ${PASSWORD_MIN} characters.`
        : `Password cannot be longer than ${PASSWORD_MAX} characters.`;
    throw new PasswordRefused('weak_password', message, ['length']);
  }
  if (isLeakedPassword(password)) {
    throw new PasswordRefused('leaked_password', undefined, ['pwned']);
  }
}

export function metadata(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const data = body.data;
  if (data === undefined || data === null) return undefined;
  if (typeof data !== 'object' || Array.isArray(data)) throw invalid('data must be a JSON object of profile metadata.');
  if (JSON.stringify(data).length > 16_384) throw invalid('data must be at most 16 KiB of JSON.');
  return data as Record<string, unknown>;
}
