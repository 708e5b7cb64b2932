/**
 * After a body is refused while it is still arriving (over the route's limit,
 * or unparsable), Fastify answers with `Connection: close`, and Node then
 * closes the socket as soon as the answer is written. A client still writing
 * its body (Node's http, browsers' fetch write it whole before reading) meets
 * a reset instead of the answer. So the rest of the body is read and dropped,
 * up to DRAIN_LIMIT bytes, and the connection is kept; past the bound it is
 * closed, as before.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export const DRAIN_LIMIT = 64 * 1024 * 1024;

export function drainRefusedBody(request: FastifyRequest, reply: FastifyReply, err: unknown): void {
  const raw = request.raw;
  // Only Fastify's body parsers: an area that streams a body itself (storage uploads) decides
  // on its own connection, since its pipes may hold part of the body.
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('FST_ERR_CTP_')) return;
  if (raw.complete || reply.getHeader('connection') !== 'close') return;
  reply.removeHeader('connection');
  let dropped = 0;
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT) raw.socket.destroy();
  });
  raw.resume();
}
