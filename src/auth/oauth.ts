/**
 * Social sign-in flows (SPEC 4.1): GET /authorize starts one, GET /callback
 * ends it. The flow's state (random, stored hashed, single use, 10 minutes)
 * ties the callback to its start; towards the provider every flow uses PKCE
 * (S256) and, for OpenID providers, a nonce checked in the ID token. When
 * the app started the flow with its own code_challenge, the callback
 * answers ?code= for POST /token?grant_type=pkce instead of a session. The
 * provider's access and refresh tokens reach the app with its session (the
 * callback's fragment, or the PKCE exchange), as GoTrue's
 * provider_token and provider_refresh_token.
 */
import type * as oidc from 'openid-client';
import { type ErrorCode, HearthError } from '../errors.ts';
import { randomToken, sha256 } from '../secrets.ts';
import { later, now, type AuthContext } from './context.ts';
import { userForIdentity, type ProviderProfile } from './identities.ts';
import { configurationOf, openidClient, providerOf, unreachable, type Provider } from './oauth-providers.ts';
import { mintAuthCode, startFlow, type Challenge, type ProviderTokens } from './pkce.ts';
import { issueSession, type SessionPayload } from './sessions.ts';
import { isAllowedRedirect } from './redirects.ts';

export const OAUTH_STATE_MS = 10 * 60_000;

export const callbackUrl = (ctx: AuthContext) => `${ctx.baseUrl}/auth/v1/callback`;

export interface StartRequest {
  provider: Provider;
  /** The allowlisted target the callback redirects to. */
  redirectTo: string;
  challenge: Challenge | null;
  /** Set when a signed-in user links an identity. */
  linkUserId: string | null;
  scopes?: string;
}

/** The provider's authorization URL for a new flow. */
export async function startAuthorization(ctx: AuthContext, req: StartRequest): Promise<string> {
  const client = await openidClient();
  const provider = req.provider;
  const config = await configurationOf(ctx, provider);
  const state = randomToken(40);
  const verifier = client.randomPKCECodeVerifier();
  const nonce = provider.openid ? client.randomNonce() : null;
  await ctx.project.sql`insert into auth.oauth_states
      (state_hash, provider, nonce, code_verifier_sealed, redirect_to, code_challenge, link_user_id, created_at, expires_at)
    values (${sha256(state)}, ${provider.name}, ${nonce}, ${ctx.p.master.encrypt(verifier)}, ${req.redirectTo},
      ${req.challenge?.challenge ?? null}, ${req.linkUserId}, ${now(ctx)}, ${later(ctx, OAUTH_STATE_MS)})`;
  const scope = req.scopes ? `${provider.scope} ${req.scopes.slice(0, 500)}` : provider.scope;
  const params: Record<string, string> = {
    redirect_uri: callbackUrl(ctx),
    scope,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  if (nonce) params.nonce = nonce;
  return client.buildAuthorizationUrl(config, params).toString();
}

interface StateRow {
  provider: string;
  nonce: string | null;
  code_verifier_sealed: string;
  redirect_to: string;
  code_challenge: string | null;
  link_user_id: string | null;
}

export type CallbackOutcome =
  | { kind: 'session'; target: string; session: SessionPayload; providerTokens: ProviderTokens }
  | { kind: 'code'; target: string; code: string }
  | { kind: 'error'; target: string; error: string; code: string; description: string };

async function githubProfile(
  config: oidc.Configuration,
  provider: Provider,
  accessToken: string,
): Promise<ProviderProfile> {
  const client = await openidClient();
  const get = async (path: string) => {
    const res = await client.fetchProtectedResource(config, accessToken, new URL(provider.apiBase + path), 'GET');
    if (!res.ok) throw new Error(`GitHub ${path} answered ${res.status}`);
    return res.json();
  };
  const user = (await get('/user')) as {
    id: number;
    login: string;
    name?: string;
    avatar_url?: string;
    email?: string | null;
  };
  const emails = (await get('/user/emails').catch(() => [])) as Array<{
    email: string;
    primary: boolean;
    verified: boolean;
  }>;
  const primary = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified);
  const email = (primary?.email ?? user.email ?? null)?.toLowerCase() ?? null;
  return {
    provider: 'github',
    subject: String(user.id),
    email,
    emailVerified: !!primary,
    data: {
      sub: String(user.id),
      provider_id: String(user.id),
      user_name: user.login,
      full_name: user.name,
      name: user.name,
      avatar_url: user.avatar_url,
      email,
      email_verified: !!primary,
      iss: provider.apiBase,
    },
  };
}

async function openidProfile(
  config: oidc.Configuration,
  provider: Provider,
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
): Promise<ProviderProfile> {
  const client = await openidClient();
  let claims: Record<string, unknown> = { ...tokens.claims()! };
  if (!claims.email && config.serverMetadata().userinfo_endpoint) {
    claims = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))) };
  }
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : null;
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  return {
    provider: provider.name,
    subject: String(claims.sub),
    email,
    emailVerified: !!email && verified,
    data: {
      iss: claims.iss,
      sub: claims.sub,
      provider_id: claims.sub,
      email,
      email_verified: !!email && verified,
      name: claims.name,
      full_name: claims.name,
      picture: claims.picture,
      avatar_url: claims.picture,
    },
  };
}

const refusal = (target: string, code: ErrorCode, description: string, error = 'server_error'): CallbackOutcome => ({
  kind: 'error',
  target,
  error,
  code,
  description,
});

/** GET /callback: checks the state, redeems the provider's code, resolves the user and mints a session (or an auth code). */
export async function finishCallback(
  ctx: AuthContext,
  query: Record<string, string | undefined>,
): Promise<CallbackOutcome> {
  const client = await openidClient();
  const site = String(ctx.settings.site_url);
  const [row] = query.state
    ? await ctx.project.sql`update auth.oauth_states set consumed_at = ${now(ctx)}
        where state_hash = ${sha256(query.state)} and consumed_at is null and expires_at > ${now(ctx)}
        returning provider, nonce, code_verifier_sealed, redirect_to, code_challenge, link_user_id`
    : [];
  if (!row)
    return refusal(
      site,
      'bad_oauth_state',
      'The sign-in flow is unknown, expired or already finished; start again.',
      'invalid_request',
    );
  const state = row as unknown as StateRow;
  // The target was allowlisted at the start; it is checked again in case the allowlist changed since.
  const target =
    state.redirect_to === site || isAllowedRedirect(state.redirect_to, String(ctx.settings.uri_allow_list ?? ''))
      ? state.redirect_to
      : site;
  if (target !== state.redirect_to)
    return refusal(site, 'bad_redirect', 'redirect_to is no longer on the redirect allowlist.', 'invalid_request');
  if (query.error)
    return refusal(target, 'oauth_provider_error', query.error_description ?? query.error, 'access_denied');

  let profile: ProviderProfile;
  let providerTokens: ProviderTokens;
  try {
    const provider = providerOf(ctx, state.provider);
    const config = await configurationOf(ctx, provider);
    const current = new URL(callbackUrl(ctx));
    for (const [k, v] of Object.entries(query)) if (v !== undefined) current.searchParams.set(k, v);
    const tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: ctx.p.master.decrypt(state.code_verifier_sealed),
      expectedState: query.state,
      expectedNonce: state.nonce ?? undefined,
      idTokenExpected: provider.openid,
    });
    providerTokens = {
      provider_token: tokens.access_token,
      ...(tokens.refresh_token ? { provider_refresh_token: tokens.refresh_token } : {}),
    };
    profile = provider.openid
      ? await openidProfile(config, provider, tokens)
      : await githubProfile(config, provider, tokens.access_token);
  } catch (err) {
    const e = err instanceof HearthError ? err : unreachable(state.provider, err);
    return refusal(target, e.code, e.message);
  }

  try {
    const result = await ctx.project.sql.begin(async (tx) => {
      const user = await userForIdentity(ctx, tx, profile, state.link_user_id);
      if (state.code_challenge)
        return {
          flow: await startFlow(
            ctx,
            tx,
            { challenge: state.code_challenge, method: 's256' },
            user.id,
            'oauth',
            providerTokens,
          ),
        };
      return { session: await issueSession(ctx, user, { amr: 'oauth' }, tx) };
    });
    if (result.flow) return { kind: 'code', target, code: await mintAuthCode(ctx, result.flow) };
    return { kind: 'session', target, session: result.session!, providerTokens };
  } catch (err) {
    if (err instanceof HearthError) return refusal(target, err.code, err.message, 'access_denied');
    throw err;
  }
}
