/**
 * TOTP factors against a real Hearth with the injected clock: enrolment,
 * challenges, the ±1-step window and its edges, replay, wrong codes, the aal
 * claim (and an RLS policy on it), removal, and supabase-js's mfa client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import * as OTPAuth from 'otpauth';
import postgres from 'postgres';
import { purgeExpiredAuthRows } from '../../src/auth/maintenance.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, client, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_TRUSTED_PROXIES: '127.0.0.1' } });
  await configureAuth(h, { rate_limit_signups: 1000, rate_limit_mfa: 1000 });
});
after(async () => {
  await h?.close();
});

const STEP = 30_000;

async function signUp(): Promise<{ token: string; email: string; password: string }> {
  const email = uniqueEmail('totp');
  const password = goodPassword();
  const res = await authApi(h, 'POST', '/signup', { body: { email, password } });
  assert.equal(res.status, 201);
  return { token: res.body.access_token, email, password };
}

const codeAt = (secret: string, at: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: at,
  });

/** Moves the test clock to the middle of a 30-second step, so ±15 s of work never crosses a step edge. */
function centreOfStep(): number {
  const into = h.clock.now().getTime() % STEP;
  h.clock.advance((STEP + STEP / 2 - into) % STEP);
  return h.clock.now().getTime();
}

async function enrol(token: string, friendly_name?: string) {
  const res = await authApi(h, 'POST', '/factors', { token, body: { factor_type: 'totp', friendly_name } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { id: string; type: string; totp: { secret: string; uri: string; qr_code: string } };
}

async function verify(token: string, factorId: string, code: string) {
  const c = await authApi(h, 'POST', `/factors/${factorId}/challenge`, { token });
  assert.equal(c.status, 200, JSON.stringify(c.body));
  return authApi(h, 'POST', `/factors/${factorId}/verify`, { token, body: { challenge_id: c.body.id, code } });
}

describe('TOTP enrolment', () => {
  test('enrol answers {id, type, totp: {secret, uri, qr_code}}: SHA-1, 6 digits, 30 s; the secret is stored sealed', async () => {
    const u = await signUp();
    const f = await enrol(u.token, 'phone');
    assert.equal(f.type, 'totp');
    assert.match(f.totp.secret, /^[A-Z2-7]{32}$/);
    const uri = new URL(f.totp.uri);
    assert.equal(uri.protocol, 'otpauth:');
    assert.equal(uri.host, 'totp');
    assert.equal(uri.searchParams.get('algorithm'), 'SHA1');
    assert.equal(uri.searchParams.get('digits'), '6');
    assert.equal(uri.searchParams.get('period'), '30');
    assert.equal(uri.searchParams.get('secret'), f.totp.secret);
    assert.equal(uri.searchParams.get('issuer'), 'localhost:3000'); // the host of site_url
    assert.ok(decodeURIComponent(uri.pathname).includes(u.email));
    assert.equal(f.totp.qr_code, f.totp.uri); // SPEC 2.5: an otpauth:// URI for QR rendering
    const project = (await h.hearth.registry.defaultProject())!;
    const [row] = await project.sql`select secret_sealed, status from auth.mfa_factors where id = ${f.id}`;
    assert.equal(row!.status, 'unverified');
    assert.ok(!String(row!.secret_sealed).includes(f.totp.secret));
    const user = await authApi(h, 'GET', '/user', { token: u.token });
    assert.deepEqual(
      user.body.factors.map((x: { id: string; factor_type: string; status: string; friendly_name: string }) => [
        x.id,
        x.factor_type,
        x.status,
        x.friendly_name,
      ]),
      [[f.id, 'totp', 'unverified', 'phone']],
    );
  });

  test('refusals: no user token 401, bad factor_type 400, a duplicate friendly_name 422', async () => {
    const u = await signUp();
    const anon = await authApi(h, 'POST', '/factors', { body: { factor_type: 'totp' } });
    assert.equal(anon.status, 401);
    assert.equal(anon.body.error_code, 'no_authorization');
    const bad = await authApi(h, 'POST', '/factors', { token: u.token, body: { factor_type: 'sms' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error_code, 'validation_failed');
    await enrol(u.token, 'same');
    const dup = await authApi(h, 'POST', '/factors', {
      token: u.token,
      body: { factor_type: 'totp', friendly_name: 'same' },
    });
    assert.equal(dup.status, 422);
    assert.equal(dup.body.error_code, 'mfa_factor_name_conflict');
  });
});

describe('TOTP verification', () => {
  test('a right code gives a new aal2 session with amr [totp, password]; the old session ends', async () => {
    const u = await signUp();
    const f = await enrol(u.token);
    const now = centreOfStep();
    const res = await verify(u.token, f.id, codeAt(f.totp.secret, now));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const claims = decodeJwt(res.body.access_token);
    assert.equal(claims.aal, 'aal2');
    assert.deepEqual(
      (claims.amr as { method: string }[]).map((a) => a.method),
      ['totp', 'password'],
    );
    assert.notEqual(claims.session_id, decodeJwt(u.token).session_id);
    // Session payloads list the user's factors as GET /user does (supabase-js reads session.user.factors).
    const user = await authApi(h, 'GET', '/user', { token: res.body.access_token });
    assert.equal(user.body.factors[0].status, 'verified');
    assert.deepEqual(res.body.user.factors, user.body.factors);
    // The refreshed token keeps aal2.
    const refreshed = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: res.body.refresh_token },
    });
    assert.equal(decodeJwt(refreshed.body.access_token).aal, 'aal2');
  });

  test('window: the previous and next step are accepted, two steps away is a wrong code; a used step is a replay', async () => {
    const u = await signUp();
    const f = await enrol(u.token);
    h.clock.advance(10 * 60_000);
    const now = centreOfStep();
    const far = await verify(u.token, f.id, codeAt(f.totp.secret, now - 2 * STEP));
    assert.equal(far.status, 422);
    assert.equal(far.body.error_code, 'mfa_verification_failed');
    const farAhead = await verify(u.token, f.id, codeAt(f.totp.secret, now + 2 * STEP));
    assert.equal(farAhead.status, 422);
    assert.equal(farAhead.body.error_code, 'mfa_verification_failed');
    const previous = await verify(u.token, f.id, codeAt(f.totp.secret, now - STEP));
    assert.equal(previous.status, 200);
    const token = previous.body.access_token;
    const current = await verify(token, f.id, codeAt(f.totp.secret, now));
    assert.equal(current.status, 200);
    const token2 = current.body.access_token;
    const replay = await verify(token2, f.id, codeAt(f.totp.secret, now));
    assert.equal(replay.status, 422);
    assert.equal(replay.body.error_code, 'mfa_verification_rejected');
    const older = await verify(token2, f.id, codeAt(f.totp.secret, now - STEP));
    assert.equal(older.body.error_code, 'mfa_verification_rejected');
    const next = await verify(token2, f.id, codeAt(f.totp.secret, now + STEP));
    assert.equal(next.status, 200);
  });

  test('challenges: single use, 5 minutes, 5 wrong codes (whatever their form); unknown challenge or factor 404', async () => {
    const u = await signUp();
    const f = await enrol(u.token);
    const now = centreOfStep();
    const c = await authApi(h, 'POST', `/factors/${f.id}/challenge`, { token: u.token });
    assert.match(c.body.id, /^[0-9a-f-]{36}$/);
    assert.equal(c.body.expires_at, Math.floor(now / 1000) + 300);
    // A code that is not 6 digits is a wrong code like any other (GoTrue: 422 "Invalid TOTP code entered").
    const wrongCodes = [
      '000000' === codeAt(f.totp.secret, now) ? '111111' : '000000',
      'abcdef',
      '12345',
      '1234567',
      '１２３４５６',
    ];
    for (const code of wrongCodes) {
      const wrong = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
        token: u.token,
        body: { challenge_id: c.body.id, code },
      });
      assert.equal(wrong.status, 422, code);
      assert.equal(wrong.body.error_code, 'mfa_verification_failed', code);
    }
    const locked = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
      token: u.token,
      body: { challenge_id: c.body.id, code: codeAt(f.totp.secret, now) },
    });
    assert.equal(locked.status, 422);
    assert.equal(locked.body.error_code, 'mfa_challenge_expired');

    const late = await authApi(h, 'POST', `/factors/${f.id}/challenge`, { token: u.token });
    h.clock.advance(5 * 60_000 + 1000);
    const expired = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
      token: u.token,
      body: { challenge_id: late.body.id, code: codeAt(f.totp.secret, h.clock.now().getTime()) },
    });
    assert.equal(expired.body.error_code, 'mfa_challenge_expired');

    const t = centreOfStep();
    const once = await authApi(h, 'POST', `/factors/${f.id}/challenge`, { token: u.token });
    const ok = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
      token: u.token,
      body: { challenge_id: once.body.id, code: codeAt(f.totp.secret, t) },
    });
    assert.equal(ok.status, 200);
    const again = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
      token: ok.body.access_token,
      body: { challenge_id: once.body.id, code: codeAt(f.totp.secret, t + STEP) },
    });
    assert.equal(again.body.error_code, 'mfa_challenge_expired');

    const unknownChallenge = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
      token: ok.body.access_token,
      body: { challenge_id: crypto.randomUUID(), code: '123456' },
    });
    assert.equal(unknownChallenge.status, 404);
    assert.equal(unknownChallenge.body.error_code, 'mfa_factor_not_found'); // GoTrue's code for an unknown challenge
    const unknownFactor = await authApi(h, 'POST', `/factors/${crypto.randomUUID()}/challenge`, {
      token: ok.body.access_token,
    });
    assert.equal(unknownFactor.status, 404);
    assert.equal(unknownFactor.body.error_code, 'mfa_factor_not_found');
    const noCode = await authApi(h, 'POST', `/factors/${f.id}/verify`, {
      token: ok.body.access_token,
      body: { challenge_id: once.body.id, code: '' },
    });
    assert.equal(noCode.status, 400); // GoTrue: "Code needs to be non-empty"
    assert.equal(noCode.body.error_code, 'validation_failed');
    // Spent and expired challenges are purged a day after they expire.
    const project = (await h.hearth.registry.defaultProject())!;
    await purgeExpiredAuthRows(project, new Date(h.clock.now().getTime() + 2 * 86400_000));
    const [left] = await project.sql`select count(*)::int as n from auth.mfa_challenges where factor_id = ${f.id}`;
    assert.equal(left!.n, 0);
    // Another user's factor is not found either.
    const other = await signUp();
    const foreign = await authApi(h, 'POST', `/factors/${f.id}/challenge`, { token: other.token });
    assert.equal(foreign.body.error_code, 'mfa_factor_not_found');
  });

  test("an RLS policy on auth.jwt()->>'aal' = 'aal2' hides rows from aal1 tokens", async () => {
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    try {
      await owner.unsafe(`create table public.vault (id int primary key, note text);
        alter table public.vault enable row level security;
        create policy vault_aal2 on public.vault for select to authenticated using (auth.jwt()->>'aal' = 'aal2');
        grant select on public.vault to authenticated;
        insert into public.vault values (1, 'secret');
        notify pgrst, 'reload schema';`);
    } finally {
      await owner.end();
    }
    const u = await signUp();
    const f = await enrol(u.token);
    const res = await verify(u.token, f.id, codeAt(f.totp.secret, centreOfStep()));
    const read = async (token: string) => {
      for (let i = 0; ; i++) {
        const r = await h.api('GET', '/rest/v1/vault?select=note', {
          token,
          headers: { apikey: h.info.PUBLISHABLE_KEY },
        });
        if (r.status !== 404 || i > 50) return r;
        await new Promise((x) => setTimeout(x, 100)); // the schema cache reloads asynchronously
      }
    };
    const aal2 = await read(res.body.access_token);
    assert.equal(aal2.status, 200);
    assert.deepEqual(aal2.body, [{ note: 'secret' }]);
    const aal1 = await authApi(h, 'POST', '/token?grant_type=password', {
      body: { email: u.email, password: u.password },
    });
    assert.deepEqual((await read(aal1.body.access_token)).body, []);
  });

  test('removal: a verified factor needs aal2 to remove; afterwards it is gone and cannot be verified', async () => {
    const u = await signUp();
    const f = await enrol(u.token);
    const stepped = await verify(u.token, f.id, codeAt(f.totp.secret, centreOfStep()));
    const aal1 = await authApi(h, 'POST', '/token?grant_type=password', {
      body: { email: u.email, password: u.password },
    });
    const refused = await authApi(h, 'DELETE', `/factors/${f.id}`, { token: aal1.body.access_token });
    assert.equal(refused.status, 422); // GoTrue's status for this refusal
    assert.equal(refused.body.error_code, 'insufficient_aal');
    const removed = await authApi(h, 'DELETE', `/factors/${f.id}`, { token: stepped.body.access_token });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body, { id: f.id });
    const user = await authApi(h, 'GET', '/user', { token: stepped.body.access_token });
    assert.deepEqual(user.body.factors, []);
    const gone = await authApi(h, 'POST', `/factors/${f.id}/challenge`, { token: stepped.body.access_token });
    assert.equal(gone.body.error_code, 'mfa_factor_not_found');
    // An unverified factor is removed from an aal1 session.
    const g = await enrol(aal1.body.access_token);
    assert.equal((await authApi(h, 'DELETE', `/factors/${g.id}`, { token: aal1.body.access_token })).status, 200);
  });
});

describe('rate limit', () => {
  test('challenge and verify past rate_limit_mfa (15 at once, 15 a minute) are 429 per address and, for verify, per factor; right codes pass within it', async () => {
    const u = await signUp();
    const f = await enrol(u.token);
    await configureAuth(h, { rate_limit_mfa: 15 }); // the default, as GoTrue's MFA limit
    try {
      const ip = { 'x-forwarded-for': '203.0.113.21' };
      const now = centreOfStep();
      const right = codeAt(f.totp.secret, now);
      const wrong = right === '000000' ? '111111' : '000000';
      const challenge = async (token: string, headers = ip) =>
        authApi(h, 'POST', `/factors/${f.id}/challenge`, { token, headers });
      const verifyWith = (token: string, challengeId: string, code: string, headers = ip) =>
        authApi(h, 'POST', `/factors/${f.id}/verify`, { token, headers, body: { challenge_id: challengeId, code } });
      // 14 wrong guesses over three challenges (5 a challenge), then the right code: all within the allowance.
      let challengeId = '';
      for (let i = 0; i < 14; i++) {
        if (i % 5 === 0) challengeId = (await challenge(u.token)).body.id;
        assert.equal((await verifyWith(u.token, challengeId, wrong)).body.error_code, 'mfa_verification_failed');
      }
      const ok = await verifyWith(u.token, challengeId, right);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const token = ok.body.access_token as string;

      // The 16th verify from this address is refused before the code is looked at.
      const fresh = (await challenge(token)).body.id;
      const over = await verifyWith(token, fresh, wrong);
      assert.equal(over.status, 429);
      assert.equal(over.body.error_code, 'over_request_rate_limit');
      // 15 a minute: one every 4 s (less if a second went by since the burst began).
      const retryAfter = Number(over.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 4, `Retry-After ${retryAfter}`);
      assert.match(over.body.msg, /from your address \(rate_limit_mfa: 15 at once, refilling at 15 per 1 min\)/);
      // Another address gets no further with this factor: its own allowance is spent too.
      const rotated = await verifyWith(token, fresh, wrong, { 'x-forwarded-for': '203.0.113.22' });
      assert.equal(rotated.status, 429);
      assert.match(rotated.body.msg, /for this factor/);
      // Other users' factors, from other addresses, are untouched.
      const v = await signUp();
      const g = await enrol(v.token);
      const elsewhere = { 'x-forwarded-for': '203.0.113.23' };
      const c = await authApi(h, 'POST', `/factors/${g.id}/challenge`, { token: v.token, headers: elsewhere });
      const theirs = await authApi(h, 'POST', `/factors/${g.id}/verify`, {
        token: v.token,
        headers: elsewhere,
        body: { challenge_id: c.body.id, code: codeAt(g.totp.secret, now) },
      });
      assert.equal(theirs.status, 200);

      // Challenges have their own allowance: 4 used so far from this address, 11 more pass, then 429.
      for (let i = 0; i < 11; i++) assert.equal((await challenge(token)).status, 200);
      const tooMany = await challenge(token);
      assert.equal(tooMany.status, 429);
      assert.equal(tooMany.body.error_code, 'over_request_rate_limit');

      // One request is back every 4 s.
      h.clock.advance(4000);
      assert.equal((await verifyWith(token, fresh, wrong)).body.error_code, 'mfa_verification_failed');
      assert.equal((await verifyWith(token, fresh, wrong)).status, 429);
    } finally {
      await configureAuth(h, { rate_limit_mfa: 1000 });
    }
  });
});

describe('supabase-js mfa client', () => {
  test('enroll, challengeAndVerify, listFactors, getAuthenticatorAssuranceLevel, unenroll', async () => {
    const sb = client(h);
    const email = uniqueEmail('sbmfa');
    const { error } = await sb.auth.signUp({ email, password: goodPassword() });
    assert.equal(error, null);
    const enrolled = await sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'app' });
    assert.equal(enrolled.error, null);
    assert.ok(enrolled.data!.totp.qr_code.startsWith('data:image/svg+xml;utf-8,otpauth://totp/'));
    const code = codeAt(enrolled.data!.totp.secret, centreOfStep());
    const verified = await sb.auth.mfa.challengeAndVerify({ factorId: enrolled.data!.id, code });
    assert.equal(verified.error, null);
    const aal = await sb.auth.mfa.getAuthenticatorAssuranceLevel();
    assert.equal(aal.data!.currentLevel, 'aal2');
    const list = await sb.auth.mfa.listFactors();
    assert.deepEqual(
      list.data!.totp.map((f) => f.id),
      [enrolled.data!.id],
    );
    const un = await sb.auth.mfa.unenroll({ factorId: enrolled.data!.id });
    assert.equal(un.error, null);
    assert.deepEqual((await sb.auth.mfa.listFactors()).data!.all, []);
  });
});
