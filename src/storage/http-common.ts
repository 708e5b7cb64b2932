/** Small helpers the storage routes share. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestInfo } from '../db/with-role.ts';
import { fail } from '../errors.ts';
import type { DataPlaneAuth } from '../http/credentials.ts';
import { bytesKey, type StorageContext } from './context.ts';
import type { ObjectRow } from './objects.ts';
import { planServe } from './serve.ts';

export type Params = { bucket: string; '*': string };

export function authOf(request: FastifyRequest): DataPlaneAuth {
  const auth = request.hearth.auth;
  if (!auth) throw fail('no_api_key');
  return auth;
}

export function requireService(request: FastifyRequest): DataPlaneAuth {
  const auth = authOf(request);
  if (auth.caller.role !== 'service_role') {
    throw fail('forbidden', 'Bucket management needs the secret key (role service_role).');
  }
  return auth;
}

export const requestInfo = (request: FastifyRequest): RequestInfo => ({
  method: request.method,
  path: request.url.split('?')[0],
  headers: request.headers as Record<string, unknown>,
});

export const isUpsert = (request: FastifyRequest) => String(request.headers['x-upsert'] ?? '').toLowerCase() === 'true';

const SEND_WHOLE_UP_TO = 64 * 1024;

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

const MAX_DOWNLOAD_NAME = 255;

/** Streams an object (or answers 304/206/416) under the headers of serve.ts. */
export async function sendObject(
  s: StorageContext,
  request: FastifyRequest,
  reply: FastifyReply,
  project: { ref: string },
  o: ObjectRow,
) {
  const query = request.query as Record<string, string | undefined>;
  // It is repeated (twice encoded) in Content-Disposition: a long one would make a header clients cannot read.
  if (query.download !== undefined && query.download.length > MAX_DOWNLOAD_NAME) {
    throw fail('invalid_request', `download= names the saved file: at most ${MAX_DOWNLOAD_NAME} characters.`);
  }
  const plan = planServe(
    o,
    {
      ifNoneMatch: one(request.headers['if-none-match']),
      ifModifiedSince: one(request.headers['if-modified-since']),
      range: one(request.headers.range),
      ifRange: one(request.headers['if-range']),
      download: query.download,
    },
    request.method === 'HEAD',
  );
  if (plan.status === 416) {
    // The error envelope (sendError) goes out with Content-Range: bytes */<size>, as RFC 9110 asks.
    reply.headers(plan.headers);
    throw fail(
      'invalid_range',
      `The requested range is not satisfiable: the object has ${o.size} bytes, and the range must start before its end.`,
    );
  }
  reply.code(plan.status).headers(plan.headers);
  if (!plan.body) return reply.send();
  const key = bytesKey(project, o.version);
  const range = plan.range ?? undefined;
  const length = range ? range.end - range.start + 1 : o.size;
  // A small object is read and sent whole: per-request overhead dominates there, not bytes.
  if (length <= SEND_WHOLE_UP_TO && s.backend.readBuffer) return reply.send(await s.backend.readBuffer(key, range));
  return reply.send(await s.backend.read(key, range));
}
