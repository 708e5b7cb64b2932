/**
 * User rows (auth.users) and the user object of the API (SPEC 2.2).
 */
import type postgres from 'postgres';
import { HearthError } from '../errors.ts';
import { now, type AuthContext } from './context.ts';

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
  created_at: Date;
  updated_at: Date;
}

export async function findUserById(db: Db, id: string): Promise<UserRow | null> {
  const [row] = await db`select * from auth.users where id = ${id}`;
  return (row as UserRow | undefined) ?? null;
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | null> {
  const [row] = await db`select * from auth.users where email = ${email}`;
  return (row as UserRow | undefined) ?? null;
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export const emailTaken = () => new HearthError(409, 'email_taken', 'A user with this e-mail address already exists.');

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
    if (isUniqueViolation(err)) throw emailTaken();
    throw err;
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
    if (!row) throw new HearthError(404, 'user_not_found', 'The user no longer exists.');
    return row as UserRow;
  } catch (err) {
    if (isUniqueViolation(err)) throw emailTaken();
    throw err;
  }
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
  };
}

/** Linked identities and enrolled factors, as GET /auth/v1/user shows them. */
export async function identitiesAndFactors(db: Db, userId: string) {
  const [identities, factors] = await Promise.all([
    db`select id as identity_id, provider_id as id, user_id, provider, identity_data, email,
        last_sign_in_at, created_at, updated_at
      from auth.identities where user_id = ${userId} order by created_at`,
    db`select id, factor_type, friendly_name, status, created_at, updated_at
      from auth.mfa_factors where user_id = ${userId} order by created_at`,
  ]);
  return { identities: [...identities], factors: [...factors] };
}
