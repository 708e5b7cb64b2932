/**
 * A client that stops sending its body mid-request is answered 408 in the
 * area's envelope and its connection closed (HEARTH_REQUEST_TIMEOUT_MS),
 * rather than holding its socket for good.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api', HEARTH_REQUEST_TIMEOUT_MS: '500' } });
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
