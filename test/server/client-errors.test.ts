/**
 * Requests Node's HTTP parser refuses before any route (400, 431) carry the
 * data plane's CORS headers when they name a data-plane path and a browser
 * sent an Origin: without them the browser reports a CORS failure and the
 * page never sees the code.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api' } });
});
after(async () => {
  await h?.close();
});

/** Sends raw bytes; the answer's status, lower-cased headers and JSON body. */
async function rawHttp(request: string) {
  const url = new URL(h.info.BASE_URL);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.end(request);
  let text = '';
  for await (const chunk of socket) text += chunk;
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

const origin = 'Origin: https://app.example\r\n';
const badHeader = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}X-Bad: a\u0001b\r\n\r\n`;
const hugeHeaders = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`;

test('a 400 or 431 on a data-plane path with an Origin carries the CORS headers the data plane sends', async () => {
  const answers = [
    await rawHttp(badHeader('/rest/v1/items', origin)),
    await rawHttp(badHeader('/auth/v1/token?grant_type=password', origin)),
    await rawHttp(hugeHeaders(`/project/${h.info.PROJECT_REF}/storage/v1/bucket`, origin)),
    await rawHttp(badHeader('/realtime/v1/api/broadcast', origin)),
  ];
  assert.deepEqual(
    answers.map((a) => a.status),
    [400, 400, 431, 400],
  );
  for (const answer of answers) {
    assert.equal(answer.headers['access-control-allow-origin'], '*');
    assert.match(answer.headers['access-control-expose-headers']!, /Content-Range/);
  }
  assert.equal(answers[0]!.body.code, 'malformed_request');
  assert.equal(answers[2]!.body.error.code, 'headers_too_large');

  // The same answer a routed request gets: compare with a 401 of the data plane.
  const routed = await fetch(`${h.info.BASE_URL}/rest/v1/items`, { headers: { origin: 'https://app.example' } });
  assert.equal(routed.status, 401);
  assert.equal(routed.headers.get('access-control-allow-origin'), answers[0]!.headers['access-control-allow-origin']);
  assert.equal(
    routed.headers.get('access-control-expose-headers'),
    answers[0]!.headers['access-control-expose-headers'],
  );
});

test('no CORS headers without an Origin, nor on the paths the data plane does not open (/v1, /functions/v1)', async () => {
  for (const request of [
    badHeader('/rest/v1/items'),
    hugeHeaders('/auth/v1/settings'),
    badHeader('/v1/projects', origin),
    badHeader('/functions/v1/hello', origin),
  ]) {
    const answer = await rawHttp(request);
    assert.ok(answer.status === 400 || answer.status === 431);
    assert.equal(answer.headers['access-control-allow-origin'], undefined, request.slice(0, 40));
  }
});
