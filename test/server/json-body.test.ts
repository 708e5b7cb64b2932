/**
 * A JSON body with a `__proto__` key (or a `constructor` holding `prototype`)
 * is refused for safety, as Fastify's parser does, and the answer says so:
 * it used to read "not valid JSON", which sent callers after a syntax error.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api' } });
});
after(async () => {
  await h?.close();
});

const json = { 'content-type': 'application/json' };
const POISONING = /"__proto__".*refused for safety.*prototype poisoning/;

test('auth: a body with a __proto__ key is 400 invalid_request, saying it is refused for safety', async () => {
  const res = await h.api('POST', '/auth/v1/signup', {
    token: h.info.PUBLISHABLE_KEY,
    raw: '{"email":"poison@example.com","password":"a-long-password-1","__proto__":{"role":"service_role"}}',
    headers: json,
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.error_code, 'invalid_request');
  assert.match(res.body.msg, POISONING);
});

test('management and storage: a constructor.prototype key nested anywhere is refused the same way', async () => {
  const org = await h.api('POST', '/v1/organizations', {
    raw: '{"name":"x","meta":{"constructor":{"prototype":{"polluted":true}}}}',
    headers: json,
  });
  assert.equal(org.status, 400);
  assert.equal(org.body.error.code, 'invalid_request');
  assert.match(org.body.error.message, POISONING);
  const bucket = await h.api('POST', '/storage/v1/bucket', {
    token: h.info.SECRET_KEY,
    raw: '{"name":"b1","__proto__":{}}',
    headers: json,
  });
  assert.equal(bucket.status, 400);
  assert.match(bucket.body.message, POISONING);
});

test('a body that is not JSON still says so', async () => {
  const res = await h.api('POST', '/auth/v1/signup', {
    token: h.info.PUBLISHABLE_KEY,
    raw: '{"email": "a@example.com",',
    headers: json,
  });
  assert.equal(res.status, 400);
  assert.match(res.body.msg, /^The request body is not valid JSON/);
});
