/**
 * Edge cases of SPEC 2.16, 3.1, 4.1, 5, 7 and 8, each compared with GoTrue's
 * behaviour: input PostgreSQL cannot store, GoTrue's
 * error extras, PUT /user rules, and access tokens that outlive their
 * session.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { isAuthWeakPasswordError } from '@supabase/supabase-js';
import * as OTPAuth from 'otpauth';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, client, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth();
  await configureAuth(h, {
    rate_limit_signups: 1000,
    rate_limit_anonymous_users: 1000,
    rate_limit_email_sent: 1000,
    uri_allow_list: 'http://localhost:3000/**',
  });
});
after(async () => {
  await h?.close();
});

async function signUp(data?: Record<string, unknown>) {
  const email = uniqueEmail('edge');
  const password = goodPassword();
  const res = await authApi(h, 'POST', '/signup', { body: { email, password, data } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { email, password, token: res.body.access_token as string, refresh: res.body.refresh_token as string };
}

/** A body sent as written (lone surrogates survive only in JSON escapes). */
const rawAuth = (method: string, path: string, raw: string, token = h.info.PUBLISHABLE_KEY) =>
  h.api(method, `/auth/v1${path}`, {
    raw,
    token,
    headers: { apikey: h.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
  });

const totpCode = (secret: string) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: h.clock.now().getTime() });

async function enrolVerified(token: string) {
  const f = await authApi(h, 'POST', '/factors', { token, body: { factor_type: 'totp' } });
  assert.equal(f.status, 200, JSON.stringify(f.body));
  const c = await authApi(h, 'POST', `/factors/${f.body.id}/challenge`, { token });
  const v = await authApi(h, 'POST', `/factors/${f.body.id}/verify`, {
    token,
    body: { challenge_id: c.body.id, code: totpCode(f.body.totp.secret) },
  });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  return { factorId: f.body.id as string, aal2: v.body.access_token as string };
}

describe('input PostgreSQL cannot store is 400 validation_failed, never a 500', () => {
  test('U+0000, lone surrogates and deep nesting in bodies of every kind of route', async () => {
    const u = await signUp();
    const cases: [string, string, string, string?][] = [
      ['POST', '/signup', JSON.stringify({ email: 'a\u0000b@example.com', password: goodPassword() })],
      ['POST', '/signup', JSON.stringify({ email: uniqueEmail(), password: goodPassword(), data: { a: 'x\u0000y' } })],
      ['POST', '/signup', JSON.stringify({ data: { 'k\u0000': 1 } })],
      ['POST', '/signup', `{"email":"${uniqueEmail()}","password":"${goodPassword()}","data":{"a":"\\udc00"}}`],
      ['POST', '/signup', `{"data":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`],
      [
        'POST',
        '/token?grant_type=password',
        JSON.stringify({ email: 'a\u0000@example.com', password: goodPassword() }),
      ],
      ['POST', '/otp', JSON.stringify({ email: uniqueEmail(), data: { a: '\u0000' } })],
      ['POST', '/factors', JSON.stringify({ factor_type: 'totp', friendly_name: 'a\u0000' }), u.token],
      ['PUT', '/user', JSON.stringify({ data: { a: '\u0000' } }), u.token],
      [
        'POST',
        '/admin/users',
        JSON.stringify({ email: uniqueEmail(), user_metadata: { a: '\u0000' } }),
        h.info.SECRET_KEY,
      ],
      ['POST', '/admin/users', `{"email":"${uniqueEmail()}","app_metadata":{"a":"\\ud800"}}`, h.info.SECRET_KEY],
      ['POST', '/invite', JSON.stringify({ email: uniqueEmail(), data: { a: '\u0000' } }), h.info.SECRET_KEY],
    ];
    for (const [method, path, raw, token] of cases) {
      const res = await rawAuth(method, path, raw, token);
      assert.equal(res.status, 400, `${method} ${path} ${raw.slice(0, 80)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'validation_failed');
    }
    const list = await h.api('GET', '/auth/v1/admin/users?filter=%00', {
      token: h.info.SECRET_KEY,
      headers: { apikey: h.info.SECRET_KEY },
    });
    assert.equal(list.status, 400);
    assert.equal(list.body.error.code, 'validation_failed');
  });

  test('well-formed Unicode (paired surrogates, nesting within the limit) is stored as sent', async () => {
    const data = { name: 'Zoë 😀', nested: { a: { b: { c: [1, { d: 'ok' }] } } } };
    const u = await signUp(data);
    const me = await authApi(h, 'GET', '/user', { token: u.token });
    assert.deepEqual(me.body.user_metadata, data);
  });
});

describe("GoTrue's error extras", () => {
  test('a short password: 422 weak_password with weak_password.reasons and x-sb-error-code; supabase-js sees an AuthWeakPasswordError', async () => {
    const res = await authApi(h, 'POST', '/signup', { body: { email: uniqueEmail(), password: 'Short#1' } });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'weak_password');
    assert.deepEqual(res.body.weak_password, { reasons: ['length'] });
    assert.equal(res.headers.get('x-sb-error-code'), 'weak_password');

    const { error } = await client(h).auth.signUp({ email: uniqueEmail(), password: 'Short#1' });
    assert.ok(isAuthWeakPasswordError(error), String(error));
    assert.deepEqual(error.reasons, ['length']);
  });

  test('a breached password: 400 leaked_password with reasons [pwned]; other refusals carry their code in x-sb-error-code', async () => {
    const res = await authApi(h, 'POST', '/signup', { body: { email: uniqueEmail(), password: 'password123' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'leaked_password');
    assert.deepEqual(res.body.weak_password, { reasons: ['pwned'] });
    assert.equal(res.headers.get('x-sb-error-code'), 'leaked_password');

    const bad = await authApi(h, 'GET', '/user', { token: 'abc.def.ghi' });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers.get('x-sb-error-code'), 'bad_jwt');
    const grant = await authApi(h, 'POST', '/token?grant_type=refresh_token', { body: { refresh_token: 'nope' } });
    assert.equal(grant.headers.get('x-sb-error-code'), 'invalid_grant');
  });
});

describe('PUT /user as GoTrue answers it', () => {
  test('data merges and a key set to null is removed (supabase-js updateUser)', async () => {
    const u = await signUp({ keep: 1, drop: 2 });
    const sb = client(h);
    await sb.auth.setSession({ access_token: u.token, refresh_token: u.refresh });
    const { data, error } = await sb.auth.updateUser({ data: { drop: null, add: 3 } });
    assert.equal(error, null);
    assert.deepEqual(data.user?.user_metadata, { keep: 1, add: 3 });
    const me = await authApi(h, 'GET', '/user', { token: u.token });
    assert.deepEqual(me.body.user_metadata, { keep: 1, add: 3 });
  });

  test('the same password again is 422 same_password; the password stays usable', async () => {
    const u = await signUp();
    const res = await authApi(h, 'PUT', '/user', {
      token: u.token,
      body: { password: u.password, current_password: u.password },
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'same_password');
    const again = await authApi(h, 'POST', '/token?grant_type=refresh_token', { body: { refresh_token: u.refresh } });
    assert.equal(again.status, 200, 'a refused change must not end the session');
  });

  test('app_metadata is 403 not_admin and phone 400 phone_provider_disabled, neither silently ignored', async () => {
    const u = await signUp();
    const app = await authApi(h, 'PUT', '/user', { token: u.token, body: { app_metadata: { role: 'admin' } } });
    assert.equal(app.status, 403);
    assert.equal(app.body.error.code, 'not_admin');
    const phone = await authApi(h, 'PUT', '/user', { token: u.token, body: { phone: '+15555550100' } });
    assert.equal(phone.status, 400);
    assert.equal(phone.body.error.code, 'phone_provider_disabled');
    const me = await authApi(h, 'GET', '/user', { token: u.token });
    assert.deepEqual(me.body.app_metadata, { provider: 'email', providers: ['email'] });
  });

  test('with a verified factor, a password or e-mail change needs an aal2 session (401 insufficient_aal); metadata does not', async () => {
    const u = await signUp();
    const { aal2 } = await enrolVerified(u.token);
    const aal1 = (
      await authApi(h, 'POST', '/token?grant_type=password', { body: { email: u.email, password: u.password } })
    ).body.access_token;
    for (const body of [
      { password: goodPassword(), current_password: u.password },
      { email: uniqueEmail(), current_password: u.password },
    ]) {
      const res = await authApi(h, 'PUT', '/user', { token: aal1, body });
      assert.equal(res.status, 401, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'insufficient_aal');
    }
    assert.equal((await authApi(h, 'PUT', '/user', { token: aal1, body: { data: { x: 1 } } })).status, 200);
    const ok = await authApi(h, 'PUT', '/user', {
      token: aal2,
      body: { password: goodPassword(), current_password: u.password },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});

describe('an access token whose session has ended cannot start a new one', () => {
  test('after logout: factor enrol, challenge and verify, and identity linking are 403 session_not_found; no session is minted', async () => {
    const u = await signUp();
    const f = (await authApi(h, 'POST', '/factors', { token: u.token, body: { factor_type: 'totp' } })).body;
    const c = (await authApi(h, 'POST', `/factors/${f.id}/challenge`, { token: u.token })).body;
    assert.equal((await authApi(h, 'POST', '/logout', { token: u.token })).status, 204);

    const verify = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
      token: u.token,
      body: { challenge_id: c.id, code: totpCode(f.totp.secret) },
    });
    assert.equal(verify.status, 403, JSON.stringify(verify.body));
    assert.equal(verify.body.error.code, 'session_not_found');
    assert.equal(verify.body.access_token, undefined);
    for (const [method, path, body] of [
      ['POST', '/factors', { factor_type: 'totp' }],
      ['POST', `/factors/${f.id}/challenge`, undefined],
      ['GET', '/user/identities/authorize?provider=github&redirect_to=http://localhost:3000/', undefined],
    ] as const) {
      const res = await authApi(h, method, path, { token: u.token, body });
      assert.equal(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'session_not_found');
    }
    // The refused verification was rolled back: the factor is still unverified.
    const factors = await h.api(
      'GET',
      `/auth/v1/admin/users/${(await authApi(h, 'GET', '/user', { token: u.token })).body.id}/factors`,
      {
        token: h.info.SECRET_KEY,
        headers: { apikey: h.info.SECRET_KEY },
      },
    );
    assert.equal(factors.body[0].status, 'unverified');
  });

  test('after a global sign-out from another device the same holds', async () => {
    const u = await signUp();
    const other = (
      await authApi(h, 'POST', '/token?grant_type=password', { body: { email: u.email, password: u.password } })
    ).body.access_token;
    assert.equal((await authApi(h, 'POST', '/logout?scope=global', { token: other })).status, 204);
    const res = await authApi(h, 'POST', '/factors', { token: u.token, body: { factor_type: 'totp' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'session_not_found');
  });
});

describe('typed request fields', () => {
  test('/otp create_user must be a boolean; a code_challenge_method without code_challenge is refused', async () => {
    const typed = await authApi(h, 'POST', '/otp', { body: { email: uniqueEmail(), create_user: 'false' } });
    assert.equal(typed.status, 400);
    assert.equal(typed.body.error.code, 'validation_failed');
    const lone = await authApi(h, 'POST', '/otp', { body: { email: uniqueEmail(), code_challenge_method: 's256' } });
    assert.equal(lone.status, 400);
    assert.equal(lone.body.error.code, 'validation_failed');
  });

  test('phone sign-in and phone factors get GoTrue\'s codes, not "email is required"', async () => {
    // 400, and 422 on the password grant: GoTrue's statuses for each.
    for (const [path, body, status] of [
      ['/signup', { phone: '+15555550100', password: goodPassword() }, 400],
      ['/otp', { phone: '+15555550100' }, 400],
      ['/token?grant_type=password', { phone: '+15555550100', password: goodPassword() }, 422],
    ] as const) {
      const res = await authApi(h, 'POST', path, { body });
      assert.equal(res.status, status, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'phone_provider_disabled');
    }
    const u = await signUp();
    const { error } = await (async () => {
      const sb = client(h);
      await sb.auth.setSession({ access_token: u.token, refresh_token: u.refresh });
      return sb.auth.mfa.enroll({ factorType: 'phone', phone: '+15555550100' });
    })();
    assert.equal(error?.status, 422);
    assert.equal(error?.code, 'mfa_phone_enroll_not_enabled');
  });
});

/** A request exactly as given: no Content-Type unless named (fetch would add text/plain to a string body). */
function rawRequest(
  method: string,
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${h.info.BASE_URL}${path}`,
      { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('bodies are JSON whatever their Content-Type, as GoTrue reads them', () => {
  const key = () => ({ apikey: h.info.PUBLISHABLE_KEY, authorization: `Bearer ${h.info.PUBLISHABLE_KEY}` });
  // curl -d sends application/x-www-form-urlencoded; some clients send text/plain or nothing.
  const TYPES: [string, Record<string, string>][] = [
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['text/plain', { 'content-type': 'text/plain;charset=UTF-8' }],
    ['no Content-Type', {}],
  ];
  for (const [name, type] of TYPES) {
    test(`${name}: sign-up, password sign-in and factor enrolment take a JSON body; one that is not JSON is 400 invalid_request`, async () => {
      const email = uniqueEmail('ctype');
      const password = goodPassword();
      const creds = JSON.stringify({ email, password });
      const signUp = await rawRequest('POST', '/auth/v1/signup', creds, { ...key(), ...type });
      assert.equal(signUp.status, 201, JSON.stringify(signUp.body));
      assert.equal(signUp.body.user.email, email);
      const signIn = await rawRequest('POST', '/auth/v1/token?grant_type=password', creds, { ...key(), ...type });
      assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
      const factor = await rawRequest('POST', '/auth/v1/factors', JSON.stringify({ factor_type: 'totp' }), {
        apikey: h.info.PUBLISHABLE_KEY,
        authorization: `Bearer ${signIn.body.access_token}`,
        ...type,
      });
      assert.equal(factor.status, 200, JSON.stringify(factor.body));
      assert.equal(factor.body.type, 'totp');
      for (const notJson of [`email=${encodeURIComponent(email)}&password=${password}`, '{"email":']) {
        const bad = await rawRequest('POST', '/auth/v1/signup', notJson, { ...key(), ...type });
        assert.equal(bad.status, 400, notJson);
        assert.equal(bad.body.error.code, 'invalid_request', notJson);
        assert.match(bad.body.error.message, /not valid JSON/);
      }
    });
  }

  test('only /auth/v1 reads them so: a management route still refuses a form-encoded body', async () => {
    const res = await rawRequest('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, '{"smtp_port":2525}', {
      authorization: `Bearer ${h.info.MANAGEMENT_TOKEN}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_request');
    assert.match(res.body.error.message, /Content-Type: application\/json/);
  });
});
