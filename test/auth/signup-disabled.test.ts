/**
 * config/auth disable_signup and external_anonymous_users_enabled, as GoTrue
 * has them: every path of the public API that would create a user is 422
 * signup_disabled (password sign-up, /otp for an unknown address, a social
 * identity matching nobody, a guest), guests alone are 422
 * anonymous_provider_disabled, and a refusal leaves no user and sends no
 * mail; the admin API still creates users (an invite-only project), existing
 * users still sign in, and GET /settings tells the truth.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import postgres from 'postgres';
import { withDatabase } from '../../src/db/pools.ts';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, client, codeIn, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';
import { startProvider, type TestProvider } from './oidc-provider.ts';

let h: TestHearth;
let op: TestProvider;
let sql: postgres.Sql;
const APP = 'http://app.test/welcome';
const CONFIG = () => `/v1/projects/${h.info.PROJECT_REF}/config/auth`;

before(async () => {
  h = await startTestHearth({ env: { HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  op = await startProvider([`${h.info.BASE_URL}/auth/v1/callback`]);
  const project = (await h.hearth.registry.defaultProject())!;
  sql = postgres(withDatabase(serverUrl(), project.dbName), { max: 1, onnotice: () => {} });
  // No smtp_host: every mail lands in the development mailbox, where the tests look for it.
  await configureAuth(h, {
    uri_allow_list: 'http://app.test/**',
    rate_limit_signups: 1000,
    rate_limit_anonymous_users: 1000,
    rate_limit_email_sent: 1000,
    external_oidc_enabled: true,
    external_oidc_client_id: op.clientId,
    external_oidc_secret: op.secret,
    external_oidc_url: op.issuer,
  });
});
after(async () => {
  await sql?.end();
  await op?.close();
  await h?.close();
});
// Each test turns what it needs off; the next starts from the defaults.
afterEach(() => configureAuth(h, { disable_signup: null, external_anonymous_users_enabled: null }));

const asAdmin = (method: string, path: string, body?: unknown) =>
  h.api(method, `/auth/v1${path}`, { body, token: h.info.SECRET_KEY, headers: { apikey: h.info.SECRET_KEY } });

const usersWith = async (email: string) =>
  (await sql`select count(*)::int as n from auth.users where email = ${email}`)[0]!.n as number;

/** Every user, session and refresh token: what a refused guest sign-in must leave as it was. */
const everything = async () =>
  (
    await sql`select (select count(*) from auth.users)::int + (select count(*) from auth.sessions)::int
      + (select count(*) from auth.refresh_tokens)::int + (select count(*) from auth.identities)::int as n`
  )[0]!.n as number;

async function mailsTo(to: string): Promise<{ to: string; subject: string; body: string }[]> {
  const res = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/mailbox?limit=1000`);
  assert.equal(res.status, 200);
  return (res.body as { to: string; subject: string; body: string }[]).filter((m) => m.to === to);
}

async function mailTo(to: string, count = 1) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const mails = await mailsTo(to);
    if (mails.length >= count) return mails[0]!;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} in the development mailbox`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function assertRefused(
  res: { status: number; body: any; headers: Headers },
  code: 'signup_disabled' | 'anonymous_provider_disabled',
) {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.error_code, code);
  assert.equal(res.headers.get('x-sb-error-code'), code);
  assert.equal(
    res.body.msg,
    code === 'signup_disabled' ? 'Signups not allowed for this instance' : 'Anonymous sign-ins are disabled',
  );
}

describe('the settings', () => {
  test('round-trip through the management API, with defaults, type checks and null back to the default', async () => {
    const fresh = await h.api('GET', CONFIG());
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.disable_signup, false);
    assert.equal(fresh.body.external_anonymous_users_enabled, true);

    const patched = await h.api('PATCH', CONFIG(), {
      body: { disable_signup: true, external_anonymous_users_enabled: false },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.disable_signup, true);
    assert.equal(patched.body.external_anonymous_users_enabled, false);
    const read = await h.api('GET', CONFIG());
    assert.equal(read.body.disable_signup, true);
    assert.equal(read.body.external_anonymous_users_enabled, false);

    const bad = await h.api('PATCH', CONFIG(), { body: { disable_signup: 'yes' } });
    assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_field']);
    assert.match(bad.body.error.message, /disable_signup must be true or false/);

    const reset = await h.api('PATCH', CONFIG(), {
      body: { disable_signup: null, external_anonymous_users_enabled: null },
    });
    assert.equal(reset.body.disable_signup, false);
    assert.equal(reset.body.external_anonymous_users_enabled, true);
  });

  test('GET /auth/v1/settings reports disable_signup and external.anonymous_users as they are set', async () => {
    const before = await authApi(h, 'GET', '/settings');
    assert.equal(before.body.disable_signup, false);
    assert.equal(before.body.external.anonymous_users, true);
    await configureAuth(h, { disable_signup: true, external_anonymous_users_enabled: false });
    const after = await authApi(h, 'GET', '/settings');
    assert.equal(after.body.disable_signup, true);
    assert.equal(after.body.external.anonymous_users, false);
    assert.equal(after.body.external.email, true);
  });
});

describe('disable_signup', () => {
  test('POST /signup is 422 signup_disabled before its fields or the rate limit are looked at, and creates no user', async () => {
    await configureAuth(h, { disable_signup: true, rate_limit_signups: 0 });
    try {
      const email = uniqueEmail('closed');
      assertRefused(
        await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } }),
        'signup_disabled',
      );
      // GoTrue's order: a weak or missing password is not even checked (and rate_limit_signups 0 would be 429).
      assertRefused(await authApi(h, 'POST', '/signup', { body: { email, password: 'short' } }), 'signup_disabled');
      assertRefused(await authApi(h, 'POST', '/signup', { body: { email } }), 'signup_disabled');
      assert.equal(await usersWith(email), 0);

      const js = await client(h).auth.signUp({ email, password: goodPassword() });
      assert.equal(js.error?.code, 'signup_disabled');
      assert.equal(js.error?.status, 422);
      assert.equal(await usersWith(email), 0);
    } finally {
      await configureAuth(h, { rate_limit_signups: 1000 });
    }
    // Back on, the same address signs up.
    await configureAuth(h, { disable_signup: false });
    const email = uniqueEmail('reopened');
    assert.equal((await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } })).status, 201);
  });

  test('POST /otp for an unknown address is 422 and mails nothing; an invited user still gets a code that signs in', async () => {
    await configureAuth(h, { disable_signup: true });
    // Invite-only: the admin API creates the user.
    const invited = uniqueEmail('invited');
    const invite = await asAdmin('POST', '/invite', { email: invited });
    assert.equal(invite.status, 200, JSON.stringify(invite.body));
    assert.equal(await usersWith(invited), 1);
    await mailTo(invited);

    const stranger = uniqueEmail('stranger');
    assertRefused(await authApi(h, 'POST', '/otp', { body: { email: stranger } }), 'signup_disabled');
    assertRefused(
      await authApi(h, 'POST', '/otp', { body: { email: stranger, create_user: true } }),
      'signup_disabled',
    );
    const js = await client(h).auth.signInWithOtp({ email: stranger, options: { emailRedirectTo: APP } });
    assert.equal(js.error?.code, 'signup_disabled');
    // create_user false answers as ever (a decoy, nothing sent).
    const quiet = await authApi(h, 'POST', '/otp', { body: { email: stranger, create_user: false } });
    assert.equal(quiet.status, 200);

    // The invited (still unconfirmed) user's code arrives and signs in; after it, nothing came for the stranger.
    const sent = await authApi(h, 'POST', '/otp', { body: { email: invited } });
    assert.equal(sent.status, 200);
    const mail = await mailTo(invited, 2);
    const verified = await authApi(h, 'POST', '/verify', {
      body: { type: 'email', email: invited, token: codeIn(mail) },
    });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.equal(verified.body.user.email, invited);
    assert.equal(await usersWith(stranger), 0);
    assert.deepEqual(await mailsTo(stranger), []);
  });

  test('the admin API still creates users: POST /admin/users, invite and generate_link signup/invite', async () => {
    await configureAuth(h, { disable_signup: true });
    const created = uniqueEmail('admin-made');
    const password = goodPassword();
    const res = await asAdmin('POST', '/admin/users', { email: created, password, email_confirm: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(await usersWith(created), 1);
    // Signing in is not signing up.
    assert.equal((await client(h).auth.signInWithPassword({ email: created, password })).error, null);

    for (const type of ['signup', 'invite'] as const) {
      const email = uniqueEmail(`gl-${type}`);
      const link = await asAdmin('POST', '/admin/generate_link', {
        type,
        email,
        ...(type === 'signup' ? { password: goodPassword() } : {}),
      });
      assert.equal(link.status, 200, JSON.stringify(link.body));
      assert.equal(await usersWith(email), 1);
    }
  });
});

describe('guests', () => {
  test('external_anonymous_users_enabled false: 422 anonymous_provider_disabled, nothing written, rate limit unspent', async () => {
    await configureAuth(h, { external_anonymous_users_enabled: false, rate_limit_anonymous_users: 0 });
    try {
      const before = await everything();
      assertRefused(await authApi(h, 'POST', '/signup', { body: {} }), 'anonymous_provider_disabled');
      assertRefused(
        await authApi(h, 'POST', '/signup', { body: { data: { nick: 'x' } } }),
        'anonymous_provider_disabled',
      );
      const js = await client(h).auth.signInAnonymously();
      assert.equal(js.error?.code, 'anonymous_provider_disabled');
      assert.equal(await everything(), before);
      // Guests off does not close e-mail sign-up.
      await configureAuth(h, { rate_limit_anonymous_users: 1000 });
      const email = uniqueEmail('not-guest');
      assert.equal((await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } })).status, 201);
    } finally {
      await configureAuth(h, { rate_limit_anonymous_users: 1000 });
    }
  });

  test('disable_signup refuses guests too (signup_disabled), the guest setting being checked first, as GoTrue', async () => {
    const before = await everything();
    await configureAuth(h, { disable_signup: true });
    assertRefused(await authApi(h, 'POST', '/signup', { body: {} }), 'signup_disabled');
    await configureAuth(h, { external_anonymous_users_enabled: false });
    assertRefused(await authApi(h, 'POST', '/signup', { body: {} }), 'anonymous_provider_disabled');
    assert.equal(await everything(), before);
    await configureAuth(h, { disable_signup: null, external_anonymous_users_enabled: null });
    assert.equal((await authApi(h, 'POST', '/signup', { body: {} })).status, 201);
  });
});

describe('social sign-in under disable_signup', () => {
  /** GET /authorize → provider → Hearth's callback → the final redirect (Location). */
  async function socialSignIn(login: string): Promise<URL> {
    const start = await fetch(
      `${h.info.BASE_URL}/auth/v1/authorize?${new URLSearchParams({ provider: 'oidc', redirect_to: APP })}`,
      { redirect: 'manual' },
    );
    assert.equal(start.status, 302, await start.clone().text());
    const callback = await op.signIn(start.headers.get('location')!, login);
    const done = await fetch(callback, { redirect: 'manual' });
    assert.equal(done.status, 302);
    return new URL(done.headers.get('location')!);
  }
  const fragment = (u: URL) => new URLSearchParams(u.hash.slice(1));

  test('an identity matching nobody is refused in the redirect and creates nothing; known ones sign in and link', async () => {
    // Made while sign-ups are open: an identity already recorded, and a password account to link by e-mail.
    op.people.set('known-oidc', { email: uniqueEmail('known-oidc'), email_verified: true, name: 'known' });
    const known = fragment(await socialSignIn('known-oidc')).get('access_token')!;
    const holderEmail = uniqueEmail('holder');
    const holder = await authApi(h, 'POST', '/signup', { body: { email: holderEmail, password: goodPassword() } });
    assert.equal(holder.status, 201);

    await configureAuth(h, { disable_signup: true });
    const newcomer = uniqueEmail('newcomer');
    op.people.set('newcomer-oidc', { email: newcomer, email_verified: true, name: 'newcomer' });
    const before = await everything();
    const refused = await socialSignIn('newcomer-oidc');
    assert.equal(refused.origin + refused.pathname, APP);
    const f = fragment(refused);
    assert.equal(f.get('error'), 'access_denied');
    assert.equal(f.get('error_code'), 'signup_disabled');
    assert.equal(f.get('error_description'), 'Signups not allowed for this instance');
    assert.equal(f.get('access_token'), null);
    assert.equal(await everything(), before);
    assert.equal(await usersWith(newcomer), 0);
    assert.equal(
      (await sql`select count(*)::int as n from auth.identities where provider_id = 'newcomer-oidc'`)[0]!.n,
      0,
    );

    // An unverified address held by an account would make a separate account: refused too.
    op.people.set('unverified-oidc', { email: holderEmail, email_verified: false, name: 'unverified' });
    assert.equal(fragment(await socialSignIn('unverified-oidc')).get('error_code'), 'signup_disabled');

    // The recorded identity signs its user in; a verified address links to its account.
    const again = fragment(await socialSignIn('known-oidc')).get('access_token')!;
    assert.equal(decodeJwt(again).sub, decodeJwt(known).sub);
    op.people.set('holder-oidc', { email: holderEmail, email_verified: true, name: 'holder' });
    const linked = fragment(await socialSignIn('holder-oidc')).get('access_token')!;
    assert.equal(decodeJwt(linked).sub, holder.body.user.id);
  });
});
