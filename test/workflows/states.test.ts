// SPEC 3.2 rows and SPEC 6.1 events not covered by the engine tests: a
// definition that does not load, a sub-workflow wait past its timeout, the
// per-project ceiling of advancing runs across workers, passes committed
// together (each keeps its own lease fence), the events of runs that succeed
// or are cancelled, non-JSON bodies, and the default tick.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { loadConfig } from '../../src/config.ts';
import { shipDrains } from '../../src/workflows/drain.ts';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { enableWorkflows, settle, startDrainReceiver, tick, wf } from './helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000', HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  await enableWorkflows(h);
});
after(async () => {
  await h?.close();
});

const w = () => wf(h);
const SQL = { key: 's', kind: 'sql', target: 'select 1' };

describe('structural failures and waits', () => {
  test('a pinned definition that does not load fails the run without compensation', async () => {
    await w().put('corrupt', { steps: [{ ...SQL, compensate: { kind: 'sql', target: 'select 2' } }] });
    await h.hearth.p.dbs
      .control`update platform.workflow_definitions set steps = '"not a step list"'::jsonb where name = 'corrupt'`;
    const start = await w().start('corrupt');
    assert.equal(start.status, 201);
    await tick(h);
    const run = await w().run('corrupt', start.body.id);
    assert.equal(run.status, 'failed');
    assert.equal(run.compensation.state, 'none');
    assert.match(run.last_error, /Version 1 of workflow "corrupt" could not be loaded/);
  });

  test('a sub-workflow that outlives timeout_seconds is cancelled and fails the parent step without retries', async () => {
    await w().put('slow-child', { steps: [{ key: 'z', kind: 'sleep', sleep_for: '1h' }] });
    const id = await w().go('impatient', [
      { key: 'sub', kind: 'subworkflow', target: 'slow-child', timeout_seconds: 60 },
    ]);
    await tick(h); // parent starts the child
    await tick(h); // child parks in its sleep
    let run = await w().run('impatient', id);
    assert.equal(run.status, 'waiting');
    const childId = run.steps[0].output.run_id;
    h.clock.advance(61_000);
    await tick(h);
    run = await w().run('impatient', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.steps[0].attempt, 1);
    assert.match(
      run.last_error,
      new RegExp(`Sub-workflow run ${childId} did not finish within 60 s; it was cancelled`),
    );
    assert.equal((await w().run('slow-child', childId)).status, 'cancelled');
  });
});

describe('steps of an ended run', () => {
  const open = (run: { steps: { status: string }[] }) =>
    run.steps.filter((s) => s.status === 'pending' || s.status === 'running');

  test('a join that fails leaves no fan-out sibling pending between attempts: it ends skipped with its attempts', async () => {
    const id = await w().go('sibling', [
      {
        key: 'f',
        kind: 'fanout',
        children: [
          { key: 'dies', kind: 'sql', target: 'select 1/0', max_attempts: 1 },
          { key: 'flaky', kind: 'sql', target: 'select 1/0', max_attempts: 5 },
        ],
      },
      { key: 'j', kind: 'join' },
    ]);
    const run = await settle(h, 'sibling', id, { stepMs: 1000 });
    assert.equal(run.status, 'failed');
    assert.deepEqual(open(run), []);
    const flaky = run.steps.find((s: { key: string }) => s.key === 'flaky');
    assert.equal(flaky.status, 'skipped');
    assert.equal(flaky.attempt, 1);
    assert.match(flaky.error, /division by zero/);
  });

  test('cancelling a run parked in a wait, or in a sub-workflow, leaves no step running', async () => {
    await w().put('parked-child', { steps: [{ key: 'w', kind: 'wait_for_signal', signal: 'go' }] });
    const waiting = await w().go('parked', [SQL, { key: 'w', kind: 'wait_for_signal', signal: 'go' }]);
    const nested = await w().go('parked-parent', [{ key: 'sub', kind: 'subworkflow', target: 'parked-child' }]);
    for (let i = 0; i < 3; i++) await tick(h);
    assert.equal((await w().run('parked', waiting)).status, 'waiting');
    assert.equal((await w().run('parked-parent', nested)).status, 'waiting');
    for (const [name, id] of [
      ['parked', waiting],
      ['parked-parent', nested],
    ] as const) {
      assert.equal((await w().cancel(name, id)).status, 200);
      const run = await w().run(name, id);
      assert.equal(run.status, 'cancelled');
      assert.deepEqual(open(run), [], name);
      assert.equal(run.steps.at(-1).status, 'skipped');
    }
  });
});

describe('workflows turned off', () => {
  test('runs in flight freeze while workflows are off for the project and resume where they were once on again', async () => {
    const config = `/v1/projects/${h.info.PROJECT_REF}/config/workflows`;
    const id = await w().go('frozen', [
      { key: 'a', kind: 'sql', target: 'select 1' },
      { key: 'b', kind: 'sql', target: 'select 2' },
    ]);
    await tick(h);
    assert.equal((await w().run('frozen', id)).cursor, 1);
    assert.equal((await h.api('PATCH', config, { body: { enabled: false } })).status, 200);
    try {
      assert.equal((await tick(h)).leased, 0);
      h.clock.advance(3600_000);
      assert.equal((await tick(h)).leased, 0);
    } finally {
      await enableWorkflows(h);
    }
    const run = await w().run('frozen', id);
    assert.deepEqual(
      [run.status, run.cursor, run.steps[1].status],
      ['running', 1, 'pending'],
      'nothing failed meanwhile',
    );
    await tick(h);
    assert.equal((await w().run('frozen', id)).status, 'succeeded');
  });
});

describe('leases across workers', () => {
  test('at most 10 runs of a project advance at once, counting every worker', async () => {
    await w().put('slow', { steps: [{ key: 's', kind: 'sql', target: 'select pg_sleep(2)' }] });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await w().start('slow')).body.id);
    const first = tick(h, { owner: 'worker-a' });
    // Worker A has leased its 10 (its passes then take 2 s each); worker B ticks meanwhile.
    for (let i = 0; i < 500; i++) {
      const [row] = await h.hearth.p.dbs
        .control`select count(*)::int as n from platform.workflow_runs where lease_owner = 'worker-a'`;
      if (row!.n === 10) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const second = await tick(h, { owner: 'worker-b' });
    assert.equal(second.leased, 0, 'all 10 slots are held by worker-a');
    assert.equal((await first).leased, 10);
    await tick(h, { owner: 'worker-b' });
    for (const id of ids) assert.equal((await w().run('slow', id)).status, 'succeeded');
  });
});

describe('group commit of passes', () => {
  /** An invoker whose calls all wait for open(); `calls` counts the calls made. */
  function gated(bodies: Record<string, unknown>) {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const state = { calls: 0, open: () => open() };
    const invoker = async (_ref: string, _name: string, body: unknown) => {
      state.calls++;
      await gate;
      return { status: 200, body: bodies[(body as { tag: string }).tag] ?? { ok: true } };
    };
    return { state, invoker };
  }

  async function startTagged(name: string, tags: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const tag of tags) {
      await w().put(`${name}-${tag}`, { steps: [{ key: 'f', kind: 'function', target: 'fn', payload: { tag } }] });
      ids.push((await w().start(`${name}-${tag}`)).body.id);
    }
    return ids;
  }

  test('passes written together keep their own lease: a run taken over meanwhile is left to its new owner', async () => {
    const [stolen, a, b] = await startTagged('fenced', ['x', 'y', 'z']);
    const { state, invoker } = gated({});
    const ticking = tick(h, { invoker });
    await until(
      async () => state.calls,
      (n) => n === 3,
    );
    await h.hearth.p.dbs.control`update platform.workflow_runs set lease_owner = 'thief' where id = ${stolen!}`;
    state.open();
    assert.equal((await ticking).leased, 3);
    for (const [id, tag] of [
      [a!, 'y'],
      [b!, 'z'],
    ])
      assert.equal((await w().run(`fenced-${tag}`, id)).status, 'succeeded');
    const run = await w().run('fenced-x', stolen!);
    assert.equal(run.status, 'running');
    assert.equal(run.steps[0].status, 'running', 'the pass that lost its lease wrote nothing back');
    assert.equal(run.steps[0].attempt, 1);
    const [row] = await h.hearth.p.dbs.control`select lease_owner from platform.workflow_runs where id = ${stolen!}`;
    assert.equal(row!.lease_owner, 'thief');
  });

  test('a pass whose write is refused does not hold back the passes written with it', async () => {
    const [bad, a, b] = await startTagged('refused', ['x', 'y', 'z']);
    const { state, invoker } = gated({});
    const ticking = tick(h, { invoker });
    await until(
      async () => state.calls,
      (n) => n === 3,
    );
    // The attempt starts are written; now the database refuses any further write of one run,
    // so the batch holding the three results fails and is written again run by run.
    const control = h.hearth.p.dbs.control;
    await control.unsafe(`create function public.refuse_for_test() returns trigger language plpgsql as $$
      begin raise exception 'refused for the test'; end $$`);
    await control.unsafe(`create trigger refuse_one before update on platform.workflow_runs for each row
      when (old.id = '${bad}') execute function public.refuse_for_test()`);
    try {
      state.open();
      await ticking;
    } finally {
      await control.unsafe('drop trigger refuse_one on platform.workflow_runs; drop function public.refuse_for_test()');
    }
    for (const [id, tag] of [
      [a!, 'y'],
      [b!, 'z'],
    ])
      assert.equal((await w().run(`refused-${tag}`, id)).status, 'succeeded');
    assert.equal((await w().run('refused-x', bad!)).steps[0].status, 'running');
  });

  test('an output the database cannot store (U+0000) fails the step at once instead of wedging the run', async () => {
    const [bad] = await startTagged('nul', ['nul']);
    const { state, invoker } = gated({ nul: { text: 'a\u0000b' } });
    state.open();
    await tick(h, { invoker });
    const run = await w().run('nul-nul', bad!);
    assert.equal(run.status, 'failed');
    assert.match(run.steps[0].error, /NUL character/);
    assert.equal(state.calls, 1, 'not retried');
  });
});

describe('events and envelopes', () => {
  test('log drain: a run that succeeds after a retry, and a cancelled run; step successes are not emitted', async () => {
    const { url, got, close } = await startDrainReceiver();
    try {
      assert.equal((await h.api('PUT', `/v1/projects/${h.info.PROJECT_REF}/log-drain`, { body: { url } })).status, 200);
      const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
      await owner`create table once_gate (n int)`;
      // Fails (no row yet) until the gate holds a row: one retry, then success.
      const ok = await w().go('evented', [
        SQL,
        { key: 'check', kind: 'sql', target: 'select 1 / (select count(*) from once_gate)::int' },
      ]);
      await tick(h);
      await tick(h);
      await owner`insert into once_gate values (1)`;
      await owner.end();
      const done = await settle(h, 'evented', ok, { stepMs: 3000 });
      assert.equal(done.status, 'succeeded');
      assert.equal(done.compensation.state, 'none');

      const gone = (await w().start('evented')).body.id;
      await w().cancel('evented', gone);
      assert.equal((await w().run('evented', gone)).compensation.state, 'none');

      await shipDrains(h.hearth.p);
      const of = (id: string) =>
        got.filter((e) => e.run_id === id).map((e) => (e.step ? `${e.event}:${e.step}` : e.event));
      assert.deepEqual(of(ok), ['run.started', 'step.failed:check', 'run.succeeded']);
      assert.deepEqual(of(gone), ['run.started', 'run.cancelled']);
    } finally {
      await h.api('DELETE', `/v1/projects/${h.info.PROJECT_REF}/log-drain`);
      await close();
    }
  });

  test('a body that is not JSON is 400 invalid_request, for a run start and for a signal', async () => {
    await w().put('plain', { steps: [SQL] });
    const base = `/v1/projects/${h.info.PROJECT_REF}/workflows/plain/runs`;
    const start = await h.api('POST', base, { raw: 'input=1', headers: { 'content-type': 'text/plain' } });
    assert.equal(start.status, 400);
    assert.equal(start.body.error.code, 'invalid_request');
    const broken = await h.api('POST', base, { raw: '{"input": ', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.body.error.code, 'invalid_request');
    const bare = await h.api('POST', base);
    assert.equal(bare.status, 201, 'every field is optional: no body starts a run with input {}');
    assert.deepEqual((await w().run('plain', bare.body.id)).input, {});
    const signal = await h.api('POST', `${base}/${bare.body.id}/signals`, {
      raw: 'go',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(signal.status, 400);
    assert.equal(signal.body.error.code, 'invalid_request');
  });

  test('the engine tick defaults to 15 seconds', () => {
    assert.equal(loadConfig({ DATABASE_URL: serverUrl() }).workflowTickMs, 15_000);
  });
});
