/**
 * A client that stops sending its body mid-request is answered 408 in the
 * area's envelope and its connection closed (HEARTH_REQUEST_TIMEOUT_MS),
 * rather than holding its socket for good. Node checks request deadlines
 * every few seconds (connectionsCheckingInterval), so each answer takes up to
 * that long.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api', HEARTH_REQUEST_TIMEOUT_MS: '500' } });
  const bucket = await h.api('POST', '/storage/v1/bucket', { token: h.info.SECRET_KEY, body: { name: 'uploads' } });
  assert.equal(bucket.status, 200);
});
after(async () => {
  await h?.close();
});

test('a body that stops arriving gets 408 request_timeout and the connection is closed', {
  timeout: 60_000,
}, async () => {
  const url = new URL(h.info.BASE_URL);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.write(
    `POST /rest/v1/items HTTP/1.1\r\nHost: x\r\napikey: ${h.info.PUBLISHABLE_KEY}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"a":`,
  );
  let text = '';
  // Node checks request deadlines every few seconds (connectionsCheckingInterval), so the answer takes up to that long.
  for await (const chunk of socket) text += chunk;
  assert.match(text, /^HTTP\/1\.1 408 /);
  const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
  assert.equal(body.code, 'request_timeout');
});

/** Sends the start of a request that never finishes; what came back before the server closed. */
async function stalled(start: string): Promise<string> {
  const url = new URL(h.info.BASE_URL);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.write(start);
  let text = '';
  for await (const chunk of socket) text += chunk;
  return text;
}

const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

/** A POST whose headers are in and whose body (declared 1,000 bytes) stops after a few. */
const stalledBody = (path: string, headers: string) =>
  stalled(`POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}content-length: 1000\r\n\r\n{"a":`);

test('a body that stops arriving is answered 408 in the envelope of its area', { timeout: 60_000 }, async () => {
  const json = `apikey: ${h.info.PUBLISHABLE_KEY}\r\ncontent-type: application/json\r\n`;
  const [rest, auth, authUnderRef, storage] = await Promise.all([
    stalledBody('/rest/v1/items', json),
    stalledBody('/auth/v1/signup', json),
    stalledBody(`/project/${h.info.PROJECT_REF}/auth/v1/signup`, json),
    stalledBody(
      '/storage/v1/object/uploads/x.bin',
      `apikey: ${h.info.SECRET_KEY}\r\ncontent-type: application/octet-stream\r\n`,
    ),
  ]);
  for (const answer of [rest, auth, authUnderRef, storage]) assert.match(answer, /^HTTP\/1\.1 408 /);
  assert.deepEqual(bodyOf(rest), {
    message: 'The request did not arrive in time.',
    code: 'request_timeout',
    details: null,
    hint: null,
  });
  for (const answer of [auth, authUnderRef]) {
    assert.equal(bodyOf(answer).error_code, 'request_timeout');
    assert.equal(bodyOf(answer).code, 408);
  }
  assert.equal(bodyOf(storage).statusCode, '408');
  assert.equal(bodyOf(storage).error.code, 'request_timeout');
});

test('headers that never finish get the 408 in the management envelope: Node holds their request line', {
  timeout: 60_000,
}, async () => {
  const answer = await stalled('GET /auth/v1/settings HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n');
  assert.match(answer, /^HTTP\/1\.1 408 /);
  assert.equal(bodyOf(answer).error.code, 'request_timeout');
  assert.equal(bodyOf(answer).code, 'request_timeout');
});

test('a request refused before its body came, whose body then stops, keeps its one answer: no 408 after it', {
  timeout: 60_000,
}, async () => {
  const answer = await stalledBody('/rest/v1/items', 'content-type: application/json\r\n');
  assert.match(answer, /^HTTP\/1\.1 401 /);
  assert.equal(answer.split('HTTP/1.1 ').length, 2, answer);
});

test("with an Origin, the 408 of a data-plane body carries the data plane's CORS headers", {
  timeout: 60_000,
}, async () => {
  const answer = await stalledBody(
    '/rest/v1/items',
    `origin: https://app.example\r\napikey: ${h.info.PUBLISHABLE_KEY}\r\ncontent-type: application/json\r\n`,
  );
  assert.match(answer, /^HTTP\/1\.1 408 /);
  assert.match(answer, /\r\naccess-control-allow-origin: \*\r\n/i);
  assert.match(answer, /\r\naccess-control-expose-headers: [^\r]*Content-Range/i);
});
