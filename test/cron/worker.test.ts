// End to end through the background scheduler of a role all process: a job
// created over the API fires when the (test) clock enters its minute, without
// anyone calling the tick. The clock is moved, not waited for.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startOfMinute } from '../../src/cron/schedule.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
let db: pg.Client;
before(async () => {
  h = await startTestHearth();
  db = new pg.Client({ connectionString: h.info.DB_URL });
  await db.connect();
  await db.query(`select pgmq.create('worker')`);
});
after(async () => {
  await db?.end();
  await h?.close();
});

test('the scheduler worker fires a job in its minute, once', async () => {
  // A minute well ahead, named exactly, so no other minute of this run matches.
  const due = new Date(startOfMinute(h.clock.now()).getTime() + 5 * 60_000);
  const schedule = `${due.getUTCMinutes()} ${due.getUTCHours()} ${due.getUTCDate()} ${due.getUTCMonth() + 1} *`;
  const base = `/v1/projects/${h.info.PROJECT_REF}/cron-jobs`;
  const created = await h.api('POST', base, {
    body: { name: 'e2e', schedule, target_kind: 'enqueue', target: 'worker', payload: { via: 'worker' } },
  });
  assert.equal(created.status, 201);

  h.clock.advance(due.getTime() + 100 - h.clock.now().getTime());
  let job = created.body;
  for (let i = 0; i < 100 && !job.last_run; i++) {
    await new Promise((r) => setTimeout(r, 50));
    job = (await h.api('GET', `${base}/e2e`)).body;
  }
  assert.equal(job.last_run?.status, 'succeeded');
  assert.equal(job.last_run.scheduled_for, due.toISOString());
  assert.equal(job.runs.length, 1);

  const { rows } = await db.query(`select message from pgmq.read('worker', 300, 10)`);
  assert.deepEqual(
    rows.map((r) => r.message),
    [{ via: 'worker' }],
  );
  const listed = (await h.api('GET', base)).body[0];
  assert.ok(new Date(listed.next_run_at) > due, 'the next run is a later occurrence');
});
