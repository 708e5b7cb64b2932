/**
 * SPEC 2.1-2.5, 3.1, 4.1, 5, 7 and 8 (auth rows) checked black-box with raw
 * fetch: exact statuses, codes, field names and headers, the way a client
 * written from SPEC.md alone would call the service.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { calculateJwkThumbprint, decodeProtectedHeader, type JWK } from 'jose';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { client, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth();
  // Magic links need the redirect allowlist (SPEC 5); site_url is then a target too.
  await configureAuth(h, {
    rate_limit_signups: 1000,
    rate_limit_anonymous_users: 1000,
    uri_allow_list: 'http://localhost:3000/**',
  });
});
after(async () => {
  await h?.close();
});

/** A call as SPEC 4.1 describes it: only `Authorization: Bearer <PUBLISHABLE_KEY or access token>`, no apikey header. */
async function bearerOnly(
  method: string,
  path: string,
  o: { body?: unknown; token?: string | null; raw?: string; contentType?: string } = {},
) {
  const headers: Record<string, string> = {};
  const token = o.token === undefined ? h.info.PUBLISHABLE_KEY : o.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (o.body !== undefined || o.raw !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
  const res = await fetch(`${h.info.BASE_URL}/auth/v1${path}`, {
    method,
    headers,
    body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

function assertSession(body: any) {
  assert.equal(typeof body.access_token, 'string');
  assert.equal(body.token_type, 'bearer');
  assert.equal(body.expires_in, 3600);
  assert.equal(typeof body.refresh_token, 'string');
  assert.equal(typeof body.user?.id, 'string');
  assert.equal(typeof body.user?.created_at, 'string');
}

describe('SPEC 2.4 JWKS and 2.3 header', () => {
  test('GET /.well-known/jwks.json needs no credentials and lists EC P-256 ES256 sig keys whose kid is the RFC 7638 thumbprint', async () => {
    const res = await bearerOnly('GET', '/.well-known/jwks.json', { token: null });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.body.keys.length, 1);
    const [jwk] = res.body.keys as JWK[];
    assert.deepEqual(
      { kty: jwk!.kty, crv: jwk!.crv, alg: jwk!.alg, use: jwk!.use },
      { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' },
    );
    assert.equal(typeof jwk!.x, 'string');
    assert.equal(typeof jwk!.y, 'string');
    assert.equal(jwk!.d, undefined, 'no private part');
    assert.equal(jwk!.kid, await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x: jwk!.x!, y: jwk!.y! }, 'sha256'));

    const signUp = await bearerOnly('POST', '/signup', { body: { email: uniqueEmail(), password: goodPassword() } });
    assert.equal(decodeProtectedHeader(signUp.body.access_token).kid, jwk!.kid);
  });

  test('supabase-js getClaims verifies the access token offline against the JWKS by kid', async () => {
    const sb = client(h);
    const { data } = await sb.auth.signUp({ email: uniqueEmail('claims'), password: goodPassword() });
    const claims = await sb.auth.getClaims(data.session!.access_token);
    assert.equal(claims.error, null);
    assert.equal(claims.data!.claims.sub, data.user!.id);
    assert.equal(claims.data!.header.kid, decodeProtectedHeader(data.session!.access_token).kid);
    const [head, body] = data.session!.access_token.split('.');
    const forged = await sb.auth.getClaims(`${head}.${body}.${Buffer.alloc(64).toString('base64url')}`);
    assert.ok(forged.error, 'a bad signature is refused');
  });
});

describe('SPEC 4.1 with only Authorization: Bearer <PUBLISHABLE_KEY>', () => {
  test('sign-up 201 session; e-mail/password grant in query or body; refresh rotates; reuse 401 invalid_grant', async () => {
    const email = uniqueEmail();
    const password = goodPassword();
    const up = await bearerOnly('POST', '/signup', { body: { email, password } });
    assert.equal(up.status, 201);
    assertSession(up.body);
    assert.equal(up.body.user.email, email);

    const byQuery = await bearerOnly('POST', '/token?grant_type=password', { body: { email, password } });
    assert.equal(byQuery.status, 200);
    assertSession(byQuery.body);
    const byBody = await bearerOnly('POST', '/token', { body: { grant_type: 'password', email, password } });
    assert.equal(byBody.status, 200);
    assertSession(byBody.body);

    const refreshed = await bearerOnly('POST', '/token', {
      body: { grant_type: 'refresh_token', refresh_token: byBody.body.refresh_token },
    });
    assert.equal(refreshed.status, 200);
    assertSession(refreshed.body);
    assert.notEqual(refreshed.body.refresh_token, byBody.body.refresh_token);
    const reused = await bearerOnly('POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: byBody.body.refresh_token },
    });
    assert.equal(reused.status, 401);
    assert.deepEqual(Object.keys(reused.body.error).sort(), ['code', 'message']);
    assert.equal(reused.body.error.code, 'invalid_grant');
  });

  test('guests: both fields absent or empty give a 201 session without e-mail, is_anonymous and aal1 in the token', async () => {
    for (const body of [{}, { email: '', password: '' }, undefined]) {
      const res = await bearerOnly('POST', '/signup', body === undefined ? { raw: '' } : { body });
      assert.equal(res.status, 201, JSON.stringify(body));
      assertSession(res.body);
      assert.equal('email' in res.body.user, false);
      const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
      assert.equal(claims.is_anonymous, true);
      assert.equal(claims.aal, 'aal1');
      const me = await bearerOnly('GET', '/user', { token: res.body.access_token });
      assert.equal(me.status, 200);
      assert.equal(me.body.id, res.body.user.id);
      assert.equal('email' in me.body, false);
      assert.deepEqual(me.body.identities, []);
      assert.deepEqual(me.body.factors, []);
    }
  });

  test('logout: refresh_token body 204 (unknown too); global scope by body or query with the access token revokes every refresh token', async () => {
    const email = uniqueEmail();
    const password = goodPassword();
    const first = (await bearerOnly('POST', '/signup', { body: { email, password } })).body;
    const out = await bearerOnly('POST', '/logout', { body: { refresh_token: first.refresh_token } });
    assert.equal(out.status, 204);
    assert.equal(
      (await bearerOnly('POST', '/token?grant_type=refresh_token', { body: { refresh_token: first.refresh_token } }))
        .status,
      401,
    );
    assert.equal(
      (await bearerOnly('GET', '/user', { token: first.access_token })).status,
      200,
      'access tokens live on',
    );
    assert.equal((await bearerOnly('POST', '/logout', { body: { refresh_token: 'nope' } })).status, 204);

    for (const how of ['body', 'query'] as const) {
      const a = (await bearerOnly('POST', '/token?grant_type=password', { body: { email, password } })).body;
      const b = (await bearerOnly('POST', '/token?grant_type=password', { body: { email, password } })).body;
      const res =
        how === 'body'
          ? await bearerOnly('POST', '/logout', {
              token: a.access_token,
              body: { refresh_token: a.refresh_token, scope: 'global' },
            })
          : await bearerOnly('POST', '/logout?scope=global', {
              token: a.access_token,
              body: { refresh_token: a.refresh_token },
            });
      assert.equal(res.status, 204, how);
      for (const s of [a, b]) {
        const r = await bearerOnly('POST', '/token?grant_type=refresh_token', {
          body: { refresh_token: s.refresh_token },
        });
        assert.equal(r.status, 401, how);
        assert.equal(r.body.error.code, 'invalid_grant');
      }
    }
  });

  test('PUT /user: data merges; password or e-mail change without current_password 400 reauthentication_required, wrong one 401', async () => {
    const password = goodPassword();
    const s = (await bearerOnly('POST', '/signup', { body: { email: uniqueEmail(), password } })).body;
    const put = (body: unknown) => bearerOnly('PUT', '/user', { token: s.access_token, body });
    const merged = await put({ data: { plan: 'pro' } });
    assert.equal(merged.status, 200);
    assert.equal(merged.body.id, s.user.id);
    for (const body of [{ password: goodPassword() }, { email: uniqueEmail() }]) {
      const missing = await put(body);
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.code, 'reauthentication_required');
      const wrong = await put({ ...body, current_password: 'wrong-password-1' });
      assert.equal(wrong.status, 401);
    }
    const leaked = await put({ password: 'password123', current_password: password });
    assert.equal(leaked.status, 400);
    assert.equal(leaked.body.error.code, 'leaked_password');
    const ok = await put({ password: goodPassword(), current_password: password });
    assert.equal(ok.status, 200);
  });

  test('errors use the {error: {code, message}} envelope, also for unknown auth routes', async () => {
    const res = await bearerOnly('GET', '/no-such-route');
    assert.equal(res.status, 404);
    assert.equal(typeof res.body.error.code, 'string');
    assert.equal(typeof res.body.error.message, 'string');
  });
});

async function mailTo(to: string): Promise<{ body: string }> {
  for (let i = 0; i < 200; i++) {
    const res = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/mailbox`);
    const m = (res.body as { to: string; body: string }[]).find((x) => x.to === to);
    if (m) return m;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no mail to ${to}`);
}

const codeOf = (mail: { body: string }) => /\b(\d{6})\b/.exec(mail.body)![1]!;
const linkOf = (mail: { body: string }) => /(https?:\/\/\S+\/auth\/v1\/verify\?\S+)/.exec(mail.body)![1]!;

describe('SPEC 3.1 e-mail codes, links and PKCE', () => {
  test('/otp is 200 {}; a wrong code is refused; the right one gives a session payload once', async () => {
    const email = uniqueEmail('otp');
    const sent = await bearerOnly('POST', '/otp', { body: { email } });
    assert.equal(sent.status, 200);
    assert.deepEqual(sent.body, {});
    const code = codeOf(await mailTo(email));
    const wrong = await bearerOnly('POST', '/verify', {
      body: { type: 'email', email, token: code === '000000' ? '111111' : '000000' },
    });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.body.error.code, 'otp_expired');
    const ok = await bearerOnly('POST', '/verify', { body: { type: 'email', email, token: code } });
    assert.equal(ok.status, 200);
    assertSession(ok.body);
    assert.equal(ok.body.user.email, email);
    assert.equal((await bearerOnly('POST', '/verify', { body: { type: 'email', email, token: code } })).status, 403);
  });

  test('GET /verify: a good magic link 302s with the session in the fragment; a bad one with error=access_denied&error_code=otp_expired', async () => {
    const email = uniqueEmail('link');
    await bearerOnly('POST', '/otp', { body: { email } });
    const link = new URL(linkOf(await mailTo(email)));
    assert.equal(link.searchParams.get('type'), 'magiclink');
    const good = await fetch(link, { redirect: 'manual' });
    assert.equal(good.status, 302);
    const fragment = new URLSearchParams(new URL(good.headers.get('location')!).hash.slice(1));
    for (const name of ['access_token', 'refresh_token', 'expires_in', 'token_type', 'type'])
      assert.ok(fragment.get(name), name);
    assert.equal(fragment.get('expires_in'), '3600');
    assert.equal(fragment.get('token_type'), 'bearer');
    assert.equal(fragment.get('type'), 'magiclink');

    const bad = await fetch(link, { redirect: 'manual' });
    assert.equal(bad.status, 302);
    const location = bad.headers.get('location')!;
    assert.ok(location.startsWith('http://localhost:3000/#error=access_denied&error_code=otp_expired&'), location);
  });

  test('PKCE: the link carries ?code=, exchanged once by grant_type=pkce for {access_token, refresh_token, user}', async () => {
    const email = uniqueEmail('pkce');
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    await bearerOnly('POST', '/otp', { body: { email, code_challenge: challenge, code_challenge_method: 'S256' } });
    const res = await fetch(linkOf(await mailTo(email)), { redirect: 'manual' });
    assert.equal(res.status, 302);
    const target = new URL(res.headers.get('location')!);
    assert.equal(target.hash, '');
    const code = target.searchParams.get('code')!;
    const exchanged = await bearerOnly('POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: verifier },
    });
    assert.equal(exchanged.status, 200);
    assert.equal(typeof exchanged.body.access_token, 'string');
    assert.equal(typeof exchanged.body.refresh_token, 'string');
    assert.equal(exchanged.body.user.email, email);
    const again = await bearerOnly('POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: verifier },
    });
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'flow_state_not_found');
  });
});

describe('SPEC 2.5 factors', () => {
  test('TOTP enrol {id, type, totp: {secret, uri, qr_code}}, challenge {id, expires_at}; GET /user lists the factor with its type; DELETE unenrols', async () => {
    const s = (await bearerOnly('POST', '/signup', { body: { email: uniqueEmail('mfa'), password: goodPassword() } }))
      .body;
    const enrol = await bearerOnly('POST', '/factors', {
      token: s.access_token,
      body: { factor_type: 'totp', friendly_name: 'phone' },
    });
    assert.equal(enrol.status, 200);
    assert.equal(enrol.body.type, 'totp');
    assert.equal(typeof enrol.body.id, 'string');
    assert.match(enrol.body.totp.secret, /^[A-Z2-7]+=*$/);
    assert.match(enrol.body.totp.uri, /^otpauth:\/\/totp\//);
    assert.match(enrol.body.totp.qr_code, /^otpauth:\/\//);
    const challenge = await bearerOnly('POST', `/factors/${enrol.body.id}/challenge`, { token: s.access_token });
    assert.equal(challenge.status, 200);
    assert.equal(typeof challenge.body.id, 'string');
    assert.equal(typeof challenge.body.expires_at, 'number');
    const me = await bearerOnly('GET', '/user', { token: s.access_token });
    assert.equal(me.body.factors.length, 1);
    assert.equal(me.body.factors[0].id, enrol.body.id);
    assert.equal(me.body.factors[0].type, 'totp');
    assert.equal(me.body.factors[0].friendly_name, 'phone');
    const removed = await bearerOnly('DELETE', `/factors/${enrol.body.id}`, { token: s.access_token });
    assert.equal(removed.status, 200);
    assert.deepEqual((await bearerOnly('GET', '/user', { token: s.access_token })).body.factors, []);
  });

  test('every passkey endpoint answers 422 webauthn_not_configured before rpId and origins are set, whatever the body', async () => {
    const s = (await bearerOnly('POST', '/signup', { body: { email: uniqueEmail('pk'), password: goodPassword() } }))
      .body;
    const calls = [
      await bearerOnly('POST', '/factors', {
        token: s.access_token,
        body: { factor_type: 'webauthn', friendly_name: 'key' },
      }),
      await bearerOnly('POST', '/webauthn/authenticate/options', { token: null, body: {} }),
      await bearerOnly('POST', '/webauthn/authenticate', { token: null, body: {} }),
      await bearerOnly('POST', '/webauthn/authenticate', {
        token: null,
        body: { challenge_id: randomUUID(), credential: { id: 'x' } },
      }),
    ];
    for (const res of calls) {
      assert.equal(res.status, 422);
      assert.equal(res.body.error.code, 'webauthn_not_configured');
    }
  });
});

describe('repeated query parameters', () => {
  test('a query parameter given twice is a 400 validation_failed, never a 500', async () => {
    const s = (await bearerOnly('POST', '/signup', { body: {} })).body;
    const cases: [string, string, unknown, string | null][] = [
      [
        'POST',
        '/otp?redirect_to=http://localhost:3000&redirect_to=http://localhost:3000',
        { email: uniqueEmail() },
        null,
      ],
      ['POST', '/recover?redirect_to=a&redirect_to=b', { email: uniqueEmail() }, null],
      ['GET', '/verify?token=a&token=b&type=magiclink', undefined, null],
      ['GET', '/verify?token=a&type=magiclink&type=email', undefined, null],
      ['GET', '/verify?token=a&type=magiclink&redirect_to=a&redirect_to=b', undefined, null],
      ['GET', '/authorize?provider=oidc&provider=github', undefined, null],
      ['GET', '/authorize?provider=github&redirect_to=a&redirect_to=b', undefined, null],
      ['GET', '/authorize?provider=github&code_challenge=a&code_challenge=b', undefined, null],
      ['GET', '/callback?state=a&state=b&code=c', undefined, null],
      [
        'POST',
        '/token?grant_type=password&grant_type=password',
        { email: uniqueEmail(), password: goodPassword() },
        null,
      ],
      ['POST', '/logout?scope=global&scope=global', {}, s.access_token],
      ['GET', '/user/identities/authorize?provider=github&provider=github', undefined, s.access_token],
    ];
    for (const [method, path, body, token] of cases) {
      const res = await bearerOnly(method, path, { body, token: token ?? h.info.PUBLISHABLE_KEY });
      assert.ok(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.equal(typeof res.body?.error?.code, 'string', `${method} ${path}`);
    }
  });
});

describe('malformed input on the remaining routes', () => {
  test('odd bodies and ids are 4xx with a code, never a 500', async () => {
    const s = (await bearerOnly('POST', '/signup', { body: { email: uniqueEmail('odd'), password: goodPassword() } }))
      .body;
    const factor = (
      await bearerOnly('POST', '/factors', {
        token: s.access_token,
        body: { factor_type: 'totp', friendly_name: 'odd' },
      })
    ).body;
    const t = s.access_token;
    const cases: [string, string, unknown, string | null][] = [
      ['POST', '/verify', { type: 'email', email: uniqueEmail(), token: 123456 }, null],
      ['POST', '/verify', { type: 7, email: uniqueEmail(), token: '123456' }, null],
      ['POST', '/verify', { type: 'invite', email: uniqueEmail(), token: '123456' }, null],
      ['POST', '/verify', { type: 'email', token_hash: ['x'] }, null],
      ['POST', '/otp', { email: uniqueEmail(), code_challenge: 'short' }, null],
      ['POST', '/otp', { email: uniqueEmail(), code_challenge: { a: 1 } }, null],
      ['POST', '/token?grant_type=pkce', { auth_code: 'nope', code_verifier: 'x'.repeat(43) }, null],
      ['POST', '/token?grant_type=pkce', { auth_code: 5, code_verifier: 'x' }, null],
      ['POST', '/factors', { factor_type: ['totp'] }, t],
      ['POST', '/factors', { factor_type: 'phone' }, t],
      ['POST', '/factors/not-a-uuid/challenge', {}, t],
      ['POST', `/factors/${factor.id}/verify`, { challenge_id: 'nope', code: '123456' }, t],
      ['POST', `/factors/${factor.id}/verify`, { challenge_id: randomUUID(), code: 'abcdef' }, t],
      ['POST', `/factors/${factor.id}/verify`, { challenge_id: randomUUID() }, t],
      ['POST', `/factors/${factor.id}/verify`, { challenge_id: randomUUID(), credential: 'garbage' }, t],
      ['DELETE', '/factors/not-a-uuid', undefined, t],
      ['DELETE', `/factors/${randomUUID()}`, undefined, t],
      ['PUT', '/user', { data: 'x' }, t],
      ['PUT', '/user', { email: 'not-an-address' }, t],
      ['PUT', '/user', { password: 12345678901 }, t],
      ['PUT', '/user', [1], t],
      ['DELETE', '/user/identities/not-a-uuid', undefined, t],
      ['GET', '/authorize', undefined, null],
      ['GET', '/authorize?provider=myspace', undefined, null],
      ['GET', '/callback', undefined, null],
    ];
    for (const [method, path, body, token] of cases) {
      const res = await bearerOnly(method, path, { body, token: token ?? h.info.PUBLISHABLE_KEY });
      const label = `${method} ${path} ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`;
      if (path.startsWith('/callback')) {
        assert.equal(res.status, 302, label);
        continue;
      }
      assert.ok(res.status >= 400 && res.status < 500, label);
      assert.equal(typeof res.body?.error?.code, 'string', label);
    }
  });
});
