/**
 * /auth/v1 over HTTP (SPEC 4.1): sign-up, token grants, logout, the user,
 * e-mail codes and links, password recovery. Handlers read the request,
 * call the flows with plain values, and shape the answer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail, type StatusOf } from '../errors.ts';
import {
  getUser,
  passwordGrant,
  signUpGuest,
  signUpUnconfirmed,
  signUpWithPassword,
  updateUser,
} from './account-flows.ts';
import { Background } from './background.ts';
import { authContext, type AuthContext } from './context.ts';
import { adminRoutes } from './routes-admin.ts';
import {
  followLink,
  pkceGrant,
  refuseSignInSignup,
  sendRecoveryMail,
  sendSignInMail,
  verifyCode,
  verifyLinkToken,
} from './email-flows.ts';
import { readBodiesAsJson, authErrors, queryOf, sessionIdOf, userClaims } from './http.ts';
import { readChallenge } from './pkce.ts';
import { spendRateLimit } from './rate-limit.ts';
import { redirectTarget, signInTarget } from './redirects.ts';
import { refreshSession, revokeByAccessToken, revokeByRefreshToken, type LogoutScope } from './sessions.ts';
import { requireTokenUser } from './user-sessions.ts';
import { refuseSignupWhenDisabled } from './users.ts';
import {
  invalid,
  metadata,
  normaliseEmail,
  objectBody,
  optionalBoolean,
  optionalString,
  requiredString,
} from './validate.ts';

const redirectParam = (request: FastifyRequest, body: Record<string, unknown>): string | undefined =>
  queryOf(request).redirect_to ?? optionalString(body, 'redirect_to');

/**
 * GoTrue's answer to a phone sign-in when no phone provider is set up, rather
 * than "email is required": 400, and 422 on the password grant, as GoTrue.
 */
function refusePhoneOnly(body: Record<string, unknown>, status: StatusOf<'phone_provider_disabled'> = 400): void {
  if (optionalString(body, 'phone') !== undefined && optionalString(body, 'email') === undefined) {
    throw fail('phone_provider_disabled', undefined, { status });
  }
}

/** The issuers GoTrue names in its "Provider (issuer ...) is not enabled" answer. */
const ID_TOKEN_ISSUERS: Record<string, string> = {
  google: 'https://accounts.google.com',
  apple: 'https://appleid.apple.com',
  azure: 'https://login.microsoftonline.com/common/v2.0',
  facebook: 'https://www.facebook.com',
};

function withFragment(target: string, params: Record<string, string>): string {
  const u = new URL(target);
  u.hash = new URLSearchParams(params).toString();
  return u.toString();
}

const MAGIC_LINKS_OFF =
  "Email link is invalid or has expired: magic links are off until the project's redirect allowlist is set";

export async function authRoutes(app: FastifyInstance, opts: { p: Platform }) {
  const { p } = opts;
  const background = new Background(p.log);
  app.addHook('onClose', () => background.drain());

  readBodiesAsJson(app);
  authErrors(app);

  const ctxOf = (request: FastifyRequest): Promise<AuthContext> => authContext(p, request.hearth.project);
  await app.register(adminRoutes, { p, background });

  app.post('/auth/v1/signup', async (request, reply) => {
    const body = objectBody(request.body);
    refusePhoneOnly(body);
    const ctx = await ctxOf(request);
    const email = optionalString(body, 'email');
    const password = optionalString(body, 'password');
    const data = metadata(body);
    if (email === undefined && password === undefined) {
      return reply.code(201).send(await signUpGuest(ctx, request.ip, data));
    }
    // As GoTrue: refused before the fields are checked or the rate limit is spent.
    refuseSignupWhenDisabled(ctx);
    if (email === undefined) throw invalid('email is required with a password (send neither for a guest session).');
    if (password === undefined)
      throw invalid('password is required with an e-mail address (or use POST /auth/v1/otp).');
    const address = normaliseEmail(email);
    if (ctx.settings.mailer_autoconfirm === false) {
      // Read before any limit is spent: a refused redirect_to or code_challenge costs nothing.
      const redirectTo = redirectTarget(ctx.settings, redirectParam(request, body));
      const challenge = readChallenge(body);
      await spendRateLimit(ctx, 'signups', request.ip);
      // GoTrue's answer without a session: 200 and the user at the top level (supabase-js: data.session null).
      return reply.code(200).send(
        await signUpUnconfirmed(ctx, {
          email: address,
          password,
          metadata: data,
          redirectTo,
          challenge,
          clientIp: request.ip,
        }),
      );
    }
    await spendRateLimit(ctx, 'signups', request.ip);
    return reply.code(201).send(await signUpWithPassword(ctx, { email: address, password, metadata: data }));
  });

  app.post('/auth/v1/token', async (request) => {
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    const grant = queryOf(request).grant_type ?? optionalString(body, 'grant_type');
    switch (grant) {
      case 'password': {
        refusePhoneOnly(body, 422);
        const email = requiredString(body, 'email');
        const password = requiredString(body, 'password');
        let address: string;
        try {
          address = normaliseEmail(email);
        } catch {
          throw fail('invalid_credentials');
        }
        return passwordGrant(ctx, address, password);
      }
      case 'refresh_token':
        return refreshSession(ctx, requiredString(body, 'refresh_token'));
      case 'pkce':
        return pkceGrant(ctx, requiredString(body, 'auth_code'), requiredString(body, 'code_verifier'));
      // GoTrue's grants for sign-in methods Hearth does not offer: their "provider not enabled" answers, named plainly.
      case 'id_token': {
        const issuer =
          ID_TOKEN_ISSUERS[optionalString(body, 'provider') ?? ''] ??
          optionalString(body, 'provider')?.slice(0, 100) ??
          '';
        throw fail(
          'provider_disabled',
          `Provider (issuer "${issuer}") is not enabled: sign-in with an ID token (signInWithIdToken) is not supported; use signInWithOAuth (GET /auth/v1/authorize).`,
        );
      }
      case 'web3':
        throw fail('web3_provider_disabled');
      default:
        throw fail('unsupported_grant_type');
    }
  });

  // SPEC 3.1: logout with a refresh token is always 204, so an expired or malformed access
  // token sent along (an app signing out an hour later) does not refuse it.
  app.post('/auth/v1/logout', { config: { refusedTokenAsKey: true } }, async (request, reply) => {
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    const scope = (queryOf(request).scope ?? optionalString(body, 'scope') ?? 'local') as LogoutScope;
    if (!['local', 'global', 'others'].includes(scope)) throw invalid('scope must be local, global or others.');
    const refreshToken = optionalString(body, 'refresh_token');
    // Without a refresh token, the refused access token was all there was to name a session.
    const refused = request.hearth.refusedToken;
    if (refused && !(refreshToken && scope === 'local')) throw refused;
    if (refreshToken && scope === 'local') await revokeByRefreshToken(ctx, refreshToken);
    const user = request.hearth.auth?.user;
    if (user) {
      const claims = userClaims(request);
      await requireTokenUser(ctx, claims);
      const sessionId = sessionIdOf(claims);
      await revokeByAccessToken(ctx, claims.sub, sessionId, scope);
    } else if (scope !== 'local') {
      userClaims(request); // global and others name the user by the access token
    }
    return reply.code(204).send();
  });

  app.get('/auth/v1/user', async (request) => getUser(await ctxOf(request), userClaims(request).sub));

  app.put('/auth/v1/user', async (request) => {
    const claims = userClaims(request);
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    const email = optionalString(body, 'email');
    // GoTrue's answers: app_metadata is the admin API's to write, and there is no phone provider.
    if (body.app_metadata !== undefined && body.app_metadata !== null) throw fail('not_admin');
    if (optionalString(body, 'phone') !== undefined)
      throw fail('phone_provider_disabled', 'Phone numbers are not supported: this project has no phone provider.');
    return updateUser(ctx, claims, {
      email: email === undefined ? undefined : normaliseEmail(email),
      password: optionalString(body, 'password'),
      currentPassword: optionalString(body, 'current_password'),
      nonce: optionalString(body, 'nonce'),
      metadata: metadata(body),
      redirectTo: redirectTarget(ctx.settings, redirectParam(request, body)),
      challenge: readChallenge(body),
    });
  });

  app.post('/auth/v1/otp', async (request) => {
    const body = objectBody(request.body);
    refusePhoneOnly(body);
    const ctx = await ctxOf(request);
    const email = normaliseEmail(requiredString(body, 'email'));
    const req = {
      email,
      // Null while the allowlist is empty: the mail carries the code alone, no link.
      redirectTo: signInTarget(ctx.settings, redirectParam(request, body)),
      challenge: readChallenge(body),
      createUser: optionalBoolean(body, 'create_user') ?? true,
      metadata: metadata(body),
    };
    await spendRateLimit(ctx, 'email_sent', request.ip);
    // Everything that depends on whether the address exists happens after the answer
    // (but disable_signup's refusal of an unknown one, as GoTrue answers it).
    const admitted = await refuseSignInSignup(ctx, req);
    background.run('auth otp mail', () => sendSignInMail(ctx, admitted));
    return {};
  });

  app.post('/auth/v1/recover', async (request) => {
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    const req = {
      email: normaliseEmail(requiredString(body, 'email')),
      redirectTo: redirectTarget(ctx.settings, redirectParam(request, body)),
      challenge: readChallenge(body),
    };
    await spendRateLimit(ctx, 'email_sent', request.ip);
    background.run('auth recovery mail', () => sendRecoveryMail(ctx, req));
    return {};
  });

  app.post('/auth/v1/verify', async (request) => {
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    refusePhoneOnly(body);
    const type = requiredString(body, 'type');
    const tokenHash = optionalString(body, 'token_hash');
    if (tokenHash) return verifyLinkToken(ctx, { type, token: tokenHash });
    const email = normaliseEmail(requiredString(body, 'email'));
    return verifyCode(ctx, { email, type, code: requiredString(body, 'token') });
  });

  // signInWithSSO: GoTrue's answer while SAML is off (GET /settings says saml_enabled: false).
  app.post('/auth/v1/sso', async () => {
    throw fail('saml_provider_disabled');
  });

  // Opened from an e-mail in a browser: no API key.
  app.get('/auth/v1/verify', { config: { ignoreCredentials: true } }, async (request, reply: FastifyReply) => {
    const q = queryOf(request);
    const ctx = await ctxOf(request);
    // A magic link while the allowlist is empty (SPEC 5: they do nothing): with a redirect_to
    // (every mailed link has one) 400 bad_redirect; without, it is not redeemed at all.
    const signIn = q.type === 'magiclink' ? signInTarget(ctx.settings, q.redirect_to) : undefined;
    const target = signIn ?? redirectTarget(ctx.settings, q.redirect_to);
    const outcome =
      signIn === null
        ? ({ kind: 'error', code: 'otp_expired', description: MAGIC_LINKS_OFF } as const)
        : await followLink(ctx, { token: q.token ?? '', type: q.type ?? '' });
    if (outcome.kind === 'code') {
      const u = new URL(target);
      u.searchParams.set('code', outcome.code);
      return reply.redirect(u.toString(), 302);
    }
    if (outcome.kind === 'error') {
      return reply.redirect(
        withFragment(target, {
          error: 'access_denied',
          error_code: outcome.code,
          error_description: outcome.description,
        }),
        302,
      );
    }
    const s = outcome.session;
    return reply.redirect(
      withFragment(target, {
        access_token: s.access_token,
        expires_at: String(s.expires_at),
        expires_in: String(s.expires_in),
        refresh_token: s.refresh_token,
        token_type: s.token_type,
        type: outcome.type,
      }),
      302,
    );
  });
}
