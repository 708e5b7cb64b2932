import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, client, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';
import { REFILL_MS } from '../../src/auth/rate-limit.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_TRUSTED_PROXIES: '127.0.0.1' } });
  await configureAuth(h, { rate_limit_signups: 1000, rate_limit_anonymous_users: 1000 });
});
after(async () => {
  await h?.close();
});

const HOUR = 3600_000;

describe('sign-up and password sign-in through supabase-js', () => {
  test('signUp returns a session whose access token carries the documented claims and verifies against the JWKS', async () => {
    const sb = client(h);
    const email = uniqueEmail();
    const { data, error } = await sb.auth.signUp({
      email,
      password: goodPassword(),
      options: { data: { name: 'Ada' } },
    });
    assert.equal(error, null);
    const s = data.session!;
    assert.equal(s.token_type, 'bearer');
    assert.equal(s.expires_in, 3600);
    assert.equal(data.user!.email, email);
    assert.equal(data.user!.user_metadata.name, 'Ada');
    const header = decodeProtectedHeader(s.access_token);
    assert.equal(header.alg, 'ES256');
    const jwks = createRemoteJWKSet(new URL(`${h.info.BASE_URL}/auth/v1/.well-known/jwks.json`));
    const { payload } = await jwtVerify(s.access_token, jwks, { currentDate: h.clock.now() });
    assert.equal(payload.sub, data.user!.id);
    assert.equal(payload.aud, 'authenticated');
    assert.equal(payload.role, 'authenticated');
    assert.equal(payload.aal, 'aal1');
    assert.equal(payload.email, email);
    assert.equal(payload.is_anonymous, false);
    assert.equal(payload.iss, `${h.info.BASE_URL}/auth/v1`);
    assert.equal((payload.exp as number) - (payload.iat as number), 3600);
    assert.equal(typeof payload.session_id, 'string');
    assert.deepEqual(
      (payload.amr as { method: string }[]).map((a) => a.method),
      ['password'],
    );
  });

  test('signInWithPassword works; a wrong password and an unknown address give the same 400 invalid_credentials', async () => {
    const email = uniqueEmail();
    const password = goodPassword();
    await client(h).auth.signUp({ email, password });
    const sb = client(h);
    const ok = await sb.auth.signInWithPassword({ email: email.toUpperCase(), password });
    assert.equal(ok.error, null);
    assert.equal(ok.data.user!.email, email);
    for (const attempt of [
      { email, password: 'not-the-password-1' },
      { email: uniqueEmail('ghost'), password },
    ]) {
      const res = await authApi(h, 'POST', '/token?grant_type=password', { body: attempt });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invalid_credentials');
      assert.equal(res.body.error_code, 'invalid_credentials');
    }
  });

  test('sign-up with an existing e-mail is 409 email_taken', async () => {
    const email = uniqueEmail();
    await client(h).auth.signUp({ email, password: goodPassword() });
    const res = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'email_taken');
    const viaJs = await client(h).auth.signUp({ email, password: goodPassword() });
    assert.equal(viaJs.error?.code, 'email_taken');
  });

  test('passwords must be 10-128 characters (422 weak_password) and not leaked (400 leaked_password)', async () => {
    for (const password of ['short-pw1', 'x'.repeat(129)]) {
      const res = await authApi(h, 'POST', '/signup', { body: { email: uniqueEmail(), password } });
      assert.equal(res.status, 422, password);
      assert.equal(res.body.error.code, 'weak_password');
    }
    for (const password of ['password123', 'PassWord123', 'qwertyuiop', '1234567890']) {
      const res = await authApi(h, 'POST', '/signup', { body: { email: uniqueEmail(), password } });
      assert.equal(res.status, 400, password);
      assert.equal(res.body.error.code, 'leaked_password');
    }
    const exact = await authApi(h, 'POST', '/signup', {
      body: { email: uniqueEmail(), password: `${'x'.repeat(118)}Q1w2e3r4t!` },
    });
    assert.equal(exact.status, 201);
  });

  test('malformed input is a 400 with a code, never a 500', async () => {
    const cases: [string, unknown, string][] = [
      ['/signup', { email: 'not-an-address', password: goodPassword() }, 'validation_failed'],
      // Longer than SMTP carries: 65 characters before the @, 255 in all.
      ['/signup', { email: `${'a'.repeat(65)}@example.test`, password: goodPassword() }, 'validation_failed'],
      ['/signup', { email: `a@${'b'.repeat(240)}.example.test`, password: goodPassword() }, 'validation_failed'],
      ['/signup', { email: uniqueEmail() }, 'validation_failed'],
      ['/signup', { password: goodPassword() }, 'validation_failed'],
      ['/signup', { email: 42, password: goodPassword() }, 'validation_failed'],
      ['/signup', { email: uniqueEmail(), password: goodPassword(), data: [1] }, 'validation_failed'],
      ['/signup', [1, 2], 'validation_failed'],
      ['/token?grant_type=password', { email: uniqueEmail() }, 'validation_failed'],
      ['/token?grant_type=magic', {}, 'unsupported_grant_type'],
      ['/token', {}, 'unsupported_grant_type'],
      ['/token?grant_type=refresh_token', {}, 'validation_failed'],
      ['/logout?scope=everything', {}, 'validation_failed'],
    ];
    for (const [path, body, code] of cases) {
      const res = await authApi(h, 'POST', path, { body });
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal(res.body.error.code, code, `${path} ${JSON.stringify(body)}`);
    }
    // 254 characters, host-name labels of at most 63.
    const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'b'.repeat(63)}.${'b'.repeat(48)}.example.test`;
    assert.equal(longest.length, 254);
    assert.equal(
      (await authApi(h, 'POST', '/signup', { body: { email: longest, password: goodPassword() } })).status,
      201,
    );
    const badJson = await h.api('POST', '/auth/v1/signup', {
      raw: '{"email":',
      token: h.info.PUBLISHABLE_KEY,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(badJson.status, 400);
    assert.equal(badJson.body.error.code, 'invalid_request');
  });

  test('auth calls without a key are 401', async () => {
    const res = await h.api('POST', '/auth/v1/signup', { body: {}, token: null });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'no_api_key');
  });
});

describe('refresh tokens', () => {
  test('two refreshes of one token at once (@supabase/ssr: a page and a fetch): the second is 401 invalid_grant, the session goes on', async () => {
    const { data } = await client(h).auth.signUp({ email: uniqueEmail(), password: goodPassword() });
    const token = data.session!.refresh_token;
    const grant = () => authApi(h, 'POST', '/token?grant_type=refresh_token', { body: { refresh_token: token } });
    const answers = await Promise.all([grant(), grant()]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401]);
    const won = answers.find((a) => a.status === 200)!;
    const lost = answers.find((a) => a.status === 401)!;
    assert.equal(lost.body.error.code, 'invalid_grant');
    assert.match(lost.body.error.message, /^Invalid Refresh Token: Already Used/);
    // The winner's token still refreshes: the race did not end the session.
    const next = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: won.body.refresh_token },
    });
    assert.equal(next.status, 200);
  });

  test('refreshSession rotates; a second use past the race window is 401 invalid_grant and revokes the whole family', async () => {
    const sb = client(h);
    const { data } = await sb.auth.signUp({ email: uniqueEmail(), password: goodPassword() });
    const first = data.session!.refresh_token;
    const r1 = await sb.auth.refreshSession({ refresh_token: first });
    assert.equal(r1.error, null);
    const second = r1.data.session!.refresh_token;
    assert.notEqual(second, first);

    h.clock.advance(11_000); // past the 10 s in which a reuse is taken for two refreshes at once
    const reuse = await authApi(h, 'POST', '/token?grant_type=refresh_token', { body: { refresh_token: first } });
    assert.equal(reuse.status, 401);
    assert.equal(reuse.body.error.code, 'invalid_grant');
    // the family is gone: the newest token no longer works either
    const after = await authApi(h, 'POST', '/token', { body: { grant_type: 'refresh_token', refresh_token: second } });
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'invalid_grant');
  });

  test('grant_type in the body works; unknown tokens are 401 invalid_grant', async () => {
    const { data } = await client(h).auth.signUp({ email: uniqueEmail(), password: goodPassword() });
    const ok = await authApi(h, 'POST', '/token', {
      body: { grant_type: 'refresh_token', refresh_token: data.session!.refresh_token },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.user.id, data.user!.id);
    const unknown = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: 'x'.repeat(40) },
    });
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.error.code, 'invalid_grant');
  });

  test('access tokens expire after 1 hour; refresh tokens after 30 days', async () => {
    const { data } = await client(h).auth.signUp({ email: uniqueEmail(), password: goodPassword() });
    const token = data.session!.access_token;
    assert.equal((await authApi(h, 'GET', '/user', { token })).status, 200);
    h.clock.advance(HOUR + 1000);
    try {
      const expired = await authApi(h, 'GET', '/user', { token });
      assert.equal(expired.status, 401);
      assert.equal(expired.body.error.code, 'bad_jwt');
      const refreshed = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
        body: { refresh_token: data.session!.refresh_token },
      });
      assert.equal(refreshed.status, 200);
      h.clock.advance(30 * 24 * HOUR + 1000);
      const late = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
        body: { refresh_token: refreshed.body.refresh_token },
      });
      assert.equal(late.status, 401);
      assert.equal(late.body.error.code, 'invalid_grant');
    } finally {
      h.clock.advance(-(31 * 24 * HOUR + 2000));
    }
  });
});

describe('logout', () => {
  test('signOut local ends only that session; the access token lives on until expiry', async () => {
    const email = uniqueEmail();
    const password = goodPassword();
    await client(h).auth.signUp({ email, password });
    const a = client(h);
    const b = client(h);
    const sa = (await a.auth.signInWithPassword({ email, password })).data.session!;
    const sb = (await b.auth.signInWithPassword({ email, password })).data.session!;
    assert.equal((await a.auth.signOut({ scope: 'local' })).error, null);
    const refreshA = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: sa.refresh_token },
    });
    assert.equal(refreshA.status, 401);
    const refreshB = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: sb.refresh_token },
    });
    assert.equal(refreshB.status, 200);
    assert.equal((await authApi(h, 'GET', '/user', { token: sa.access_token })).status, 200);
  });

  test('POST /logout with a refresh token is 204 (also for unknown tokens)', async () => {
    const { data } = await client(h).auth.signUp({ email: uniqueEmail(), password: goodPassword() });
    const res = await authApi(h, 'POST', '/logout', { body: { refresh_token: data.session!.refresh_token } });
    assert.equal(res.status, 204);
    const again = await authApi(h, 'POST', '/logout', { body: { refresh_token: data.session!.refresh_token } });
    assert.equal(again.status, 204);
    const refresh = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: data.session!.refresh_token },
    });
    assert.equal(refresh.status, 401);
  });

  test('POST /logout with a refresh token is 204 and revokes it even beside an expired or malformed access token (SPEC 3.1 "always 204")', async () => {
    for (const stale of ['expired', 'malformed', 'not-a-jwt'] as const) {
      const { data } = await client(h).auth.signUp({ email: uniqueEmail(), password: goodPassword() });
      const { access_token, refresh_token } = data.session!;
      let token = access_token;
      if (stale === 'expired') h.clock.advance(2 * HOUR);
      if (stale === 'malformed') token = `${access_token.slice(0, -4)}AAAA`;
      if (stale === 'not-a-jwt') token = 'not-a-jwt';
      const res = await authApi(h, 'POST', '/logout', { token, body: { refresh_token } });
      assert.equal(res.status, 204, stale);
      const refresh = await authApi(h, 'POST', '/token?grant_type=refresh_token', { body: { refresh_token } });
      assert.equal(refresh.status, 401, `${stale}: the session is revoked`);
      // Without a refresh token the refused access token names no session: refused as before.
      const alone = await authApi(h, 'POST', '/logout', { token });
      assert.equal(alone.status, 401, stale);
      // A Bearer beside the apikey that is no JWT (nor a key) is a malformed token too, in GoTrue's words.
      assert.equal(alone.body.error.code, 'bad_jwt', stale);
    }
    // The key itself is still checked.
    const noKey = await authApi(h, 'POST', '/logout', {
      token: 'not-a-jwt',
      headers: { apikey: 'sb_publishable_not_a_key' },
      body: { refresh_token: 'x' },
    });
    assert.equal(noKey.status, 401);
  });

  test('signOut global revokes every refresh token of the user', async () => {
    const email = uniqueEmail();
    const password = goodPassword();
    await client(h).auth.signUp({ email, password });
    const sessions = [];
    for (let i = 0; i < 3; i++)
      sessions.push((await client(h).auth.signInWithPassword({ email, password })).data.session!);
    const c = client(h);
    await c.auth.setSession({ access_token: sessions[0]!.access_token, refresh_token: sessions[0]!.refresh_token });
    assert.equal((await c.auth.signOut({ scope: 'global' })).error, null);
    for (const s of sessions.slice(1)) {
      const r = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
        body: { refresh_token: s.refresh_token },
      });
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'invalid_grant');
    }
    const noToken = await authApi(h, 'POST', '/logout?scope=global', { body: {} });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.error.code, 'no_authorization');
  });
});

describe('the user', () => {
  test('getUser shows identities and factors; updateUser merges data', async () => {
    const sb = client(h);
    const { data } = await sb.auth.signUp({
      email: uniqueEmail(),
      password: goodPassword(),
      options: { data: { a: 1 } },
    });
    const got = await sb.auth.getUser();
    assert.equal(got.error, null);
    assert.equal(got.data.user!.id, data.user!.id);
    // The sign-up answer shows GoTrue's email identity (an app reading `identities.length === 0` after signUp as
    // "already registered" is not misled); GET /user lists the linked social identities, as SPEC 2.2 says.
    const user = got.data.user!;
    assert.deepEqual(
      data.user!.identities!.map((i) => [i.provider, i.id, i.user_id, i.identity_data]),
      [['email', user.id, user.id, { sub: user.id, email: user.email, email_verified: true, phone_verified: false }]],
    );
    assert.deepEqual(user.identities, []);
    assert.deepEqual(got.data.user!.factors, []);
    const upd = await sb.auth.updateUser({ data: { b: 2 } });
    assert.equal(upd.error, null);
    assert.deepEqual(upd.data.user!.user_metadata, { a: 1, b: 2 });
    const raw = await authApi(h, 'GET', '/user', { token: data.session!.access_token });
    assert.deepEqual(raw.body.user_metadata, { a: 1, b: 2 });
    assert.ok(Array.isArray(raw.body.identities) && Array.isArray(raw.body.factors));
  });

  test('GET /user without a user token is 401 no_authorization', async () => {
    const res = await authApi(h, 'GET', '/user');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'no_authorization');
  });

  test('changing the password needs current_password: 400 reauthentication_required, 401 when wrong', async () => {
    const email = uniqueEmail();
    const password = goodPassword();
    const sb = client(h);
    const { data } = await sb.auth.signUp({ email, password });
    const token = data.session!.access_token;
    const next = goodPassword();
    const missing = await authApi(h, 'PUT', '/user', { token, body: { password: next } });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'reauthentication_required');
    const wrong = await authApi(h, 'PUT', '/user', {
      token,
      body: { password: next, current_password: 'wrong-password-1' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'invalid_current_password');
    const leaked = await authApi(h, 'PUT', '/user', {
      token,
      body: { password: 'password1234', current_password: password },
    });
    assert.equal(leaked.status, 400);
    assert.equal(leaked.body.error.code, 'leaked_password');
    const viaJs = await sb.auth.updateUser({ password: next, current_password: password } as never);
    assert.equal(viaJs.error, null);
    assert.equal((await client(h).auth.signInWithPassword({ email, password })).error?.code, 'invalid_credentials');
    assert.equal((await client(h).auth.signInWithPassword({ email, password: next })).error, null);
  });

  test('changing the e-mail without a mailer applies at once (after re-authentication); a taken address is 409', async () => {
    const password = goodPassword();
    const { data } = await client(h).auth.signUp({ email: uniqueEmail(), password });
    const token = data.session!.access_token;
    const fresh = uniqueEmail('moved');
    const missing = await authApi(h, 'PUT', '/user', { token, body: { email: fresh } });
    assert.equal(missing.body.error.code, 'reauthentication_required');
    const other = uniqueEmail();
    await client(h).auth.signUp({ email: other, password: goodPassword() });
    const taken = await authApi(h, 'PUT', '/user', { token, body: { email: other, current_password: password } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, 'email_taken');
    const ok = await authApi(h, 'PUT', '/user', { token, body: { email: fresh, current_password: password } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.email, fresh);
    assert.equal((await client(h).auth.signInWithPassword({ email: fresh, password })).error, null);
  });
});

describe('guests', () => {
  test('signInAnonymously gives an is_anonymous session; setting a password makes the same user permanent', async () => {
    const sb = client(h);
    const { data, error } = await sb.auth.signInAnonymously();
    assert.equal(error, null);
    const id = data.user!.id;
    assert.equal(data.user!.is_anonymous, true);
    assert.equal(data.user!.email, undefined);
    const { payload } = await jwtVerify(
      data.session!.access_token,
      createRemoteJWKSet(new URL(`${h.info.BASE_URL}/auth/v1/.well-known/jwks.json`)),
      { currentDate: h.clock.now() },
    );
    assert.equal(payload.is_anonymous, true);
    assert.equal(payload.role, 'authenticated');

    const email = uniqueEmail('guest');
    const password = goodPassword();
    const upd = await sb.auth.updateUser({ email, password });
    assert.equal(upd.error, null);
    assert.equal(upd.data.user!.id, id);
    assert.equal(upd.data.user!.is_anonymous, false);
    assert.equal(upd.data.user!.email, email);
    const refreshed = await sb.auth.refreshSession();
    const claims = JSON.parse(Buffer.from(refreshed.data.session!.access_token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.is_anonymous, false);
    assert.equal(claims.sub, id);
    const signIn = await client(h).auth.signInWithPassword({ email, password });
    assert.equal(signIn.data.user!.id, id);
  });

  test('an empty sign-up body is a guest too', async () => {
    const res = await authApi(h, 'POST', '/signup', { body: { email: '', password: '' } });
    assert.equal(res.status, 201);
    assert.equal(res.body.user.is_anonymous, true);
  });
});

describe('rate limits per client IP', () => {
  test('sign-ups and guests past the burst are 429 with Retry-After; the allowance refills; X-Forwarded-For counts from a trusted proxy', async () => {
    await configureAuth(h, { rate_limit_signups: 2, rate_limit_anonymous_users: 1 });
    try {
      const ip = { 'x-forwarded-for': '203.0.113.7' };
      for (let i = 0; i < 2; i++) {
        assert.equal(
          (
            await authApi(h, 'POST', '/signup', {
              body: { email: uniqueEmail(), password: goodPassword() },
              headers: ip,
            })
          ).status,
          201,
        );
      }
      const over = await authApi(h, 'POST', '/signup', {
        body: { email: uniqueEmail(), password: goodPassword() },
        headers: ip,
      });
      assert.equal(over.status, 429);
      assert.equal(over.body.error.code, 'over_request_rate_limit');
      assert.equal(over.headers.get('x-sb-error-code'), 'over_request_rate_limit');
      // Two allowed per 10 s: the next one is due 5 s after the first two.
      assert.equal(over.headers.get('retry-after'), '5');
      const otherIp = await authApi(h, 'POST', '/signup', {
        body: { email: uniqueEmail(), password: goodPassword() },
        headers: { 'x-forwarded-for': '203.0.113.8' },
      });
      assert.equal(otherIp.status, 201);

      assert.equal((await authApi(h, 'POST', '/signup', { body: {}, headers: ip })).status, 201);
      const guestOver = await authApi(h, 'POST', '/signup', { body: {}, headers: ip });
      assert.equal(guestOver.status, 429);
      assert.equal(guestOver.body.error.code, 'over_request_rate_limit');
      assert.equal(guestOver.headers.get('retry-after'), '10');

      // Refused requests spent nothing: after the refill interval exactly one more sign-up and guest pass.
      h.clock.advance(REFILL_MS);
      try {
        assert.equal((await authApi(h, 'POST', '/signup', { body: {}, headers: ip })).status, 201);
        assert.equal((await authApi(h, 'POST', '/signup', { body: {}, headers: ip })).status, 429);
        assert.equal(
          (
            await authApi(h, 'POST', '/signup', {
              body: { email: uniqueEmail(), password: goodPassword() },
              headers: ip,
            })
          ).status,
          201,
        );
      } finally {
        h.clock.advance(-REFILL_MS);
      }
    } finally {
      await configureAuth(h, { rate_limit_signups: 1000, rate_limit_anonymous_users: 1000 });
    }
  });

  test('concurrent sign-ups from one address cannot exceed the burst', async () => {
    await configureAuth(h, { rate_limit_anonymous_users: 5 });
    try {
      const ip = { 'x-forwarded-for': '203.0.113.9' };
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => authApi(h, 'POST', '/signup', { body: {}, headers: ip })),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.equal(statuses.filter((s) => s === 201).length, 5, String(statuses));
      assert.equal(statuses.filter((s) => s === 429).length, 15, String(statuses));
    } finally {
      await configureAuth(h, { rate_limit_anonymous_users: 1000 });
    }
  });

  test('config validation refuses bad values with 400', async () => {
    const bad = await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, {
      body: { rate_limit_signups: -1 },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_field');
    const url = await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, {
      body: { site_url: 'ftp://x' },
    });
    assert.equal(url.status, 400);
  });

  const configPath = () => `/v1/projects/${h.info.PROJECT_REF}/config/auth`;

  // Each value would be saved, then make every mail or redirect fail where nobody sees it.
  const refused: [string, string][] = [
    ['smtp_admin_email', 'nope'],
    ['smtp_admin_email', 'Auth <auth@example.com>'],
    ['smtp_admin_email', 'auth@example.com, other@example.com'],
    ['smtp_admin_email', 'auth@example.com\r\nBcc: victim@example.com'],
    ['uri_allow_list', 'not a url'],
    ['uri_allow_list', 'http://app.test/**,not a url'],
    ['uri_allow_list', 'localhost:3000'],
    ['uri_allow_list', 'https://app .test/**'],
    ['uri_allow_list', 'javascript://alert(1)'],
    ['uri_allow_list', 'https://[::1/**'],
    ['smtp_host', 'smtp://smtp.example.com'],
    ['smtp_host', 'smtp.example.com:587'],
    ['smtp_host', 'smtp.example.com/relay'],
    ['site_url', 'not a url'],
    ['webauthn_rp_origins', 'https://app.example.com/path'],
    ['external_oidc_url', 'issuer.example.com'],
  ];
  for (const [field, value] of refused) {
    test(`config/auth ${field} ${JSON.stringify(value)} is 400 invalid_field naming the field, nothing saved`, async () => {
      const before = await h.api('GET', configPath());
      const res = await h.api('PATCH', configPath(), { body: { [field]: value } });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'invalid_field');
      assert.ok(res.body.error.message.startsWith(`config/auth.${field} `), res.body.error.message);
      assert.deepEqual((await h.api('GET', configPath())).body, before.body);
    });
  }

  // A newcomer pointing smtp_host at a local smtp-server learns the way out from the refusal itself.
  const outbound: [string, string, RegExp][] = [
    ['smtp_host', '127.0.0.1', /HEARTH_OUTBOUND_ALLOW=127\.0\.0\.1\/32 /],
    ['smtp_host', 'localhost', /HEARTH_OUTBOUND_ALLOW=127\.0\.0\.1\/32 /],
    ['smtp_host', '::1', /HEARTH_OUTBOUND_ALLOW=::1\/128 /],
    ['smtp_host', '10.1.2.3', /HEARTH_OUTBOUND_ALLOW=10\.1\.2\.3\/32 /],
    ['external_oidc_url', 'http://localhost:9000/issuer', /HEARTH_OUTBOUND_ALLOW=127\.0\.0\.1\/32 /],
    ['external_github_url', 'https://[::ffff:192.168.1.5]/', /HEARTH_OUTBOUND_ALLOW=192\.168\.1\.5\/32 /],
    ['external_google_url', 'http://169.254.169.254/', /never reachable, not even through HEARTH_OUTBOUND_ALLOW/],
    ['smtp_host', 'metadata.google.internal', /never reachable, not even through HEARTH_OUTBOUND_ALLOW/],
  ];
  for (const [field, value, advice] of outbound) {
    test(`config/auth ${field} ${value} is refused saying what the operator can do about it`, async () => {
      const res = await h.api('PATCH', configPath(), { body: { [field]: value } });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'invalid_field');
      assert.match(res.body.error.message, advice);
      if (!/never/.test(advice.source)) assert.match(res.body.error.message, /docs\/configuration\.md/);
    });
  }

  test('config/auth takes addresses, hosts and redirect patterns in the forms Supabase projects use', async () => {
    const good = {
      smtp_admin_email: 'no-reply+auth@mail.example.com',
      smtp_host: 'smtp.example.com',
      uri_allow_list:
        'https://*.example.com/**, myapp://callback, com.example.app://auth/callback, http://localhost:*/**, https://app.example.com/?',
    };
    const res = await h.api('PATCH', configPath(), { body: good });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const [field, value] of Object.entries(good)) assert.equal(res.body[field], value);
    // Empty clears, as before.
    const cleared = await h.api('PATCH', configPath(), {
      body: { smtp_admin_email: '', smtp_host: null, uri_allow_list: '' },
    });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.smtp_host, null);
  });
});

describe('JWKS', () => {
  test('is public: whatever credentials come with the request, even bad ones, are ignored', async () => {
    const url = `${h.info.BASE_URL}/auth/v1/.well-known/jwks.json`;
    const bare = await fetch(url);
    assert.equal(bare.status, 200);
    const keys = await bare.json();
    assert.equal(keys.keys.length > 0, true);
    for (const headers of <Record<string, string>[]>[
      { apikey: 'sb_publishable_not-a-key' },
      { authorization: 'Bearer not.a.jwt' },
      { apikey: 'nonsense', authorization: 'Basic QWxhZGRpbjpvcGVu' },
    ]) {
      const res = await fetch(url, { headers });
      assert.equal(res.status, 200, JSON.stringify(headers));
      assert.deepEqual(await res.json(), keys);
    }
  });

  test('so are the other public calls of SPEC 5 and the links a browser follows: bad credentials do not turn them into 401', async () => {
    const headers = { apikey: 'sb_publishable_not-a-key', authorization: 'Bearer not.a.jwt' };
    const base = `${h.info.BASE_URL}/auth/v1`;
    const options = await fetch(`${base}/webauthn/authenticate/options`, { method: 'POST', headers });
    assert.equal(options.status, 422, 'passkey sign-in options: the project has no relying party yet');
    assert.equal((await options.json()).error_code, 'webauthn_not_configured');
    const signIn = await fetch(`${base}/webauthn/authenticate`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(signIn.status, 422);
    const link = await fetch(`${base}/verify?type=magiclink&token=nope`, { headers, redirect: 'manual' });
    assert.equal(link.status, 302);
    assert.match(link.headers.get('location') ?? '', /error_code=otp_expired/);
    const social = await fetch(`${base}/authorize?provider=github`, { headers, redirect: 'manual' });
    assert.equal(social.status, 400, 'a disabled provider, not a refused key');
  });
});
