/**
 * HTTP helpers shared by the auth route plugins: the user behind an access
 * token, GoTrue's extras on error answers, and GoTrue's way of reading
 * bodies (JSON whatever the Content-Type, an empty one as {}).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { fail } from '../errors.ts';
import { envelope, sendError, toHearthError } from '../http/envelopes.ts';
import { safeJsonParser } from '../http/json-body.ts';
import { RateLimited } from '../db/rate-limit.ts';
import { PasswordRefused } from './validate.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type Query = Record<string, string | undefined>;

/**
 * The query string, one value per name. A name given twice is 400
 * validation_failed: which of the values would count is ambiguous, and a
 * redirect_to or token must never be read from an array.
 */
export function queryOf(request: FastifyRequest): Query {
  const q = (request.query ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(q)) {
    if (typeof value !== 'string')
      throw fail('validation_failed', `The query parameter ${name.slice(0, 60)} must be given once.`);
  }
  return q as Query;
}

export type UserClaims = JWTPayload & { sub: string; session_id?: string };

/** The verified claims of the user's access token, or 401 no_authorization. */
export function userClaims(request: FastifyRequest): UserClaims {
  const user = request.hearth.auth?.user;
  if (!user || typeof user.sub !== 'string' || !UUID.test(user.sub)) {
    // GoTrue's text first (supabase-js's own tests match on it), then what to send.
    throw fail(
      'no_authorization',
      "This endpoint requires a Bearer token: the user's access token, as Authorization: Bearer <access token>.",
    );
  }
  return user as UserClaims;
}

/**
 * GoTrue's answer when the access token's user was deleted (hard, or soft:
 * the row stays with deleted_at): 403 user_not_found, on every route that
 * acts as the signed-in user. supabase-js's signOut treats it as signed out.
 */
export const userGone = () => fail('user_not_found', 'User from sub claim in JWT does not exist.', { status: 403 });

/** The session id of verified claims, when it is one. */
export const sessionIdOf = (claims: UserClaims): string | null =>
  typeof claims.session_id === 'string' && UUID.test(claims.session_id) ? claims.session_id : null;

/**
 * A path parameter that must be a uuid. Anything else names nothing: 404, with
 * GoTrue's code and text for it (validation_failed, "user_id must be an UUID").
 */
export function idParam(value: string, what: 'user' | 'factor' | 'session'): string {
  if (!UUID.test(value)) throw fail('validation_failed', `${what}_id must be an UUID`, { status: 404 });
  return value;
}

/**
 * Every /auth/v1 body is read as JSON whatever its Content-Type, as GoTrue
 * reads it: `curl -d '{...}'` sends application/x-www-form-urlencoded, other
 * clients text/plain or no Content-Type at all, and Fastify would answer them
 * 415 or hand over a string. An empty body reads as {} (supabase-js sends
 * `Content-Type: application/json` with none on DELETE /factors/{id},
 * unlinkIdentity and signOut). A body that is not JSON stays 400
 * invalid_request. Only these routes: the other areas keep their parsers.
 */
export function readBodiesAsJson(app: FastifyInstance): void {
  const json = safeJsonParser(app);
  const parse = (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    if (body === '') done(null, {});
    // biome-ignore lint/nursery/noFloatingPromises: Fastify's parser answers through `done`; its type also allows a promise.
    else json(request, body as string, done);
  };
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string' }, parse);
  // Any other Content-Type, and a body sent without one.
  app.addContentTypeParser('*', { parseAs: 'string' }, parse);
}

/**
 * Errors as the server renders them (SPEC 2.16), plus what GoTrue adds: the
 * code in an `x-sb-error-code` header on every refusal, and `weak_password:
 * {reasons}` on a refused password.
 */
export function authErrors(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const e = toHearthError(err);
    if (!e || e.status >= 500) return sendError(request, reply, err);
    reply.header('x-sb-error-code', e.code);
    if (e instanceof RateLimited) reply.header('retry-after', String(e.retryAfterSeconds));
    if (!(e instanceof PasswordRefused)) return sendError(request, reply, e);
    return reply
      .code(e.status)
      .type('application/json; charset=utf-8')
      .send({ ...(envelope('auth', e) as object), weak_password: { reasons: e.reasons } });
  });
}
