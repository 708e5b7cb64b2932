/**
 * /auth/v1 MFA and passkeys over HTTP (SPEC 4.1): factor enrolment,
 * challenge, verify and removal (TOTP and passkeys), and passkey-only
 * sign-in. Request and response shapes follow supabase-js's mfa client.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import { authContext, type AuthContext } from './context.ts';
import { checkEnrolment, insertFactor, unenrolFactor, userFactor } from './factors.ts';
import { readBodiesAsJson, authErrors, idParam, userClaims } from './http.ts';
import { challengeTotp, enrolTotp, verifyTotp } from './mfa-totp.ts';
import { spendRateLimit } from './rate-limit.ts';
import { requireLiveSession, requireTokenUser } from './user-sessions.ts';
import { signedInUser } from './users.ts';
import { invalid, objectBody, optionalString, requiredString } from './validate.ts';
import { challengeWebauthn, passkeySignIn, passkeySignInOptions, relyingParty, verifyWebauthn } from './webauthn.ts';

type IdParams = { Params: { id: string } };

/** A WebAuthn credential in SPEC's `credential` field, or in supabase-js's `webauthn.credential_response`. */
function credentialOf(body: Record<string, unknown>): unknown {
  if (body.credential !== undefined) return body.credential;
  const webauthn = body.webauthn as { credential_response?: unknown } | undefined;
  return webauthn && typeof webauthn === 'object' ? webauthn.credential_response : undefined;
}

export async function mfaRoutes(app: FastifyInstance, opts: { p: Platform }) {
  const { p } = opts;
  readBodiesAsJson(app);
  authErrors(app);
  const ctxOf = (request: FastifyRequest): Promise<AuthContext> => authContext(p, request.hearth.project);

  app.post('/auth/v1/factors', async (request) => {
    const claims = userClaims(request);
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    const type = requiredString(body, 'factor_type');
    const friendlyName = optionalString(body, 'friendly_name')?.slice(0, 255) ?? null;
    await requireLiveSession(ctx, claims);
    const user = await signedInUser(ctx.project.sql, claims.sub);
    if (type === 'phone') throw fail('mfa_phone_enroll_not_enabled');
    if (type !== 'totp' && type !== 'webauthn') throw invalid('factor_type must be totp or webauthn.');
    if (type === 'webauthn') relyingParty(ctx.settings); // SPEC 7: 422 webauthn_not_configured comes first
    await checkEnrolment(ctx, claims);
    if (type === 'totp') return enrolTotp(ctx, user, { friendlyName, issuer: optionalString(body, 'issuer') });
    const factor = await insertFactor(ctx, ctx.project.sql, { userId: user.id, type: 'webauthn', friendlyName });
    return { id: factor.id, type: 'webauthn', friendly_name: factor.friendly_name };
  });

  app.post<IdParams>('/auth/v1/factors/:id/challenge', async (request) => {
    const claims = userClaims(request);
    const ctx = await ctxOf(request);
    await requireLiveSession(ctx, claims);
    await spendRateLimit(ctx, 'mfa_challenge', request.ip);
    const factor = await userFactor(ctx.project.sql, claims.sub, idParam(request.params.id, 'factor'));
    if (factor.factor_type === 'totp') return challengeTotp(ctx, factor);
    return challengeWebauthn(ctx, await signedInUser(ctx.project.sql, claims.sub), factor);
  });

  app.post<IdParams>('/auth/v1/factors/:id/verify', async (request) => {
    const claims = userClaims(request);
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    await requireLiveSession(ctx, claims);
    await spendRateLimit(ctx, 'mfa_verify', request.ip);
    // Each verify may be a guess: the factor's own allowance holds whatever address the guesses come from.
    const factor = await userFactor(ctx.project.sql, claims.sub, idParam(request.params.id, 'factor'));
    await spendRateLimit(ctx, 'mfa_factor_verify', factor.id);
    const challengeId = requiredString(body, 'challenge_id');
    const credential = credentialOf(body);
    if (credential !== undefined) return verifyWebauthn(ctx, claims, factor.id, challengeId, credential);
    const code = optionalString(body, 'code');
    if (code === undefined) {
      throw invalid(
        factor.factor_type === 'totp'
          ? 'code is required (the 6 digits of the authenticator app).'
          : 'credential is required (the PublicKeyCredential JSON).',
      );
    }
    return verifyTotp(ctx, claims, factor.id, challengeId, code);
  });

  app.delete<IdParams>('/auth/v1/factors/:id', async (request) => {
    const claims = userClaims(request);
    const ctx = await ctxOf(request);
    await requireTokenUser(ctx, claims);
    return unenrolFactor(ctx, claims, idParam(request.params.id, 'factor'));
  });

  // Passkey-only sign-in: nobody is signed in yet, so no key is needed (SPEC 5, public calls).
  app.post('/auth/v1/webauthn/authenticate/options', { config: { ignoreCredentials: true } }, async (request) => {
    const ctx = await ctxOf(request);
    relyingParty(ctx.settings); // SPEC 7: 422 webauthn_not_configured comes first
    // Anyone may call it and each call stores a challenge: the address's allowance bounds them.
    await spendRateLimit(ctx, 'passkey_sign_in', request.ip);
    return passkeySignInOptions(ctx);
  });

  app.post('/auth/v1/webauthn/authenticate', { config: { ignoreCredentials: true } }, async (request) => {
    const ctx = await ctxOf(request);
    // An unconfigured relying party is the answer whatever the body (SPEC 7: 422 webauthn_not_configured).
    relyingParty(ctx.settings);
    const body = objectBody(request.body);
    const challengeId = requiredString(body, 'challenge_id');
    const credential = credentialOf(body);
    if (credential === undefined)
      throw invalid('credential is required (the PublicKeyCredential JSON of navigator.credentials.get).');
    return passkeySignIn(ctx, challengeId, credential);
  });
}
