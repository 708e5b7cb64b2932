/**
 * Passkeys in headless chromium with the DevTools virtual authenticator:
 * the 422 before configuration, registration as a factor (aal2), a second
 * factor assertion (aal2), passkey-only sign-in (aal1), user verification
 * refused, a bogus signature, the sign counter, and a passkey of one project
 * failing in another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { purgeExpiredAuthRows } from '../../src/auth/maintenance.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';
import { startPasskeyBrowser, type PasskeyBrowser } from './passkey-browser.ts';

let h: TestHearth;
let browser: PasskeyBrowser;

before(async () => {
  h = await startTestHearth();
  browser = await startPasskeyBrowser();
  await configureAuth(h, { rate_limit_signups: 1000 });
});
after(async () => {
  await browser?.close();
  await h?.close();
});

const amrOf = (token: string) => (decodeJwt(token).amr as { method: string }[]).map((a) => a.method);

/** POST without any key or token (the passkey sign-in routes are public). */
async function publicPost(base: string, path: string, body: unknown) {
  const res = await fetch(`${base}/auth/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

let user: { id: string; token: string; factorId: string };

describe('before the relying party is configured', () => {
  test('passkey enrolment and sign-in options answer 422 webauthn_not_configured', async () => {
    const signUp = await authApi(h, 'POST', '/signup', {
      body: { email: uniqueEmail('pk'), password: goodPassword() },
    });
    const enrol = await authApi(h, 'POST', '/factors', {
      token: signUp.body.access_token,
      body: { factor_type: 'webauthn' },
    });
    assert.equal(enrol.status, 422);
    assert.equal(enrol.body.error_code, 'webauthn_not_configured');
    const options = await publicPost(h.info.BASE_URL, '/webauthn/authenticate/options', {});
    assert.equal(options.status, 422);
    assert.equal(options.body.error_code, 'webauthn_not_configured');
    await configureAuth(h, {
      webauthn_rp_id: 'localhost',
      webauthn_rp_display_name: 'Hearth test',
      webauthn_rp_origins: browser.origin,
    });
  });
});

describe('passkeys', () => {
  test('register through a factor challenge (credential_creation_options) and verify: an aal2 session with amr webauthn', async () => {
    const signUp = await authApi(h, 'POST', '/signup', {
      body: { email: uniqueEmail('pk'), password: goodPassword() },
    });
    const token = signUp.body.access_token;
    const enrol = await authApi(h, 'POST', '/factors', {
      token,
      body: { factor_type: 'webauthn', friendly_name: 'laptop' },
    });
    assert.equal(enrol.status, 200);
    assert.equal(enrol.body.type, 'webauthn');
    const challenge = await authApi(h, 'POST', `/factors/${enrol.body.id}/challenge`, { token });
    assert.equal(challenge.status, 200);
    const options = challenge.body.credential_creation_options;
    assert.equal(options.rp.id, 'localhost');
    assert.equal(options.rp.name, 'Hearth test');
    assert.equal(options.authenticatorSelection.residentKey, 'required');
    assert.equal(options.authenticatorSelection.userVerification, 'required');
    const credential = await browser.register(options);
    const verified = await authApi(h, 'POST', `/factors/${enrol.body.id}/verify`, {
      token,
      body: { challenge_id: challenge.body.id, credential },
    });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.equal(decodeJwt(verified.body.access_token).aal, 'aal2');
    assert.deepEqual(amrOf(verified.body.access_token), ['webauthn', 'password']);
    const me = await authApi(h, 'GET', '/user', { token: verified.body.access_token });
    assert.deepEqual(
      me.body.factors.map((f: { factor_type: string; status: string }) => [f.factor_type, f.status]),
      [['webauthn', 'verified']],
    );
    user = { id: signUp.body.user.id, token: verified.body.access_token, factorId: enrol.body.id };
  });

  test('as a second factor: credential_request_options for the registered passkey, then an aal2 session', async () => {
    const challenge = await authApi(h, 'POST', `/factors/${user.factorId}/challenge`, { token: user.token });
    const options = challenge.body.credential_request_options;
    assert.equal(options.allowCredentials.length, 1);
    assert.equal(options.userVerification, 'required');
    const credential = await browser.authenticate(options);
    const res = await authApi(h, 'POST', `/factors/${user.factorId}/verify`, {
      token: user.token,
      body: { challenge_id: challenge.body.id, credential },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(decodeJwt(res.body.access_token).aal, 'aal2');
    user.token = res.body.access_token;
  });

  test('passkey-only sign-in: public options with an empty allowCredentials, then an aal1 session for the owner', async () => {
    const options = await publicPost(h.info.BASE_URL, '/webauthn/authenticate/options', {});
    assert.equal(options.status, 200);
    assert.deepEqual(options.body.credential_request_options.allowCredentials, []);
    assert.equal(options.body.credential_request_options.userVerification, 'required');
    const credential = await browser.authenticate(options.body.credential_request_options);
    const res = await publicPost(h.info.BASE_URL, '/webauthn/authenticate', {
      challenge_id: options.body.id,
      credential,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const claims = decodeJwt(res.body.access_token);
    assert.equal(claims.sub, user.id);
    assert.equal(claims.aal, 'aal1');
    assert.deepEqual(amrOf(res.body.access_token), ['webauthn']);
    // The challenge is single use.
    const again = await publicPost(h.info.BASE_URL, '/webauthn/authenticate', {
      challenge_id: options.body.id,
      credential,
    });
    assert.equal(again.status, 422);
    assert.equal(again.body.error_code, 'mfa_challenge_expired');
  });

  test('a bogus signature is refused, and an old assertion is refused by the sign counter', async () => {
    const options = await publicPost(h.info.BASE_URL, '/webauthn/authenticate/options', {});
    const credential = await browser.authenticate(options.body.credential_request_options);
    const sig = Buffer.from(credential.response.signature, 'base64url');
    sig[sig.length - 1] ^= 0xff;
    const forged = { ...credential, response: { ...credential.response, signature: sig.toString('base64url') } };
    const res = await publicPost(h.info.BASE_URL, '/webauthn/authenticate', {
      challenge_id: options.body.id,
      credential: forged,
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.error_code, 'mfa_verification_failed');
    assert.match(res.body.msg, /signature/i);

    // An assertion made first but presented after a later one carries a counter that did not grow.
    const early = await publicPost(h.info.BASE_URL, '/webauthn/authenticate/options', {});
    const earlyCredential = await browser.authenticate(early.body.credential_request_options);
    const late = await publicPost(h.info.BASE_URL, '/webauthn/authenticate/options', {});
    const lateCredential = await browser.authenticate(late.body.credential_request_options);
    assert.equal(
      (
        await publicPost(h.info.BASE_URL, '/webauthn/authenticate', {
          challenge_id: late.body.id,
          credential: lateCredential,
        })
      ).status,
      200,
    );
    const stale = await publicPost(h.info.BASE_URL, '/webauthn/authenticate', {
      challenge_id: early.body.id,
      credential: earlyCredential,
    });
    assert.equal(stale.status, 422);
    assert.match(stale.body.msg, /counter/i);
  });

  test('user verification: the browser refuses when the authenticator cannot verify, and the server refuses an assertion without it', async () => {
    await browser.setUserVerified(false);
    try {
      const options = await publicPost(h.info.BASE_URL, '/webauthn/authenticate/options', {});
      await assert.rejects(
        browser.authenticate(options.body.credential_request_options),
        /NotAllowedError|not allowed/i,
      );
      // A page that asks the authenticator not to verify gets an assertion without the UV flag; the server requires it.
      const relaxed = { ...options.body.credential_request_options, userVerification: 'discouraged' };
      const credential = await browser.authenticate(relaxed);
      const res = await publicPost(h.info.BASE_URL, '/webauthn/authenticate', {
        challenge_id: options.body.id,
        credential,
      });
      assert.equal(res.status, 422);
      assert.equal(res.body.error_code, 'mfa_verification_failed');
      assert.match(res.body.msg, /verif/i);
    } finally {
      await browser.setUserVerified(true);
    }
  });

  test('a passkey registered in one project fails in another project with the same relying party', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const second = await h.api('POST', '/v1/projects', { body: { name: 'Other', organization_id: orgs.body[0].id } });
    assert.equal(second.status, 201);
    const patch = await h.api('PATCH', `/v1/projects/${second.body.ref}/config/auth`, {
      body: { webauthn_rp_id: 'localhost', webauthn_rp_origins: browser.origin },
    });
    assert.equal(patch.status, 200);
    const options = await publicPost(second.body.base_url, '/webauthn/authenticate/options', {});
    assert.equal(options.status, 200);
    const credential = await browser.authenticate(options.body.credential_request_options);
    const res = await publicPost(second.body.base_url, '/webauthn/authenticate', {
      challenge_id: options.body.id,
      credential,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error_code, 'invalid_credentials');
  });

  test('malformed input: a missing credential is 400, an unknown challenge 404', async () => {
    const missing = await publicPost(h.info.BASE_URL, '/webauthn/authenticate', { challenge_id: crypto.randomUUID() });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error_code, 'validation_failed');
    const unknown = await publicPost(h.info.BASE_URL, '/webauthn/authenticate', {
      challenge_id: crypto.randomUUID(),
      credential: { id: 'x', response: {} },
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error_code, 'mfa_challenge_not_found');
  });
});

describe('public options and their challenges', () => {
  test('options past rate_limit_passkey are 429 with Retry-After; used or expired sign-in challenges go at the next purge', async () => {
    h.clock.advance(10_000); // a full allowance, whatever the tests above spent
    const project = (await h.hearth.registry.defaultProject())!;
    const signInChallenges = async () =>
      (await project.sql`select count(*)::int as n from auth.mfa_challenges where kind = 'passkey_signin'`)[0]!.n;
    await configureAuth(h, { rate_limit_passkey: 3 });
    try {
      const before = await signInChallenges();
      for (let i = 0; i < 3; i++) {
        assert.equal((await publicPost(h.info.BASE_URL, '/webauthn/authenticate/options', {})).status, 200);
      }
      const res = await fetch(`${h.info.BASE_URL}/auth/v1/webauthn/authenticate/options`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(res.status, 429);
      assert.equal((await res.json()).error_code, 'over_request_rate_limit');
      // 3 per 10 s: the next one in at most 3.3 s, rounded up.
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 4, `Retry-After ${retryAfter}`);
      assert.equal(await signInChallenges(), before + 3); // the refused call stored nothing

      // Used ones (the sign-ins above) go at the next purge, the unused three once expired (5 minutes), not a day later.
      assert.ok(before > 0);
      await purgeExpiredAuthRows(project, h.clock.now());
      assert.equal(await signInChallenges(), 3);
      await purgeExpiredAuthRows(project, new Date(h.clock.now().getTime() + 5 * 60_000 + 1000));
      assert.equal(await signInChallenges(), 0);
    } finally {
      await configureAuth(h, { rate_limit_passkey: 30 });
    }
  });
});
