import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import {
  authApi,
  client,
  codeIn,
  configureAuth,
  goodPassword,
  linkIn,
  startInbox,
  uniqueEmail,
  type Inbox,
} from './helpers.ts';

let h: TestHearth;
let inbox: Inbox;
const APP = 'http://app.test';

before(async () => {
  inbox = await startInbox();
  h = await startTestHearth({ env: { HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  await configureAuth(h, {
    smtp_host: '127.0.0.1',
    smtp_port: inbox.port,
    smtp_user: 'mailer',
    smtp_pass: 'secret-pass',
    smtp_admin_email: 'auth@hearth.test',
    smtp_sender_name: 'Hearth Auth',
    uri_allow_list: `${APP}/*,${APP}/deep/**`,
    rate_limit_email_sent: 1000,
  });
});
after(async () => {
  await h?.close();
  await inbox?.close();
});

const MIN = 60_000;

async function follow(link: string): Promise<{ status: number; location: string }> {
  const res = await fetch(link, { redirect: 'manual' });
  await res.arrayBuffer();
  return { status: res.status, location: res.headers.get('location') ?? '' };
}

const fragment = (location: string) => new URLSearchParams(new URL(location).hash.slice(1));

describe('e-mail codes (signInWithOtp + verifyOtp)', () => {
  test('a first /otp signs the user up; the mailed code gives a session once', async () => {
    const email = uniqueEmail('otp');
    const sb = client(h);
    const sent = await sb.auth.signInWithOtp({ email });
    assert.equal(sent.error, null);
    const mail = await inbox.next(email);
    assert.equal(mail.from, 'auth@hearth.test');
    assert.match(mail.subject, /sign-in code/);
    const code = codeIn(mail);
    const { data, error } = await sb.auth.verifyOtp({ email, token: code, type: 'email' });
    assert.equal(error, null);
    assert.equal(data.user!.email, email);
    assert.ok(data.user!.email_confirmed_at);
    const again = await authApi(h, 'POST', '/verify', { body: { type: 'email', email, token: code } });
    assert.equal(again.status, 403);
    assert.equal(again.body.error.code, 'otp_expired');
  });

  test('/otp always answers 200 {}; create_user:false sends nothing to unknown addresses', async () => {
    const ghost = uniqueEmail('ghost');
    const res = await authApi(h, 'POST', '/otp', { body: { email: ghost, create_user: false } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});
    const known = uniqueEmail('known');
    await client(h).auth.signUp({ email: known, password: goodPassword() });
    const res2 = await authApi(h, 'POST', '/otp', { body: { email: known, create_user: false } });
    assert.deepEqual([res2.status, res2.body], [200, {}]);
    await inbox.next(known);
    assert.ok(!inbox.mails.some((m) => m.to.includes(ghost)));
    const verify = await authApi(h, 'POST', '/verify', { body: { type: 'email', email: ghost, token: '123456' } });
    assert.equal(verify.status, 403);
    assert.equal(verify.body.error.code, 'otp_expired');
  });

  test('a code expires after 10 minutes', async () => {
    const email = uniqueEmail('late');
    await authApi(h, 'POST', '/otp', { body: { email } });
    const code = codeIn(await inbox.next(email));
    h.clock.advance(10 * MIN + 1000);
    try {
      const res = await authApi(h, 'POST', '/verify', { body: { type: 'email', email, token: code } });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'otp_expired');
    } finally {
      h.clock.advance(-(10 * MIN + 1000));
    }
  });

  test('five wrong codes lock the code (429 otp_locked), even for the right one', async () => {
    const email = uniqueEmail('lock');
    await authApi(h, 'POST', '/otp', { body: { email } });
    const code = codeIn(await inbox.next(email));
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await authApi(h, 'POST', '/verify', { body: { type: 'email', email, token: wrong } });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'otp_expired');
    }
    const locked = await authApi(h, 'POST', '/verify', { body: { type: 'email', email, token: code } });
    assert.equal(locked.status, 429);
    assert.equal(locked.body.error.code, 'otp_locked');
  });

  test('the lock covers the whole mail: its link and token_hash no longer sign in', async () => {
    const email = uniqueEmail('locklink');
    await authApi(h, 'POST', `/otp?redirect_to=${encodeURIComponent(`${APP}/welcome`)}`, { body: { email } });
    const mail = await inbox.next(email);
    const code = codeIn(mail);
    const link = linkIn(mail);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) await authApi(h, 'POST', '/verify', { body: { type: 'email', email, token: wrong } });
    const tokenHash = new URL(link).searchParams.get('token')!;
    const byHash = await authApi(h, 'POST', '/verify', { body: { type: 'magiclink', token_hash: tokenHash } });
    assert.equal(byHash.status, 403);
    assert.equal(byHash.body.error.code, 'otp_expired');
    const followed = await follow(link);
    assert.equal(followed.status, 302);
    assert.ok(followed.location.startsWith(`${APP}/welcome#`), followed.location);
    const f = fragment(followed.location);
    assert.equal(f.get('error'), 'access_denied');
    assert.equal(f.get('error_code'), 'otp_expired');
    assert.equal(f.get('access_token'), null);
  });

  test('four wrong tries still leave the right code usable', async () => {
    const email = uniqueEmail('four');
    await authApi(h, 'POST', '/otp', { body: { email } });
    const code = codeIn(await inbox.next(email));
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) await authApi(h, 'POST', '/verify', { body: { type: 'email', email, token: wrong } });
    const ok = await authApi(h, 'POST', '/verify', { body: { type: 'email', email, token: code } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.user.email, email);
  });
});

describe('the code lock does not tell who has an account', () => {
  /** The answers to n tries of a code at POST /verify, as "status code". */
  async function attempts(email: string, type: string, token: string, n: number): Promise<string[]> {
    const seen: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await authApi(h, 'POST', '/verify', { body: { type, email, token } });
      seen.push(`${res.status} ${res.body.error?.code}`);
    }
    return seen;
  }

  /** Waits for the decoy /otp or /recover writes after its answer for an address without an account. */
  async function decoyReady(purpose: string, email: string) {
    const project = (await h.hearth.registry.defaultProject())!;
    const key = createHash('sha256').update(`${purpose}:${email}`).digest();
    for (let i = 0; i < 250; i++) {
      const [row] = await project.sql`select attempts from auth.code_decoys where key = ${key}`;
      if (row?.attempts === 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no decoy for ${email} within 5 s`);
  }

  const LOCKED = [...Array(5).fill('403 otp_expired'), '429 otp_locked'];
  const requests = [
    { path: '/otp', body: { create_user: false }, purpose: 'email', type: 'email' },
    { path: '/recover', body: {}, purpose: 'recovery', type: 'recovery' },
  ];
  for (const r of requests) {
    test(`after POST ${r.path}, wrong codes for an unknown address answer as for an existing one: locked after 5, for as long, until a new ${r.path}`, async () => {
      const known = uniqueEmail('enumknown');
      const ghost = uniqueEmail('enumghost');
      assert.equal((await client(h).auth.signUp({ email: known, password: goodPassword() })).error, null);
      const ask = async () => {
        for (const email of [known, ghost]) {
          const res = await authApi(h, 'POST', r.path, { body: { email, ...r.body } });
          assert.deepEqual([res.status, res.body], [200, {}]);
        }
        const code = codeIn(await inbox.next(known));
        await decoyReady(r.purpose, ghost);
        return code === '000000' ? '111111' : '000000';
      };
      const wrong = await ask();
      assert.deepEqual(await attempts(known, r.type, wrong, 6), LOCKED);
      assert.deepEqual(await attempts(ghost, r.type, wrong, 6), LOCKED);
      // Still locked just before the code's 10 minutes are up; then expired, as an old code is.
      h.clock.advance(9 * MIN);
      try {
        for (const email of [known, ghost])
          assert.deepEqual(await attempts(email, r.type, wrong, 1), ['429 otp_locked'], email);
        h.clock.advance(MIN + 1000);
        for (const email of [known, ghost])
          assert.deepEqual(await attempts(email, r.type, wrong, 6), Array(6).fill('403 otp_expired'), email);
      } finally {
        h.clock.advance(-(10 * MIN + 1000));
      }
      // A new request unlocks both alike (the clock is back within the first codes' life).
      const again = await ask();
      for (const email of [known, ghost]) assert.deepEqual(await attempts(email, r.type, again, 6), LOCKED, email);
    });
  }
});

describe('magic links', () => {
  test('the mailed link redirects to redirect_to with the session in the fragment, once', async () => {
    const email = uniqueEmail('link');
    await client(h).auth.signInWithOtp({ email, options: { emailRedirectTo: `${APP}/welcome` } });
    const link = linkIn(await inbox.next(email));
    const first = await follow(link);
    assert.equal(first.status, 302);
    assert.ok(first.location.startsWith(`${APP}/welcome#`), first.location);
    const f = fragment(first.location);
    assert.equal(f.get('token_type'), 'bearer');
    assert.equal(f.get('type'), 'magiclink');
    assert.equal(f.get('expires_in'), '3600');
    const user = await authApi(h, 'GET', '/user', { token: f.get('access_token')! });
    assert.equal(user.body.email, email);
    const refreshed = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: f.get('refresh_token') },
    });
    assert.equal(refreshed.status, 200);

    const second = await follow(link);
    assert.equal(second.status, 302);
    const e = fragment(second.location);
    assert.equal(e.get('error'), 'access_denied');
    assert.equal(e.get('error_code'), 'otp_expired');
  });

  test('an expired link redirects with error_code=otp_expired', async () => {
    const email = uniqueEmail('oldlink');
    await authApi(h, 'POST', `/otp?redirect_to=${encodeURIComponent(`${APP}/x`)}`, { body: { email } });
    const link = linkIn(await inbox.next(email));
    h.clock.advance(11 * MIN);
    try {
      const res = await follow(link);
      assert.equal(res.status, 302);
      assert.ok(res.location.startsWith(`${APP}/x#`));
      assert.equal(fragment(res.location).get('error_code'), 'otp_expired');
    } finally {
      h.clock.advance(-11 * MIN);
    }
  });

  test('redirect_to must match uri_allow_list at issue and at redemption (400 bad_redirect)', async () => {
    const email = uniqueEmail('redir');
    for (const target of ['http://evil.test/welcome', `${APP}/a/b`, 'javascript:alert(1)']) {
      const res = await authApi(h, 'POST', `/otp?redirect_to=${encodeURIComponent(target)}`, { body: { email } });
      assert.equal(res.status, 400, target);
      assert.equal(res.body.error.code, 'bad_redirect');
    }
    const deep = await authApi(h, 'POST', `/otp?redirect_to=${encodeURIComponent(`${APP}/deep/a/b/c?x=1`)}`, {
      body: { email },
    });
    assert.equal(deep.status, 200);
    const link = linkIn(await inbox.next(email));
    const tampered = new URL(link);
    tampered.searchParams.set('redirect_to', 'http://evil.test/steal');
    const refused = await fetch(tampered, { redirect: 'manual' });
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error.code, 'bad_redirect');
    await configureAuth(h, { uri_allow_list: `${APP}/*` });
    try {
      const now = await fetch(link, { redirect: 'manual' });
      assert.equal(now.status, 400, 'the allowlist changed since issue');
    } finally {
      await configureAuth(h, { uri_allow_list: `${APP}/*,${APP}/deep/**` });
    }
  });

  test('allowlist globs match as Supabase: * stays within one host label or path segment, ** crosses both', async () => {
    await configureAuth(h, { uri_allow_list: 'http://*.app.test/*,http://deep.test/**,http://v?.app.test/x' });
    try {
      const cases: [string, number][] = [
        ['http://x.app.test/a', 200],
        ['http://x.y.app.test/a', 400], // * does not cross '.' in the host
        ['http://x.app.test/a/b', 400], // nor '/' in the path
        ['http://x.app.test/index.html', 400], // nor '.' in the path
        ['http://deep.test/a/b.c/d', 200], // ** crosses both
        ['http://v1.app.test/x', 200],
        ['http://v.1.app.test/x', 400], // ? is not '.'
      ];
      for (const [target, status] of cases) {
        const res = await authApi(h, 'POST', `/otp?redirect_to=${encodeURIComponent(target)}`, {
          body: { email: uniqueEmail('glob') },
        });
        assert.equal(res.status, status, target);
        if (status === 400) assert.equal(res.body.error.code, 'bad_redirect', target);
      }
    } finally {
      await configureAuth(h, { uri_allow_list: `${APP}/*,${APP}/deep/**` });
    }
  });

  test('with an empty allowlist (the default) magic links do nothing (SPEC 5): no link is mailed, one sent earlier is refused; the code still signs in', async () => {
    // A link mailed while the list was set.
    const earlier = uniqueEmail('earlier');
    assert.equal((await authApi(h, 'POST', '/otp', { body: { email: earlier } })).status, 200);
    const sentEarlier = linkIn(await inbox.next(earlier));
    await configureAuth(h, { uri_allow_list: '' });
    try {
      for (const target of [`${APP}/welcome`, 'http://localhost:3000']) {
        const res = await authApi(h, 'POST', `/otp?redirect_to=${encodeURIComponent(target)}`, {
          body: { email: uniqueEmail() },
        });
        assert.equal(res.status, 400, `${target}, site_url included`);
        assert.equal(res.body.error.code, 'bad_redirect');
      }
      const email = uniqueEmail('site');
      assert.equal((await authApi(h, 'POST', '/otp', { body: { email } })).status, 200);
      const mail = await inbox.next(email);
      assert.doesNotMatch(mail.text, /\/auth\/v1\/verify/, 'the code alone');
      const refused = await follow(sentEarlier);
      assert.equal(refused.status, 400);
      const { data, error } = await client(h).auth.verifyOtp({ email, token: codeIn(mail), type: 'email' });
      assert.equal(error, null);
      assert.ok(data.session);
    } finally {
      await configureAuth(h, { uri_allow_list: `${APP}/*,${APP}/deep/**` });
    }
  });
});

function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe('PKCE', () => {
  test('a link started with code_challenge redirects with ?code=, exchanged once for a session', async () => {
    const email = uniqueEmail('pkce');
    const { verifier, challenge } = pkcePair();
    const res = await authApi(h, 'POST', `/otp?redirect_to=${encodeURIComponent(`${APP}/cb`)}`, {
      body: { email, code_challenge: challenge, code_challenge_method: 's256' },
    });
    assert.equal(res.status, 200);
    const followed = await follow(linkIn(await inbox.next(email)));
    assert.equal(followed.status, 302);
    const code = new URL(followed.location).searchParams.get('code');
    assert.ok(code);
    assert.equal(new URL(followed.location).hash, '');
    const wrong = await authApi(h, 'POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: pkcePair().verifier },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.code, 'bad_code_verifier');
    const ok = await authApi(h, 'POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: verifier },
    });
    assert.equal(ok.status, 200);
    assert.ok(ok.body.access_token && ok.body.refresh_token);
    assert.equal(ok.body.user.email, email);
    const twice = await authApi(h, 'POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: verifier },
    });
    assert.equal(twice.status, 404);
    assert.equal(twice.body.error.code, 'flow_state_not_found');
  });

  test('supabase-js in pkce flow: signInWithOtp then exchangeCodeForSession', async () => {
    const email = uniqueEmail('pkcejs');
    const sb = client(h, { flowType: 'pkce' });
    assert.equal((await sb.auth.signInWithOtp({ email, options: { emailRedirectTo: `${APP}/cb` } })).error, null);
    const followed = await follow(linkIn(await inbox.next(email)));
    const code = new URL(followed.location).searchParams.get('code')!;
    const { data, error } = await sb.auth.exchangeCodeForSession(code);
    assert.equal(error, null);
    assert.equal(data.user!.email, email);
  });

  test('an auth code expires after 5 minutes; a bad challenge is 400 bad_code_challenge', async () => {
    const email = uniqueEmail('pkcelate');
    const { verifier, challenge } = pkcePair();
    await authApi(h, 'POST', '/otp', { body: { email, code_challenge: challenge, code_challenge_method: 'S256' } });
    const followed = await follow(linkIn(await inbox.next(email)));
    const code = new URL(followed.location).searchParams.get('code');
    h.clock.advance(5 * MIN + 1000);
    try {
      const late = await authApi(h, 'POST', '/token?grant_type=pkce', {
        body: { auth_code: code, code_verifier: verifier },
      });
      assert.equal(late.status, 422); // GoTrue's status for an expired flow state
      assert.equal(late.body.error.code, 'flow_state_expired');
    } finally {
      h.clock.advance(-(5 * MIN + 1000));
    }
    for (const body of [{ code_challenge: challenge, code_challenge_method: 'plain' }, { code_challenge: 'short' }]) {
      const bad = await authApi(h, 'POST', '/otp', { body: { email, ...body } });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'bad_code_challenge');
    }
  });
});

describe('password recovery', () => {
  test('the reset link gives a recovery session in which the password is set without the old one (leaked check applies)', async () => {
    const email = uniqueEmail('reset');
    const old = goodPassword();
    await client(h).auth.signUp({ email, password: old });
    const res = await authApi(h, 'POST', `/recover?redirect_to=${encodeURIComponent(`${APP}/reset`)}`, {
      body: { email },
    });
    assert.deepEqual([res.status, res.body], [200, {}]);
    const unknown = await authApi(h, 'POST', '/recover', { body: { email: uniqueEmail('nobody') } });
    assert.deepEqual([unknown.status, unknown.body], [200, {}]);
    const mail = await inbox.next(email);
    assert.match(mail.subject, /Reset/);
    const followed = await follow(linkIn(mail));
    const f = fragment(followed.location);
    assert.equal(f.get('type'), 'recovery');
    const token = f.get('access_token')!;
    const leaked = await authApi(h, 'PUT', '/user', { token, body: { password: '1qaz2wsx3edc' } });
    assert.equal(leaked.status, 400);
    assert.equal(leaked.body.error.code, 'leaked_password');
    const next = goodPassword();
    const set = await authApi(h, 'PUT', '/user', { token, body: { password: next } });
    assert.equal(set.status, 200);
    assert.equal((await client(h).auth.signInWithPassword({ email, password: next })).error, null);
    const bad = await authApi(h, 'POST', '/recover', { body: { email, redirect_to: 'http://evil.test/' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'bad_redirect');
  });
});

describe('e-mail change with a mailer', () => {
  test('the change waits for the link sent to the new address; a guest becomes permanent on redemption', async () => {
    const sb = client(h);
    const { data } = await sb.auth.signInAnonymously();
    const id = data.user!.id;
    const email = uniqueEmail('newaddr');
    const upd = await sb.auth.updateUser({ email }, { emailRedirectTo: `${APP}/changed` });
    assert.equal(upd.error, null);
    assert.equal(upd.data.user!.email, undefined);
    assert.equal((upd.data.user as unknown as { new_email: string }).new_email, email);
    assert.equal(upd.data.user!.is_anonymous, true);
    const mail = await inbox.next(email);
    assert.match(mail.subject, /Confirm/);
    const followed = await follow(linkIn(mail));
    assert.ok(followed.location.startsWith(`${APP}/changed#`));
    const f = fragment(followed.location);
    assert.equal(f.get('type'), 'email_change');
    const user = await authApi(h, 'GET', '/user', { token: f.get('access_token')! });
    assert.equal(user.body.id, id);
    assert.equal(user.body.email, email);
    assert.equal(user.body.is_anonymous, false);
  });

  test("the mail to the new address carries a code: verifyOtp({email: newEmail, token, type: 'email_change'}) applies the change", async () => {
    const sb = client(h);
    const { data } = await sb.auth.signInAnonymously();
    const email = uniqueEmail('codechange');
    assert.equal((await sb.auth.updateUser({ email })).error, null);
    const mail = await inbox.next(email);
    const code = codeIn(mail);
    const verified = await sb.auth.verifyOtp({ email, token: code, type: 'email_change' });
    assert.equal(verified.error, null);
    assert.equal(verified.data.user!.id, data.user!.id);
    assert.equal(verified.data.user!.email, email);
    assert.equal(verified.data.user!.is_anonymous, false);
    // The code and the link of one mail are one secret: the link is spent with the code.
    const followed = await follow(linkIn(mail));
    assert.equal(fragment(followed.location).get('error_code'), 'otp_expired');
  });
});

describe('rate limit for mail', () => {
  test('/otp over rate_limit_email_sent is 429; X-Forwarded-For is ignored without trusted proxies', async () => {
    await configureAuth(h, { rate_limit_email_sent: 2 });
    h.clock.advance(3600_000); // a fresh hourly window, untouched by the other tests
    try {
      for (let i = 0; i < 2; i++) {
        const ok = await authApi(h, 'POST', '/otp', {
          body: { email: uniqueEmail('rl'), create_user: false },
          headers: { 'x-forwarded-for': `198.51.100.${i}` },
        });
        assert.equal(ok.status, 200);
      }
      const over = await authApi(h, 'POST', '/otp', {
        body: { email: uniqueEmail('rl'), create_user: false },
        headers: { 'x-forwarded-for': '198.51.100.99' },
      });
      assert.equal(over.status, 429);
      assert.equal(over.body.error.code, 'over_email_send_rate_limit');
    } finally {
      h.clock.advance(-3600_000);
      await configureAuth(h, { rate_limit_email_sent: 1000 });
    }
  });
});
