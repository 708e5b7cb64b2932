// Two Hearth processes on one control database: either serves every
// function, a deploy, secret change or removal through one is served by the
// other, and the log retention worker bounds platform.function_logs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LOG_RETENTION_MS, LOG_ROWS_PER_FUNCTION, pruneFunctionLogs } from '../../src/functions/db-store.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { leftoverChildren } from './helpers.ts';
import { deploy, putSecrets, until } from './http-helpers.ts';

let first: TestHearth;
let second: TestHearth;
before(async () => {
  first = await startTestHearth();
  second = await startTestHearth({
    controlDb: first.config.controlDb,
    dataDir: first.config.dataDir,
    env: { HEARTH_ROLE: 'api' },
  });
});
after(async () => {
  await second?.close();
  await first?.close();
  assert.deepEqual(await leftoverChildren(), [], 'no workerd process outlives the servers');
});

const call = (h: TestHearth, name: string) =>
  fetch(`${h.url}/functions/v1/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${first.info.PUBLISHABLE_KEY}` },
    body: '{}',
  });
const text = async (h: TestHearth, name: string) => {
  const res = await call(h, name);
  return `${res.status} ${await res.text()}`;
};

describe('several processes', () => {
  test('a function deployed through one process is served by both; a redeploy reaches both', async () => {
    const ref = first.info.PROJECT_REF;
    await deploy(first, ref, 'shared', { source: "Deno.serve(() => new Response('v1 ' + Deno.env.get('COLOR')));" });
    await putSecrets(first, ref, { COLOR: 'red' });
    assert.equal(await text(first, 'shared'), '200 v1 red');
    assert.equal(
      await until(
        () => text(second, 'shared'),
        (t) => t === '200 v1 red',
      ),
      '200 v1 red',
    );

    // Redeploy and change a secret through the second process; the first, which runs v1, follows.
    await deploy(second, ref, 'shared', { source: "Deno.serve(() => new Response('v2 ' + Deno.env.get('COLOR')));" });
    await putSecrets(second, ref, { COLOR: 'blue' });
    assert.equal(await text(second, 'shared'), '200 v2 blue');
    assert.equal(
      await until(
        () => text(first, 'shared'),
        (t) => t === '200 v2 blue',
      ),
      '200 v2 blue',
    );

    // Both processes list the same function, at the same version.
    for (const h of [first, second]) {
      const got = await h.api('GET', `/v1/projects/${ref}/functions/shared`);
      assert.equal(got.body.version, 2);
    }

    // Removed through one, gone from the other.
    assert.equal((await first.api('DELETE', `/v1/projects/${ref}/functions/shared`)).status, 200);
    const gone = await until(
      () => call(second, 'shared').then((r) => r.status),
      (s) => s === 404,
    );
    assert.equal(gone, 404);
  });

  test('concurrent deploys of one name through both processes get distinct versions', async () => {
    const ref = first.info.PROJECT_REF;
    const results = await Promise.all(
      [first, second, first, second].map((h, i) =>
        deploy(h, ref, 'racy', { source: `Deno.serve(() => new Response('${i}'));` }),
      ),
    );
    assert.deepEqual(results.map((r) => r.version).sort(), [1, 2, 3, 4]);
  });
});

describe('log retention', () => {
  test('logs older than the retention age go, and each function keeps at most its newest rows', async () => {
    const { p } = first.hearth;
    const ref = first.info.PROJECT_REF;
    await deploy(first, ref, 'logged', { source: "Deno.serve(() => new Response('x'));" });
    const now = first.clock.now();
    const old = new Date(now.getTime() - LOG_RETENTION_MS - 60_000);
    const recent = new Date(now.getTime() - 60_000);
    await p.dbs
      .control`insert into platform.function_logs (project_id, function_name, version, level, message, created_at)
      select id, 'logged', 1, 'log', 'old', ${old} from platform.projects where ref = ${ref}`;
    await p.dbs
      .control`insert into platform.function_logs (project_id, function_name, version, level, message, created_at)
      select id, 'busy', 1, 'log', 'line ' || n, ${recent}::timestamptz + n * interval '1 millisecond'
      from platform.projects, generate_series(1, ${LOG_ROWS_PER_FUNCTION + 5}) n where ref = ${ref}`;
    await p.dbs
      .control`insert into platform.function_logs (project_id, function_name, version, level, message, created_at)
      select id, 'logged', 1, 'log', 'recent', ${recent} from platform.projects where ref = ${ref}`;

    const removed = await pruneFunctionLogs(p, now);
    assert.equal(removed, 1 + 5);
    const logs = await first.api('GET', `/v1/projects/${ref}/functions/logged/logs`);
    assert.deepEqual(
      logs.body.map((e: { message: string }) => e.message),
      ['recent'],
    );
    const [busy] = await p.dbs
      .control`select count(*)::int as n, min(message) filter (where message in ('line 1', 'line 5', 'line 6')) as oldest_kept
      from platform.function_logs where function_name = 'busy'`;
    assert.equal(busy!.n, LOG_ROWS_PER_FUNCTION);
    assert.equal(busy!.oldest_kept, 'line 6');
    assert.equal(await pruneFunctionLogs(p, now), 0);
  });
});
