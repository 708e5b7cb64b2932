/**
 * Sessions and their tokens (SPEC 2.1, 3.1, 5). A session is a family of
 * refresh tokens: opaque 40-character strings stored as SHA-256 hashes, valid
 * 30 days, each usable once. Using one rotates it (a new token of the same
 * session). Presenting a token that was already used is treated as theft: the
 * whole session (every token of the family, including the newest) is revoked
 * and the caller gets 401 invalid_grant, so whichever party holds the stolen
 * copy is signed out too. Access tokens are ES256 JWTs living 1 hour.
 */
import type postgres from 'postgres';
import { HearthError } from '../errors.ts';
import { randomToken, sha256 } from '../platform/secrets.ts';
import { ACCESS_TOKEN_SECONDS, signAccessToken } from './access-token.ts';
import { later, now, type AuthContext } from './context.ts';
import { findUserById, userJson, type UserRow } from './users.ts';

type Db = postgres.Sql | postgres.TransactionSql;

export const REFRESH_TOKEN_MS = 30 * 24 * 3600_000;

export type AmrMethod = 'password' | 'otp' | 'magiclink' | 'recovery' | 'email_change' | 'anonymous' | 'pkce' | 'oauth' | 'totp' | 'webauthn';

export interface AmrEntry {
  method: string;
  timestamp: number;
}

export interface SessionOptions {
  amr: AmrMethod;
  aal?: 'aal1' | 'aal2';
  /** Earlier amr entries to keep (e.g. the first factor when stepping up to aal2). */
  previousAmr?: AmrEntry[];
}

export interface SessionPayload {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: ReturnType<typeof userJson>;
}

interface SessionRow {
  id: string;
  aal: 'aal1' | 'aal2';
  amr: AmrEntry[];
}

/** The access-token claims of a user in a session (SPEC 2.3). iat, exp and iss are added when signing. */
export function accessClaims(user: UserRow, session: SessionRow) {
  return {
    sub: user.id,
    aud: 'authenticated',
    role: 'authenticated',
    email: user.email ?? '',
    phone: '',
    app_metadata: user.raw_app_meta_data,
    user_metadata: user.raw_user_meta_data,
    aal: session.aal,
    amr: session.amr,
    session_id: session.id,
    is_anonymous: user.is_anonymous,
  };
}

async function newRefreshToken(ctx: AuthContext, db: Db, session: string, user: string, parent: string | null): Promise<string> {
  const token = randomToken(40);
  await db`insert into auth.refresh_tokens (token_hash, session_id, user_id, parent, created_at, expires_at)
    values (${sha256(token)}, ${session}, ${user}, ${parent}, ${now(ctx)}, ${later(ctx, REFRESH_TOKEN_MS)})`;
  return token;
}

async function payload(ctx: AuthContext, user: UserRow, session: SessionRow, refreshToken: string): Promise<SessionPayload> {
  const accessToken = await signAccessToken(ctx.project, accessClaims(user, session), ctx.p.clock, ctx.issuer);
  return {
    access_token: accessToken,
    token_type: 'bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    expires_at: Math.floor(now(ctx).getTime() / 1000) + ACCESS_TOKEN_SECONDS,
    refresh_token: refreshToken,
    user: userJson(user),
  };
}

/**
 * Starts a session for a user who just proved who they are: records the
 * session and its first refresh token, stamps last_sign_in_at, and returns
 * the session payload. Pass `db` to make it part of a larger transaction.
 */
export async function issueSession(ctx: AuthContext, user: UserRow, opts: SessionOptions, db: Db = ctx.project.sql): Promise<SessionPayload> {
  const t = now(ctx);
  const amr: AmrEntry[] = [{ method: opts.amr, timestamp: Math.floor(t.getTime() / 1000) }, ...(opts.previousAmr ?? [])];
  const run = async (tx: Db) => {
    const [session] = await tx`insert into auth.sessions (user_id, aal, amr, created_at)
      values (${user.id}, ${opts.aal ?? 'aal1'}, ${tx.json(amr as never)}, ${t}) returning id, aal, amr`;
    const token = await newRefreshToken(ctx, tx, session!.id as string, user.id, null);
    const [fresh] = await tx`update auth.users set last_sign_in_at = ${t} where id = ${user.id} returning *`;
    return { session: session as unknown as SessionRow, token, user: (fresh as UserRow | undefined) ?? user };
  };
  const r = 'begin' in db ? await (db as postgres.Sql).begin(run) : await run(db);
  return payload(ctx, r.user, r.session, r.token);
}

const invalidGrant = (message: string) => new HearthError(401, 'invalid_grant', message);

/** grant_type=refresh_token: single use, rotated; reuse revokes the session's whole family. */
export async function refreshSession(ctx: AuthContext, refreshToken: string): Promise<SessionPayload> {
  const hash = sha256(refreshToken);
  const t = now(ctx);
  const outcome = await ctx.project.sql.begin(async (tx) => {
    const [used] = await tx`update auth.refresh_tokens set revoked = true
      where token_hash = ${hash} and not revoked and expires_at > ${t}
      returning id::text as id, session_id, user_id`;
    if (!used) {
      const [known] = await tx`select revoked, expires_at, session_id from auth.refresh_tokens where token_hash = ${hash}`;
      if (known?.revoked) {
        await tx`delete from auth.sessions where id = ${known.session_id}`;
        return { reused: true as const };
      }
      return { missing: known ? 'expired' : 'unknown' };
    }
    const [session] = await tx`update auth.sessions set refreshed_at = ${t} where id = ${used.session_id} returning id, aal, amr`;
    const user = await findUserById(tx, used.user_id as string);
    if (!session || !user) return { missing: 'unknown' };
    const token = await newRefreshToken(ctx, tx, session.id as string, user.id, used.id as string);
    return { session: session as unknown as SessionRow, user, token };
  });
  if ('reused' in outcome) {
    throw invalidGrant('This refresh token was already used. As a precaution every token of its session has been revoked; sign in again.');
  }
  if ('missing' in outcome) {
    throw invalidGrant(outcome.missing === 'expired' ? 'The refresh token has expired; sign in again.' : 'The refresh token is not valid (unknown or signed out).');
  }
  return payload(ctx, outcome.user, outcome.session, outcome.token);
}

/** Ends the session the refresh token belongs to. Unknown tokens are ignored (logout always answers 204). */
export async function revokeByRefreshToken(ctx: AuthContext, refreshToken: string): Promise<void> {
  await ctx.project.sql`delete from auth.sessions where id in
    (select session_id from auth.refresh_tokens where token_hash = ${sha256(refreshToken)})`;
}

export type LogoutScope = 'local' | 'global' | 'others';

/** Ends sessions named by a verified access token: its own (local), all the user's (global), or all but its own (others). */
export async function revokeByAccessToken(ctx: AuthContext, userId: string, sessionId: string | null, scope: LogoutScope): Promise<void> {
  const sql = ctx.project.sql;
  if (scope === 'global') await sql`delete from auth.sessions where user_id = ${userId}`;
  else if (scope === 'others') await sql`delete from auth.sessions where user_id = ${userId} and id is distinct from ${sessionId}`;
  else if (sessionId) await sql`delete from auth.sessions where user_id = ${userId} and id = ${sessionId}`;
}
