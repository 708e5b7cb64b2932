/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a control
 * byte in a header, a header block over Node's 16 KiB limit, a request that
 * did not arrive in time) are answered in the area's envelope too, where
 * Fastify's default writes a shape of its own with no code, and with the
 * data plane's CORS headers when a browser sent them (else it sees a CORS
 * failure, not the code).
 *
 * The area and the Origin are read from what Node hands over: the request it
 * was reading when its headers were in (a body that did not arrive in time,
 * or a broken chunk), else the bytes it had read with a parse error. Headers
 * that never finished are held inside Node's native parser, out of reach:
 * that 408 is in the management envelope, without CORS headers.
 */
import type { ConnectionError } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { fail, type HearthError } from '../errors.ts';
import { areaOf, envelope } from '../http/envelopes.ts';
import { wasAnsweredEarly } from '../http/refused-body.ts';
import { ANSWER_HEADERS, opensCors } from './cors.ts';

function refusal(err: ConnectionError): [number, string, HearthError] {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [408, 'Request Timeout', fail('request_timeout')];
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return [431, 'Request Header Fields Too Large', fail('headers_too_large')];
  }
  return [
    400,
    'Bad Request',
    fail(
      'malformed_request',
      `The request is not valid HTTP (${err.code ?? 'parse error'}): check the request line and the header names and values.`,
    ),
  ];
}

interface Refused {
  /** As the area is chosen from it: a /project/{ref} prefix dropped. */
  path: string;
  origin: string | undefined;
}

const withoutProject = (path: string) => path.replace(/^\/project\/[a-z0-9]+(?=\/)/, '');

/** The request line and the Origin header of the bytes Node had read. */
function fromBytes(bytes: Buffer): Refused {
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const [line = '', ...headers] = (end < 0 ? text : text.slice(0, end)).split('\r\n');
  const origin = headers.find((h) => /^origin:/i.test(h));
  return { path: withoutProject(line.split(' ')[1] ?? '/'), origin: origin?.slice(7).trim() || undefined };
}

/** The request whose headers Node has read and whose body it is still reading (its parser's own field). */
function requestInProgress(socket: Socket): IncomingMessage | null {
  const incoming = (socket as unknown as { parser?: { incoming?: IncomingMessage | null } }).parser?.incoming;
  return incoming && !incoming.complete ? incoming : null;
}

function refusedRequest(err: ConnectionError, incoming: IncomingMessage | null): Refused {
  if (incoming) return { path: withoutProject(incoming.url ?? '/'), origin: incoming.headers.origin || undefined };
  // Node hands the bytes it had read as a Buffer (Fastify's type says otherwise).
  const bytes: unknown = err.rawPacket;
  return Buffer.isBuffer(bytes) ? fromBytes(bytes) : { path: '/', origin: undefined };
}

/**
 * A request that already has its answer, written or on its way (one given
 * before its body was in, whose body then stopped arriving): a second answer
 * would corrupt the first, so the connection is only closed, as Node's own
 * handler does.
 */
function answered(socket: Socket, incoming: IncomingMessage | null): boolean {
  if (incoming && wasAnsweredEarly(incoming)) return true;
  return (socket as unknown as { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
}

export function answerClientError(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return;
  const incoming = requestInProgress(socket);
  if (answered(socket, incoming)) {
    socket.destroy();
    return;
  }
  const [status, reason, e] = refusal(err);
  const { path, origin } = refusedRequest(err, incoming);
  const body = JSON.stringify(envelope(areaOf(path), e));
  const cors = opensCors(path, origin)
    ? Object.entries(ANSWER_HEADERS)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')
    : '';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${cors}Connection: close\r\n\r\n${body}`,
  );
}
