/**
 * Sign-up (password or guest), the password grant, and self-service changes
 * of PUT /auth/v1/user.
 */
import type { JWTPayload } from 'jose';
import type postgres from 'postgres';
import { RateLimited } from '../db/rate-limit.ts';
import { fail, HearthError } from '../errors.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { now, type AuthContext } from './context.ts';
import { hasVerifiedFactor } from './factors.ts';
import { userGone } from './http.ts';
import { deliver, mailerConfigured, type Mail } from './mailer.ts';
import { emailChangeMail, emailChangedNotice, signupMail } from './messages.ts';
import { spendRateLimit } from './rate-limit.ts';
import { issueOneTime, redeemCode } from './one-time.ts';
import { startFlow, type Challenge } from './pkce.ts';
import { createUserWithSession, issueSession, type AmrEntry, type SessionPayload } from './sessions.ts';
import {
  applyEmail,
  createUser,
  emailTaken,
  findUserByEmail,
  findUserWithLinks,
  identitiesAndFactors,
  mergeMetadataSql,
  refuseSignupWhenDisabled,
  signedInUser,
  userJson,
  type UserRow,
  withEmailIdentity,
} from './users.ts';
import { checkNewPassword } from './validate.ts';

export async function signUpWithPassword(
  ctx: AuthContext,
  input: { email: string; password: string; metadata?: Record<string, unknown> },
): Promise<SessionPayload> {
  refuseSignupWhenDisabled(ctx);
  checkNewPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  const signedUp = await createUserWithSession(
    ctx,
    { email: input.email, passwordHash, metadata: input.metadata, confirmed: true },
    { amr: 'password' },
  );
  return { ...signedUp, user: withEmailIdentity(signedUp.user) };
}

/** GoTrue's SMTP_MAX_FREQUENCY (Supabase's default): one confirmation mail per user and minute. */
const CONFIRMATION_EVERY_MS = 60_000;

export interface UnconfirmedSignUp {
  email: string;
  password: string;
  metadata?: Record<string, unknown>;
  /** The confirmation link's target: emailRedirectTo (allowlisted) or site_url. */
  redirectTo: string;
  challenge: Challenge | null;
  clientIp: string;
}

/**
 * 429 over_email_send_rate_limit in GoTrue's words while the user's last
 * confirmation (or sign-in code) is younger than CONFIRMATION_EVERY_MS.
 */
async function refuseConfirmationTooSoon(ctx: AuthContext, db: postgres.TransactionSql, userId: string) {
  const [last] = await db`select max(created_at) as at from auth.one_time_tokens
    where user_id = ${userId} and purpose = 'email'`;
  const waitMs = last?.at ? (last.at as Date).getTime() + CONFIRMATION_EVERY_MS - now(ctx).getTime() : 0;
  if (waitMs > 0) {
    const seconds = Math.ceil(waitMs / 1000);
    throw new RateLimited(
      'over_email_send_rate_limit',
      `For security purposes, you can only request this after ${seconds} seconds.`,
      seconds,
    );
  }
}

/**
 * POST /signup with e-mail and password while config/auth mailer_autoconfirm
 * is false, as GoTrue's: the user is created unconfirmed (or, for an address
 * an unconfirmed user already holds, left as it is: the caller's claim to it
 * is unproven) and mailed a confirmation link and code; the answer is the
 * user, with no session. A confirmed address is 409 email_taken, as with
 * autoconfirm. The mail counts against rate_limit_email_sent, spent before
 * anything is written, and one user is mailed at most once a minute.
 */
export async function signUpUnconfirmed(ctx: AuthContext, input: UnconfirmedSignUp) {
  refuseSignupWhenDisabled(ctx);
  checkNewPassword(input.password);
  // Hashed outside the transaction: argon2 is slow, and the advisory lock is held meanwhile.
  const passwordHash = await hashPassword(input.password);
  await spendRateLimit(ctx, 'email_sent', input.clientIp);
  const sql = ctx.project.sql;
  const { user, secrets, sentAt } = await sql.begin(async (tx) => {
    // One sign-up (or admin link) of an address at a time, so two at once do not both insert.
    await tx`select pg_advisory_xact_lock(hashtextextended(${`auth.link:${input.email}`}, 0))`;
    let user = await findUserByEmail(tx, input.email);
    if (user?.email_confirmed_at) throw emailTaken();
    if (user) await refuseConfirmationTooSoon(ctx, tx, user.id);
    user ??= await createUser(ctx, tx, {
      email: input.email,
      passwordHash,
      metadata: input.metadata,
      confirmed: false,
    });
    const flowStateId = input.challenge ? await startFlow(ctx, tx, input.challenge, user.id, 'email_signup') : null;
    const secrets = await issueOneTime(ctx, tx, { userId: user.id, purpose: 'email', email: input.email, flowStateId });
    return { user, secrets, sentAt: now(ctx) };
  });
  await deliver(ctx, signupMail(ctx, input.email, secrets, input.redirectTo));
  const shown = withEmailIdentity(userJson(user, await identitiesAndFactors(sql, user.id)));
  // GoTrue shows an invited user's repeated sign-up without what the invitation set.
  if (user.invited_at) Object.assign(shown, { user_metadata: {}, identities: [] });
  return { ...shown, confirmation_sent_at: sentAt };
}

/**
 * Whether a guest may sign in, in GoTrue's order: external_anonymous_users_enabled
 * false is 422 anonymous_provider_disabled, then disable_signup (a guest is a
 * new user) 422 signup_disabled. Neither spends the guest rate limit.
 */
function refuseGuestWhenDisabled(ctx: AuthContext): void {
  if (ctx.settings.external_anonymous_users_enabled === false) throw fail('anonymous_provider_disabled');
  refuseSignupWhenDisabled(ctx);
}

/** A guest sign-in, counted against rate_limit_anonymous_users by the same statement. */
export async function signUpGuest(
  ctx: AuthContext,
  clientIp: string,
  metadata?: Record<string, unknown>,
): Promise<SessionPayload> {
  refuseGuestWhenDisabled(ctx);
  return createUserWithSession(
    ctx,
    { email: null, passwordHash: null, metadata, confirmed: false },
    { amr: 'anonymous' },
    { bucket: 'anonymous_users', clientIp },
  );
}

const badCredentials = () => fail('invalid_credentials');

/** grant_type=password. Unknown addresses spend one dummy argon2 verification, so timing does not tell who exists. */
export async function passwordGrant(ctx: AuthContext, email: string, password: string): Promise<SessionPayload> {
  const user = await findUserByEmail(ctx.project.sql, email);
  const ok = await verifyPassword(user?.encrypted_password, password);
  if (!user || !ok) throw badCredentials();
  // Admin-created accounts (email_confirm false), and sign-ups while mailer_autoconfirm is false.
  if (user.email && !user.email_confirmed_at) throw fail('email_not_confirmed');
  return issueSession(ctx, user, { amr: 'password' });
}

export async function getUser(ctx: AuthContext, userId: string) {
  const found = await findUserWithLinks(ctx.project.sql, userId);
  if (!found || found.user.deleted_at) throw userGone();
  return userJson(found.user, found);
}

export interface UserChanges {
  email?: string;
  password?: string;
  currentPassword?: string;
  /** The code of GET /reauthenticate, accepted instead of currentPassword. */
  nonce?: string;
  metadata?: Record<string, unknown>;
  redirectTo: string;
  challenge: Challenge | null;
}

/** The nonce of GET /reauthenticate: a wrong, used or expired one is 422 reauthentication_not_valid. */
async function redeemNonce(ctx: AuthContext, user: UserRow, nonce: string): Promise<void> {
  try {
    if (!user.email) throw expiredNonce();
    await redeemCode(ctx, { email: user.email, purposes: ['reauthentication'], code: nonce });
  } catch (err) {
    if (err instanceof HearthError && err.code === 'otp_expired') throw expiredNonce();
    throw err;
  }
}

const expiredNonce = () => fail('reauthentication_not_valid');

/** A recovery sign-in lets the password be set without the old one for an hour (the life of its first access token). */
const RECOVERY_GRACE_S = 3600;

function recentlyRecovered(claims: JWTPayload, at: Date): boolean {
  const amr = Array.isArray(claims.amr) ? (claims.amr as AmrEntry[]) : [];
  return amr.some((e) => e?.method === 'recovery' && at.getTime() / 1000 - e.timestamp < RECOVERY_GRACE_S);
}

/** Whether the new password is the stored one; a current_password already verified answers without another hash. */
async function isSamePassword(user: UserRow, changes: UserChanges, currentVerified: boolean): Promise<boolean> {
  if (currentVerified && changes.currentPassword !== undefined) return changes.password === changes.currentPassword;
  return verifyPassword(user.encrypted_password, changes.password!);
}

/**
 * PUT /auth/v1/user. Checks everything before writing: password rules,
 * an aal2 session when the user has a verified factor, re-authentication
 * (current_password, unless the account has no password yet or the session
 * comes from a fresh recovery link), a new password differing from the old
 * one, e-mail availability. Metadata merges as GoTrue's does (null removes a key).
 * An e-mail change is confirmed by a link to the new address when a mailer is
 * configured, and applies at once otherwise. A guest who gets a password or
 * an e-mail becomes permanent, keeping its id.
 */
export async function updateUser(ctx: AuthContext, claims: JWTPayload, changes: UserChanges) {
  const sql = ctx.project.sql;
  const user = await signedInUser(sql, String(claims.sub));
  const emailChange = changes.email !== undefined && changes.email !== user.email ? changes.email : undefined;
  if (changes.password !== undefined) checkNewPassword(changes.password);
  // GoTrue's rule: with a verified factor, the password or e-mail changes only from an aal2 session.
  if (
    (changes.password !== undefined || emailChange !== undefined) &&
    claims.aal !== 'aal2' &&
    (await hasVerifiedFactor(ctx, user.id))
  ) {
    throw fail('insufficient_aal', 'AAL2 session is required to update email or password when MFA is enabled.', {
      status: 401,
    });
  }
  const proofNeeded =
    (changes.password !== undefined || emailChange !== undefined) &&
    user.encrypted_password !== null &&
    !recentlyRecovered(claims, now(ctx));
  if (proofNeeded && changes.currentPassword === undefined && changes.nonce === undefined) {
    throw fail('reauthentication_required');
  }
  if (
    proofNeeded &&
    changes.currentPassword !== undefined &&
    !(await verifyPassword(user.encrypted_password, changes.currentPassword))
  ) {
    throw fail('invalid_current_password');
  }
  if (
    changes.password !== undefined &&
    user.encrypted_password !== null &&
    (await isSamePassword(user, changes, proofNeeded))
  ) {
    throw fail('same_password');
  }
  if (emailChange) {
    const holder = await findUserByEmail(sql, emailChange);
    if (holder && holder.id !== user.id) throw emailTaken(true);
  }
  // Spent last, once nothing else can refuse the request.
  if (proofNeeded && changes.currentPassword === undefined) await redeemNonce(ctx, user, changes.nonce!);
  const passwordHash = changes.password !== undefined ? await hashPassword(changes.password) : null;
  const confirmByMail = emailChange !== undefined && mailerConfigured(ctx.settings);

  let mail: Mail | null = null;
  const updated = await sql.begin(async (tx) => {
    const t = now(ctx);
    let row: UserRow = user;
    if (changes.metadata || passwordHash) {
      const [r] = await tx`update auth.users set
          raw_user_meta_data = ${mergeMetadataSql(tx, 'raw_user_meta_data', changes.metadata)},
          encrypted_password = coalesce(${passwordHash}, encrypted_password),
          is_anonymous = is_anonymous and ${passwordHash === null},
          updated_at = ${t}
        where id = ${user.id} returning *`;
      row = r as UserRow;
    }
    // A new password ends every other session of the user: whoever knew the old one is signed out.
    if (passwordHash) {
      const current = typeof claims.session_id === 'string' ? claims.session_id : null;
      await tx`delete from auth.sessions where user_id = ${user.id} and id::text is distinct from ${current}`;
    }
    if (emailChange && confirmByMail) {
      const [r] =
        await tx`update auth.users set email_change = ${emailChange}, updated_at = ${t} where id = ${user.id} returning *`;
      row = r as UserRow;
      const flowStateId = changes.challenge
        ? await startFlow(ctx, tx, changes.challenge, user.id, 'email_change')
        : null;
      const secrets = await issueOneTime(ctx, tx, {
        userId: user.id,
        purpose: 'email_change',
        email: emailChange,
        flowStateId,
      });
      mail = emailChangeMail(ctx, emailChange, secrets, changes.redirectTo);
    } else if (emailChange) {
      row = await applyEmail(ctx, tx, user.id, emailChange);
      mail = emailChangedNotice(emailChange);
    }
    return row;
  });
  if (mail) await deliver(ctx, mail);
  return userJson(updated, await identitiesAndFactors(sql, user.id));
}
