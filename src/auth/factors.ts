/**
 * MFA factors and their challenges (SPEC 2.5, 3.1): what TOTP and passkey
 * factors share. A challenge is single use and lives 5 minutes; verifying
 * one replaces the caller's session by a new aal2 session whose amr adds the
 * factor's method to the methods already proven.
 */
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import { later, now, type AuthContext } from './context.ts';
import type { UserClaims } from './http.ts';
import { sessionIdOf, UUID } from './http.ts';
import { issueSession, type AmrEntry, type AmrMethod, type SessionPayload } from './sessions.ts';
import { sessionEnded } from './user-sessions.ts';
import type { UserRow } from './users.ts';

type Db = postgres.Sql | postgres.TransactionSql;

export const CHALLENGE_MS = 5 * 60_000;
/** Wrong TOTP codes a challenge takes before it is spent: with ±1 step, guessing stays a 3-in-10^6 chance per try. */
export const CHALLENGE_MAX_ATTEMPTS = 5;

export type FactorType = 'totp' | 'webauthn';
export type ChallengeKind = 'totp' | 'webauthn_create' | 'webauthn_request' | 'passkey_signin';

export interface FactorRow {
  id: string;
  user_id: string;
  factor_type: FactorType;
  friendly_name: string | null;
  status: 'unverified' | 'verified';
  secret_sealed: string | null;
  web_authn_credential: StoredCredential | null;
  web_authn_credential_id: string | null;
  last_totp_step: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface StoredCredential {
  id: string;
  public_key: string;
  counter: number;
  transports: string[];
}

export interface ChallengeRow {
  id: string;
  factor_id: string | null;
  kind: ChallengeKind;
  web_authn_challenge: string | null;
  attempts: number;
  expires_at: Date;
  consumed_at: Date | null;
}

export const factorNotFound = () =>
  fail('mfa_factor_not_found', 'No factor with this id is enrolled for the signed-in user.');

export async function userFactor(db: Db, userId: string, factorId: string, lock = false): Promise<FactorRow> {
  const rows = lock
    ? await db`select * from auth.mfa_factors where id = ${factorId} and user_id = ${userId} for update`
    : await db`select * from auth.mfa_factors where id = ${factorId} and user_id = ${userId}`;
  if (!rows[0]) throw factorNotFound();
  return rows[0] as FactorRow;
}

/** Whether the user has a verified factor: then password, e-mail and factor changes need an aal2 session. */
export async function hasVerifiedFactor(ctx: AuthContext, userId: string): Promise<boolean> {
  const [row] = await ctx.project
    .sql`select exists (select 1 from auth.mfa_factors where user_id = ${userId} and status = 'verified') as yes`;
  return row!.yes as boolean;
}

/** GoTrue's defaults: unverified factors expire after 5 minutes; a user holds at most 10 factors. */
export const UNVERIFIED_FACTOR_MS = 5 * 60_000;
export const MAX_FACTORS = 10;

/**
 * What enrolment checks, as GoTrue does: the user's unverified factors older
 * than 5 minutes (abandoned enrolments, e.g. an app calling mfa.enroll on
 * each visit of its setup page) are removed first, so their friendly_name is
 * free again; then at most 10 factors (422 too_many_enrolled_mfa_factors);
 * then, once a factor is verified, an aal2 session (403 insufficient_aal), or
 * a stolen password could enrol the thief's own authenticator and step up
 * with it.
 */
export async function checkEnrolment(ctx: AuthContext, claims: UserClaims): Promise<void> {
  const [row] = await ctx.project.sql`with gone as (
      delete from auth.mfa_factors where user_id = ${claims.sub} and status = 'unverified'
        and created_at < ${new Date(now(ctx).getTime() - UNVERIFIED_FACTOR_MS)}
      returning id
    )
    select count(*)::int as total, count(*) filter (where status = 'verified')::int as verified
    from auth.mfa_factors where user_id = ${claims.sub} and id not in (select id from gone)`;
  if (row!.total >= MAX_FACTORS) {
    throw fail(
      'too_many_enrolled_mfa_factors',
      `Maximum number of factors (${MAX_FACTORS}) reached; unenroll one to continue.`,
    );
  }
  if (row!.verified > 0 && claims.aal !== 'aal2') {
    throw fail('insufficient_aal', 'AAL2 required to enroll a new factor: verify one of your factors first.');
  }
}

/** Inserts a new, unverified factor; 422 mfa_factor_name_conflict when the user already has one of that name. */
export async function insertFactor(
  ctx: AuthContext,
  db: Db,
  input: { userId: string; type: FactorType; friendlyName: string | null; secretSealed?: string },
): Promise<FactorRow> {
  const t = now(ctx);
  try {
    const [row] =
      await db`insert into auth.mfa_factors (user_id, factor_type, friendly_name, secret_sealed, created_at, updated_at)
      values (${input.userId}, ${input.type}, ${input.friendlyName}, ${input.secretSealed ?? null}, ${t}, ${t}) returning *`;
    return row as FactorRow;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') {
      throw fail(
        'mfa_factor_name_conflict',
        `You already have a factor named "${input.friendlyName}"; choose another friendly_name.`,
      );
    }
    throw err;
  }
}

export async function createChallenge(
  ctx: AuthContext,
  db: Db,
  input: { factorId: string | null; kind: ChallengeKind; webAuthnChallenge?: string },
) {
  const [row] = await db`insert into auth.mfa_challenges (factor_id, kind, web_authn_challenge, created_at, expires_at)
    values (${input.factorId}, ${input.kind}, ${input.webAuthnChallenge ?? null}, ${now(ctx)}, ${later(ctx, CHALLENGE_MS)})
    returning id, expires_at`;
  return { id: row!.id as string, expires_at: Math.floor((row!.expires_at as Date).getTime() / 1000) };
}

/**
 * An unknown challenge: for a factor's verify GoTrue's 404 mfa_factor_not_found
 * ("MFA factor with the provided challenge ID not found"); for passkey-only
 * sign-in, which has no factor yet, mfa_challenge_not_found.
 */
const challengeNotFound = (factorId: string | null) =>
  factorId
    ? fail(
        'mfa_factor_not_found',
        'MFA factor with the provided challenge ID not found; request a new challenge with POST /factors/{id}/challenge.',
      )
    : fail('mfa_challenge_not_found');

/**
 * Locks a live challenge for verification: 404 (see challengeNotFound) when it
 * is unknown or belongs to another factor, 422 mfa_challenge_expired when it
 * is older than 5 minutes, already used, or spent by wrong codes.
 */
export async function lockChallenge(
  ctx: AuthContext,
  tx: Db,
  challengeId: string,
  factorId: string | null,
  kinds: ChallengeKind[],
): Promise<ChallengeRow> {
  if (!UUID.test(challengeId)) throw challengeNotFound(factorId);
  const [row] = await tx`select * from auth.mfa_challenges where id = ${challengeId} for update`;
  const c = row as ChallengeRow | undefined;
  if (!c || c.factor_id !== factorId || !kinds.includes(c.kind)) throw challengeNotFound(factorId);
  if (c.consumed_at || c.attempts >= CHALLENGE_MAX_ATTEMPTS || c.expires_at.getTime() <= now(ctx).getTime()) {
    throw fail('mfa_challenge_expired');
  }
  return c;
}

export async function consumeChallenge(ctx: AuthContext, tx: Db, challengeId: string): Promise<void> {
  await tx`update auth.mfa_challenges set consumed_at = ${now(ctx)} where id = ${challengeId}`;
}

/**
 * The aal2 session after a verified factor: the caller's session is ended
 * (403 session_not_found when it already has, rolling the verification back) and
 * a new one starts whose amr is the factor's method followed by the methods
 * the old session had proven. As GoTrue does on every successful verify, the
 * user's other aal1 sessions end too (whoever is signed in with the first
 * factor alone must pass the second), and the user's other unverified factors
 * of this kind are dropped (abandoned enrolments).
 */
export async function stepUpSession(
  ctx: AuthContext,
  tx: Db,
  user: UserRow,
  claims: UserClaims,
  factor: FactorRow,
): Promise<SessionPayload> {
  const method: AmrMethod = factor.factor_type;
  const previous = (Array.isArray(claims.amr) ? (claims.amr as AmrEntry[]) : []).filter(
    (e) => e && e.method !== method,
  );
  const sessionId = sessionIdOf(claims);
  const ended = sessionId
    ? await tx`delete from auth.sessions where id = ${sessionId} and user_id = ${user.id} returning id`
    : [];
  if (ended.length === 0) throw sessionEnded();
  await tx`delete from auth.sessions where user_id = ${user.id} and aal = 'aal1'`;
  await tx`delete from auth.mfa_factors
    where user_id = ${user.id} and factor_type = ${factor.factor_type} and status = 'unverified' and id <> ${factor.id}`;
  return issueSession(ctx, user, { amr: method, aal: 'aal2', previousAmr: previous }, tx);
}

/**
 * DELETE /factors/{id}. Removing a verified factor needs an aal2 session (a
 * stolen password alone must not be able to strip the second factor). Access
 * tokens already issued keep their aal until they expire; see deleteFactor
 * for what a refresh then says.
 */
export async function unenrolFactor(ctx: AuthContext, claims: UserClaims, factorId: string): Promise<{ id: string }> {
  const factor = await userFactor(ctx.project.sql, claims.sub, factorId);
  if (factor.status === 'verified' && claims.aal !== 'aal2') {
    // 422, GoTrue's status here ("AAL2 required to unenroll verified factor").
    throw fail(
      'insufficient_aal',
      'Removing a verified factor needs an aal2 session: verify a factor first (POST /factors/{id}/challenge and /verify).',
      { status: 422 },
    );
  }
  await deleteFactor(ctx.project.sql, claims.sub, factor.id);
  return { id: factor.id };
}

/**
 * Removes a factor (DELETE /factors/{id}, the admin API). When it was the
 * user's last verified factor, the user's sessions drop to aal1, as GoTrue
 * downgrades them: their next refresh no longer claims an aal2 that no factor
 * backs. One statement; answers the removed factor in GET /user's shape.
 */
export async function deleteFactor(db: Db, userId: string, factorId: string) {
  const [row] = await db`with gone as (
      delete from auth.mfa_factors where id = ${factorId} and user_id = ${userId}
      returning id, factor_type as type, factor_type, friendly_name, status, created_at, updated_at
    ), downgraded as (
      update auth.sessions set aal = 'aal1'
      where user_id = ${userId} and aal = 'aal2' and exists (select 1 from gone where status = 'verified')
        and not exists (select 1 from auth.mfa_factors where user_id = ${userId} and status = 'verified' and id <> ${factorId})
    )
    select * from gone`;
  return row;
}
