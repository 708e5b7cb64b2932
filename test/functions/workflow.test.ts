// A workflow `function` step invokes a function deployed through the
// management API, in the engine's process runtime (no invoker injected).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, settle, wf } from '../workflows/helpers.ts';
import { leftoverChildren } from './helpers.ts';
import { deploy, putSecrets } from './http-helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000' } });
  await enableWorkflows(h);
});
after(async () => {
  await h?.close();
  assert.deepEqual(await leftoverChildren(), [], 'no workerd process outlives the server');
});

test('a function step runs the deployed function with the payload as body; its JSON body is the output', async () => {
  const ref = h.info.PROJECT_REF;
  await putSecrets(h, ref, { FACTOR: '2' });
  // verify_jwt does not apply: the engine is the platform, not an HTTP caller.
  await deploy(h, ref, 'multiply', {
    verify_jwt: true,
    source: `Deno.serve(async (req) => {
  const { n } = await req.json();
  return Response.json({ result: n * Number(Deno.env.get('FACTOR')), method: req.method, type: req.headers.get('content-type') });
});`,
  });
  const id = await wf(h).go('calc', [{ key: 'mul', kind: 'function', target: 'multiply', payload: { n: 21 } }]);
  const run = await settle(h, 'calc', id);
  assert.equal(run.status, 'succeeded', run.last_error);
  assert.deepEqual(run.output, { result: 42, method: 'POST', type: 'application/json' });
  assert.deepEqual(run.steps[0].output, run.output);
});

test('a missing function fails the step at once (404); a function answering 500 is retried, then fails', async () => {
  const missing = await wf(h).go('nofn', [{ key: 'f', kind: 'function', target: 'not-deployed', payload: {} }]);
  const failed = await settle(h, 'nofn', missing);
  assert.equal(failed.status, 'failed');
  assert.match(failed.last_error, /answered 404: .*function_not_found/);
  assert.equal(failed.steps[0].attempt, 1);

  await deploy(h, h.info.PROJECT_REF, 'broken', { source: "Deno.serve(() => new Response('nope', { status: 500 }));" });
  const broken = await wf(h).go('broken', [
    { key: 'f', kind: 'function', target: 'broken', payload: {}, max_attempts: 2 },
  ]);
  const run = await settle(h, 'broken', broken, { stepMs: 5000 });
  assert.equal(run.status, 'failed');
  assert.match(run.last_error, /answered 500: nope/);
  assert.equal(run.steps[0].attempt, 2);
});
