import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, wf } from './helpers.ts';

let h: TestHearth;
let base: string;
before(async () => {
  // A long tick keeps the background engine out of the way; these tests only use the API.
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000' } });
  base = `/v1/projects/${h.info.PROJECT_REF}/workflows`;
});
after(async () => {
  await h?.close();
});

const SQL = { key: 'one', kind: 'sql', target: 'select 1' };

describe('gate', () => {
  test('every route is 403 forbidden until config/workflows is enabled', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', base],
      ['GET', `${base}/x`],
      ['PUT', `${base}/x`, { steps: [SQL] }],
      ['PATCH', `${base}/x`, { enabled: true }],
      ['POST', `${base}/x/runs`, {}],
      ['GET', `${base}/x/runs`],
      ['GET', `${base}/x/runs/00000000-0000-0000-0000-000000000000`],
      ['POST', `${base}/x/runs/00000000-0000-0000-0000-000000000000/cancel`],
      ['POST', `${base}/x/runs/00000000-0000-0000-0000-000000000000/signals`, { signal: 's' }],
      ['GET', `/v1/projects/${h.info.PROJECT_REF}/workflow-queue-triggers`],
      ['POST', `/v1/projects/${h.info.PROJECT_REF}/workflow-queue-triggers`, { queue: 'q', workflow: 'x' }],
      ['DELETE', `/v1/projects/${h.info.PROJECT_REF}/workflow-queue-triggers/00000000-0000-0000-0000-000000000000`],
      ['GET', `/v1/projects/${h.info.PROJECT_REF}/workflow-row-triggers`],
      [
        'POST',
        `/v1/projects/${h.info.PROJECT_REF}/workflow-row-triggers`,
        { table: 't', events: ['insert'], workflow: 'x' },
      ],
      ['DELETE', `/v1/projects/${h.info.PROJECT_REF}/workflow-row-triggers/00000000-0000-0000-0000-000000000000`],
      ['PUT', `/v1/projects/${h.info.PROJECT_REF}/log-drain`, { url: 'https://logs.example.com/' }],
      ['GET', `/v1/projects/${h.info.PROJECT_REF}/log-drain`],
      ['DELETE', `/v1/projects/${h.info.PROJECT_REF}/log-drain`],
    ];
    for (const [method, path, body] of routes) {
      const res = await h.api(method, path, body === undefined ? {} : { body });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, 'forbidden');
    }
    await enableWorkflows(h);
    assert.equal((await h.api('GET', base)).status, 200);
  });

  test('401 unauthorized without a session or with a project key', async () => {
    for (const token of [null, 'nonsense', h.info.SECRET_KEY]) {
      const res = await h.api('GET', base, { token });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
    }
  });

  test('a developer of the organization is 403 forbidden', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    await h.api('POST', `/v1/organizations/${orgs.body[0].id}/members`, {
      body: { email: 'dev@wf.test', password: 'a-long-password', role: 'developer' },
    });
    const login = await h.api('POST', '/v1/login', {
      body: { email: 'dev@wf.test', password: 'a-long-password' },
      token: null,
    });
    const res = await h.api('GET', base, { token: login.body.access_token });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'forbidden');
  });
});

describe('definitions', () => {
  test('PUT publishes max+1, GET shows the newest with secret_set, the list counts steps', async () => {
    const w = wf(h);
    const v1 = await w.put('orders', { steps: [SQL] });
    assert.equal(v1.status, 201);
    assert.deepEqual(v1.body, { name: 'orders', version: 1, enabled: true });
    const hook = {
      key: 'notify',
      kind: 'webhook',
      target: 'https://example.com/hook',
      secret: 'shh-very-secret',
      payload: { a: 1 },
    };
    const v2 = await w.put('orders', { enabled: false, steps: [SQL, hook] });
    assert.deepEqual(v2.body, { name: 'orders', version: 2, enabled: false });
    const got = await h.api('GET', `${base}/orders`);
    assert.equal(got.status, 200);
    assert.equal(got.body.version, 2);
    assert.equal(got.body.steps.length, 2);
    assert.equal(got.body.steps[1].secret_set, true);
    assert.equal(got.body.steps[1].secret, undefined);
    assert.ok(!JSON.stringify(got.body).includes('shh-very-secret'));
    assert.equal(got.body.steps[0].max_attempts, 3);
    assert.equal(got.body.steps[0].timeout_seconds, 30);
    const [stored] = await h.hearth.p.dbs
      .control`select steps::text as t from platform.workflow_definitions where name = 'orders' and version = 2`;
    assert.ok(!stored!.t.includes('shh-very-secret'), 'the secret is sealed at rest');
    const list = await h.api('GET', base);
    const entry = list.body.find((e: { name: string }) => e.name === 'orders');
    assert.equal(entry.version, 2);
    assert.equal(entry.step_count, 2);
  });

  test('GET of an unknown workflow is 404 not_found', async () => {
    const res = await h.api('GET', `${base}/nope`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });

  test('PUT with a malformed name is 400 invalid_name', async () => {
    for (const name of ['Upper', '-dash', 'a'.repeat(65)]) {
      const res = await wf(h).put(name, { steps: [SQL] });
      assert.equal(res.status, 400, name);
      assert.equal(res.body.error.code, 'invalid_name');
    }
  });

  const cases: [string, unknown, RegExp][] = [
    ['duplicate keys', { steps: [SQL, SQL] }, /"one".*twice/],
    ['unknown kind', { steps: [{ key: 'x', kind: 'email' }] }, /step "x".*kind/],
    ['missing target', { steps: [{ key: 'q', kind: 'enqueue' }] }, /step "q".*target/],
    ['bad queue name', { steps: [{ key: 'q', kind: 'enqueue', target: 'Bad-Queue' }] }, /step "q"/],
    ['webhook not http', { steps: [{ key: 'w', kind: 'webhook', target: 'ftp://x' }] }, /step "w".*http/],
    [
      'webhook URL with a user name and password',
      { steps: [{ key: 'w', kind: 'webhook', target: 'https://user:pw@hooks.example.com/' }] },
      /step "w".*no user name or password/,
    ],
    [
      'compensating webhook URL with a user name',
      { steps: [{ ...SQL, compensate: { kind: 'webhook', target: 'https://user@hooks.example.com/' } }] },
      /step "one".*no user name or password/,
    ],
    ['sleep without sleep_for', { steps: [{ key: 's', kind: 'sleep' }] }, /step "s".*sleep_for/],
    [
      'sleep_for not a duration',
      { steps: [{ key: 's', kind: 'sleep', sleep_for: 'soon' }] },
      /step "s".*not a duration/,
    ],
    ['sleep over 30 days', { steps: [{ key: 's', kind: 'sleep', sleep_for: '721h' }] }, /step "s".*30 days/],
    [
      'wait over 30 days',
      { steps: [{ key: 'w', kind: 'wait_for_signal', signal: 'go', timeout_seconds: 30 * 86400 + 1 }] },
      /step "w".*timeout_seconds/,
    ],
    ['wait without signal', { steps: [{ key: 'w', kind: 'wait_for_signal' }] }, /step "w".*signal/],
    ['payload over 256 KiB', { steps: [{ ...SQL, payload: 'x'.repeat(256 * 1024 + 1) }] }, /step "one".*256 KiB/],
    ['over 200 steps', { steps: Array.from({ length: 201 }, (_, i) => ({ ...SQL, key: `s${i}` })) }, /limit is 200/],
    [
      'fan-out child of a wrong kind',
      { steps: [{ key: 'f', kind: 'fanout', children: [{ key: 'c', kind: 'sleep', sleep_for: '1s' }] }] },
      /step "c".*fan-out child/,
    ],
    [
      'compensation of a wrong kind',
      { steps: [{ ...SQL, compensate: { kind: 'sleep' } }] },
      /step "one".*compensating/,
    ],
    ['join without fanout', { steps: [{ key: 'j', kind: 'join' }] }, /step "j".*fanout/],
    ['empty steps', { steps: [] }, /non-empty/],
    ['unknown field', { steps: [{ ...SQL, sleep_for: '1s' }] }, /step "one".*sleep_for/],
    ['bad max_attempts', { steps: [{ ...SQL, max_attempts: 0 }] }, /step "one".*max_attempts/],
    [
      'bad max_attempts on a sleep',
      { steps: [{ key: 's', kind: 'sleep', sleep_for: '1s', max_attempts: 101 }] },
      /step "s".*max_attempts must be an integer between 1 and 100/,
    ],
    [
      'bad timeout_seconds on a join',
      {
        steps: [
          { key: 'f', kind: 'fanout', children: [SQL] },
          { key: 'j', kind: 'join', timeout_seconds: 0 },
        ],
      },
      /step "j".*timeout_seconds/,
    ],
    [
      'webhook URL with a space (it would be sent percent-encoded)',
      { steps: [{ key: 'h', kind: 'webhook', target: 'https://example.com/a b' }] },
      /step "h".*white space/,
    ],
    [
      'a field no step has, on a sleep',
      { steps: [{ key: 's', kind: 'sleep', sleep_for: '1s', target: 'x' }] },
      /step "s".*no field "target"/,
    ],
  ];
  for (const [name, body, message] of cases) {
    test(`400 invalid_definition: ${name}`, async () => {
      const res = await wf(h).put('bad', body);
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invalid_definition');
      assert.match(res.body.error.message, message);
    });
  }

  test('max_attempts and timeout_seconds (SPEC 2.9: fields of every step) are taken on every kind; a read shows those the kind uses', async () => {
    const every = { max_attempts: 5, timeout_seconds: 60 };
    await wf(h).put('child', { steps: [{ ...SQL, ...every }] });
    const res = await wf(h).put('generic', {
      steps: [
        { ...SQL, key: 'q', ...every },
        { key: 's', kind: 'sleep', sleep_for: '1s', ...every },
        { key: 'f', kind: 'fanout', children: [{ ...SQL, key: 'c', ...every }], ...every },
        { key: 'j', kind: 'join', ...every },
        { key: 'w', kind: 'wait_for_signal', signal: 'go', ...every },
        { key: 'sub', kind: 'subworkflow', target: 'child', ...every },
      ],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const got = (await h.api('GET', `${base}/generic`)).body;
    const shown = Object.fromEntries(
      got.steps.map((s: Record<string, unknown>) => [s.key, [s.max_attempts, s.timeout_seconds]]),
    );
    assert.deepEqual(shown, {
      q: [5, 60],
      s: [undefined, undefined],
      f: [undefined, undefined],
      j: [undefined, undefined],
      w: [undefined, 60],
      sub: [undefined, 60],
    });
    assert.deepEqual(
      got.steps[2].children.map((c: Record<string, unknown>) => [c.max_attempts, c.timeout_seconds]),
      [[5, 60]],
    );
    assert.equal((await wf(h).put('generic', { steps: got.steps })).status, 201, 'the read can be PUT again');
  });

  test('nothing is stored when a definition is refused', async () => {
    assert.equal((await h.api('GET', `${base}/bad`)).status, 404);
  });

  test('PATCH enabled applies to every version; missing enabled is 400 invalid_request; unknown is 404', async () => {
    const res = await h.api('PATCH', `${base}/orders`, { body: { enabled: true } });
    assert.equal(res.status, 204);
    const rows = await h.hearth.p.dbs
      .control`select bool_and(enabled) as all from platform.workflow_definitions where name = 'orders'`;
    assert.equal(rows[0]!.all, true);
    const missing = await h.api('PATCH', `${base}/orders`, { body: {} });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'invalid_request');
    const unknown = await h.api('PATCH', `${base}/nope`, { body: { enabled: false } });
    assert.equal(unknown.status, 404);
  });

  test('a malformed workflow name is 400 invalid_name on every route that takes one', async () => {
    const run = '00000000-0000-0000-0000-000000000000';
    const routes: [string, string, unknown?][] = [
      ['GET', `${base}/Bad.Name`],
      ['PATCH', `${base}/Bad.Name`, { enabled: true }],
      ['POST', `${base}/Bad.Name/runs`, {}],
      ['GET', `${base}/Bad.Name/runs`],
      ['GET', `${base}/Bad.Name/runs/${run}`],
      ['POST', `${base}/Bad.Name/runs/${run}/cancel`],
      ['POST', `${base}/Bad.Name/runs/${run}/signals`, { signal: 'go' }],
    ];
    for (const [method, path, body] of routes) {
      const res = await h.api(method, path, body === undefined ? {} : { body });
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.equal(res.body.error.code, 'invalid_name', `${method} ${path}`);
    }
  });

  test('a definition read back can be PUT again as it is; webhook secrets carry over unless re-sent or cleared', async () => {
    const w = wf(h);
    const hook = (key: string, secret?: string) => ({
      key,
      kind: 'webhook',
      target: 'https://example.com/h',
      ...(secret ? { secret } : {}),
    });
    const steps = [
      {
        ...hook('charge', 'main-secret'),
        compensate: { kind: 'webhook', target: 'https://example.com/refund', secret: 'undo-secret' },
      },
      { key: 'nap', kind: 'sleep', sleep_for: '1h30m' },
      {
        key: 'fan',
        kind: 'fanout',
        children: [hook('child', 'child-secret'), { key: 'log', kind: 'sql', target: 'select 1' }],
      },
      { key: 'gather', kind: 'join' },
      { key: 'ok', kind: 'wait_for_signal', signal: 'approved' },
      { key: 'plain', kind: 'webhook', target: 'https://example.com/p' },
    ];
    assert.equal((await w.put('roundtrip', { steps })).status, 201);
    const sealed = async (version: number) => {
      const [row] = await h.hearth.p.dbs
        .control`select steps from platform.workflow_definitions where name = 'roundtrip' and version = ${version}`;
      const s = row!.steps;
      return [
        s[0].secret_sealed,
        s[0].compensate.secret_sealed,
        s[2].children[0].secret_sealed,
        s[5].secret_sealed,
      ].map((x) => x ?? null);
    };
    const v1 = await sealed(1);
    assert.ok(v1.slice(0, 3).every((x) => typeof x === 'string') && v1[3] === null);

    const read = (await h.api('GET', `${base}/roundtrip`)).body;
    assert.deepEqual(read.steps[1], { key: 'nap', kind: 'sleep', payload: null, sleep_for: '1h30m' });
    assert.deepEqual(read.steps[3], { key: 'gather', kind: 'join', payload: null });
    assert.deepEqual(read.steps[4], {
      key: 'ok',
      kind: 'wait_for_signal',
      payload: null,
      signal: 'approved',
      timeout_seconds: 7 * 86400,
    });
    assert.equal(read.steps[0].compensate.secret_set, true);
    assert.equal(read.steps[2].children[0].secret_set, true);
    assert.equal(read.steps[5].secret_set, false);
    // The whole body of the read goes back: name, version and created_at are the service's and are ignored.
    const again = await w.put('roundtrip', { ...read, version: 99 });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.deepEqual(again.body, { name: 'roundtrip', version: 2, enabled: true });
    assert.deepEqual(await sealed(2), v1, 'the secrets are kept');
    const reread = (await h.api('GET', `${base}/roundtrip`)).body;
    assert.deepEqual(reread.steps, read.steps);

    // Re-sending a secret changes it; secret null (or secret_set false) makes the webhook unsigned.
    const changed = structuredClone(read.steps);
    changed[0].secret = 'rotated';
    changed[0].compensate = { kind: 'webhook', target: 'https://example.com/refund', secret: null };
    changed[2].children[0].secret_set = false;
    assert.equal((await w.put('roundtrip', { steps: changed })).status, 201);
    const v3 = await sealed(3);
    assert.ok(typeof v3[0] === 'string' && v3[0] !== v1[0]);
    assert.deepEqual(v3.slice(1), [null, null, null]);
    const bad = await w.put('roundtrip', { steps: [{ ...hook('charge'), secret_set: 'yes' }] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_definition');
  });

  test('a definition within every limit is accepted even when its body is over 1 MiB', async () => {
    const payload = 'p'.repeat(256 * 1024 - 2);
    const steps = Array.from({ length: 6 }, (_, i) => ({ key: `s${i}`, kind: 'sql', target: 'select 1', payload }));
    const res = await wf(h).put('large', { steps });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const got = await h.api('GET', `${base}/large`);
    assert.equal(got.body.steps.length, 6);
    assert.equal(got.body.steps[5].payload.length, payload.length);
  });

  test('malformed JSON is 400 invalid_request', async () => {
    const res = await h.api('PUT', `${base}/orders`, {
      raw: '{"steps": [',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_request');
  });
});

describe('runs', () => {
  test('start pins the highest enabled version; the same idempotency key returns the same run', async () => {
    const w = wf(h);
    await w.put('pin', { steps: [SQL] });
    await w.put('pin', { steps: [SQL, { ...SQL, key: 'two' }] });
    const first = await w.start('pin', { input: { order: 7 }, idempotency_key: 'order-7' });
    assert.equal(first.status, 201);
    assert.deepEqual(first.body, { id: first.body.id, status: 'pending' });
    const again = await w.start('pin', { input: { order: 7 }, idempotency_key: 'order-7' });
    assert.equal(again.body.id, first.body.id);
    const other = await w.start('pin', {});
    assert.notEqual(other.body.id, first.body.id);
    const run = await w.run('pin', first.body.id);
    assert.equal(run.version, 2);
    assert.equal(run.status, 'pending');
    assert.deepEqual(run.input, { order: 7 });
    assert.deepEqual(run.compensation, { state: 'none' });
    assert.deepEqual(
      run.steps.map((s: { key: string; status: string }) => [s.key, s.status]),
      [
        ['one', 'pending'],
        ['two', 'pending'],
      ],
    );
    // A third version, disabled at publication, is not picked.
    await w.put('pin', { enabled: false, steps: [SQL] });
    const third = await w.start('pin', {});
    assert.equal((await w.run('pin', third.body.id)).version, 2);
  });

  test('start without an enabled version is 404; an idempotency key over 200 characters is 400', async () => {
    const w = wf(h);
    await w.put('off', { enabled: false, steps: [SQL] });
    const res = await w.start('off', {});
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
    assert.equal((await w.start('never-defined', {})).status, 404);
    const runsOfNothing = await h.api('GET', `${base}/never-defined/runs`);
    assert.equal(runsOfNothing.status, 404);
    assert.equal(runsOfNothing.body.error.code, 'not_found');
    const long = await w.start('pin', { idempotency_key: 'k'.repeat(201) });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, 'invalid_request');
    const notObject = await h.api('POST', `${base}/pin/runs`, { body: [1, 2] });
    assert.equal(notObject.status, 400);
    assert.equal(notObject.body.error.code, 'invalid_request');
  });

  test('list shows at most the 100 newest runs, newest first', async () => {
    const w = wf(h);
    await w.put('many', { steps: [SQL] });
    const ids: string[] = [];
    for (let i = 0; i < 103; i++) {
      ids.push((await w.start('many', {})).body.id);
      h.clock.advance(10);
    }
    const list = await h.api('GET', `${base}/many/runs`);
    assert.equal(list.body.length, 100);
    assert.equal(list.body[0].id, ids[102]);
    assert.ok(!list.body.some((r: { id: string }) => r.id === ids[0]));
  });

  test('a run id of another workflow or a malformed one is 404', async () => {
    const w = wf(h);
    const id = (await w.start('many', {})).body.id;
    assert.equal((await h.api('GET', `${base}/pin/runs/${id}`)).status, 404);
    assert.equal((await h.api('POST', `${base}/pin/runs/${id}/cancel`)).status, 404);
    assert.equal((await h.api('POST', `${base}/pin/runs/${id}/signals`, { body: { signal: 'go' } })).status, 404);
    assert.equal((await h.api('GET', `${base}/many/runs/not-a-uuid`)).status, 404);
  });

  test('a run of another project is 404', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const other = await h.api('POST', '/v1/projects', { body: { name: 'Other', organization_id: orgs.body[0].id } });
    const ref = other.body.ref;
    await enableWorkflows(h, ref);
    const w2 = wf(h, ref);
    const id = await w2.go('many', [SQL]);
    assert.equal((await h.api('GET', `${base}/many/runs/${id}`)).status, 404);
    assert.equal((await h.api('GET', `/v1/projects/${ref}/workflows/many/runs/${id}`)).status, 200);
  });

  test('cancel: pending → cancelled, steps skipped; again is 409 run_finished', async () => {
    const w = wf(h);
    const id = (await w.start('many', {})).body.id;
    const res = await w.cancel('many', id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id, status: 'cancelled' });
    const run = await w.run('many', id);
    assert.equal(run.status, 'cancelled');
    assert.equal(run.steps[0].status, 'skipped');
    const again = await w.cancel('many', id);
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'run_finished');
  });

  test('signals: stored with id/run_id/signal/created_at, idempotent, 32 KiB, invalid_signal, 409 run_finished', async () => {
    const w = wf(h);
    const id = (await w.start('many', {})).body.id;
    const s = await w.signal('many', id, { signal: 'approved', payload: { by: 'ann' }, idempotency_key: 'k1' });
    assert.equal(s.status, 201);
    assert.deepEqual(Object.keys(s.body).sort(), ['created_at', 'id', 'run_id', 'signal']);
    assert.equal(s.body.run_id, id);
    const again = await w.signal('many', id, { signal: 'approved', payload: { by: 'ann' }, idempotency_key: 'k1' });
    assert.equal(again.body.id, s.body.id);
    const big = await w.signal('many', id, { signal: 'approved', payload: 'x'.repeat(32 * 1024) });
    assert.equal(big.status, 400);
    assert.equal(big.body.error.code, 'invalid_request');
    const badName = await w.signal('many', id, { signal: 'no spaces allowed' });
    assert.equal(badName.status, 400);
    assert.equal(badName.body.error.code, 'invalid_signal');
    const longKey = await w.signal('many', id, { signal: 'ok', idempotency_key: 'k'.repeat(201) });
    assert.equal(longKey.body.error.code, 'invalid_request');
    await w.cancel('many', id);
    const late = await w.signal('many', id, { signal: 'approved' });
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'run_finished');
  });
});

describe('unknown body fields', () => {
  test('every route that takes a body refuses a field it does not know with 400 unknown_field, and changes nothing', async () => {
    const w = wf(h);
    await w.put('strict', { steps: [{ key: 'wait', kind: 'wait_for_signal', signal: 'go' }] });
    const run = (await w.start('strict', {})).body.id;
    const ref = h.info.PROJECT_REF;
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['PATCH', `${base}/strict`, { enabled: false, extra: 1 }, 'enabled'],
      ['POST', `${base}/strict/runs`, { input: {}, inptu: { order: 1 } }, 'input, idempotency_key'],
      ['POST', `${base}/strict/runs/${run}/signals`, { signal: 'go', extra: 1 }, 'signal, payload, idempotency_key'],
      [
        'POST',
        `/v1/projects/${ref}/workflow-queue-triggers`,
        { queue: 'q', workflow: 'strict', extra: 1 },
        'queue, workflow',
      ],
      [
        'POST',
        `/v1/projects/${ref}/workflow-row-triggers`,
        { table: 't', events: ['insert'], workflow: 'strict', extra: 1 },
        'table, events, filter, workflow',
      ],
      ['PUT', `/v1/projects/${ref}/log-drain`, { url: 'https://logs.example.com/', extra: 1 }, 'url'],
    ];
    for (const [method, path, body, known] of cases) {
      const res = await h.api(method, path, { body });
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.equal(res.body.error.code, 'unknown_field', `${method} ${path}`);
      assert.match(res.body.error.message, new RegExp(`has no field "(extra|inptu)"; it takes ${known}\\.$`));
    }
    const [signals] = await h.hearth.p.dbs
      .control`select count(*)::int as n from platform.workflow_signals where run_id = ${run}`;
    assert.equal(signals!.n, 0, 'no signal was stored');
    assert.equal((await h.api('GET', `${base}/strict/runs`)).body.length, 1, 'no run was started');
    assert.equal((await h.api('GET', `${base}`)).body.find((d: { name: string }) => d.name === 'strict').enabled, true);
    assert.deepEqual((await h.api('GET', `/v1/projects/${ref}/workflow-queue-triggers`)).body, []);
    assert.deepEqual((await h.api('GET', `/v1/projects/${ref}/workflow-row-triggers`)).body, []);
    assert.equal((await h.api('GET', `/v1/projects/${ref}/log-drain`)).body.url, null);
    // A body with only known fields still works.
    assert.equal((await h.api('PATCH', `${base}/strict`, { body: { enabled: true } })).status, 204);
  });
});
