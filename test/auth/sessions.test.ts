/**
 * The signed-in user's sessions: list, revoke one, and a password change
 * ending every other session of the user.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth();
  await configureAuth(h, { rate_limit_signups: 1000 });
});
after(async () => {
  await h?.close();
});

async function threeSessions() {
  const email = uniqueEmail('sess');
  const password = goodPassword();
  const first = await authApi(h, 'POST', '/signup', { body: { email, password } });
  const second = await authApi(h, 'POST', '/token?grant_type=password', { body: { email, password } });
  const third = await authApi(h, 'POST', '/token?grant_type=password', { body: { email, password } });
  return { email, password, sessions: [first.body, second.body, third.body] };
}

const refresh = (refresh_token: string) =>
  authApi(h, 'POST', '/token?grant_type=refresh_token', { body: { refresh_token } });

describe('sessions', () => {
  test('GET /sessions lists the live sessions, newest first, marking the current one', async () => {
    const { sessions } = await threeSessions();
    const res = await authApi(h, 'GET', '/sessions', { token: sessions[1].access_token });
    assert.equal(res.status, 200);
    const ids = sessions.map((s) => decodeJwt(s.access_token).session_id).reverse();
    assert.deepEqual(
      res.body.map((s: { id: string }) => s.id),
      ids,
    );
    assert.deepEqual(
      res.body.map((s: { current: boolean }) => s.current),
      [false, true, false],
    );
    assert.equal(res.body[0].aal, 'aal1');
    assert.equal(res.body[0].amr[0].method, 'password');
    const anon = await authApi(h, 'GET', '/sessions');
    assert.equal(anon.status, 401);
    assert.equal(anon.body.error_code, 'no_authorization');
  });

  test("DELETE /sessions/{id} ends that session's refresh tokens; an ended, unknown or another user's session is 404 session_not_found", async () => {
    const { sessions } = await threeSessions();
    const victim = decodeJwt(sessions[0].access_token).session_id as string;
    const res = await authApi(h, 'DELETE', `/sessions/${victim}`, { token: sessions[2].access_token });
    assert.equal(res.status, 204);
    assert.equal((await refresh(sessions[0].refresh_token)).body.error_code, 'invalid_grant');
    assert.equal((await refresh(sessions[1].refresh_token)).status, 200);
    const again = await authApi(h, 'DELETE', `/sessions/${victim}`, { token: sessions[2].access_token });
    assert.equal(again.status, 404);
    assert.equal(again.body.error_code, 'session_not_found');
    const unknown = await authApi(h, 'DELETE', `/sessions/${randomUUID()}`, { token: sessions[2].access_token });
    assert.deepEqual([unknown.status, unknown.body.error_code], [404, 'session_not_found']);
    const other = await threeSessions();
    const foreignId = decodeJwt(other.sessions[0].access_token).session_id;
    const foreign = await authApi(h, 'DELETE', `/sessions/${foreignId}`, { token: sessions[2].access_token });
    assert.deepEqual([foreign.status, foreign.body.error_code], [404, 'session_not_found']);
    // The other user's session is untouched.
    assert.equal((await refresh(other.sessions[0].refresh_token)).status, 200);
    assert.equal((await authApi(h, 'DELETE', '/sessions/not-a-uuid', { token: sessions[2].access_token })).status, 404);
  });

  test('a password change ends every other session of the user and keeps the current one', async () => {
    const { password, sessions } = await threeSessions();
    const changed = await authApi(h, 'PUT', '/user', {
      token: sessions[1].access_token,
      body: { password: goodPassword(), current_password: password },
    });
    assert.equal(changed.status, 200);
    assert.equal((await refresh(sessions[0].refresh_token)).body.error_code, 'invalid_grant');
    assert.equal((await refresh(sessions[2].refresh_token)).body.error_code, 'invalid_grant');
    assert.equal((await refresh(sessions[1].refresh_token)).status, 200);
    const list = await authApi(h, 'GET', '/sessions', { token: sessions[1].access_token });
    assert.equal(list.body.length, 1);
  });
});
