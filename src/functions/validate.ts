/**
 * Input rules for deploys and secrets. They are checked before anything is
 * bundled or written, so a bad deploy is a 400 with a code naming the fault
 * and never a half-published version.
 */
import { fail } from '../errors.ts';

// The same rule as workflow names (SPEC 2.8), so a workflow `function` step can
// name any function.
const FUNCTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,255}$/;
const MAX_SOURCE_BYTES = 10 * 1024 * 1024;
// Supabase's limits: 100 secrets per project, 48 KiB per value. Every secret
// is a binding of every instance of the project, so the total stays bounded.
const MAX_SECRET_BYTES = 48 * 1024;
export const MAX_SECRETS_PER_PROJECT = 100;

export interface FunctionSource {
  /** Path → source text, e.g. `{ "index.ts": "...", "lib/util.ts": "..." }`. */
  files: Record<string, string>;
  /** The file that is run; defaults to index.ts / index.js when there is one. */
  entrypoint?: string;
  /** Whether callers need a project key or user token (checked by the HTTP route). */
  verifyJwt?: boolean;
}

export const isFunctionName = (name: string): boolean => FUNCTION_NAME.test(name);

export function assertFunctionName(name: string): void {
  if (!isFunctionName(name)) {
    throw fail(
      'invalid_function_name',
      `Function name "${name}" is invalid: use 1-64 characters a-z, 0-9, "_" and "-", starting with a letter or digit.`,
    );
  }
}

const CODE_FILE = /\.(ts|tsx|js|jsx|mjs|mts)$/;

/** Checks the file map and returns the entrypoint to use. */
export function checkSource(source: FunctionSource): string {
  const paths = Object.keys(source.files ?? {});
  if (paths.length === 0) throw fail('invalid_function_source');
  let total = 0;
  for (const p of paths) {
    if (typeof source.files[p] !== 'string')
      throw fail('invalid_function_source', `File "${p}" must be a string of source text.`);
    // PostgreSQL text and jsonb cannot hold U+0000, so such a deploy could not be stored.
    if (p.includes('\u0000') || source.files[p].includes('\u0000')) {
      throw fail(
        'invalid_function_source',
        `File "${p.replaceAll('\u0000', '\\0')}" contains a NUL character (U+0000), which cannot be stored; in a string literal write it as "\\0".`,
      );
    }
    if (p.startsWith('/') || p.split('/').some((s) => s === '' || s === '.' || s === '..') || p.includes('\\')) {
      throw fail(
        'invalid_function_source',
        `File path "${p}" must be relative and may not contain "", "." or ".." segments.`,
      );
    }
    total += Buffer.byteLength(source.files[p]);
  }
  if (total > MAX_SOURCE_BYTES)
    throw fail('function_too_large', `The sources total ${total} bytes; the limit is ${MAX_SOURCE_BYTES}.`);
  const entrypoint =
    source.entrypoint ??
    ['index.ts', 'index.js', 'index.tsx', 'index.mjs'].find((f) => Object.hasOwn(source.files, f)) ??
    (paths.length === 1 ? paths[0] : undefined);
  if (!entrypoint || !Object.hasOwn(source.files, entrypoint)) {
    throw fail(
      'invalid_function_entrypoint',
      `Entrypoint "${entrypoint ?? ''}" is not one of the deployed files (${paths.join(', ')}).`,
    );
  }
  // A JSON or text file bundles to a module without a handler: every call would fail.
  if (!CODE_FILE.test(entrypoint))
    throw fail(
      'invalid_function_entrypoint',
      `Entrypoint "${entrypoint}" is not a module that can serve requests: name a .ts, .tsx, .js, .jsx, .mjs or .mts file.`,
    );
  return entrypoint;
}

export function checkSecrets(secrets: Record<string, string>): void {
  for (const [name, value] of Object.entries(secrets)) {
    if (!SECRET_NAME.test(name))
      throw fail(
        'invalid_secret_name',
        `Secret name "${name}" must look like an environment variable: letters, digits and "_", not starting with a digit.`,
      );
    // Supabase reserves the prefix for the variables the platform itself provides.
    if (name.startsWith('SUPABASE_'))
      throw fail(
        'reserved_secret_name',
        `Secret name "${name}" starts with SUPABASE_, which is reserved for variables Hearth provides.`,
      );
    if (typeof value !== 'string') throw fail('invalid_secret_value', `Secret "${name}" must be a string.`);
    if (Buffer.byteLength(value) > MAX_SECRET_BYTES)
      throw fail('invalid_secret_value', `Secret "${name}" is larger than ${MAX_SECRET_BYTES} bytes.`);
  }
}

/** `count` is the number of secrets the project would have after a write. */
export function checkSecretCount(count: number): void {
  if (count > MAX_SECRETS_PER_PROJECT) {
    throw fail(
      'too_many_secrets',
      `A project may have at most ${MAX_SECRETS_PER_PROJECT} secrets; this change would leave ${count}. Group related values into one secret (a JSON object).`,
    );
  }
}

// Refs become directory names in the in-directory store; the platform makes
// them lower-case alphanumerics, so anything else is refused rather than escaped.
export function assertProjectRef(ref: string): void {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(ref)) throw fail('invalid_project_ref', `Project ref "${ref}" is invalid.`);
}
