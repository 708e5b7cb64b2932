// HEARTH_FUNCTION_TIMEOUT_MS sets the wall-clock limit of every invocation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { deploy } from './http-helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_FUNCTION_TIMEOUT_MS: '700' } });
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
