/**
 * PKCE (SPEC 3.1, 4.1): a flow that starts with code_challenge (method S256;
 * the method travels in `code_challenge_method`, as in Supabase) ends its link
 * redirect with ?code=<auth code> instead of a session. POST
 * /token?grant_type=pkce {auth_code, code_verifier} exchanges the code once,
 * within 5 minutes of minting, when base64url(SHA-256(verifier)) equals the
 * challenge.
 */
import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import { randomToken, safeEqual, sha256 } from '../secrets.ts';
import { now, type AuthContext } from './context.ts';

type Db = postgres.Sql | postgres.TransactionSql;

export const AUTH_CODE_MS = 5 * 60_000;

export interface Challenge {
  challenge: string;
  method: 's256';
}

/** The challenge of a request body, or null when the flow is not PKCE. */
export function readChallenge(body: Record<string, unknown>): Challenge | null {
  const challenge = body.code_challenge;
  if (challenge === undefined || challenge === null || challenge === '') {
    // A method alone is a client that meant PKCE and lost its challenge: the implicit flow would surprise it.
    if (
      body.code_challenge_method !== undefined &&
      body.code_challenge_method !== null &&
      body.code_challenge_method !== ''
    ) {
      throw fail('validation_failed', 'PKCE flow requires code_challenge_method and code_challenge.');
    }
    return null;
  }
  const method = String(body.code_challenge_method ?? 's256').toLowerCase();
  if (method !== 's256') throw fail('bad_code_challenge');
  if (typeof challenge !== 'string' || !/^[A-Za-z0-9_-]{43,128}$/.test(challenge)) {
    throw fail(
      'bad_code_challenge',
      'code_challenge must be the base64url SHA-256 of the code verifier (43+ characters).',
    );
  }
  return { challenge, method: 's256' };
}

/**
 * What a social provider gave at sign-in, which the app may use to call the
 * provider's API (GoTrue's names; supabase-js keeps them in the session).
 */
export interface ProviderTokens {
  provider_token: string;
  /** Only when the provider gave one (RFC 6749 5.1 makes it optional). */
  provider_refresh_token?: string;
}

/**
 * A PKCE flow waiting for its link or callback. A social sign-in's provider
 * tokens wait in it, sealed with the master key, until the code is exchanged.
 */
export async function startFlow(
  ctx: AuthContext,
  db: Db,
  c: Challenge,
  userId: string,
  method: string,
  providerTokens?: ProviderTokens,
): Promise<string> {
  const seal = (token: string | undefined) => (token ? ctx.p.master.encrypt(token) : null);
  const [row] = await db`insert into auth.flow_state (user_id, code_challenge, code_challenge_method,
      authentication_method, provider_token_sealed, provider_refresh_token_sealed, created_at)
    values (${userId}, ${c.challenge}, ${c.method}, ${method}, ${seal(providerTokens?.provider_token)},
      ${seal(providerTokens?.provider_refresh_token)}, ${now(ctx)}) returning id`;
  return row!.id as string;
}

/** Called when the flow's link is redeemed: mints the single-use auth code. */
export async function mintAuthCode(ctx: AuthContext, flowStateId: string): Promise<string> {
  const code = randomToken(40);
  await ctx.project.sql`update auth.flow_state set auth_code_hash = ${sha256(code)}, auth_code_issued_at = ${now(ctx)}
    where id = ${flowStateId}`;
  return code;
}

export interface ExchangedFlow {
  userId: string;
  authenticationMethod: string;
  /** A social sign-in's provider tokens, now removed from the flow. */
  providerTokens: ProviderTokens | null;
}

export async function exchangeAuthCode(ctx: AuthContext, authCode: string, verifier: string): Promise<ExchangedFlow> {
  const t = now(ctx);
  const [row] = await ctx.project.sql`select id, user_id, code_challenge, authentication_method, auth_code_issued_at,
      consumed_at, provider_token_sealed, provider_refresh_token_sealed
    from auth.flow_state where auth_code_hash = ${sha256(authCode)}`;
  if (!row || row.consumed_at) throw fail('flow_state_not_found');
  if (t.getTime() - (row.auth_code_issued_at as Date).getTime() > AUTH_CODE_MS) {
    // 422, as GoTrue answers ("invalid flow state, flow state has expired").
    throw fail('flow_state_expired');
  }
  const computed = createHash('sha256').update(verifier).digest('base64url');
  if (!safeEqual(computed, row.code_challenge as string)) {
    throw fail('bad_code_verifier');
  }
  // The provider tokens are handed out once: the exchange clears them with the code.
  const [consumed] = await ctx.project.sql`update auth.flow_state
    set consumed_at = ${t}, provider_token_sealed = null, provider_refresh_token_sealed = null
    where id = ${row.id} and consumed_at is null returning id`;
  if (!consumed) throw fail('flow_state_not_found');
  const unseal = (sealed: unknown) => (sealed ? ctx.p.master.decrypt(sealed as string) : undefined);
  const providerToken = unseal(row.provider_token_sealed);
  const refreshToken = unseal(row.provider_refresh_token_sealed);
  return {
    userId: row.user_id as string,
    authenticationMethod: row.authentication_method as string,
    providerTokens: providerToken
      ? { provider_token: providerToken, ...(refreshToken ? { provider_refresh_token: refreshToken } : {}) }
      : null,
  };
}
