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
import { fail } from '../errors.ts';
import { randomToken, sha256 } from '../secrets.ts';
import { ACCESS_TOKEN_SECONDS, signAccessToken } from './access-token.ts';
import { later, now, type AuthContext } from './context.ts';
import { rateHit, refuseOverLimit, type Bucket } from './rate-limit.ts';
import { LINK_COLUMNS, userJson, userRowRefused, type UserRow } from './users.ts';

type Db = postgres.Sql | postgres.TransactionSql;

export const REFRESH_TOKEN_MS = 30 * 24 * 3600_000;

export type AmrMethod =
  | 'password'
  | 'otp'
  | 'magiclink'
  | 'recovery'
  | 'email_change'
  | 'anonymous'
  | 'pkce'
  | 'oauth'
  | 'totp'
  | 'webauthn';

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

interface Links {
  identities?: unknown[];
  factors?: unknown[];
}

async function payload(
  ctx: AuthContext,
  user: UserRow,
  session: SessionRow,
  refreshToken: string,
  links: Links = {},
): Promise<SessionPayload> {
  const accessToken = await signAccessToken(ctx.project, accessClaims(user, session), ctx.p.clock, ctx.issuer);
  return {
    access_token: accessToken,
    token_type: 'bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    expires_at: Math.floor(now(ctx).getTime() / 1000) + ACCESS_TOKEN_SECONDS,
    refresh_token: refreshToken,
    user: userJson(user, links),
  };
}

/**
 * Splits a row of `select s.id as session_id, s.aal as session_aal, s.amr as
 * session_amr, u.*[, LINK_COLUMNS] ...` (a session and its user from one statement).
 */
/** A row of that statement: the session's columns under their aliases, then the user's own. */
interface SessionUserRow extends Partial<UserRow> {
  session_id: string;
  session_aal: SessionRow['aal'];
  session_amr: AmrEntry[];
  hearth_identities?: unknown[] | null;
  hearth_factors?: unknown[] | null;
}

function sessionAndUser(row: postgres.Row): { session: SessionRow; user: UserRow | null; links: Links } {
  const { session_id, session_aal, session_amr, hearth_identities, hearth_factors, ...user } = row as SessionUserRow;
  return {
    session: { id: session_id, aal: session_aal, amr: session_amr },
    user: user.id ? (user as UserRow) : null,
    links: { identities: hearth_identities ?? undefined, factors: hearth_factors ?? undefined },
  };
}

function firstAmr(ctx: AuthContext, opts: SessionOptions): AmrEntry[] {
  return [{ method: opts.amr, timestamp: Math.floor(now(ctx).getTime() / 1000) }, ...(opts.previousAmr ?? [])];
}

/**
 * Starts a session for a user who just proved who they are: records the
 * session and its first refresh token, stamps last_sign_in_at, and returns
 * the session payload, whose user carries its identities and factors as
 * GoTrue's does (supabase-js's mfa.getAuthenticatorAssuranceLevel reads
 * `session.user.factors` to tell that a second factor is due). One
 * statement (one round trip, atomic by itself); pass `db` to make it part of
 * a larger transaction.
 */
export async function issueSession(
  ctx: AuthContext,
  user: UserRow,
  opts: SessionOptions,
  db: Db = ctx.project.sql,
): Promise<SessionPayload> {
  assertNotBanned(ctx, user);
  const t = now(ctx);
  const token = randomToken(40);
  const [row] = await db`with s as (
      insert into auth.sessions (user_id, aal, amr, created_at)
      values (${user.id}, ${opts.aal ?? 'aal1'}, ${db.json(firstAmr(ctx, opts) as never)}, ${t}) returning id, aal, amr
    ), r as (
      insert into auth.refresh_tokens (token_hash, session_id, user_id, parent, created_at, expires_at)
      select ${sha256(token)}, s.id, ${user.id}, null, ${t}, ${later(ctx, REFRESH_TOKEN_MS)} from s
    ), u as (
      update auth.users set last_sign_in_at = ${t} where id = ${user.id} returning *
    )
    select s.id as session_id, s.aal as session_aal, s.amr as session_amr, u.*, ${db.unsafe(LINK_COLUMNS)} from s left join u on true`;
  const r = sessionAndUser(row!);
  return payload(ctx, r.user ?? user, r.session, token, r.links);
}

/**
 * Sign-up: creates the user (last_sign_in_at already stamped) with its first
 * session and refresh token in one statement. 409 email_taken if the address
 * is held. With `limit`, the same statement first counts the request in that
 * rate-limit bucket and creates nothing when it is over the limit (then 429,
 * the hit still counted), so a guest sign-in is one round trip.
 */
export async function createUserWithSession(
  ctx: AuthContext,
  input: { email: string | null; passwordHash: string | null; metadata?: Record<string, unknown>; confirmed: boolean },
  opts: SessionOptions,
  limit?: { bucket: Bucket; clientIp: string },
): Promise<SessionPayload> {
  const sql = ctx.project.sql;
  const t = now(ctx);
  const provider = input.email ? 'email' : 'anonymous';
  const token = randomToken(40);
  try {
    const [row] = await sql`with ${limit ? sql`${rateHit(ctx, limit.bucket, limit.clientIp)},` : sql``}
      u as (
        insert into auth.users (email, encrypted_password, email_confirmed_at, is_anonymous, raw_user_meta_data, raw_app_meta_data,
          last_sign_in_at, created_at, updated_at)
        select ${input.email}, ${input.passwordHash}, ${input.confirmed ? t : null}, ${!input.email},
          ${sql.json((input.metadata ?? {}) as never)}, ${sql.json({ provider, providers: [provider] })}, ${t}, ${t}, ${t}
        ${limit ? sql`where (select admitted from rate_hit)` : sql``}
        returning *
      ), s as (
        insert into auth.sessions (user_id, aal, amr, created_at)
        select u.id, ${opts.aal ?? 'aal1'}, ${sql.json(firstAmr(ctx, opts) as never)}, ${t} from u returning id, aal, amr
      ), r as (
        insert into auth.refresh_tokens (token_hash, session_id, user_id, parent, created_at, expires_at)
        select ${sha256(token)}, s.id, u.id, null, ${t}, ${later(ctx, REFRESH_TOKEN_MS)} from s, u
      )
      select ${limit ? sql`(select admitted from rate_hit)` : sql`true`} as rate_admitted, ${limit ? sql`(select wait_ms from rate_hit)` : sql`0`} as rate_wait_ms,
        s.id as session_id, s.aal as session_aal, s.amr as session_amr, u.*
      from (select) one left join s on true left join u on true`;
    const { rate_admitted, rate_wait_ms, ...rest } = row!;
    if (limit) refuseOverLimit(ctx, limit.bucket, rate_admitted as boolean, rate_wait_ms as number);
    const r = sessionAndUser(rest);
    return payload(ctx, r.user!, r.session, token);
  } catch (err) {
    throw userRowRefused(ctx, err);
  }
}

/**
 * user_banned while an admin's ban (PUT /admin/users/{id} ban_duration) lasts:
 * no new session, no refresh. 400 as GoTrue answers a sign-in or refresh; its
 * code verification (POST /verify) answers 403.
 */
export function assertNotBanned(ctx: AuthContext, user: UserRow, status: 400 | 403 = 400): void {
  if (user.banned_until && user.banned_until.getTime() > now(ctx).getTime()) {
    throw fail('user_banned', undefined, { status });
  }
}

const invalidGrant = (message: string) => fail('invalid_grant', message);

/**
 * How long after a refresh token was spent a second use of it is taken for a
 * race, not a theft (GoTrue's refresh_token_reuse_interval default): two
 * server requests of one browser (@supabase/ssr: a page and a fetch, two
 * tabs) each refreshing the same cookie. The second still gets 401
 * invalid_grant (SPEC 3.1), but the session lives on, so the first one's new
 * token keeps working.
 */
const REUSE_RACE_MS = 10_000;

/**
 * grant_type=refresh_token: single use, rotated; a reuse past REUSE_RACE_MS
 * revokes the session's whole family. The rotation is one statement (spend
 * the token unless its user is banned, stamp the session, read the user,
 * insert the successor), so a grant is one round trip; only a token it could
 * not spend needs a second statement, which tells why (and ends the session
 * on a reuse).
 */
export async function refreshSession(ctx: AuthContext, refreshToken: string): Promise<SessionPayload> {
  const sql = ctx.project.sql;
  const hash = sha256(refreshToken);
  const t = now(ctx);
  const token = randomToken(40);
  const [row] = await sql`with used as (
      update auth.refresh_tokens rt set revoked = true
      where token_hash = ${hash} and not revoked and expires_at > ${t}
        -- a banned user's token is left unspent: it works again once the ban ends
        and not exists (select 1 from auth.users b where b.id = rt.user_id and b.banned_until > ${t})
      returning id, session_id, user_id
    ), s as (
      update auth.sessions set refreshed_at = ${t} where id = (select session_id from used) returning id, aal, amr
    ), u as (
      select * from auth.users where id = (select user_id from used)
    ), r as (
      insert into auth.refresh_tokens (token_hash, session_id, user_id, parent, created_at, expires_at)
      select ${sha256(token)}, s.id, u.id, used.id, ${t}, ${later(ctx, REFRESH_TOKEN_MS)} from used, s, u
    )
    select s.id as session_id, s.aal as session_aal, s.amr as session_amr, u.*, ${sql.unsafe(LINK_COLUMNS)}
    from used left join s on true left join u on true`;
  if (row) {
    const r = sessionAndUser(row);
    if (!r.session.id || !r.user) throw invalidGrant(UNKNOWN);
    return payload(ctx, r.user, r.session, token, r.links);
  }
  const [known] = await sql`with known as (
      select rt.revoked, rt.expires_at > ${t} as live, rt.session_id, u.banned_until > ${t} as banned,
        exists (select 1 from auth.refresh_tokens c where c.session_id = rt.session_id and c.parent = rt.id
          and c.created_at > ${new Date(t.getTime() - REUSE_RACE_MS)}) as raced
      from auth.refresh_tokens rt left join auth.users u on u.id = rt.user_id where rt.token_hash = ${hash}
    ), ended as (
      delete from auth.sessions where id = (select session_id from known where revoked and not raced)
    )
    select revoked, live, banned, raced from known`;
  if (known?.revoked) {
    throw invalidGrant(
      known.raced
        ? 'Invalid Refresh Token: Already Used. It was refreshed a moment ago (two refreshes at once); the session goes on with the token that refresh returned.'
        : 'Invalid Refresh Token: Already Used. As a precaution every token of its session has been revoked; sign in again.',
    );
  }
  if (known?.live && known.banned) throw fail('user_banned');
  throw invalidGrant(
    known ? 'Invalid Refresh Token: Session Expired (the refresh token has expired; sign in again).' : UNKNOWN,
  );
}

// GoTrue's texts, which supabase-js's own tests match on.
const UNKNOWN = 'Invalid Refresh Token: Refresh Token Not Found';

/** Ends the session the refresh token belongs to. Unknown tokens are ignored (logout always answers 204). */
export async function revokeByRefreshToken(ctx: AuthContext, refreshToken: string): Promise<void> {
  await ctx.project.sql`delete from auth.sessions where id in
    (select session_id from auth.refresh_tokens where token_hash = ${sha256(refreshToken)})`;
}

export type LogoutScope = 'local' | 'global' | 'others';

/** Ends sessions named by a verified access token: its own (local), all the user's (global), or all but its own (others). */
export async function revokeByAccessToken(
  ctx: AuthContext,
  userId: string,
  sessionId: string | null,
  scope: LogoutScope,
): Promise<void> {
  const sql = ctx.project.sql;
  if (scope === 'global') await sql`delete from auth.sessions where user_id = ${userId}`;
  else if (scope === 'others')
    await sql`delete from auth.sessions where user_id = ${userId} and id is distinct from ${sessionId}`;
  else if (sessionId) await sql`delete from auth.sessions where user_id = ${userId} and id = ${sessionId}`;
}
