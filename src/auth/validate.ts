/**
 * Input rules of the auth endpoints: e-mail shape, password length (SPEC 8:
 * 10-128 characters) and the leaked-password refusal (SPEC 5).
 */
import { HearthError } from '../errors.ts';
import { isLeakedPassword } from './leaked.ts';

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 128;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const invalid = (message: string) => new HearthError(400, 'validation_failed', message);

export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('The body must be a JSON object.');
  return body as Record<string, unknown>;
}

/** A present, non-empty string field, or undefined when absent or empty. */
export function optionalString(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw invalid(`${name} must be a string.`);
  return v;
}

export function requiredString(body: Record<string, unknown>, name: string): string {
  const v = optionalString(body, name);
  if (v === undefined) throw invalid(`${name} is required.`);
  return v;
}

/** Lower-cased and trimmed; 400 validation_failed when it is not an address. */
export function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 320 || !EMAIL.test(email)) throw invalid(`"${raw.slice(0, 80)}" is not a valid e-mail address.`);
  return email;
}

/** Length (422 weak_password) and breach list (400 leaked_password), checked before any hashing. */
export function checkNewPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw new HearthError(422, 'weak_password', `Passwords must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long.`);
  }
  if (isLeakedPassword(password)) {
    throw new HearthError(400, 'leaked_password', 'This password appears in a known data breach; choose a different one.');
  }
}

export function metadata(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const data = body.data;
  if (data === undefined || data === null) return undefined;
  if (typeof data !== 'object' || Array.isArray(data)) throw invalid('data must be a JSON object of profile metadata.');
  if (JSON.stringify(data).length > 16_384) throw invalid('data must be at most 16 KiB of JSON.');
  return data as Record<string, unknown>;
}
