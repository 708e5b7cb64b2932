// A small connection budget (HEARTH_DB_MAX_CONNECTIONS at its least, 8)
// still serves: the platform's own pools are sized from it, so a burst of
// slow REST calls queues in the project's pool and every call is answered,
// a request right after is answered too, and a workflow step whose
// connection waited for the budget in vain is tried again, not failed, and
// so is a cron fire.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { loadConfig } from '../../src/config.ts';
import { cronOutboundClient, deliver } from '../../src/cron/deliver.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows, tick, wf } from '../workflows/helpers.ts';

const BUDGET = 8;

test('a budget under 8 is refused at start with a message naming the variable', () => {
  assert.throws(
    () => loadConfig({ HEARTH_DB_MAX_CONNECTIONS: '4' }),
    /HEARTH_DB_MAX_CONNECTIONS must be an integer between 8 and/,
  );
});

describe(`REST under a budget of ${BUDGET}`, () => {
  let h: TestHearth;
  let owner: postgres.Sql;
  before(async () => {
    h = await startTestHearth({ env: { HEARTH_DB_MAX_CONNECTIONS: String(BUDGET) } });
    owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    await owner.unsafe(`create function slow() returns int language sql as 'select 1 from pg_sleep(0.2)';
      notify pgrst, 'reload schema'`);
  });
  after(async () => {
    await owner?.end();
    await h?.close();
  });

  const rpc = async () => {
    const key = h.info.SECRET_KEY;
    const res = await fetch(`${h.url}/rest/v1/rpc/slow`, {
      method: 'POST',
      headers: { apikey: key, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    return { status: res.status, body: await res.text() };
  };

  test('40 concurrent calls of a slow function are all answered 200, and single calls after them too', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, rpc));
    assert.deepEqual(
      answers.map((a) => a.status).filter((s) => s !== 200),
      [],
      'every call of the burst answered 200',
    );
    for (const a of answers) assert.equal(a.body, '1');
    for (let i = 0; i < 3; i++) assert.deepEqual(await rpc(), { status: 200, body: '1' });
    assert.ok(h.hearth.p.dbs.budget.inUse <= BUDGET);
  });
});

describe(`workflows and cron under a budget of ${BUDGET}, every slot taken`, () => {
  let h: TestHearth;
  let owner: postgres.Sql;
  before(async () => {
    h = await startTestHearth({
      env: {
        HEARTH_DB_MAX_CONNECTIONS: String(BUDGET),
        HEARTH_DB_QUEUE_TIMEOUT_MS: '300',
        HEARTH_WORKFLOW_TICK_MS: '3600000',
      },
    });
    await enableWorkflows(h);
    owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    await owner.unsafe(`create table ledger (item text); select pgmq.create('jobs')`);
  });

  /** Takes every slot left, closing idle project connections for them, as a burst elsewhere in the process would. */
  async function fillBudget() {
    const dbs = h.hearth.p.dbs;
    const hog = postgres(dbs.serverUrl, { ...dbs.connectionOptions('hog'), max: BUDGET });
    const held = (await Promise.allSettled(Array.from({ length: BUDGET }, () => hog.reserve())))
      .filter((r) => r.status === 'fulfilled')
      .map((r) => r.value);
    assert.equal(dbs.budget.inUse, BUDGET, 'the budget is full');
    return async () => {
      for (const c of held) c.release();
      await hog.end();
    };
  }
  after(async () => {
    await owner?.end();
    await h?.close();
  });

  test('a step whose connection waited for the budget in vain keeps its attempt and succeeds once connections free up', async () => {
    const w = wf(h);
    const id = await w.go('tight', [
      { key: 'e', kind: 'sql', target: "insert into ledger values ('e')", max_attempts: 1 },
    ]);
    const free = await fillBudget();
    try {
      await tick(h);
      const run = await w.run('tight', id);
      assert.equal(run.status, 'running', JSON.stringify(run));
      const step = run.steps.find((s: { key: string }) => s.key === 'e');
      assert.equal(step.status, 'pending');
      assert.equal(step.attempt, 0, 'the attempt that could not start is not spent');
      assert.match(step.error, /stayed busy/);
    } finally {
      await free();
    }
    h.clock.advance(3000);
    await tick(h);
    const run = await w.run('tight', id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual([...(await owner`select item from ledger`)], [{ item: 'e' }]);
  });

  test('a cron fire whose connection waited for the budget in vain is delivered once connections free up', async () => {
    const free = await fillBudget();
    setTimeout(() => void free(), 1000);
    const fire = {
      projectRef: h.info.PROJECT_REF,
      kind: 'enqueue' as const,
      target: 'jobs',
      payload: { n: 1 },
      secretSealed: null,
    };
    const outcome = await deliver(h.hearth.p, h.hearth.registry, { outbound: cronOutboundClient(h.hearth.p) }, fire);
    assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome));
    assert.deepEqual([...(await owner`select message from pgmq.q_jobs`)], [{ message: { n: 1 } }]);
  });
});
