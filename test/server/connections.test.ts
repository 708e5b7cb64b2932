import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

// Many mostly idle projects share one PostgreSQL's max_connections: an idle project must hold none.
let h: TestHearth;
let server: postgres.Sql;
before(async () => {
  h = await startTestHearth();
  server = postgres(serverUrl(), { max: 1, onnotice: () => {} });
});
after(async () => {
  await server?.end();
  await h?.close();
});

async function connectionsTo(dbs: string[]): Promise<number> {
  const [row] = await server`select count(*)::int as n from pg_stat_activity where datname = any(${dbs})`;
  return row!.n as number;
}

test('projects that go idle close their database connections, and serve again after', async () => {
  const orgs = await h.api('GET', '/v1/organizations');
  const projects: { ref: string; key: string }[] = [];
  for (let i = 0; i < 4; i++) {
    const created = await h.api('POST', '/v1/projects', {
      body: { name: `Idle ${i}`, organization_id: orgs.body[0].id },
    });
    assert.equal(created.status, 201);
    const keys = await h.api('GET', `/v1/projects/${created.body.ref}/api-keys`);
    const secret = keys.body.find((k: { type: string }) => k.type === 'secret');
    projects.push({ ref: created.body.ref, key: secret.api_key });
  }
  const bucketList = (p: { ref: string; key: string }) =>
    fetch(`${h.url}/project/${p.ref}/storage/v1/bucket`, {
      headers: { apikey: p.key, authorization: `Bearer ${p.key}` },
    });
  // Every project's pool is in use once.
  for (const p of projects) assert.equal((await bucketList(p)).status, 200);
  const dbs = (
    await h.hearth.p.dbs.control`select db_name from platform.projects where ref = any(${projects.map((p) => p.ref)})`
  ).map((r) => r.db_name as string);
  assert.equal(dbs.length, projects.length);
  assert.ok((await connectionsTo(dbs)) > 0, 'the requests opened connections');

  // Background work (storage sweeps, cron, workflow ticks) goes on meanwhile and must not keep them open.
  assert.equal(
    await until(
      () => connectionsTo(dbs),
      (n) => n === 0,
      30_000,
    ),
    0,
  );

  // An idle project reconnects on its next request.
  for (const p of projects) {
    const res = await bucketList(p);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), []);
  }
});
