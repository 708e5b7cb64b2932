/**
 * Project API keys (SPEC 5): `sb_publishable_…` (role anon) and `sb_secret_…`
 * (role service_role), found by their SHA-256 hash (registry.resolveKey) and
 * sealed with the master key so members can read them back. A project is
 * created with one of each, named `default`; more are created, renamed and
 * revoked through the management API, as on Supabase. Revoking deletes the
 * row and announces the change in the same transaction, so every Hearth
 * process forgets the key on commit (registry.onChange); creating and
 * renaming announce too, since functions are given every key by name.
 */
import type postgres from 'postgres';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import { randomToken, sha256 } from '../secrets.ts';
import { announce } from './changes.ts';
import { refuseUnknownFields, unstorableText } from './text.ts';

export type ApiKeyType = 'publishable' | 'secret';

export interface ApiKey {
  id: string;
  name: string;
  type: ApiKeyType;
  description: string | null;
  api_key: string;
  inserted_at: Date;
}

const TYPES: readonly ApiKeyType[] = ['publishable', 'secret'];
/** Supabase's rule for key names: lower-case letters, digits and `_`, not starting with a digit, 4-64 characters. */
const NAME = /^[a-z_][a-z0-9_]{3,63}$/;
const MAX_DESCRIPTION = 256;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function newApiKey(type: ApiKeyType): string {
  return `sb_${type}_${randomToken(40)}`;
}

function toApiKey(p: Platform, r: postgres.Row): ApiKey {
  return {
    id: r.id as string,
    name: r.name as string,
    type: r.type as ApiKeyType,
    description: (r.description as string | null) ?? null,
    api_key: p.master.decrypt(r.key_sealed as string),
    inserted_at: r.created_at as Date,
  };
}

/**
 * The project's keys, publishable first, oldest first within a type: the
 * first of each type is what `hearth status` prints and functions get, and
 * it stays the same until that key is revoked.
 */
export async function projectApiKeys(p: Platform, projectId: string): Promise<ApiKey[]> {
  const rows = await p.dbs.control`select * from platform.api_keys
    where project_id = ${projectId} order by type, created_at, id`;
  return rows.map((r) => toApiKey(p, r));
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name))
    throw fail(
      'invalid_name',
      'name must be 4 to 64 characters of lower-case letters, digits and _, not starting with a digit (e.g. "mobile_app").',
    );
  return name;
}

function checkDescription(description: unknown): string | null {
  if (description === null) return null;
  if (typeof description !== 'string' || description.length > MAX_DESCRIPTION)
    throw fail('invalid_field', `description must be a string of at most ${MAX_DESCRIPTION} characters, or null.`);
  const unstorable = unstorableText(description);
  if (unstorable) throw fail('invalid_field', `description ${unstorable}.`);
  return description;
}

const nameTaken = (name: string) =>
  fail('api_key_exists', `This project already has a key of this type named "${name}"; choose another name.`);
const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

/** `{type, name, description?}` → the new key with its full value. */
export async function createApiKey(p: Platform, projectId: string, body: Record<string, unknown>): Promise<ApiKey> {
  refuseUnknownFields(body, ['type', 'name', 'description'], 'A new API key');
  const type = body.type as ApiKeyType;
  if (!TYPES.includes(type)) throw fail('invalid_field', 'type must be "publishable" or "secret".');
  const name = checkName(body.name);
  const description = checkDescription(body.description ?? null);
  const value = newApiKey(type);
  try {
    const row = await p.dbs.control.begin(async (tx) => {
      const [inserted] = await tx`insert into platform.api_keys
          (project_id, name, type, description, key_hash, key_sealed)
        values (${projectId}, ${name}, ${type}, ${description}, ${sha256(value)}, ${p.master.encrypt(value)})
        returning *`;
      // Functions are given every key by name (SUPABASE_SECRET_KEYS): what was built from the keys is rebuilt.
      await announce(tx, { kind: 'keys', projectId });
      return inserted!;
    });
    return toApiKey(p, row);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(name);
    throw err;
  }
}

const missingKey = (id: string) => fail('not_found', `This project has no API key with id "${id}".`);

/** One key of the project, by id (Supabase's GET /v1/projects/{ref}/api-keys/{id}). */
export async function projectApiKey(p: Platform, projectId: string, id: string): Promise<ApiKey> {
  if (!UUID.test(id)) throw missingKey(id);
  const [row] = await p.dbs.control`select * from platform.api_keys where id = ${id} and project_id = ${projectId}`;
  if (!row) throw missingKey(id);
  return toApiKey(p, row);
}

/** `{name?, description?}` → the key as it is now. */
export async function updateApiKey(
  p: Platform,
  projectId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<ApiKey> {
  if (!UUID.test(id)) throw missingKey(id);
  refuseUnknownFields(body, ['name', 'description'], 'An API key change');
  const name = body.name === undefined ? null : checkName(body.name);
  const description = body.description === undefined ? undefined : checkDescription(body.description);
  try {
    const row = await p.dbs.control.begin(async (tx) => {
      const [updated] = await tx`update platform.api_keys set
          name = coalesce(${name}::text, name),
          description = case when ${description === undefined}::boolean then description else ${description ?? null}::text end
        where id = ${id} and project_id = ${projectId} returning *`;
      if (!updated) throw missingKey(id);
      // A new name changes the key dictionaries functions are given.
      if (name !== null) await announce(tx, { kind: 'keys', projectId });
      return updated;
    });
    return toApiKey(p, row);
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken(name!);
    throw err;
  }
}

/**
 * Deletes the key, so it is refused (401) from the moment the transaction
 * commits; refuses to delete the project's last key of its type, which would
 * leave the project without that role.
 */
export async function revokeApiKey(p: Platform, projectId: string, id: string): Promise<ApiKey> {
  if (!UUID.test(id)) throw missingKey(id);
  return p.dbs.control.begin(async (tx) => {
    const [key] = await tx`select * from platform.api_keys where id = ${id} and project_id = ${projectId}`;
    if (!key) throw missingKey(id);
    // Locking every key of the type makes concurrent revocations take turns, so two of them
    // cannot each see the other's key left and together delete the last one.
    const same = await tx`select id from platform.api_keys
      where project_id = ${projectId} and type = ${key.type} for update`;
    if (!same.some((k) => k.id === id)) throw missingKey(id); // revoked meanwhile
    if (same.length === 1)
      throw fail(
        'last_api_key',
        `This is the project's last ${key.type} key: create another ${key.type} key first, then revoke this one.`,
      );
    await tx`delete from platform.api_keys where id = ${id}`;
    await announce(tx, { kind: 'keys', projectId });
    return toApiKey(p, key);
  }) as Promise<ApiKey>;
}
