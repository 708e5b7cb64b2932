/**
 * The token buckets of src/db/rate-limit.ts against a project database's
 * auth.rate_buckets: a burst takes exactly `limit`, whatever order the
 * requests' clocks reach the database in; only a clock that really went back
 * starts a bucket afresh.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { takeToken, type TokenBucket } from '../../src/db/rate-limit.ts';
import { createProjectDb, type ProjectDb } from '../helpers/project-db.ts';

let db: ProjectDb;
let sql: postgres.Sql;

before(async () => {
  db = await createProjectDb();
  sql = postgres(db.adminUrl, { max: 4, onnotice: () => {} });
});
after(async () => {
  await sql?.end();
  await db?.drop();
});

const bucket = (key: string): TokenBucket => ({
  table: { name: 'auth.rate_buckets', keyColumn: 'client_ip' },
  bucket: 'login_account',
  key,
  limit: 5,
  refillMs: 5 * 60_000,
});
const at = (t0: Date, ms: number) => new Date(t0.getTime() + ms);

test('a burst takes exactly the limit, even when a request read the clock before the ones that got in first', async () => {
  const b = bucket('burst');
  const t0 = new Date('2026-11-26T12:00:00Z');
  for (let i = 0; i < 5; i++) assert.equal((await takeToken(sql, b, at(t0, i))).admitted, true, `request ${i}`);
  // Requests read the clock when they arrive and may reach the database in another order:
  // one that read it 50 ms before the first is not a clock gone back.
  const late = await takeToken(sql, b, at(t0, -50));
  assert.equal(late.admitted, false);
  assert.ok(late.waitMs > 0);
  for (let i = 0; i < 20; i++) assert.equal((await takeToken(sql, b, at(t0, 10 + i))).admitted, false);
});

test('a clock that went back by hours starts the bucket afresh instead of refusing for hours', async () => {
  const b = bucket('clock');
  const t0 = new Date('2026-11-26T12:00:00Z');
  for (let i = 0; i < 5; i++) await takeToken(sql, b, t0);
  assert.equal((await takeToken(sql, b, t0)).admitted, false);
  assert.equal((await takeToken(sql, b, at(t0, -3 * 3_600_000))).admitted, true);
});
