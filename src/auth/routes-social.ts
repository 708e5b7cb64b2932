/**
 * /auth/v1 social sign-in, identity linking and the user's sessions over
 * HTTP (SPEC 4.1): GET /authorize, GET /callback, GET
 * /user/identities/authorize, DELETE /user/identities/{id}, GET /sessions,
 * DELETE /sessions/{id}.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import { authContext, type AuthContext } from './context.ts';
import { readBodiesAsJson, authErrors, idParam, queryOf, sessionIdOf, userClaims, type Query } from './http.ts';
import { unlinkIdentity } from './identities.ts';
import { finishCallback, startAuthorization, type CallbackOutcome, type StartRequest } from './oauth.ts';
import { providerOf } from './oauth-providers.ts';
import { readChallenge } from './pkce.ts';
import { requiredSignInTarget } from './redirects.ts';
import { listSessions, requireLiveSession, requireTokenUser, revokeSession } from './user-sessions.ts';

type IdParams = { Params: { id: string } };

function redirectFor(outcome: CallbackOutcome): string {
  const u = new URL(outcome.target);
  if (outcome.kind === 'code') {
    u.searchParams.set('code', outcome.code);
    return u.toString();
  }
  const params: Record<string, string> =
    outcome.kind === 'error'
      ? { error: outcome.error, error_code: outcome.code, error_description: outcome.description }
      : {
          access_token: outcome.session.access_token,
          expires_at: String(outcome.session.expires_at),
          expires_in: String(outcome.session.expires_in),
          ...outcome.providerTokens,
          refresh_token: outcome.session.refresh_token,
          token_type: outcome.session.token_type,
        };
  // An error also goes in the query, as GoTrue's callback sends it: a server-side callback route
  // (@supabase/ssr's /auth/callback) never sees the fragment, and would find neither code nor error.
  if (outcome.kind === 'error') for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  u.hash = new URLSearchParams(params).toString();
  return u.toString();
}

/**
 * The start of a flow: provider, allowlisted redirect_to, optional PKCE
 * challenge and extra scopes, checked in that order as GoTrue does, so a
 * disabled or unknown provider is the answer whatever redirect_to says.
 */
function startRequest(ctx: AuthContext, q: Query, linkUserId: string | null): StartRequest {
  const provider = providerOf(ctx, q.provider);
  return {
    provider,
    redirectTo: requiredSignInTarget(ctx.settings, q.redirect_to, 'Social sign-in'),
    challenge: readChallenge(q),
    linkUserId,
    scopes: q.scopes,
  };
}

/** config/auth security_manual_linking_enabled false: linking and unlinking are 404, as GoTrue answers. */
function refuseWhenManualLinkingOff(ctx: AuthContext): void {
  if (ctx.settings.security_manual_linking_enabled === false) throw fail('manual_linking_disabled');
}

export async function socialRoutes(app: FastifyInstance, opts: { p: Platform }) {
  const { p } = opts;
  readBodiesAsJson(app);
  authErrors(app);
  const ctxOf = (request: FastifyRequest): Promise<AuthContext> => authContext(p, request.hearth.project);

  // Followed by a browser: no API key (as in Supabase).
  app.get('/auth/v1/authorize', { config: { ignoreCredentials: true } }, async (request, reply: FastifyReply) => {
    const ctx = await ctxOf(request);
    const url = await startAuthorization(ctx, startRequest(ctx, queryOf(request), null));
    return reply.redirect(url, 302);
  });

  app.get('/auth/v1/callback', { config: { ignoreCredentials: true } }, async (request, reply: FastifyReply) => {
    const outcome = await finishCallback(await ctxOf(request), queryOf(request));
    return reply.redirect(redirectFor(outcome), 302);
  });

  app.get('/auth/v1/user/identities/authorize', async (request) => {
    const claims = userClaims(request);
    const ctx = await ctxOf(request);
    refuseWhenManualLinkingOff(ctx);
    await requireLiveSession(ctx, claims);
    return { url: await startAuthorization(ctx, startRequest(ctx, queryOf(request), claims.sub)) };
  });

  app.delete<IdParams>('/auth/v1/user/identities/:id', async (request) => {
    const claims = userClaims(request);
    const ctx = await ctxOf(request);
    refuseWhenManualLinkingOff(ctx);
    await unlinkIdentity(ctx, claims.sub, request.params.id);
    return {};
  });

  app.get('/auth/v1/sessions', async (request) => {
    const claims = userClaims(request);
    const ctx = await ctxOf(request);
    await requireTokenUser(ctx, claims);
    return listSessions(ctx, claims.sub, sessionIdOf(claims));
  });

  app.delete<IdParams>('/auth/v1/sessions/:id', async (request, reply) => {
    const claims = userClaims(request);
    const ctx = await ctxOf(request);
    await requireTokenUser(ctx, claims);
    await revokeSession(ctx, claims.sub, idParam(request.params.id, 'session'));
    return reply.code(204).send();
  });
}
