/**
 * The admin API of supabase-js's `auth.admin` (GoTrue's /admin routes and
 * /invite): user management by the project's secret key. Passwords follow the
 * sign-up rules (length, breach list) and the same argon2id hashing. Errors
 * use GoTrue's codes, which server code written for Supabase tests for:
 * 422 email_exists for a taken address, 404 user_not_found, 400 validation_failed.
 */
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import { hashPassword } from './passwords.ts';
import { now, type AuthContext } from './context.ts';
import { deleteFactor } from './factors.ts';
import { revokeByAccessToken } from './sessions.ts';
import { deliver } from './mailer.ts';
import { emailChangeMail, inviteMail, signupMail, verifyLink, type LinkType } from './messages.ts';
import { issueOneTime, type Purpose } from './one-time.ts';
import {
  findUserByEmail,
  findUserById,
  identitiesAndFactors,
  mergeMetadataSql,
  userJson,
  type UserRow,
} from './users.ts';
import { checkNewPassword, invalid } from './validate.ts';

export const userNotFound = () => fail('user_not_found');
const emailExists = () => fail('email_exists');

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

async function fullUser(ctx: AuthContext, user: UserRow) {
  return userJson(user, await identitiesAndFactors(ctx.project.sql, user.id));
}

export async function adminGetUser(ctx: AuthContext, id: string) {
  const user = await findUserById(ctx.project.sql, id);
  if (!user) throw userNotFound();
  return fullUser(ctx, user);
}

export const PER_PAGE_MAX = 1000;

/** GET /admin/users: newest first, as GoTrue; `filter` matches part of the e-mail address. */
export async function listUsers(ctx: AuthContext, page: number, perPage: number, filter: string | undefined) {
  const sql = ctx.project.sql;
  const pattern = filter ? `%${filter.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const where = pattern ? sql`where email ilike ${pattern}` : sql``;
  const [{ total }] = (await sql`select count(*)::int as total from auth.users ${where}`) as unknown as [
    { total: number },
  ];
  const rows = (await sql`select * from auth.users ${where} order by created_at desc, id
    limit ${perPage} offset ${(page - 1) * perPage}`) as unknown as UserRow[];
  const users = [];
  for (const row of rows) users.push(await fullUser(ctx, row));
  return { users, total };
}

/**
 * A Go duration as GoTrue's ban_duration takes it ("24h", "1h30m", "876000h",
 * "90s", "1.5h"), in milliseconds; 'none' lifts a ban (null).
 */
const GO_DURATION_MAX_MS = 2 ** 63 / 1e6;

export function parseBanDuration(value: string): number | null {
  if (value === 'none') return null;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(value)) {
    throw invalid(
      `ban_duration must be 'none' or a duration such as '24h', '1h30m' or '876000h' (got "${value.slice(0, 40)}").`,
    );
  }
  let ms = 0;
  for (const m of value.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * units[m[2]!]!;
  // Go's durations end at about 292 years (2^63 ns); GoTrue refuses longer ones, and so do we.
  if (!(ms <= GO_DURATION_MAX_MS)) throw invalid('ban_duration must be at most 2562047h (about 292 years).');
  return ms;
}

export interface AdminAttributes {
  email?: string;
  password?: string;
  passwordHash?: string;
  emailConfirm?: boolean;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
  banMs?: number | null;
  id?: string;
}

async function passwordHashOf(a: AdminAttributes): Promise<string | null> {
  if (a.password !== undefined) {
    checkNewPassword(a.password);
    return hashPassword(a.password);
  }
  return a.passwordHash ?? null;
}

/** POST /admin/users. Unconfirmed unless email_confirm: such a user cannot sign in by password until confirmed. */
export async function adminCreateUser(ctx: AuthContext, a: AdminAttributes & { email: string }) {
  const passwordHash = await passwordHashOf(a);
  const t = now(ctx);
  const banned = a.banMs ? new Date(t.getTime() + a.banMs) : null;
  const appMetadata = { provider: 'email', providers: ['email'], ...(a.appMetadata ?? {}) };
  try {
    const [row] = await ctx.project.sql`insert into auth.users
        (id, email, encrypted_password, email_confirmed_at, is_anonymous, raw_user_meta_data, raw_app_meta_data,
         banned_until, created_at, updated_at)
      values (${a.id ?? ctx.project.sql`gen_random_uuid()`}, ${a.email}, ${passwordHash}, ${a.emailConfirm ? t : null}, false,
        ${ctx.project.sql.json((a.userMetadata ?? {}) as never)}, ${ctx.project.sql.json(appMetadata as never)},
        ${banned}, ${t}, ${t})
      returning *`;
    return fullUser(ctx, row as UserRow);
  } catch (err) {
    if (isUniqueViolation(err)) {
      if ((err as { constraint_name?: string }).constraint_name === 'users_pkey') {
        throw fail('user_already_exists');
      }
      throw emailExists();
    }
    throw err;
  }
}

/**
 * PUT /admin/users/{id}. An e-mail set here applies at once (no confirmation
 * mail); a new password ends every session of the user; email_confirm true
 * confirms the address (false is ignored, as GoTrue does).
 */
export async function adminUpdateUser(ctx: AuthContext, id: string, a: AdminAttributes) {
  const sql = ctx.project.sql;
  const user = await findUserById(sql, id);
  if (!user) throw userNotFound();
  const passwordHash = await passwordHashOf(a);
  const t = now(ctx);
  const emailChange = a.email !== undefined && a.email !== user.email ? a.email : null;
  const ban = a.banMs === undefined ? undefined : a.banMs === null ? null : new Date(t.getTime() + a.banMs);
  try {
    const row = await sql.begin(async (tx) => {
      const [r] = await tx`update auth.users set
          email = coalesce(${emailChange}, email),
          email_change = case when ${emailChange}::text is null then email_change end,
          is_anonymous = is_anonymous and ${emailChange === null && passwordHash === null},
          encrypted_password = coalesce(${passwordHash}, encrypted_password),
          email_confirmed_at = case when ${a.emailConfirm === true} then coalesce(email_confirmed_at, ${t}) else email_confirmed_at end,
          raw_user_meta_data = ${mergeMetadataSql(tx, 'raw_user_meta_data', a.userMetadata)},
          raw_app_meta_data = ${mergeMetadataSql(tx, 'raw_app_meta_data', a.appMetadata)},
          banned_until = ${ban === undefined ? tx`banned_until` : ban},
          updated_at = ${t}
        where id = ${id} returning *`;
      if (passwordHash) await tx`delete from auth.sessions where user_id = ${id}`;
      return r as UserRow;
    });
    return fullUser(ctx, row);
  } catch (err) {
    if (isUniqueViolation(err)) throw emailExists();
    throw err;
  }
}

/**
 * DELETE /admin/users/{id}. A hard delete removes the row, and by the
 * foreign keys of the auth schema its sessions, refresh tokens, identities,
 * factors and codes; a table of the project that references the user without
 * `on delete cascade` makes it 409 conflict. A soft delete keeps the row (so
 * such references survive) but clears the e-mail, password and metadata,
 * stamps deleted_at and removes everything that could sign the user in.
 */
export async function adminDeleteUser(ctx: AuthContext, id: string, soft: boolean): Promise<void> {
  const sql = ctx.project.sql;
  const t = now(ctx);
  if (!soft) {
    try {
      const rows = await sql`delete from auth.users where id = ${id} returning id`;
      if (!rows.length) throw userNotFound();
      return;
    } catch (err) {
      if ((err as { code?: string }).code === '23503') {
        throw fail(
          'conflict',
          `The user is still referenced by ${(err as { table_name?: string }).table_name ?? 'a table'} (foreign key without on delete cascade); delete those rows first or use should_soft_delete.`,
        );
      }
      throw err;
    }
  }
  await sql.begin(async (tx) => {
    const [row] = await tx`update auth.users set email = null, email_change = null, encrypted_password = null,
        raw_user_meta_data = '{}', deleted_at = coalesce(deleted_at, ${t}), updated_at = ${t}
      where id = ${id} returning id`;
    if (!row) throw userNotFound();
    await tx`delete from auth.sessions where user_id = ${id}`;
    await tx`delete from auth.identities where user_id = ${id}`;
    await tx`delete from auth.mfa_factors where user_id = ${id}`;
    await tx`delete from auth.one_time_tokens where user_id = ${id}`;
  });
}

/**
 * POST /admin/users/{id}/logout: ends every session of the user, as their own
 * `/logout?scope=global` would; their refresh tokens stop working at once.
 */
export async function adminSignOut(ctx: AuthContext, id: string): Promise<void> {
  if (!(await findUserById(ctx.project.sql, id))) throw userNotFound();
  await revokeByAccessToken(ctx, id, null, 'global');
}

export async function adminListFactors(ctx: AuthContext, userId: string) {
  const sql = ctx.project.sql;
  if (!(await findUserById(sql, userId))) throw userNotFound();
  return (await identitiesAndFactors(sql, userId)).factors;
}

export async function adminDeleteFactor(ctx: AuthContext, userId: string, factorId: string) {
  const row = await deleteFactor(ctx.project.sql, userId, factorId);
  if (!row) throw fail('mfa_factor_not_found');
  return row;
}

export const LINK_TYPES = [
  'signup',
  'invite',
  'magiclink',
  'recovery',
  'email_change_current',
  'email_change_new',
] as const;
export type GenerateLinkType = (typeof LINK_TYPES)[number];

export interface LinkRequest {
  type: GenerateLinkType;
  email: string;
  newEmail?: string;
  password?: string;
  data?: Record<string, unknown>;
  redirectTo: string;
}

/** Finds or creates the user a link is for; an existing confirmed user cannot be signed up or invited again. */
async function linkUser(ctx: AuthContext, req: LinkRequest, tx: postgres.TransactionSql) {
  const t = now(ctx);
  // Links for one address are made one at a time: two invitations of a new address at once
  // would otherwise both find no user and both insert one (the second a unique violation).
  await tx`select pg_advisory_xact_lock(hashtextextended(${`auth.link:${req.email}`}, 0))`;
  let user = await findUserByEmail(tx, req.email);
  let type: LinkType;
  let purpose: Purpose = 'email';
  let to = req.email;
  switch (req.type) {
    case 'signup':
    case 'invite': {
      if (user?.email_confirmed_at) throw emailExists();
      type = req.type;
      break;
    }
    case 'magiclink':
      // An unknown address is signed up by its link, as GoTrue does.
      type = user ? 'magiclink' : 'signup';
      break;
    case 'recovery':
      if (!user) throw userNotFound();
      type = 'recovery';
      purpose = 'recovery';
      break;
    case 'email_change_new': {
      if (!user) throw userNotFound();
      if (!req.newEmail) throw invalid('new_email is required for email_change_new.');
      const holder = await findUserByEmail(tx, req.newEmail);
      if (holder && holder.id !== user.id) throw emailExists();
      const [r] =
        await tx`update auth.users set email_change = ${req.newEmail}, updated_at = ${t} where id = ${user.id} returning *`;
      user = r as UserRow;
      type = 'email_change';
      purpose = 'email_change';
      to = req.newEmail;
      break;
    }
    default:
      throw invalid(
        'email_change_current is not supported: Hearth confirms an e-mail change at the new address only (use email_change_new).',
      );
  }
  if (!user) {
    const passwordHash = req.password !== undefined ? await hashPassword(req.password) : null;
    const [r] =
      await tx`insert into auth.users (email, encrypted_password, is_anonymous, raw_user_meta_data, raw_app_meta_data, created_at, updated_at)
      values (${req.email}, ${passwordHash}, false, ${tx.json((req.data ?? {}) as never)},
        ${tx.json({ provider: 'email', providers: ['email'] })}, ${t}, ${t})
      returning *`;
    user = r as UserRow;
  } else if (req.type === 'signup' || req.type === 'invite') {
    // A repeated signup or invitation of a still unconfirmed user updates what it sets.
    const passwordHash = req.password !== undefined ? await hashPassword(req.password) : null;
    const [r] = await tx`update auth.users set encrypted_password = coalesce(${passwordHash}, encrypted_password),
        raw_user_meta_data = raw_user_meta_data || ${tx.json((req.data ?? {}) as never)}, updated_at = ${t}
      where id = ${user.id} returning *`;
    user = r as UserRow;
  }
  if (req.type === 'invite') {
    const [r] = await tx`update auth.users set invited_at = ${t} where id = ${user.id} returning *`;
    user = r as UserRow;
  }
  const secrets = await issueOneTime(ctx, tx, { userId: user.id, purpose, email: to });
  return { user, type, to, secrets };
}

/**
 * POST /admin/generate_link: the link and code a message would carry, without
 * sending it. hashed_token is the link's token, which POST /verify takes as
 * token_hash (verifyOtp({token_hash, type})).
 */
export async function generateLink(ctx: AuthContext, req: LinkRequest) {
  if (req.type === 'signup') {
    if (req.password === undefined) throw invalid('password is required for a signup link.');
    checkNewPassword(req.password);
  }
  const { user, type, secrets } = await ctx.project.sql.begin((tx) => linkUser(ctx, req, tx));
  return {
    ...(await fullUser(ctx, user)),
    action_link: verifyLink(ctx, type, secrets.linkToken, req.redirectTo),
    email_otp: secrets.code,
    hashed_token: secrets.linkToken,
    redirect_to: req.redirectTo,
    verification_type: type,
  };
}

/** POST /invite: creates (or re-invites an unconfirmed) user and mails the invitation. */
export async function inviteUser(
  ctx: AuthContext,
  req: { email: string; data?: Record<string, unknown>; redirectTo: string },
) {
  const { user, to, secrets } = await ctx.project.sql.begin((tx) => linkUser(ctx, { ...req, type: 'invite' }, tx));
  await deliver(ctx, inviteMail(ctx, to, secrets, req.redirectTo));
  return fullUser(ctx, user);
}

/** POST /resend, after the answer: a new sign-up confirmation, or a new e-mail change link to the pending address. */
export async function resendMail(
  ctx: AuthContext,
  req: { type: 'signup' | 'email_change'; email: string; redirectTo: string },
): Promise<void> {
  const user = await findUserByEmail(ctx.project.sql, req.email);
  if (!user) return;
  if (req.type === 'signup') {
    if (user.email_confirmed_at) return;
    const secrets = await issueOneTime(ctx, ctx.project.sql, { userId: user.id, purpose: 'email', email: req.email });
    await deliver(
      ctx,
      user.invited_at
        ? inviteMail(ctx, req.email, secrets, req.redirectTo)
        : signupMail(ctx, req.email, secrets, req.redirectTo),
    );
    return;
  }
  if (!user.email_change) return;
  const secrets = await issueOneTime(ctx, ctx.project.sql, {
    userId: user.id,
    purpose: 'email_change',
    email: user.email_change,
  });
  await deliver(ctx, emailChangeMail(ctx, user.email_change, secrets, req.redirectTo));
}
