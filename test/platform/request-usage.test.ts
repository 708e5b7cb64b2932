import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth();
});
after(async () => {
  await h?.close();
});

const ref = () => h.info.PROJECT_REF;
const call = (path: string, key: string | null = h.info.PUBLISHABLE_KEY) =>
  fetch(`${h.info.BASE_URL}${path}`, { headers: key ? { apikey: key, authorization: `Bearer ${key}` } : {} });
const usage = async () =>
  (await h.api('GET', `/v1/projects/${ref()}/usage`)).body as {
    daily_request_quota: number | null;
    days: { day: string; requests: number }[];
  };

test('config/limits daily_request_quota: bounds are checked, null means no quota', async () => {
  assert.equal((await h.api('GET', `/v1/projects/${ref()}/config/limits`)).body.daily_request_quota, null);
  for (const bad of [0, -1, 1.5, 'many', 1e13]) {
    const res = await h.api('PATCH', `/v1/projects/${ref()}/config/limits`, { body: { daily_request_quota: bad } });
    assert.equal(res.status, 400, String(bad));
    assert.equal(res.body.error.code, 'invalid_field');
  }
});

test('past the daily quota every data-plane area answers 429 over_request_quota with Retry-After; keyless requests do not count', async () => {
  const patched = await h.api('PATCH', `/v1/projects/${ref()}/config/limits`, { body: { daily_request_quota: 3 } });
  assert.equal(patched.status, 200);
  // Without a key: refused before counting, so nobody can spend the project's quota.
  for (let i = 0; i < 5; i++) assert.equal((await call('/rest/v1/', null)).status, 401);
  for (let i = 0; i < 3; i++) assert.equal((await call('/rest/v1/')).status, 200, `request ${i + 1}`);

  const rest = await call('/rest/v1/');
  assert.equal(rest.status, 429);
  const retry = Number(rest.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 86_400, `Retry-After ${retry}`);
  const restBody = await rest.json();
  assert.equal(restBody.code, 'over_request_quota');
  assert.match(restBody.message, /daily request quota/);

  const storage = await call('/storage/v1/bucket', h.info.SECRET_KEY);
  assert.equal(storage.status, 429);
  assert.equal((await storage.json()).error.code, 'over_request_quota');
  const auth = await call('/auth/v1/user');
  assert.equal(auth.status, 429);

  // Refused requests are not counted; the day's total reaches the management API within about a second.
  const today = new Date().toISOString().slice(0, 10);
  const seen = await until(usage, (u) => u.days[0]?.requests === 3);
  assert.deepEqual(seen, { daily_request_quota: 3, days: [{ day: today, requests: 3 }] });

  // The next UTC day starts from zero.
  h.clock.advance(86_400_000);
  assert.equal((await call('/rest/v1/')).status, 200);
  const tomorrow = h.clock.now().toISOString().slice(0, 10);
  const later = await until(usage, (u) => u.days.length === 2);
  assert.deepEqual(later.days, [
    { day: tomorrow, requests: 1 },
    { day: today, requests: 3 },
  ]);

  // Raising the quota (or clearing it) admits requests again at once.
  assert.equal(
    (await h.api('PATCH', `/v1/projects/${ref()}/config/limits`, { body: { daily_request_quota: null } })).status,
    200,
  );
  await until(
    () => call('/rest/v1/').then((r) => r.status),
    (s) => s === 200,
  );
  assert.equal((await call('/rest/v1/')).status, 200);
});

test('usage is visible to project members only', async () => {
  const res = await h.api('GET', `/v1/projects/${ref()}/usage`, { token: null });
  assert.equal(res.status, 401);
  const other = await h.api('GET', '/v1/projects/abcdefghijklmnopqrst/usage');
  assert.equal(other.status, 404);
});
