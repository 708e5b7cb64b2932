/**
 * GoTrue parity, driven through supabase-js (auth-js 2.109)
 * and raw calls: a deleted user's access token on every user-scoped route,
 * the factors carried in session payloads (which mfa.getAuthenticatorAssuranceLevel
 * reads), aal2 to enrol a further factor, and the sign-in methods Hearth
 * does not offer answering with GoTrue's codes.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import * as OTPAuth from 'otpauth';
import WebSocket from 'ws';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, client, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';

let h: TestHearth;
let admin: SupabaseClient;
before(async () => {
  h = await startTestHearth();
  await configureAuth(h, {
    rate_limit_signups: 1000,
    rate_limit_anonymous_users: 1000,
    rate_limit_email_sent: 1000,
    webauthn_rp_id: 'localhost',
    webauthn_rp_origins: 'http://localhost:3000',
  });
  admin = createClient(h.info.BASE_URL, h.info.SECRET_KEY, {
    auth: { autoRefreshToken: false, persistSession: false },
    realtime: { transport: WebSocket as never },
  });
});
after(async () => {
  await h?.close();
});

async function signedIn() {
  const sb = client(h);
  const email = uniqueEmail('c3');
  const password = goodPassword();
  const { data, error } = await sb.auth.signUp({ email, password });
  assert.equal(error, null);
  return { sb, email, password, id: data.user!.id, token: data.session!.access_token };
}

const STEP = 30_000;
const totpCode = (secret: string) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: h.clock.now().getTime(),
  });

/** Moves the test clock to the start of a fresh 30-second step, so the next code is never a replay of the last. */
function nextStep(): void {
  h.clock.advance(STEP - (h.clock.now().getTime() % STEP) + STEP / 2);
}

/** Enrols and verifies a TOTP factor through supabase-js; the client is left in the aal2 session. */
async function withVerifiedTotp(sb: SupabaseClient) {
  const enrolled = await sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: `app-${randomUUID().slice(0, 8)}` });
  assert.equal(enrolled.error, null);
  nextStep();
  const verified = await sb.auth.mfa.challengeAndVerify({
    factorId: enrolled.data!.id,
    code: totpCode(enrolled.data!.totp.secret),
  });
  assert.equal(verified.error, null);
  return enrolled.data!;
}

function assertUserGone(res: { status: number; body: any; headers: Headers }, label: string) {
  assert.equal(res.status, 403, `${label}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error.code, 'user_not_found', label);
  assert.equal(res.body.error_code, 'user_not_found', label);
  assert.equal(res.headers.get('x-sb-error-code'), 'user_not_found', label);
}

describe("a deleted user's access token", () => {
  test('every user-scoped route answers 403 user_not_found, as GoTrue does; supabase-js getUser sees it', async () => {
    const u = await signedIn();
    const factor = (await u.sb.auth.mfa.enroll({ factorType: 'totp' })).data!;
    assert.equal((await admin.auth.admin.deleteUser(u.id)).error, null);
    const someId = randomUUID();
    const calls: [string, string, unknown?][] = [
      ['GET', '/user'],
      ['PUT', '/user', { data: { a: 1 } }],
      ['POST', '/factors', { factor_type: 'totp' }],
      ['POST', `/factors/${factor.id}/challenge`, {}],
      ['POST', `/factors/${factor.id}/verify`, { challenge_id: someId, code: '123456' }],
      ['DELETE', `/factors/${factor.id}`],
      ['GET', '/reauthenticate'],
      ['GET', '/sessions'],
      ['DELETE', `/sessions/${someId}`],
      ['GET', '/user/identities/authorize?provider=github'],
      ['DELETE', `/user/identities/${someId}`],
      ['POST', '/logout', {}],
      ['POST', '/logout?scope=global', {}],
    ];
    for (const [method, path, body] of calls) {
      assertUserGone(await authApi(h, method, path, { token: u.token, body }), `${method} ${path}`);
    }
    const got = await client(h).auth.getUser(u.token);
    assert.equal(got.error?.status, 403);
    assert.equal(got.error?.code, 'user_not_found');
    // signOut treats it as signed out (supabase-js ignores 401/403/404 there).
    assert.equal((await u.sb.auth.signOut()).error, null);
  });

  test('a soft-deleted user (row kept with deleted_at) is gone the same way', async () => {
    const u = await signedIn();
    assert.equal((await admin.auth.admin.deleteUser(u.id, true)).error, null);
    assertUserGone(await authApi(h, 'GET', '/user', { token: u.token }), 'GET /user');
    assertUserGone(await authApi(h, 'PUT', '/user', { token: u.token, body: { data: { a: 1 } } }), 'PUT /user');
    assertUserGone(await authApi(h, 'GET', '/sessions', { token: u.token }), 'GET /sessions');
  });
});

describe("session payloads carry the user's factors", () => {
  test('after a password sign-in, session.user.factors lists the verified factor and getAuthenticatorAssuranceLevel says aal2 is next', async () => {
    const u = await signedIn();
    const factor = await withVerifiedTotp(u.sb);

    const other = client(h);
    const signIn = await other.auth.signInWithPassword({ email: u.email, password: u.password });
    assert.equal(signIn.error, null);
    assert.deepEqual(
      signIn.data.user!.factors!.map((f) => [f.id, f.factor_type, f.status]),
      [[factor.id, 'totp', 'verified']],
    );
    const aal = await other.auth.mfa.getAuthenticatorAssuranceLevel();
    assert.equal(aal.error, null);
    assert.equal(aal.data!.currentLevel, 'aal1');
    assert.equal(aal.data!.nextLevel, 'aal2');

    // A refreshed session shows them too, in the same shape as GET /user.
    const refreshed = await other.auth.refreshSession();
    assert.equal(refreshed.error, null);
    const fromUser = await authApi(h, 'GET', '/user', { token: refreshed.data.session!.access_token });
    assert.deepEqual(refreshed.data.session!.user.factors, fromUser.body.factors);
    assert.deepEqual(refreshed.data.session!.user.identities, fromUser.body.identities);
  });

  test('an account without factors has factors: [] and nextLevel aal1', async () => {
    const u = await signedIn();
    const other = client(h);
    const signIn = await other.auth.signInWithPassword({ email: u.email, password: u.password });
    assert.deepEqual(signIn.data.user!.factors, []);
    assert.equal((await other.auth.mfa.getAuthenticatorAssuranceLevel()).data!.nextLevel, 'aal1');
  });
});

describe('enrolling a further factor', () => {
  test('needs an aal2 session once a factor is verified (403 insufficient_aal), so a password alone cannot add one', async () => {
    const u = await signedIn();
    await withVerifiedTotp(u.sb);

    const thief = client(h);
    assert.equal((await thief.auth.signInWithPassword({ email: u.email, password: u.password })).error, null);
    for (const factorType of ['totp', 'webauthn'] as const) {
      const res = await authApi(h, 'POST', '/factors', {
        token: (await thief.auth.getSession()).data.session!.access_token,
        body: { factor_type: factorType },
      });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'insufficient_aal');
      assert.equal(res.headers.get('x-sb-error-code'), 'insufficient_aal');
    }
    const viaJs = await thief.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'thief' });
    assert.equal(viaJs.error?.code, 'insufficient_aal');
    const listed = await authApi(h, 'GET', '/user', { token: u.token });
    assert.equal(listed.body.factors.length, 1, 'nothing was enrolled');

    // The owner's aal2 session may add a second one.
    const second = await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'backup' });
    assert.equal(second.error, null);
  });
});

describe('enrolment housekeeping, as GoTrue does it', () => {
  test('an unverified factor older than 5 minutes is dropped at the next enrolment, freeing its name; at most 10 factors', async () => {
    const u = await signedIn();
    const first = await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'phone' });
    assert.equal(first.error, null);
    const again = await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'phone' });
    assert.equal(again.error?.code, 'mfa_factor_name_conflict');

    const wait = 5 * 60_000 + 1000;
    h.clock.advance(wait);
    try {
      const later = await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'phone' });
      assert.equal(later.error, null);
      const listed = await authApi(h, 'GET', '/user', { token: u.token });
      assert.deepEqual(
        listed.body.factors.map((f: { id: string }) => f.id),
        [later.data!.id],
        'the abandoned factor is gone',
      );

      for (let i = 2; i <= 10; i++)
        assert.equal((await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: `f${i}` })).error, null);
      const eleventh = await authApi(h, 'POST', '/factors', {
        token: u.token,
        body: { factor_type: 'totp', friendly_name: 'f11' },
      });
      assert.equal(eleventh.status, 422);
      assert.equal(eleventh.body.error.code, 'too_many_enrolled_mfa_factors');
      assert.equal((await authApi(h, 'GET', '/user', { token: u.token })).body.factors.length, 10);
    } finally {
      h.clock.advance(-wait);
    }
  });
});

describe('a successful factor verify, as GoTrue does it', () => {
  test("ends the user's other aal1 sessions and drops their other unverified factors of that kind", async () => {
    const u = await signedIn();
    const laptop = client(h);
    assert.equal((await laptop.auth.signInWithPassword({ email: u.email, password: u.password })).error, null);
    const laptopRefresh = (await laptop.auth.getSession()).data.session!.refresh_token;
    const spare = await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'spare' });
    assert.equal(spare.error, null);

    const verified = await withVerifiedTotp(u.sb);
    const refresh = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: laptopRefresh },
    });
    assert.equal(refresh.status, 401, 'the password-only session on the laptop has ended');
    assert.equal(refresh.body.error.code, 'invalid_grant');
    const mine = await u.sb.auth.getUser();
    assert.deepEqual(
      mine.data.user!.factors!.map((f) => f.id),
      [verified.id],
      'the spare unverified factor is gone',
    );
    assert.equal((await u.sb.auth.refreshSession()).error, null, 'the new aal2 session lives on');
  });
});

describe('removing the last verified factor', () => {
  test("drops the user's sessions to aal1: a refresh no longer claims aal2 (user's unenroll and the admin API)", async () => {
    const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    for (const how of ['unenroll', 'admin'] as const) {
      const u = await signedIn();
      const factor = await withVerifiedTotp(u.sb);
      const second = await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'second' });
      assert.equal(second.error, null);
      // An unverified factor left behind backs nothing.
      const removed =
        how === 'unenroll'
          ? await u.sb.auth.mfa.unenroll({ factorId: factor.id })
          : await admin.auth.admin.mfa.deleteFactor({ userId: u.id, id: factor.id });
      assert.equal(removed.error, null, how);
      const refreshed = await u.sb.auth.refreshSession();
      assert.equal(refreshed.error, null, how);
      assert.equal(claimsOf(refreshed.data.session!.access_token).aal, 'aal1', how);
      const aal = await u.sb.auth.mfa.getAuthenticatorAssuranceLevel();
      assert.deepEqual([aal.data!.currentLevel, aal.data!.nextLevel], ['aal1', 'aal1'], how);
    }
  });

  test('while another verified factor remains, sessions keep aal2', async () => {
    const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    const u = await signedIn();
    const first = await withVerifiedTotp(u.sb);
    const second = await u.sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'second' });
    nextStep();
    assert.equal(
      (await u.sb.auth.mfa.challengeAndVerify({ factorId: second.data!.id, code: totpCode(second.data!.totp.secret) }))
        .error,
      null,
    );
    assert.equal((await u.sb.auth.mfa.unenroll({ factorId: first.id })).error, null);
    const refreshed = await u.sb.auth.refreshSession();
    assert.equal(claimsOf(refreshed.data.session!.access_token).aal, 'aal2');
  });
});

describe('sign-in methods Hearth does not offer answer plainly', () => {
  test('signInWithIdToken 400 provider_disabled, signInWithSSO 404 saml_provider_disabled, web3 400 web3_provider_disabled; no session', async () => {
    const sb = client(h);
    const idToken = await sb.auth.signInWithIdToken({ provider: 'google', token: 'a.b.c' });
    assert.equal(idToken.error?.status, 400);
    assert.equal(idToken.error?.code, 'provider_disabled');
    assert.match(idToken.error!.message, /^Provider \(issuer "https:\/\/accounts\.google\.com"\) is not enabled/);
    assert.equal(idToken.data.session, null);

    const sso = await sb.auth.signInWithSSO({ domain: 'example.com' });
    assert.equal(sso.error?.status, 404);
    assert.equal(sso.error?.code, 'saml_provider_disabled');
    assert.match(sso.error!.message, /SAML 2\.0 is disabled/);

    const web3 = await authApi(h, 'POST', '/token?grant_type=web3', {
      body: { chain: 'ethereum', message: 'x', signature: '0x00' },
    });
    assert.equal(web3.status, 400);
    assert.equal(web3.body.error.code, 'web3_provider_disabled');
    assert.match(web3.body.error.message, /Web3 provider is disabled/);
    assert.equal(web3.headers.get('x-sb-error-code'), 'web3_provider_disabled');
    assert.equal((await sb.auth.getSession()).data.session, null);

    // GoTrue's OAuth 2.1 server (Supabase Auth as a provider for other apps) is not served.
    const oauthClients = await admin.auth.admin.oauth.listClients();
    assert.equal(oauthClients.error?.status, 404);
  });

  test('verifyOtp with a phone is 400 phone_provider_disabled, like the other phone calls', async () => {
    const res = await client(h).auth.verifyOtp({ phone: '+15555550100', token: '123456', type: 'sms' });
    assert.equal(res.error?.status, 400);
    assert.equal(res.error?.code, 'phone_provider_disabled');
  });
});

describe('statuses GoTrue gives', () => {
  test('POST /verify for a banned user is 403 user_banned (code and token_hash), not a session', async () => {
    const email = uniqueEmail('c3ban');
    const created = await admin.auth.admin.createUser({ email, password: goodPassword(), email_confirm: true });
    assert.equal((await admin.auth.admin.updateUserById(created.data.user!.id, { ban_duration: '24h' })).error, null);
    const byCode = (await admin.auth.admin.generateLink({ type: 'magiclink', email })).data.properties!;
    const code = await client(h).auth.verifyOtp({ email, token: byCode.email_otp, type: 'magiclink' });
    assert.equal(code.error?.status, 403);
    assert.equal(code.error?.code, 'user_banned');
    assert.equal(code.data.session, null);
    const byHash = (await admin.auth.admin.generateLink({ type: 'magiclink', email })).data.properties!;
    const hash = await authApi(h, 'POST', '/verify', { body: { type: 'magiclink', token_hash: byHash.hashed_token } });
    assert.equal(hash.status, 403);
    assert.equal(hash.body.error.code, 'user_banned');
    assert.equal(hash.headers.get('x-sb-error-code'), 'user_banned');
  });
});

describe("GoTrue's e-mail address format", () => {
  test('an address a mail header could misread (display name, group, list, quotes) or non-ASCII is 400 on every path; nothing is stored', async () => {
    const project = (await h.hearth.registry.defaultProject())!;
    const bad = ['xx:;x@x.x', 'a<b>@x.y', 'a,b@x.y', '"q"@x.y', 'ü@x.de', 'a@-x.com', 'a@x..y'];
    for (const email of bad) {
      const calls = {
        signUp: client(h).auth.signUp({ email, password: goodPassword() }),
        signInWithOtp: client(h).auth.signInWithOtp({ email }),
        createUser: admin.auth.admin.createUser({ email, password: goodPassword() }),
        inviteUserByEmail: admin.auth.admin.inviteUserByEmail(email),
        generateLink: admin.auth.admin.generateLink({ type: 'magiclink', email }),
      };
      for (const [how, call] of Object.entries(calls)) {
        const { error } = await call;
        assert.equal(error?.status, 400, `${how} ${email}`);
        assert.equal(error?.code, 'validation_failed', `${how} ${email}`);
        assert.equal(error?.message, 'Unable to validate email address: invalid format', `${how} ${email}`);
      }
      const [row] = await project.sql`select count(*)::int as n from auth.users where email = ${email.toLowerCase()}`;
      assert.equal(row!.n, 0, email);
    }
    // What GoTrue takes: the dot-atom characters before the @, host-name labels after it.
    for (const email of [`o'brien.x+tag_1@sub-1.example.com`, `a!#$%&*/=?^{|}~@x.io`]) {
      assert.equal((await client(h).auth.signUp({ email, password: goodPassword() })).error, null, email);
    }
  });
});

describe("GoTrue's words for a token it cannot take", () => {
  test('a Bearer beside an apikey that is no JWT, a tampered token and an expired one: 401 bad_jwt, "invalid JWT: ..."', async () => {
    const prefix = 'invalid JWT: unable to parse or verify signature, ';
    // auth-js's own test: admin signOut with a token that is not a JWT.
    const signOut = await admin.auth.admin.signOut('not-a-jwt');
    assert.equal(signOut.error?.status, 401);
    assert.equal(signOut.error?.code, 'bad_jwt');
    assert.equal(signOut.error?.message, `${prefix}token is malformed: token contains an invalid number of segments`);
    const { token } = await signedIn();
    const [head, , sig] = token.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ sub: randomUUID(), role: 'service_role', exp: 9999999999 })).toString('base64url')}.${sig}`;
    const tampered = await authApi(h, 'GET', '/user', { token: forged });
    assert.equal(tampered.status, 401);
    assert.equal(tampered.body.msg, `${prefix}token signature is invalid`);
    h.clock.advance(3601_000);
    try {
      const expired = await client(h).auth.getUser(token);
      assert.equal(expired.error?.message, `${prefix}token has invalid claims: token is expired`);
    } finally {
      h.clock.advance(-3601_000);
    }
    // A wrong key in supabase-js (apikey and Bearer the same) is an unknown key, not a broken token,
    // and so is a bad apikey beside a broken Bearer: the key is checked first, as Supabase's gateway does.
    const wrongKey = await createClient(h.info.BASE_URL, 'not-a-key-of-this-project', {
      auth: { autoRefreshToken: false, persistSession: false },
      realtime: { transport: WebSocket as never },
    }).auth.signUp({ email: uniqueEmail(), password: goodPassword() });
    assert.equal(wrongKey.error?.status, 401);
    assert.equal(wrongKey.error?.code, 'invalid_api_key');
    const bothBad = await authApi(h, 'GET', '/user', { token: 'broken', headers: { apikey: 'also-broken' } });
    assert.equal(bothBad.body.error.code, 'invalid_api_key');
    // A Bearer shaped as a key beside the apikey is still a key: an unknown one is invalid_api_key.
    const unknownKey = await authApi(h, 'GET', '/user', { token: 'sb_secret_not-a-key-of-this-project' });
    assert.equal(unknownKey.status, 401);
    assert.equal(unknownKey.body.error.code, 'invalid_api_key');
  });
});

describe("GoTrue's message texts (supabase-js's own tests match on them)", () => {
  test('refresh, e-mail, code, duplicate sign-up, short password, missing token, guest reauthentication, wrong TOTP', async () => {
    const sb = client(h);
    // An expired access token makes setSession refresh with the (unknown) refresh token.
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const expired = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: randomUUID(), exp: 1 })}.${part({ s: 1 })}`;
    const set = await sb.auth.setSession({ access_token: expired, refresh_token: 'not-a-token' });
    assert.match(set.error!.message, /Invalid Refresh Token: Refresh Token Not Found/);
    assert.match(
      (await sb.auth.signUp({ email: 'a', password: goodPassword() })).error!.message,
      /Unable to validate email address: invalid format/,
    );
    assert.match(
      (await sb.auth.verifyOtp({ email: uniqueEmail(), token: '000000', type: 'email' })).error!.message,
      /Token has expired or is invalid/,
    );

    const u = await signedIn();
    const dup = await client(h).auth.signUp({ email: u.email, password: goodPassword() });
    assert.equal(dup.error?.code, 'email_taken');
    assert.match(dup.error!.message, /^User already registered/);
    assert.match(
      (await client(h).auth.signUp({ email: uniqueEmail(), password: 'short' })).error!.message,
      /Password should be at least 10 characters/,
    );

    const noToken = await authApi(h, 'POST', '/factors', { body: { factor_type: 'totp' } });
    assert.equal(noToken.status, 401);
    assert.match(noToken.body.error.message, /Bearer token/);

    const guest = client(h);
    assert.equal((await guest.auth.signInAnonymously()).error, null);
    assert.match(
      (await guest.auth.reauthenticate()).error!.message,
      /Reauthentication requires the user to have an email or a phone number/,
    );

    const factor = (await u.sb.auth.mfa.enroll({ factorType: 'totp' })).data!;
    const wrong = await u.sb.auth.mfa.challengeAndVerify({ factorId: factor.id, code: '000000' });
    assert.match(wrong.error!.message, /Invalid TOTP code/);
  });
});
