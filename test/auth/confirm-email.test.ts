/**
 * config/auth mailer_autoconfirm (Supabase's "Confirm email", GoTrue's
 * MAILER_AUTOCONFIRM). Absent or true: a password sign-up is confirmed at once
 * and answered 201 with a session, no mail (SPEC 4.1). false: as GoTrue, the
 * user is made unconfirmed, mailed a link (GET /verify type signup) and a code,
 * and answered 200 with the user and no session; password sign-in is 400
 * email_not_confirmed until the link, token_hash or code confirms the address;
 * a repeated sign-up of the unconfirmed address mails again (once a minute),
 * a confirmed one is 409 email_taken; PKCE links carry ?code=.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { withDatabase } from '../../src/db/pools.ts';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, client, codeIn, configureAuth, goodPassword, linkIn, uniqueEmail } from './helpers.ts';

let h: TestHearth;
let sql: postgres.Sql;
const APP = 'http://app.test/welcome';
const SITE = 'http://site.test/';

before(async () => {
  h = await startTestHearth();
  const project = (await h.hearth.registry.defaultProject())!;
  sql = postgres(withDatabase(serverUrl(), project.dbName), { max: 1, onnotice: () => {} });
  // No smtp_host: every mail lands in the development mailbox, where the tests look for it.
  await configureAuth(h, {
    site_url: SITE,
    uri_allow_list: 'http://app.test/**',
    rate_limit_signups: 1000,
    rate_limit_email_sent: 1000,
  });
});
after(async () => {
  await sql?.end();
  await h?.close();
});
afterEach(() => configureAuth(h, { mailer_autoconfirm: null, rate_limit_email_sent: 1000, rate_limit_signups: 1000 }));

const confirmEmail = () => configureAuth(h, { mailer_autoconfirm: false });

interface MailboxEntry {
  to: string;
  subject: string;
  body: string;
}

async function mailsTo(to: string): Promise<MailboxEntry[]> {
  const res = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/mailbox?limit=1000`);
  assert.equal(res.status, 200);
  return (res.body as MailboxEntry[]).filter((m) => m.to === to);
}

/** The newest mail to `to`, once there are `count` (the sign-up answers after its mail is kept). */
async function mailTo(to: string, count = 1): Promise<MailboxEntry> {
  const mails = await mailsTo(to);
  assert.equal(mails.length, count, `mails to ${to}`);
  return mails[0]!;
}

const userRow = async (email: string) =>
  (await sql`select id, email_confirmed_at, encrypted_password from auth.users where email = ${email}`)[0];

const sessionsOf = async (userId: string) =>
  (await sql`select count(*)::int as n from auth.sessions where user_id = ${userId}`)[0]!.n as number;

async function follow(link: string): Promise<URL> {
  const res = await fetch(link, { redirect: 'manual' });
  assert.equal(res.status, 302);
  return new URL(res.headers.get('location') ?? '');
}

const fragment = (u: URL) => new URLSearchParams(u.hash.slice(1));

describe('mailer_autoconfirm absent or true (the default): sign-up confirms at once', () => {
  for (const setting of [null, true]) {
    test(`mailer_autoconfirm ${setting}: 201 with a session, confirmed, no mail`, async () => {
      await configureAuth(h, { mailer_autoconfirm: setting });
      const config = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/config/auth`);
      assert.equal(config.body.mailer_autoconfirm, true);
      assert.equal((await authApi(h, 'GET', '/settings')).body.mailer_autoconfirm, true);
      const email = uniqueEmail('auto');
      const res = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
      assert.equal(res.status, 201);
      assert.ok(res.body.access_token);
      assert.ok(res.body.user.email_confirmed_at);
      assert.ok((await userRow(email))!.email_confirmed_at);
      assert.equal((await mailsTo(email)).length, 0);
    });
  }
});

describe('mailer_autoconfirm false: sign-up waits for the confirmation mail', () => {
  test('GET /settings and config/auth report it; a non-boolean is refused', async () => {
    await confirmEmail();
    assert.equal((await authApi(h, 'GET', '/settings')).body.mailer_autoconfirm, false);
    const config = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/config/auth`);
    assert.equal(config.body.mailer_autoconfirm, false);
    const bad = await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, {
      body: { mailer_autoconfirm: 'sometimes' },
    });
    assert.equal(bad.status, 400);
  });

  test('supabase-js signUp: data.user without a session, an unconfirmed row, a mail; the link confirms and signs in', async () => {
    await confirmEmail();
    const sb = client(h);
    const email = uniqueEmail('confirm');
    const password = goodPassword();
    const { data, error } = await sb.auth.signUp({
      email,
      password,
      options: { emailRedirectTo: APP, data: { name: 'Ada' } },
    });
    assert.equal(error, null);
    assert.equal(data.session, null);
    assert.equal(data.user!.email, email);
    assert.equal(data.user!.email_confirmed_at, null);
    assert.ok(data.user!.confirmation_sent_at);
    assert.equal(data.user!.identities!.length, 1);
    assert.equal(data.user!.identities![0]!.provider, 'email');
    assert.deepEqual(data.user!.user_metadata, { name: 'Ada' });
    const row = await userRow(email);
    assert.equal(row!.id, data.user!.id);
    assert.equal(row!.email_confirmed_at, null);
    assert.equal(await sessionsOf(row!.id), 0);

    const mail = await mailTo(email);
    assert.equal(mail.subject, 'Confirm your e-mail address');
    const link = new URL(linkIn(mail));
    assert.equal(link.origin + link.pathname, `${h.info.BASE_URL}/auth/v1/verify`);
    assert.equal(link.searchParams.get('type'), 'signup');
    assert.equal(link.searchParams.get('redirect_to'), APP);
    assert.match(codeIn(mail), /^\d{6}$/);

    const early = await sb.auth.signInWithPassword({ email, password });
    assert.equal(early.error?.status, 400);
    assert.equal(early.error?.code, 'email_not_confirmed');

    const landed = await follow(link.toString());
    assert.equal(landed.origin + landed.pathname, APP);
    const f = fragment(landed);
    assert.equal(f.get('type'), 'signup');
    const me = await authApi(h, 'GET', '/user', { token: f.get('access_token')! });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, row!.id);
    assert.ok(me.body.email_confirmed_at);
    assert.ok((await userRow(email))!.email_confirmed_at);

    const later = await sb.auth.signInWithPassword({ email, password });
    assert.equal(later.error, null);
    assert.equal(later.data.user!.id, row!.id);
    // The link is spent.
    assert.equal(fragment(await follow(link.toString())).get('error_code'), 'otp_expired');
  });

  test('raw answer: 200 with the user at the top level; the link goes to site_url without emailRedirectTo', async () => {
    await confirmEmail();
    const email = uniqueEmail('raw');
    const res = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
    assert.equal(res.status, 200);
    assert.equal(res.body.access_token, undefined);
    assert.equal(res.body.refresh_token, undefined);
    assert.equal(res.body.user, undefined);
    assert.equal(res.body.email, email);
    assert.equal(res.body.aud, 'authenticated');
    assert.equal(res.body.email_confirmed_at, null);
    assert.equal(typeof res.body.confirmation_sent_at, 'string');
    assert.equal(res.body.identities[0].identity_data.email_verified, false);
    const link = new URL(linkIn(await mailTo(email)));
    assert.equal(link.searchParams.get('redirect_to'), SITE);
  });

  test('verifyOtp with the token_hash (type signup or email) or the 6-digit code confirms and signs in', async () => {
    await confirmEmail();
    const sb = client(h);
    for (const type of ['signup', 'email'] as const) {
      const email = uniqueEmail(`hash-${type}`);
      await sb.auth.signUp({ email, password: goodPassword() });
      const token_hash = new URL(linkIn(await mailTo(email))).searchParams.get('token')!;
      const { data, error } = await sb.auth.verifyOtp({ type, token_hash });
      assert.equal(error, null);
      assert.ok(data.session?.access_token);
      assert.ok(data.user!.email_confirmed_at);
      assert.ok((await userRow(email))!.email_confirmed_at);
    }
    for (const type of ['signup', 'email'] as const) {
      const email = uniqueEmail(`code-${type}`);
      await sb.auth.signUp({ email, password: goodPassword() });
      const { data, error } = await sb.auth.verifyOtp({ email, token: codeIn(await mailTo(email)), type });
      assert.equal(error, null);
      assert.ok(data.session?.access_token);
      assert.ok((await userRow(email))!.email_confirmed_at);
    }
  });

  test('PKCE: the confirmation link redirects with ?code=, which exchangeCodeForSession redeems', async () => {
    await confirmEmail();
    const sb = client(h, { flowType: 'pkce' });
    const email = uniqueEmail('pkce');
    const { data, error } = await sb.auth.signUp({
      email,
      password: goodPassword(),
      options: { emailRedirectTo: APP },
    });
    assert.equal(error, null);
    assert.equal(data.session, null);
    const landed = await follow(linkIn(await mailTo(email)));
    assert.equal(landed.origin + landed.pathname, APP);
    assert.equal(landed.hash, '');
    const code = landed.searchParams.get('code')!;
    assert.ok(code);
    const exchanged = await sb.auth.exchangeCodeForSession(code);
    assert.equal(exchanged.error, null);
    assert.equal(exchanged.data.user!.email, email);
    assert.ok(exchanged.data.user!.email_confirmed_at);
    assert.ok((await userRow(email))!.email_confirmed_at);
  });

  test('PKCE over raw HTTP: code_challenge in the body; a wrong verifier is refused', async () => {
    await confirmEmail();
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const email = uniqueEmail('pkceraw');
    const res = await h.api('POST', `/auth/v1/signup?redirect_to=${encodeURIComponent(APP)}`, {
      body: { email, password: goodPassword(), code_challenge: challenge, code_challenge_method: 's256' },
      token: h.info.PUBLISHABLE_KEY,
      headers: { apikey: h.info.PUBLISHABLE_KEY },
    });
    assert.equal(res.status, 200);
    const code = (await follow(linkIn(await mailTo(email)))).searchParams.get('code');
    const wrong = await authApi(h, 'POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: randomBytes(32).toString('base64url') },
    });
    assert.equal(wrong.status, 400);
    const ok = await authApi(h, 'POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: verifier },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.user.email, email);
  });

  test('signing up again: unconfirmed mails again (once a minute, keeping the first password); confirmed is 409', async () => {
    await confirmEmail();
    const email = uniqueEmail('again');
    const first = goodPassword();
    const one = await authApi(h, 'POST', '/signup', { body: { email, password: first } });
    assert.equal(one.status, 200);
    await mailTo(email, 1);

    const tooSoon = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
    assert.equal(tooSoon.status, 429);
    assert.equal(tooSoon.body.error_code, 'over_email_send_rate_limit');
    assert.match(tooSoon.body.msg, /^For security purposes, you can only request this after \d+ seconds\.$/);
    assert.ok(Number(tooSoon.headers.get('retry-after')) > 0);
    assert.equal((await mailsTo(email)).length, 1);

    h.clock.advance(61_000);
    const two = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
    assert.equal(two.status, 200);
    assert.equal(two.body.id, one.body.id);
    assert.equal(two.body.identities.length, 1);
    const again = await mailTo(email, 2);
    const rows = await sql`select count(*)::int as n from auth.users where email = ${email}`;
    assert.equal(rows[0]!.n, 1);

    // The newer mail supersedes the older; the first password stays (the second claim was unproven).
    const confirmed = await authApi(h, 'POST', '/verify', { body: { type: 'signup', email, token: codeIn(again) } });
    assert.equal(confirmed.status, 200);
    const signIn = await authApi(h, 'POST', '/token?grant_type=password', { body: { email, password: first } });
    assert.equal(signIn.status, 200);

    h.clock.advance(61_000);
    const taken = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error_code, 'email_taken');
    assert.equal((await mailsTo(email)).length, 2);
  });

  test('resend({type: signup}) mails a new link that confirms', async () => {
    await confirmEmail();
    const sb = client(h);
    const email = uniqueEmail('resend');
    await sb.auth.signUp({ email, password: goodPassword(), options: { emailRedirectTo: APP } });
    await mailTo(email, 1);
    const { error } = await sb.auth.resend({ type: 'signup', email, options: { emailRedirectTo: APP } });
    assert.equal(error, null);
    const deadline = Date.now() + 5000;
    while ((await mailsTo(email)).length < 2) {
      assert.ok(Date.now() < deadline, 'no resent mail');
      await new Promise((r) => setTimeout(r, 25));
    }
    const resent = await mailTo(email, 2);
    const landed = await follow(linkIn(resent));
    assert.equal(fragment(landed).get('type'), 'signup');
    assert.ok(fragment(landed).get('access_token'));
    assert.ok((await userRow(email))!.email_confirmed_at);
  });

  test('refused sign-ups leave no user and send no mail', async () => {
    await confirmEmail();
    const cases: [string, Record<string, unknown>, () => Promise<void>, number, string][] = [
      ['email limit', {}, () => configureAuth(h, { rate_limit_email_sent: 0 }), 429, 'over_email_send_rate_limit'],
      ['sign-up limit', {}, () => configureAuth(h, { rate_limit_signups: 0 }), 429, 'over_request_rate_limit'],
      ['weak password', { password: 'short' }, async () => {}, 422, 'weak_password'],
      ['redirect not allowed', {}, async () => {}, 400, 'bad_redirect'],
    ];
    for (const [name, extra, arrange, status, code] of cases) {
      await arrange();
      const email = uniqueEmail('refused');
      const q = name === 'redirect not allowed' ? `?redirect_to=${encodeURIComponent('https://evil.test/')}` : '';
      const res = await authApi(h, 'POST', `/signup${q}`, { body: { email, password: goodPassword(), ...extra } });
      assert.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, code, name);
      assert.equal(await userRow(email), undefined, name);
      assert.equal((await mailsTo(email)).length, 0, name);
      await configureAuth(h, { rate_limit_email_sent: 1000, rate_limit_signups: 1000 });
    }
  });

  test('a guest sign-in still gets its session at once', async () => {
    await confirmEmail();
    const res = await authApi(h, 'POST', '/signup', { body: {} });
    assert.equal(res.status, 201);
    assert.ok(res.body.access_token);
    assert.equal(res.body.user.is_anonymous, true);
  });
});
