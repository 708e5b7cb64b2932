/**
 * CORS for /auth/v1, /rest/v1, /storage/v1 and /realtime/v1 (its HTTP
 * broadcast API: supabase-js `httpSend()` and `send()`'s REST fallback; the
 * WebSocket upgrade never reaches these hooks), as Supabase's gateway answers
 * it: any origin may call, because the keys and tokens in the headers (never
 * cookies) are what authorise a request. A preflight is answered here, before
 * the credential check, since browsers send it without the apikey.
 * Not opened: /functions/v1 (a function answers its own CORS, as in
 * Supabase) and the management routes /v1 (the dashboard and CLI call them
 * from the same origin or outside a browser).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** /auth/v1, /rest/v1, /storage/v1 and /realtime/v1, alone or followed by / or ?. */
const OPENED = /^\/(?:auth|rest|storage|realtime)\/v1(?:[/?]|$)/;

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
/** Asked for when the preflight names no headers; the ones supabase-js and its sub-clients send. */
const DEFAULT_ALLOW_HEADERS =
  'authorization, apikey, content-type, x-client-info, prefer, range, accept-profile, content-profile, x-upsert, cache-control, x-supabase-api-version';
/** Response headers browser code reads: counts (Content-Range), created locations, retry hints. */
const EXPOSE_HEADERS =
  'Content-Range, Content-Location, Content-Length, Content-Type, Content-Disposition, Location, Range-Unit, Retry-After, ETag, Last-Modified, X-Total-Count, Preference-Applied';
const MAX_AGE = '86400';

/** Whether an answer to this path, asked from this Origin, carries CORS headers. */
export const opensCors = (path: string, origin: unknown): boolean => !!origin && OPENED.test(path);

/** The CORS headers of every answer that is not a preflight's. */
export const ANSWER_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSE_HEADERS,
} as const;

// Callback style: a request without Origin (or off these prefixes) passes without a promise.
export const cors = fp(async (app: FastifyInstance) => {
  app.addHook('onRequest', (request, reply, done) => {
    if (!opensCors(request.url, request.headers.origin)) return done();
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      const asked = request.headers['access-control-request-headers'];
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-allow-methods', ALLOW_METHODS);
      reply.header(
        'access-control-allow-headers',
        typeof asked === 'string' && asked.trim() ? asked : DEFAULT_ALLOW_HEADERS,
      );
      reply.header('access-control-max-age', MAX_AGE);
      // Answered here: done() is not called, so no later hook (the credential check) runs.
      reply.code(204).send();
      return;
    }
    reply.headers(ANSWER_HEADERS);
    done();
  });
});
