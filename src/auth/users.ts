/**
 * User rows (auth.users) and the user object of the API (SPEC 2.2).
 */
import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { fail } from '../errors.ts';
import { now, type AuthContext } from './context.ts';
import { userGone } from './http.ts';

type Db = postgres.Sql | postgres.TransactionSql;

export interface UserRow {
  id: string;
  email: string | null;
  encrypted_password: string | null;
  email_confirmed_at: Date | null;
  email_change: string | null;
  is_anonymous: boolean;
  raw_user_meta_data: Record<string, unknown>;
  raw_app_meta_data: Record<string, unknown>;
  last_sign_in_at: Date | null;
  banned_until: Date | null;
  invited_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function findUserById(db: Db, id: string): Promise<UserRow | null> {
  const [row] = await db`select * from auth.users where id = ${id}`;
  return (row as UserRow | undefined) ?? null;
}

/** The user an access token names: 403 user_not_found once deleted (hard, or soft with deleted_at). */
export async function signedInUser(db: Db, id: string): Promise<UserRow> {
  const user = await findUserById(db, id);
  if (!user || user.deleted_at) throw userGone();
  return user;
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | null> {
  const [row] = await db`select * from auth.users where email = ${email}`;
  return (row as UserRow | undefined) ?? null;
}

export type MetadataColumn = 'raw_user_meta_data' | 'raw_app_meta_data';

/** Merge semantics of GoTrue's metadata updates: top-level keys set, a null value removes the key. */
export function mergeMetadataSql(db: Db, column: MetadataColumn, patch: Record<string, unknown> | undefined) {
  if (!patch) return db`${db(column)}`;
  const removed = Object.keys(patch).filter((k) => patch[k] === null);
  const kept = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null));
  return db`(${db(column)} || ${db.json(kept as never)}) - ${removed}::text[]`;
}

/** A taken e-mail: auth.users' own unique e-mail, not a unique index a trigger of the project's writes to. */
const isEmailTaken = (err: unknown) => {
  const e = err as { code?: string; table_name?: string; schema_name?: string };
  return e.code === '23505' && e.schema_name === 'auth' && e.table_name === 'users';
};

/**
 * Why the database refused a new user row: the e-mail is taken (409), or a
 * reason of the project's own, a trigger on auth.users (a profile insert that
 * failed, a check that raised). For that, GoTrue's answer, 500
 * unexpected_failure "Database error saving new user", the text people search
 * for; the reason is logged. Anything else is returned as it was.
 */
export function userRowRefused(ctx: AuthContext, err: unknown): unknown {
  if (isEmailTaken(err)) return emailTaken();
  if ((err as Error)?.name !== 'PostgresError' || isDatabaseUnavailable(err)) return err;
  ctx.p.log.error({ err }, 'auth: the database refused a user row (a trigger on auth.users?)');
  return fail('unexpected_failure', 'Database error saving new user');
}

/** 409 email_taken (SPEC 7) with GoTrue's texts: sign-up's, or an e-mail change's. */
export const emailTaken = (change = false) =>
  fail(
    'email_taken',
    change ? 'A user with this email address has already been registered' : 'User already registered',
  );

/**
 * config/auth disable_signup (GoTrue's DISABLE_SIGNUP): 422 signup_disabled
 * before any path of the public API creates a user. The admin API (create,
 * invite, generate_link) never asks: that is how an invite-only project gets
 * its users.
 */
export function refuseSignupWhenDisabled(ctx: AuthContext): void {
  if (ctx.settings.disable_signup === true) throw fail('signup_disabled');
}

export async function createUser(
  ctx: AuthContext,
  db: Db,
  input: { email: string | null; passwordHash: string | null; metadata?: Record<string, unknown>; confirmed: boolean },
): Promise<UserRow> {
  const t = now(ctx);
  const provider = input.email ? 'email' : 'anonymous';
  try {
    const [row] = await db`insert into auth.users
        (email, encrypted_password, email_confirmed_at, is_anonymous, raw_user_meta_data, raw_app_meta_data, created_at, updated_at)
      values (${input.email}, ${input.passwordHash}, ${input.confirmed ? t : null}, ${!input.email},
        ${db.json((input.metadata ?? {}) as never)}, ${db.json({ provider, providers: [provider] })}, ${t}, ${t})
      returning *`;
    return row as UserRow;
  } catch (err) {
    throw userRowRefused(ctx, err);
  }
}

/** Sets the e-mail (confirmed); a guest becomes permanent. 409 email_taken if another user holds it. */
export async function applyEmail(ctx: AuthContext, db: Db, userId: string, email: string): Promise<UserRow> {
  const t = now(ctx);
  try {
    const [row] = await db`update auth.users set email = ${email}, email_change = null, email_confirmed_at = ${t},
        is_anonymous = false,
        raw_app_meta_data = raw_app_meta_data || ${db.json({ provider: 'email', providers: ['email'] })},
        updated_at = ${t}
      where id = ${userId} returning *`;
    if (!row) throw fail('user_not_found', 'The user no longer exists.');
    return row as UserRow;
  } catch (err) {
    if (isEmailTaken(err)) throw emailTaken(true);
    throw err;
  }
}

/** The identity_id of a user's `email` identity: a UUID derived from the user's id, the same on every read. */
export function emailIdentityId(userId: string): string {
  const h = createHash('sha256').update(`email-identity:${userId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((Number.parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The user object (SPEC 2.2) in GoTrue's field names, which supabase-js reads. */
export function userJson(user: UserRow, extra: { identities?: unknown[]; factors?: unknown[] } = {}) {
  return {
    id: user.id,
    aud: 'authenticated',
    role: 'authenticated',
    ...(user.email ? { email: user.email } : {}),
    email_confirmed_at: user.email_confirmed_at,
    ...(user.email_change ? { new_email: user.email_change } : {}),
    phone: '',
    confirmed_at: user.email_confirmed_at,
    last_sign_in_at: user.last_sign_in_at,
    app_metadata: user.raw_app_meta_data,
    user_metadata: user.raw_user_meta_data,
    identities: extra.identities ?? [],
    factors: extra.factors ?? [],
    created_at: user.created_at,
    updated_at: user.updated_at,
    is_anonymous: user.is_anonymous,
    // Set only by the admin API; GoTrue leaves them out when empty.
    ...(user.invited_at ? { invited_at: user.invited_at } : {}),
    ...(user.banned_until ? { banned_until: user.banned_until } : {}),
    ...(user.deleted_at ? { deleted_at: user.deleted_at } : {}),
  };
}

type UserJson = ReturnType<typeof userJson>;

/**
 * A sign-up's user with the `email` identity GoTrue keeps for an account made
 * with an e-mail address, first in `identities`, as GoTrue's sign-up answer
 * shows it: apps read `data.user.identities.length === 0` after signUp as
 * "that address is already registered". Only there: elsewhere (GET /user, the
 * admin API, session payloads) `identities` are the linked social identities
 * SPEC 2.2 names, and Hearth keeps no identity row for the address and
 * password, which are the user's own columns. Its identity_id is derived from
 * the user's id (unlinking it is refused).
 */
export function withEmailIdentity(user: UserJson): UserJson {
  if (!user.email || user.is_anonymous) return user;
  const identity = {
    identity_id: emailIdentityId(user.id),
    id: user.id,
    user_id: user.id,
    provider: 'email',
    identity_data: {
      sub: user.id,
      email: user.email,
      email_verified: user.email_confirmed_at !== null,
      phone_verified: false,
    },
    email: user.email,
    last_sign_in_at: user.last_sign_in_at,
    created_at: user.created_at,
    updated_at: user.updated_at,
  };
  return { ...user, identities: [identity, ...user.identities] };
}

/** An instant as JSON shows a Date (toISOString): what postgres.js would have parsed, truncated to the millisecond. */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const IDENTITIES = `(select coalesce(json_agg(json_build_object('identity_id', i.id, 'id', i.provider_id, 'user_id', i.user_id,
    'provider', i.provider, 'identity_data', i.identity_data, 'email', i.email, 'last_sign_in_at', ${iso('i.last_sign_in_at')},
    'created_at', ${iso('i.created_at')}, 'updated_at', ${iso('i.updated_at')}) order by i.created_at), '[]')
  from auth.identities i where i.user_id = u.id)`;

// `type` is SPEC 2.5's name for the kind; `factor_type` is GoTrue's, which supabase-js's listFactors reads.
const FACTORS = `(select coalesce(json_agg(json_build_object('id', f.id, 'type', f.factor_type, 'factor_type', f.factor_type,
    'friendly_name', f.friendly_name, 'status', f.status, 'created_at', ${iso('f.created_at')}, 'updated_at', ${iso('f.updated_at')})
    order by f.created_at), '[]')
  from auth.mfa_factors f where f.user_id = u.id)`;

/**
 * The identities and factors of the user row aliased `u`, as two JSON columns
 * (`hearth_identities`, `hearth_factors`), to add to a statement's select list.
 */
export const LINK_COLUMNS = `${IDENTITIES} as hearth_identities, ${FACTORS} as hearth_factors`;

/**
 * The user with its identities and factors, as GET /auth/v1/user shows it, in
 * one statement (one round trip): the same fields identitiesAndFactors reads.
 */
export async function findUserWithLinks(
  db: Db,
  id: string,
): Promise<{ user: UserRow; identities: unknown[]; factors: unknown[] } | null> {
  const [row] = await db.unsafe(`select u.*, ${LINK_COLUMNS} from auth.users u where u.id = $1`, [id], {
    prepare: true,
  });
  if (!row) return null;
  const { hearth_identities, hearth_factors, ...user } = row;
  return {
    user: user as unknown as UserRow,
    identities: hearth_identities as unknown[],
    factors: hearth_factors as unknown[],
  };
}

/** Linked identities and enrolled factors, as GET /auth/v1/user shows them. */
export async function identitiesAndFactors(db: Db, userId: string) {
  const [identities, factors] = await Promise.all([
    db`select id as identity_id, provider_id as id, user_id, provider, identity_data, email,
        last_sign_in_at, created_at, updated_at
      from auth.identities where user_id = ${userId} order by created_at`,
    // `type` is SPEC 2.5's name for the kind; `factor_type` is GoTrue's, which supabase-js's listFactors reads.
    db`select id, factor_type as type, factor_type, friendly_name, status, created_at, updated_at
      from auth.mfa_factors where user_id = ${userId} order by created_at`,
  ]);
  return { identities: [...identities], factors: [...factors] };
}
