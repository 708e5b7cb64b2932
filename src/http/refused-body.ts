/**
 * An error answered while the request body is still arriving: a key refused
 * before any route read the body, a body over the route's limit, an upload
 * an area gave up on. Node would close the connection right after such an
 * answer whenever it says `Connection: close` (Fastify's body parsers and
 * some areas set it) or the client asked for that (Node's http without an
 * agent, curl's `-H 'Connection: close'`), and a socket closed with bytes
 * still unread is reset by the kernel: a client that writes its whole body
 * before reading (Node's http, browsers' fetch) then meets the reset instead
 * of the answer (RFC 9112 9.6, "the TCP reset problem"; nodejs/node#12339).
 *
 * So the answer keeps the connection open, the rest of the body is read and
 * dropped up to DRAIN_LIMIT bytes, and the connection is closed only once the
 * body is in, when the client asked for that; otherwise it stays for the next
 * request. Past the bound it is closed at once.
 *
 * The decision is taken from the request's state, never from the error:
 * every area converts errors its own way before they reach sendError.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const DRAIN_LIMIT = 64 * 1024 * 1024;

/** Requests answered before their body was in: a later timeout of that body must not answer them twice. */
const answeredEarly = new WeakSet<IncomingMessage>();

export const wasAnsweredEarly = (raw: IncomingMessage): boolean => answeredEarly.has(raw);

/** Requests whose area closes the connection after its answer itself (closeAfterAnswer): not drained. */
const closedByArea = new WeakSet<IncomingMessage>();

/**
 * An upload given up part way has had its body piped into the area's own
 * streams, which may have destroyed or unpiped the request stream: draining
 * it then can leave the client writing into a connection nobody reads (a
 * hang, seen under load). Such a request is answered with Connection: close
 * and what is still queued is resumed, as before the drain existed.
 */
export function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.complete) return;
  closedByArea.add(request.raw);
  reply.header('connection', 'close');
  request.raw.resume();
}

export function drainRefusedBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  const res = reply.raw;
  // The body is in, or the connection is already gone (an area's pipe destroyed it), or the answer has started.
  if (raw.complete || raw.destroyed || res.headersSent || closedByArea.has(raw)) return;
  answeredEarly.add(raw);
  // Without the header Node keeps the connection after the answer, as for any keep-alive client.
  reply.removeHeader('connection');
  if (!res.shouldKeepAlive) {
    // The client asked to close, which Node would do as soon as the answer is written: told to
    // keep the connection, it waits, and the body's end closes it with nothing left unread.
    res.shouldKeepAlive = true;
    raw.once('end', () => (res.writableFinished ? raw.socket.end() : res.once('finish', () => raw.socket.end())));
  }
  let dropped = 0;
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT) raw.socket.destroy();
  });
  raw.resume();
}
