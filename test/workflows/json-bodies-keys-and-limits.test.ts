// SPEC 2.8-2.13, 4.6 and 7 for workflows, as a
// user sees them over HTTP and SQL: an explicit JSON null is a value (run
// input, signal payload, queue message body), bodies that are not JSON are
// 400 invalid_request whatever their Content-Type, numbers JSON cannot carry
// back are refused, and the step-limit error names a step.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { drainTriggers } from '../../src/workflows/triggers.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, tick, wf } from './helpers.ts';

let h: TestHearth;
let owner: postgres.Sql;
let base: string;
const control = () => h.hearth.p.dbs.control;

before(async () => {
  // A long tick keeps the background engine out of the way; the tests tick it themselves.
  h = await startTestHearth({ env: { HEARTH_WORKFLOW_TICK_MS: '3600000' } });
  owner = postgres(h.info.DB_URL, { max: 2, onnotice: () => {} });
  base = `/v1/projects/${h.info.PROJECT_REF}/workflows`;
  await enableWorkflows(h);
  await wf(h).put('plain', { steps: [{ key: 'one', kind: 'sql', target: 'select 1' }] });
});
after(async () => {
  await owner?.end();
  await h?.close();
});

describe('JSON null is a value', () => {
  test('"input": null is kept as JSON null; only an absent input defaults to {}', async () => {
    const w = wf(h);
    const explicit = await w.start('plain', { input: null });
    assert.equal(explicit.status, 201);
    assert.equal((await w.run('plain', explicit.body.id)).input, null);
    const [row] =
      await control()`select input is null as sql_null, jsonb_typeof(input) as type from platform.workflow_runs where id = ${explicit.body.id}`;
    assert.deepEqual({ ...row }, { sql_null: false, type: 'null' });

    const absent = await w.start('plain', {});
    assert.deepEqual((await w.run('plain', absent.body.id)).input, {});
    const falsy = await w.start('plain', { input: false });
    assert.equal((await w.run('plain', falsy.body.id)).input, false);
  });

  test('a signal with "payload": null is stored as JSON null and becomes the step and run output', async () => {
    const w = wf(h);
    const id = await w.go('waits', [
      { key: 'first', kind: 'sql', target: 'select 1' },
      { key: 'wait', kind: 'wait_for_signal', signal: 'go' },
    ]);
    const sent = await w.signal('waits', id, { signal: 'go', payload: null });
    assert.equal(sent.status, 201);
    const [row] =
      await control()`select payload is null as sql_null, jsonb_typeof(payload) as type from platform.workflow_signals where id = ${sent.body.id}`;
    assert.deepEqual({ ...row }, { sql_null: false, type: 'null' });
    let run = await w.run('waits', id);
    for (let i = 0; i < 5 && run.status !== 'succeeded'; i++) {
      await tick(h);
      run = await w.run('waits', id);
    }
    assert.equal(run.status, 'succeeded');
    assert.equal(run.steps.find((s: { key: string }) => s.key === 'wait').output, null);
    // The first step's {rows_affected} is replaced: the run's output is the signal's payload.
    assert.equal(run.output, null);
  });

  test('a queue message whose body is JSON null starts a run with input null', async () => {
    await owner`select pgmq.create('nulls')`;
    const bound = await h.api('POST', `/v1/projects/${h.info.PROJECT_REF}/workflow-queue-triggers`, {
      body: { queue: 'nulls', workflow: 'plain' },
    });
    assert.equal(bound.status, 201);
    const [sent] = await owner`select pgmq.send('nulls', 'null'::jsonb) as id`;
    await drainTriggers(h.hearth.p, h.hearth.registry);
    const [run] = await control()`select jsonb_typeof(input) as type from platform.workflow_runs
      where workflow = 'plain' and idempotency_key like ${`queue:nulls:%:${sent!.id}`}`;
    assert.equal(run?.type, 'null');
  });
});

describe('bodies that are not JSON', () => {
  test('a form post (curl -d without a Content-Type) is 400 invalid_request, not 415, on every writing route', async () => {
    const w = wf(h);
    const run = await w.start('plain');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const routes: [string, string][] = [
      ['POST', `${base}/plain/runs`],
      ['PUT', `${base}/plain`],
      ['PATCH', `${base}/plain`],
      ['POST', `${base}/plain/runs/${run.body.id}/signals`],
      ['POST', `/v1/projects/${h.info.PROJECT_REF}/workflow-queue-triggers`],
      ['POST', `/v1/projects/${h.info.PROJECT_REF}/workflow-row-triggers`],
    ];
    for (const [method, path] of routes) {
      const res = await h.api(method, path, { raw: 'input=1', headers: form });
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.equal(res.body.error.code, 'invalid_request', `${method} ${path}`);
      assert.match(res.body.error.message, /application\/json/);
    }
    assert.equal((await w.run('plain', run.body.id)).status, 'pending', 'the refused signal changed nothing');
    // A bodiless cancel is still a cancel, whatever Content-Type the client sends along.
    const cancel = await h.api('POST', `${base}/plain/runs/${run.body.id}/cancel`, { headers: form });
    assert.equal(cancel.status, 200);
    assert.equal(cancel.body.status, 'cancelled');
  });

  test('a number beyond a double (1e999) is refused instead of being stored as null', async () => {
    const raw = (text: string) => ({ raw: text, headers: { 'content-type': 'application/json' } });
    const before = await control()`select count(*)::int as n from platform.workflow_runs where workflow = 'plain'`;
    const start = await h.api('POST', `${base}/plain/runs`, raw('{"input": {"n": 1e999}}'));
    assert.equal(start.status, 400);
    assert.equal(start.body.error.code, 'invalid_request');
    assert.match(start.body.error.message, /input\.n/);
    const after = await control()`select count(*)::int as n from platform.workflow_runs where workflow = 'plain'`;
    assert.equal(after[0]!.n, before[0]!.n, 'no run was started');

    const put = await h.api(
      'PUT',
      `${base}/plain`,
      raw('{"steps": [{"key": "one", "kind": "sql", "target": "select 1", "payload": -1e999}]}'),
    );
    assert.equal(put.status, 400);
    assert.equal(put.body.error.code, 'invalid_definition');

    const id = (await wf(h).start('plain')).body.id;
    const signal = await h.api('POST', `${base}/plain/runs/${id}/signals`, raw('{"signal": "go", "payload": 1e999}'));
    assert.equal(signal.status, 400);
    assert.equal(signal.body.error.code, 'invalid_request');
  });
});

describe('idempotency keys', () => {
  test('the 200-character limit counts characters: 200 emoji are accepted and replayed, 201 letters are refused', async () => {
    const w = wf(h);
    const emoji = '🔑'.repeat(200);
    const first = await w.start('plain', { idempotency_key: emoji });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const again = await w.start('plain', { idempotency_key: emoji });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, first.body.id);
    const signal = await w.signal('plain', first.body.id, { signal: 'go', idempotency_key: emoji });
    assert.equal(signal.status, 201, JSON.stringify(signal.body));
    const long = await w.start('plain', { idempotency_key: 'k'.repeat(201) });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, 'invalid_request');
  });
});

describe('row bindings', () => {
  test('a view or materialized view is 400 invalid_table saying it is not a table, and nothing is bound', async () => {
    await owner.unsafe(`create table base_rows (id int primary key, status text);
      create view recent_rows as select * from base_rows;
      create materialized view counted_rows as select count(*) as n from base_rows;`);
    const path = `/v1/projects/${h.info.PROJECT_REF}/workflow-row-triggers`;
    for (const [table, what] of [
      ['recent_rows', 'a view'],
      ['counted_rows', 'a materialized view'],
    ]) {
      const res = await h.api('POST', path, { body: { table, events: ['insert'], workflow: 'plain' } });
      assert.equal(res.status, 400, table);
      assert.equal(res.body.error.code, 'invalid_table');
      assert.match(res.body.error.message, new RegExp(`is ${what}, not a table`));
    }
    assert.deepEqual((await h.api('GET', path)).body, []);
    assert.equal(
      (await h.api('POST', path, { body: { table: 'base_rows', events: ['insert'], workflow: 'plain' } })).status,
      201,
    );
  });
});

describe('log drain', () => {
  test('a loopback or private receiver the outbound guard would refuse is 400 at PUT, saying how to allow it', async () => {
    const path = `/v1/projects/${h.info.PROJECT_REF}/log-drain`;
    for (const url of [
      'http://127.0.0.1:9/logs',
      'http://[::1]:9/logs',
      'http://10.1.2.3/logs',
      'http://localhost:9/logs',
    ]) {
      const res = await h.api('PUT', path, { body: { url } });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.match(res.body.error.message, /HEARTH_OUTBOUND_ALLOW/);
    }
    const spaced = await h.api('PUT', path, { body: { url: 'https://1.1.1.1/a b' } });
    assert.equal(spaced.status, 400);
    assert.match(spaced.body.error.message, /white space.*percent-encode/);
    assert.deepEqual((await h.api('GET', path)).body, { url: null }, 'nothing was stored');
    // A public address (or a name resolved only when shipping) is accepted.
    assert.equal((await h.api('PUT', path, { body: { url: 'https://1.1.1.1/logs' } })).status, 200);
    assert.equal((await h.api('DELETE', path)).status, 204);
  });
});

describe('definition limits', () => {
  test('over 200 steps is 400 invalid_definition naming the first step over the limit', async () => {
    const steps = Array.from({ length: 201 }, (_, i) => ({ key: `s${i}`, kind: 'sql', target: 'select 1' }));
    const res = await wf(h).put('too-long', { steps });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_definition');
    assert.match(res.body.error.message, /step "s200"/);
    assert.equal((await wf(h).put('too-long', { steps: steps.slice(0, 200) })).status, 201);
  });
});
