/**
 * One HearthError, an envelope per area (SPEC 2.16):
 * - /rest/v1: PostgREST's flat `{message, code, details, hint}`;
 * - /auth/v1: `{error: {code, message}}`, plus GoTrue's `error_code` and `msg`
 *   so supabase-js shows the message and code;
 * - /storage/v1: `{error: {code, message, hint?}}`, plus storage-api's
 *   `statusCode`, `code` (Supabase Storage's name, storage-codes.ts) and
 *   `message` so storage-js does the same; the message is Supabase's own
 *   wording where apps compare it, and `hint` says what Hearth adds;
 * - management (/v1 and the rest): `{error: {code, message}}`, with the same
 *   code and message repeated at the top level, since SPEC 2.16 describes
 *   management errors only as "a status plus a code" and Supabase's
 *   Management API puts `message` there;
 * - /functions/v1: `{error: {code, message}}`;
 * - /realtime/v1: `{error, code, message}` with `error` the message text, which
 *   realtime-js's httpSend() shows.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailable, isDatabaseUnavailable } from '../db/unavailable.ts';
import { fail, HearthError } from '../errors.ts';
import { drainRefusedBody } from './refused-body.ts';
import { supabaseStorageCode } from './storage-codes.ts';

export type Area = 'rest' | 'auth' | 'storage' | 'functions' | 'realtime' | 'management';

export function areaOf(url: string): Area {
  if (url.startsWith('/rest/v1')) return 'rest';
  if (url.startsWith('/auth/v1')) return 'auth';
  if (url.startsWith('/storage/v1')) return 'storage';
  if (url.startsWith('/functions/v1')) return 'functions';
  if (url.startsWith('/realtime/v1')) return 'realtime';
  return 'management';
}

export function envelope(area: Area, e: HearthError): unknown {
  switch (area) {
    case 'rest':
      return { message: e.message, code: e.code, details: e.details, hint: e.hint };
    case 'auth':
      return { error: { code: e.code, message: e.message }, code: e.status, error_code: e.code, msg: e.message };
    case 'storage':
      return {
        error: { code: e.code, message: e.message, ...(e.hint && { hint: e.hint }) },
        statusCode: String(e.status),
        code: supabaseStorageCode(e.code),
        message: e.message,
      };
    case 'management':
      return { error: { code: e.code, message: e.message }, code: e.code, message: e.message };
    case 'realtime':
      return { error: e.message, code: e.code, message: e.message };
    default:
      return { error: { code: e.code, message: e.message } };
  }
}

/**
 * Fastify's own errors (bad JSON, body too large, ...) as HearthErrors, and a
 * database that cannot serve right now (lost connection, restarting, too many
 * connections): a passing condition, so 503 with Retry-After, not a bug.
 */
export function toHearthError(err: unknown): HearthError | null {
  if (err instanceof HearthError) return err;
  const f = err as FastifyError;
  if (!f || typeof f !== 'object') return null;
  if (isDatabaseUnavailable(f)) return new DatabaseUnavailable();
  if (
    f.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    f.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    f.name === 'SyntaxError'
  ) {
    return fail('invalid_request', `The request body is not valid JSON: ${f.message}`);
  }
  if (f.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return fail('payload_too_large');
  if (f.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return fail('unsupported_media_type', `Unsupported Content-Type: ${f.message}`);
  if (f.validation) return fail('invalid_request', `Invalid request: ${f.message}`);
  // Fastify's other refusals (a Content-Length that does not match, a bad URL) are 400, and 414 for a path parameter over its length limit.
  if (typeof f.statusCode === 'number' && f.statusCode >= 400 && f.statusCode < 500) {
    return fail('invalid_request', f.message, { status: f.statusCode === 414 ? 414 : 400 });
  }
  return null;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const area = areaOf(request.url);
  // The only path parameters of /storage/v1 are bucket ids, and none is over 63 characters: one
  // past Fastify's 100-character limit is a bucket that does not exist, as a 64-100 one is.
  let e =
    area === 'storage' && (err as FastifyError)?.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? fail('bucket_not_found')
      : toHearthError(err);
  if (!e) {
    request.log.error({ err }, 'unhandled error');
    e = fail('internal_error');
  }
  drainRefusedBody(request, reply);
  // A passing condition (the database's, or the storage backend's): when to try again.
  const retryAfter = (e as { retryAfterSeconds?: number }).retryAfterSeconds;
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  return reply.code(e.status).type('application/json; charset=utf-8').send(envelope(area, e));
}
