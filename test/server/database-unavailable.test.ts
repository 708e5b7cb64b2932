// A lost database is 503 database_unavailable with Retry-After on every route,
// data plane included, each in its area's envelope (docs/errors.md), never a
// 500: PostgreSQL (a private server the test may stop) is stopped after every
// area has been used once, so pools hold connections that are now dead.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';

let pg: PrivatePostgres;
let h: TestHearth;
const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-unavailable-'));

before(async () => {
  pg = await startPrivatePostgres();
  h = await startTestHearth({ env: { DATABASE_URL: pg.url }, dataDir, keepData: true });
});
after(async () => {
  await pg?.start();
  await h?.close();
  await pg?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * One request per area, with where its envelope puts the code. (/functions/v1
 * routes from its in-memory function store and reaches the database only
 * through a function's own requests, which land in these areas.)
 */
function requests() {
  const key = h.info.SECRET_KEY;
  const data = { apikey: key, authorization: `Bearer ${key}` };
  return [
    { area: 'rest', path: '/rest/v1/missing_table?select=*', init: { headers: data }, code: (b: any) => b.code },
    { area: 'auth', path: '/auth/v1/admin/users', init: { headers: data }, code: (b: any) => b.error_code },
    { area: 'storage', path: '/storage/v1/bucket', init: { headers: data }, code: (b: any) => b.error.code },
    {
      area: 'management',
      path: '/v1/projects',
      init: { headers: { authorization: `Bearer ${h.info.MANAGEMENT_TOKEN}` } },
      code: (b: any) => b.error.code,
    },
  ];
}

test('with PostgreSQL stopped, every area answers 503 database_unavailable with Retry-After; after the restart they serve again', async () => {
  const before = new Map<string, number>();
  for (const r of requests()) before.set(r.area, (await fetch(h.url + r.path, r.init)).status);
  for (const [area, status] of before) assert.ok(status < 500, `${area} answers before the stop (${status})`);

  await pg.stop();
  for (const r of requests()) {
    const res = await fetch(h.url + r.path, r.init);
    const body = await res.json();
    assert.equal(res.status, 503, `${r.area}: ${JSON.stringify(body)}`);
    assert.equal(r.code(body), 'database_unavailable', `${r.area}: ${JSON.stringify(body)}`);
    assert.equal(res.headers.get('retry-after'), '2', r.area);
  }

  await pg.start();
  for (const r of requests()) {
    const res = await fetch(h.url + r.path, r.init);
    await res.arrayBuffer();
    assert.equal(res.status, before.get(r.area), `${r.area} serves again after the restart`);
  }
});
