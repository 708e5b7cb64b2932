import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, settle, tick, wf } from './helpers.ts';

let h: TestHearth;
let owner: postgres.Sql;
let receiver: http.Server;
let hookUrl: string;
const received: { path: string; body: string; headers: http.IncomingHttpHeaders }[] = [];
/** Per path: the statuses to answer in turn (then 200); 0 = never answer. */
const plan = new Map<string, number[]>();

before(async () => {
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000', HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  await enableWorkflows(h);
  owner = postgres(h.info.DB_URL, { max: 2, onnotice: () => {} });
  await owner.unsafe(`create table ledger (id serial primary key, item text unique, who text default current_user);
    select pgmq.create('jobs');`);
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url!, body, headers: req.headers });
      const status = plan.get(req.url!)?.shift() ?? 200;
      if (status === 0) return; // hang
      res.writeHead(status).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
});
after(async () => {
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
  await owner?.end();
  await h?.close();
});

const w = () => wf(h);

describe('step kinds', () => {
  test('sql steps run as the project owner, one step per tick; output {rows_affected}; run output = last output', async () => {
    const id = await w().go('sqls', [
      { key: 'a', kind: 'sql', target: "insert into ledger (item) values ('a1'), ('a2')" },
      { key: 'b', kind: 'sql', target: "update ledger set item = item || '!' where item = 'a1'" },
    ]);
    await tick(h);
    let run = await w().run('sqls', id);
    assert.equal(run.status, 'running');
    assert.equal(run.cursor, 1);
    assert.deepEqual(run.steps[0].output, { rows_affected: 2 });
    assert.equal(run.steps[1].status, 'pending');
    await tick(h);
    run = await w().run('sqls', id);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.output, { rows_affected: 1 });
    const rows = await owner`select who from ledger where item like 'a%'`;
    assert.deepEqual([...new Set(rows.map((r) => r.who))], [`hearth_${h.info.PROJECT_REF}_owner`]);
  });

  test('a sql step needing superuser fails at once (permission error is not retried)', async () => {
    const id = await w().go('su', [{ key: 'mk', kind: 'sql', target: 'create role sneaky superuser' }]);
    const run = await settle(h, 'su', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.steps[0].attempt, 1);
    assert.match(run.last_error, /step "mk" failed after 1 attempt: SQL error 42501/);
  });

  test('two statements in one sql step are refused', async () => {
    const id = await w().go('two', [{ key: 's', kind: 'sql', target: 'select 1; select 2', max_attempts: 1 }]);
    const run = await settle(h, 'two', id);
    assert.equal(run.status, 'failed');
    assert.match(run.last_error, /multiple commands/);
  });

  test('a constraint violation retries with backoff 2 s, 4 s, then fails with the reason', async () => {
    await owner`insert into ledger (item) values ('dup')`;
    const id = await w().go('dup', [{ key: 'ins', kind: 'sql', target: "insert into ledger (item) values ('dup')" }]);
    await tick(h);
    let run = await w().run('dup', id);
    assert.equal(run.steps[0].attempt, 1);
    assert.equal(run.steps[0].status, 'pending');
    assert.match(run.steps[0].error, /23505/);
    h.clock.advance(1500);
    await tick(h);
    assert.equal((await w().run('dup', id)).steps[0].attempt, 1, 'not retried before 2 s');
    h.clock.advance(600);
    await tick(h);
    assert.equal((await w().run('dup', id)).steps[0].attempt, 2);
    h.clock.advance(3000);
    await tick(h);
    assert.equal((await w().run('dup', id)).steps[0].attempt, 2, 'second backoff is 4 s');
    h.clock.advance(1100);
    await tick(h);
    run = await w().run('dup', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.steps[0].status, 'failed');
    assert.equal(run.steps[0].attempt, 3);
    assert.match(run.last_error, /failed after 3 attempts: SQL error 23505/);
  });

  test('enqueue sends the payload to the project queue → {msg_id}', async () => {
    const id = await w().go('enq', [{ key: 'e', kind: 'enqueue', target: 'jobs', payload: { job: 1 } }]);
    const run = await settle(h, 'enq', id);
    assert.equal(run.status, 'succeeded');
    const [msg] = await owner`select msg_id, message from pgmq.q_jobs where msg_id = ${run.output.msg_id}`;
    assert.deepEqual(msg!.message, { job: 1 });
  });

  test('webhook: HMAC-signed with the step secret → {delivered: true}', async () => {
    const id = await w().go('hook', [
      { key: 'h', kind: 'webhook', target: `${hookUrl}/signed`, secret: 'step-secret', payload: { paid: true } },
    ]);
    const run = await settle(h, 'hook', id);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.output, { delivered: true });
    const got = received.find((r) => r.path === '/signed')!;
    assert.equal(got.body, '{"paid":true}');
    const ts = got.headers['x-service-timestamp'] as string;
    const expected = createHmac('sha256', 'step-secret').update(`${ts}.${got.body}`).digest('hex');
    assert.equal(got.headers['x-service-signature'], expected);
  });

  test('a hanging receiver times out per attempt (timeout_seconds) and fails with the reason', async () => {
    plan.set('/hang', [0]);
    const id = await w().go('hang', [
      { key: 'h', kind: 'webhook', target: `${hookUrl}/hang`, timeout_seconds: 1, max_attempts: 1 },
    ]);
    const run = await settle(h, 'hang', id);
    assert.equal(run.status, 'failed');
    assert.match(run.last_error, /within/);
  });

  test('a receiver answering 500 then 200 succeeds on the retry; a webhook to a private address is refused', async () => {
    plan.set('/flaky', [500]);
    const id = await w().go('flaky', [{ key: 'h', kind: 'webhook', target: `${hookUrl}/flaky` }]);
    const run = await settle(h, 'flaky', id, { stepMs: 2500 });
    assert.equal(run.status, 'succeeded');
    assert.equal(run.steps[0].attempt, 2);
    // A private target is refused when saved (test/outbound/saved-targets.test.ts); the delivery guard
    // still stands behind it, e.g. for a definition stored before that check existed.
    assert.equal(
      (await w().put('ssrf', { steps: [{ key: 'h', kind: 'webhook', target: 'http://10.0.0.1/x' }] })).status,
      400,
    );
    assert.equal(
      (await w().put('ssrf', { steps: [{ key: 'h', kind: 'webhook', target: 'http://hooks.example.com/x' }] })).status,
      201,
    );
    await h.hearth.p.dbs
      .control`update platform.workflow_definitions set steps = jsonb_set(steps, '{0,target}', '"http://10.0.0.1/x"')
      where name = 'ssrf'`;
    const ssrf = (await w().start('ssrf')).body.id;
    const refused = await settle(h, 'ssrf', ssrf);
    assert.equal(refused.status, 'failed');
    assert.match(refused.last_error, /public addresses/);
  });

  test('function: without the functions module the step fails with "functions are not available"; with an invoker its body is the output', async () => {
    const id = await w().go('fn', [{ key: 'f', kind: 'function', target: 'hello', payload: { name: 'x' } }]);
    const run = await settle(h, 'fn', id, { invoker: null });
    assert.equal(run.status, 'failed');
    assert.match(run.last_error, /functions are not available/);
    const calls: unknown[] = [];
    const invoker = async (ref: string, name: string, body: unknown) => {
      calls.push([ref, name, body]);
      return { status: 200, body: { hi: name } };
    };
    const ok = await w().start('fn');
    const done = await settle(h, 'fn', ok.body.id, { invoker });
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.output, { hi: 'hello' });
    assert.deepEqual(calls, [[h.info.PROJECT_REF, 'hello', { name: 'x' }]]);
  });

  test('a step output over 256 KiB fails the step without retries; 256 KiB exactly is kept', async () => {
    const big = (bytes: number) => async () => ({ status: 200, body: 'x'.repeat(bytes - 2) });
    const id = await w().go('fn-big', [{ key: 'f', kind: 'function', target: 'big', max_attempts: 3 }]);
    const run = await settle(h, 'fn-big', id, { invoker: big(256 * 1024 + 1) });
    assert.equal(run.status, 'failed');
    assert.equal(run.steps[0].attempt, 1);
    assert.equal(run.steps[0].output, null);
    assert.match(run.steps[0].error, /output is over 256 KiB/);
    const ok = await w().start('fn-big');
    const done = await settle(h, 'fn-big', ok.body.id, { invoker: big(256 * 1024) });
    assert.equal(done.status, 'succeeded');
    assert.equal(done.output.length, 256 * 1024 - 2);
  });

  test('sleep holds the run (waiting) until sleep_for has elapsed on the clock', async () => {
    const id = await w().go('nap', [
      { key: 'z', kind: 'sleep', sleep_for: '1h' },
      { key: 'after', kind: 'sql', target: 'select 1' },
    ]);
    await tick(h);
    assert.equal((await w().run('nap', id)).status, 'waiting');
    h.clock.advance(3599_000);
    await tick(h);
    assert.equal((await w().run('nap', id)).cursor, 0);
    h.clock.advance(2000);
    await tick(h);
    assert.equal((await w().run('nap', id)).cursor, 1);
    const run = await settle(h, 'nap', id);
    assert.equal(run.status, 'succeeded');
  });

  test('wait_for_signal: the signal payload is the step output and the run output; a wait past its timeout fails', async () => {
    const id = await w().go('approve', [
      { key: 'ok', kind: 'wait_for_signal', signal: 'approved', timeout_seconds: 3600 },
    ]);
    await tick(h);
    assert.equal((await w().run('approve', id)).status, 'waiting');
    await w().signal('approve', id, { signal: 'other', payload: 1 });
    await w().signal('approve', id, { signal: 'approved', payload: { by: 'ann' } });
    const run = await settle(h, 'approve', id);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.steps[0].output, { by: 'ann' });
    assert.deepEqual(run.output, { by: 'ann' });

    const late = (await w().start('approve')).body.id;
    await tick(h);
    h.clock.advance(3601_000);
    await tick(h);
    const timedOut = await w().run('approve', late);
    assert.equal(timedOut.status, 'failed');
    assert.equal(timedOut.steps[0].attempt, 1);
    assert.match(timedOut.last_error, /No "approved" signal arrived within 3600 s/);
  });

  test('cancel a waiting run: cancelled, and a later tick does not touch it', async () => {
    const id = (await w().start('approve')).body.id;
    await tick(h);
    assert.equal((await w().cancel('approve', id)).status, 200);
    h.clock.advance(7200_000);
    await tick(h);
    assert.equal((await w().run('approve', id)).status, 'cancelled');
  });
});

describe('fan-out, join, sub-workflows', () => {
  test('fanout children run independently; join output is keyed by child key', async () => {
    const id = await w().go('fan', [
      {
        key: 'split',
        kind: 'fanout',
        children: [
          { key: 'c1', kind: 'sql', target: "insert into ledger (item) values ('c1')" },
          { key: 'c2', kind: 'enqueue', target: 'jobs', payload: 2 },
          { key: 'c3', kind: 'webhook', target: `${hookUrl}/child` },
        ],
      },
      { key: 'gather', kind: 'join' },
    ]);
    const run = await settle(h, 'fan', id);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(Object.keys(run.output).sort(), ['c1', 'c2', 'c3']);
    assert.deepEqual(run.output.c1, { rows_affected: 1 });
    assert.deepEqual(run.output.c3, { delivered: true });
    const fanRow = run.steps.find((s: { key: string }) => s.key === 'split');
    assert.ok(run.steps.filter((s: { parent_step_id?: string }) => s.parent_step_id === fanRow.id).length === 3);
  });

  test('at most 8 children advance per tick', async () => {
    const children = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, kind: 'sql', target: 'select 1' }));
    const id = await w().go('wide', [
      { key: 'f', kind: 'fanout', children },
      { key: 'j', kind: 'join' },
    ]);
    await tick(h); // fanout spawns
    await tick(h); // 8 children
    const run = await w().run('wide', id);
    assert.equal(
      run.steps.filter((s: { status: string; parent_step_id?: string }) => s.parent_step_id && s.status === 'succeeded')
        .length,
      8,
    );
    assert.equal((await settle(h, 'wide', id)).status, 'succeeded');
  });

  test('a child that exhausts its attempts fails the join and the run', async () => {
    const id = await w().go('fanfail', [
      {
        key: 'f',
        kind: 'fanout',
        children: [
          { key: 'good', kind: 'sql', target: 'select 1' },
          { key: 'bad', kind: 'sql', target: 'select 1/0', max_attempts: 2 },
        ],
      },
      { key: 'j', kind: 'join' },
    ]);
    const run = await settle(h, 'fanfail', id, { stepMs: 3000 });
    assert.equal(run.status, 'failed');
    const bad = run.steps.find((s: { key: string }) => s.key === 'bad');
    assert.equal(bad.status, 'failed');
    assert.equal(bad.attempt, 2);
    assert.equal(run.steps.find((s: { key: string }) => s.key === 'j').status, 'failed');
    assert.match(run.last_error, /child step "bad" failed after 2 attempts/);
  });

  test('subworkflow starts an ordinary child run and awaits it → {run_id}', async () => {
    await w().put('child', { steps: [{ key: 'c', kind: 'sql', target: 'select 1' }] });
    const id = await w().go('parent', [{ key: 'sub', kind: 'subworkflow', target: 'child' }]);
    const run = await settle(h, 'parent', id);
    assert.equal(run.status, 'succeeded');
    const childId = run.output.run_id;
    const child = await w().run('child', childId);
    assert.equal(child.status, 'succeeded');
    assert.equal(child.parent_run_id, id);
    assert.deepEqual(child.input, {}, 'a step without payload starts the child with {}');
    assert.ok(
      (await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/workflows/child/runs`)).body.some(
        (r: { id: string }) => r.id === childId,
      ),
    );
  });

  test("a subworkflow step's payload is the child run's input", async () => {
    await w().put('echo', { steps: [{ key: 'c', kind: 'sql', target: 'select 1' }] });
    const id = await w().go('with-payload', [
      { key: 'sub', kind: 'subworkflow', target: 'echo', payload: { order: 7, lines: ['a', 'b'] } },
      { key: 'zero', kind: 'subworkflow', target: 'echo', payload: 0 },
    ]);
    const run = await settle(h, 'with-payload', id);
    assert.equal(run.status, 'succeeded');
    const [sub, zero] = run.steps.map((s: { output: { run_id: string } }) => s.output.run_id);
    assert.deepEqual((await w().run('echo', sub)).input, { order: 7, lines: ['a', 'b'] });
    assert.equal((await w().run('echo', zero)).input, 0);
  });

  test('a cancelled child fails the parent step without retries', async () => {
    await w().put('slowchild', { steps: [{ key: 'z', kind: 'sleep', sleep_for: '1h' }] });
    const id = await w().go('parent2', [{ key: 'sub', kind: 'subworkflow', target: 'slowchild' }]);
    await tick(h);
    const run = await w().run('parent2', id);
    const childId = run.steps[0].output.run_id;
    assert.equal((await w().cancel('slowchild', childId)).status, 200);
    const done = await settle(h, 'parent2', id);
    assert.equal(done.status, 'failed');
    assert.equal(done.steps[0].attempt, 1);
    assert.match(done.last_error, /was cancelled/);
  });

  test('sub-workflows nest at most 5 deep: deeper is a structural failure', async () => {
    await w().put('loop', { steps: [{ key: 'again', kind: 'subworkflow', target: 'loop' }] });
    const id = (await w().start('loop')).body.id;
    for (let i = 0; i < 20; i++) {
      await tick(h);
      h.clock.advance(1000);
    }
    const runs = await h.hearth.p.dbs
      .control`select depth, status, last_error from platform.workflow_runs where workflow = 'loop' order by depth`;
    assert.equal(runs.length, 6);
    assert.equal(runs[5]!.depth, 5);
    assert.match(runs[5]!.last_error as string, /at most 5 deep/);
    assert.equal(runs[5]!.status, 'failed');
    assert.equal((await w().run('loop', id)).status, 'failed');
  });
});

describe('compensation', () => {
  const saga = (failing: string, undoB = "delete from ledger where item = 'saga-b'") => [
    {
      key: 'a',
      kind: 'sql',
      target: "insert into ledger (item) values ('saga-a')",
      compensate: { kind: 'sql', target: "delete from ledger where item = 'saga-a'" },
    },
    {
      key: 'b',
      kind: 'sql',
      target: "insert into ledger (item) values ('saga-b')",
      compensate: { kind: 'sql', target: undoB },
    },
    { key: 'c', kind: 'sql', target: failing, max_attempts: 1 },
  ];

  test('a failure undoes completed steps backwards and ends compensated', async () => {
    const id = await w().go('saga', saga('select 1/0'));
    const run = await settle(h, 'saga', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.compensation.state, 'compensated');
    const comp = run.steps.filter((s: { compensating: boolean }) => s.compensating);
    assert.deepEqual(comp.map((s: { key: string; status: string }) => [s.key, s.status]).sort(), [
      ['compensate:a', 'succeeded'],
      ['compensate:b', 'succeeded'],
    ]);
    assert.equal((await owner`select count(*)::int as n from ledger where item like 'saga-%'`)[0]!.n, 0);
    assert.match(run.last_error, /step "c" failed/);
  });

  test('a compensation that cannot run ends incomplete, cursor at the step not undone, reason in last_error', async () => {
    await owner`delete from ledger where item like 'saga-%'`;
    const id = await w().go('saga2', saga('select 1/0', 'select * from no_such_table'));
    const run = await settle(h, 'saga2', id, { stepMs: 5000 });
    assert.equal(run.status, 'failed');
    assert.equal(run.compensation.state, 'incomplete');
    assert.equal(run.cursor, 1);
    assert.match(run.last_error, /Compensation stopped at step "b"/);
    assert.equal(
      run.steps.find((s: { key: string }) => s.key === 'compensate:a'),
      undefined,
      'the walk stops at b',
    );
    await owner`delete from ledger where item like 'saga-%'`;
  });

  test('nothing to undo: failed with compensation none; last_error is truncated at 2,000 characters', async () => {
    const id = await w().go('plain', [
      { key: 'x', kind: 'sql', target: `do $$ begin raise exception '%', repeat('e', 5000); end $$`, max_attempts: 1 },
    ]);
    const run = await settle(h, 'plain', id);
    assert.equal(run.status, 'failed');
    assert.equal(run.compensation.state, 'none');
    assert.equal(run.last_error.length, 2000);
  });
});

describe('leases', () => {
  test('at most 10 runs of a project advance per tick', async () => {
    await w().put('burst', { steps: [{ key: 's', kind: 'sql', target: 'select 1' }] });
    for (let i = 0; i < 15; i++) await w().start('burst');
    const res = await tick(h);
    assert.equal(res.leased, 10);
    for (let i = 0; i < 5; i++) await tick(h);
  });

  test('concurrent workers never advance the same run: each insert happens once', async () => {
    await owner`create table once (run int)`;
    await w().put('once', { steps: [{ key: 's', kind: 'sql', target: 'insert into once values (1)' }] });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await w().start('once')).body.id);
    for (let round = 0; round < 4; round++) {
      await Promise.all(['w1', 'w2', 'w3'].map((owner) => tick(h, { owner })));
    }
    const [count] = await owner`select count(*)::int as n from once`;
    assert.equal(count!.n, 20);
    for (const id of ids) assert.equal((await w().run('once', id)).steps[0].attempt, 1);
  });

  test('a worker that dies mid-step: after the lease expires another resumes, the lost attempt counts', async () => {
    plan.set('/crash', [0, 200]);
    const id = await w().go('crash', [{ key: 'h', kind: 'webhook', target: `${hookUrl}/crash`, timeout_seconds: 600 }]);
    // The "dying" worker starts the attempt; we abandon it (its promise never settles in time for us).
    void tick(h, { owner: 'doomed' });
    for (let i = 0; i < 100 && !received.some((r) => r.path === '/crash'); i++)
      await new Promise((r) => setTimeout(r, 20));
    await h.hearth.p.dbs.control`update platform.workflow_runs set lease_owner = 'dead-worker' where id = ${id}`;
    let run = await w().run('crash', id);
    assert.equal(run.steps[0].status, 'running');
    assert.equal(run.steps[0].attempt, 1);
    await tick(h);
    assert.equal((await w().run('crash', id)).steps[0].attempt, 1, 'the lease still holds');
    h.clock.advance(700_000);
    await tick(h);
    run = await w().run('crash', id);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.steps[0].attempt, 2);
    receiver.closeAllConnections();
  });
});
