// Functions under a Hearth configured through its environment:
// HEARTH_FUNCTION_TIMEOUT_MS sets the wall-clock limit of every invocation, and
// HEARTH_TRUSTED_PROXIES decides the client address a function is given.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { deploy } from './http-helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_FUNCTION_TIMEOUT_MS: '700', HEARTH_TRUSTED_PROXIES: '127.0.0.1' } });
});
after(async () => {
  await h?.close();
});

test('a function slower than HEARTH_FUNCTION_TIMEOUT_MS answers 504 function_timeout', async () => {
  await deploy(h, h.info.PROJECT_REF, 'sleepy', {
    source: 'Deno.serve(async () => { await new Promise((r) => setTimeout(r, 3000)); return new Response("late"); });',
    verify_jwt: false,
  });
  await deploy(h, h.info.PROJECT_REF, 'quick', { source: 'Deno.serve(() => new Response("ok"));', verify_jwt: false });
  const slow = await fetch(`${h.url}/functions/v1/sleepy`, { method: 'POST' });
  assert.equal(slow.status, 504);
  assert.equal((await slow.json()).error.code, 'function_timeout');
  const quick = await fetch(`${h.url}/functions/v1/quick`, { method: 'POST' });
  assert.equal(quick.status, 200);
  assert.equal(await quick.text(), 'ok');
});

test('behind a trusted proxy the function sees the client the proxy names, not addresses the client made up', async () => {
  await deploy(h, h.info.PROJECT_REF, 'client-address', {
    source: `Deno.serve((req) => Response.json([req.headers.get('x-forwarded-for'), req.headers.get('x-real-ip')]));`,
    verify_jwt: false,
  });
  // The proxy (127.0.0.1, trusted) appended the address it saw; what the client sent before it is not believed.
  const res = await fetch(`${h.url}/functions/v1/client-address`, {
    headers: { 'x-forwarded-for': '198.51.100.9, 203.0.113.7', 'x-real-ip': '198.51.100.9' },
  });
  assert.deepEqual(await res.json(), ['203.0.113.7', '203.0.113.7']);
});
