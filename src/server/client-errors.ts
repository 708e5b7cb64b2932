/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a control
 * byte in a header, a header block over Node's 16 KiB limit, a request that
 * did not arrive in time) are answered in the area's envelope too, where
 * Fastify's default writes a shape of its own with no code.
 */
import type { ConnectionError } from 'fastify';
import type { Socket } from 'node:net';
import { fail, type HearthError } from '../errors.ts';
import { areaOf, envelope } from '../http/envelopes.ts';

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

/** The path of the request line, as the area is chosen from it (a /project/{ref} prefix dropped). */
function requestPath(raw: unknown): string {
  // Node hands the bytes it had read as a Buffer (Fastify's type says otherwise).
  const line = Buffer.isBuffer(raw) ? raw.subarray(0, 4096).toString('latin1').split('\r\n', 1)[0]! : '';
  return (line.split(' ')[1] ?? '/').replace(/^\/project\/[a-z0-9]+(?=\/)/, '');
}

export function answerClientError(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return;
  const [status, reason, e] = refusal(err);
  const body = JSON.stringify(envelope(areaOf(requestPath(err.rawPacket)), e));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
