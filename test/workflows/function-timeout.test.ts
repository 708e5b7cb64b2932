// A workflow `function` step whose deployed function never answers: the
// engine bounds the attempt by timeout_seconds (issue 8: "a function that
// times out ends in the SPEC state, with the reason in last_error"). Real
// functions runtime, no injected invoker.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { leftoverChildren } from '../functions/helpers.ts';
import { deploy } from '../functions/http-helpers.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, tick, wf } from './helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000' } });
  await enableWorkflows(h);
});
after(async () => {
  await h?.close();
  assert.deepEqual(await leftoverChildren(), [], 'no workerd process outlives the server');
});

test('a deployed function that never answers: each attempt fails after timeout_seconds, retried, then the run fails with the reason', async () => {
  // A pending timer keeps the request alive (a promise with nothing pending would be failed by the runtime at once).
  await deploy(h, h.info.PROJECT_REF, 'hang', {
    source:
      "Deno.serve(async () => { await new Promise((r) => setTimeout(r, 60_000)); return new Response('late'); });",
  });
  const id = await wf(h).go('hangs', [
    { key: 'f', kind: 'function', target: 'hang', payload: {}, timeout_seconds: 1, max_attempts: 2 },
  ]);
  await tick(h);
  let run = await wf(h).run('hangs', id);
  assert.deepEqual([run.status, run.steps[0].status, run.steps[0].attempt], ['running', 'pending', 1]);
  assert.match(run.steps[0].error, /did not finish within timeout_seconds \(1 s\)/);
  h.clock.advance(2000);
  await tick(h);
  run = await wf(h).run('hangs', id);
  assert.equal(run.status, 'failed');
  assert.equal(run.steps[0].attempt, 2);
  assert.match(
    run.last_error,
    /step "f" failed after 2 attempts: The attempt did not finish within timeout_seconds \(1 s\)/,
  );
});
