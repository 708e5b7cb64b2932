import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import postgres from 'postgres';
import WebSocket from 'ws';
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
let admin: SupabaseClient;
const APP = 'http://app.test';

before(async () => {
  inbox = await startInbox();
  h = await startTestHearth({ env: { HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  await configureAuth(h, {
    smtp_host: '127.0.0.1',
    smtp_port: inbox.port,
    smtp_admin_email: 'auth@hearth.test',
    uri_allow_list: `${APP}/**`,
    rate_limit_email_sent: 1000,
  });
  admin = createClient(h.info.BASE_URL, h.info.SECRET_KEY, {
    auth: { autoRefreshToken: false, persistSession: false },
    realtime: { transport: WebSocket as never },
  });
});
after(async () => {
  await h?.close();
  await inbox?.close();
});

/** Raw /auth/v1 call with the secret key. */
const asAdmin = (method: string, path: string, body?: unknown) =>
  h.api(method, `/auth/v1${path}`, { body, token: h.info.SECRET_KEY, headers: { apikey: h.info.SECRET_KEY } });

describe('auth.admin users', () => {
  test('createUser, getUserById, updateUserById, deleteUser round trip', async () => {
    const email = uniqueEmail('admin');
    const password = goodPassword();
    const created = await admin.auth.admin.createUser({
      email,
      password,
      email_confirm: true,
      user_metadata: { name: 'Ada' },
      app_metadata: { plan: 'pro' },
    });
    assert.equal(created.error, null);
    const user = created.data.user!;
    assert.equal(user.email, email);
    assert.ok(user.email_confirmed_at);
    assert.deepEqual(user.user_metadata, { name: 'Ada' });
    assert.equal(user.app_metadata.plan, 'pro');
    assert.equal(user.app_metadata.provider, 'email');

    const signIn = await client(h).auth.signInWithPassword({ email, password });
    assert.equal(signIn.error, null);

    const fetched = await admin.auth.admin.getUserById(user.id);
    assert.equal(fetched.data.user!.id, user.id);

    const updated = await admin.auth.admin.updateUserById(user.id, {
      user_metadata: { name: null, city: 'Oslo' },
      app_metadata: { plan: 'free' },
    });
    assert.equal(updated.error, null);
    assert.deepEqual(updated.data.user!.user_metadata, { city: 'Oslo' });
    assert.equal(updated.data.user!.app_metadata.plan, 'free');

    const deleted = await admin.auth.admin.deleteUser(user.id);
    assert.equal(deleted.error, null);
    const gone = await admin.auth.admin.getUserById(user.id);
    assert.equal(gone.error!.status, 404);
    assert.equal(gone.error!.code, 'user_not_found');
    const refresh = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: signIn.data.session!.refresh_token },
    });
    assert.equal(refresh.status, 401);
  });

  test('a taken address is 422 email_exists; bad input is 400/422 and creates nothing', async () => {
    const email = uniqueEmail('dup');
    assert.equal((await admin.auth.admin.createUser({ email, password: goodPassword() })).error, null);
    const again = await admin.auth.admin.createUser({ email, password: goodPassword() });
    assert.equal(again.error!.status, 422);
    assert.equal(again.error!.code, 'email_exists');

    const cases: [unknown, number, string][] = [
      [{ email: uniqueEmail(), password: 'short' }, 422, 'weak_password'],
      [{ email: uniqueEmail(), password: 'password123' }, 400, 'leaked_password'],
      [{ email: 'not-an-address', password: goodPassword() }, 400, 'validation_failed'],
      [{ password: goodPassword() }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), phone: '+4712345678' }, 400, 'phone_provider_disabled'],
      [{ email: uniqueEmail(), ban_duration: 'forever' }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), ban_duration: '99999999999h' }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), id: 'nope' }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), password: goodPassword(), password_hash: '$argon2id$x' }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), role: 'service_role' }, 400, 'validation_failed'],
      [{ email: uniqueEmail(), user_metadata: [1] }, 400, 'validation_failed'],
    ];
    for (const [body, status, code] of cases) {
      const res = await asAdmin('POST', '/admin/users', body);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.error_code, code, JSON.stringify(body));
    }
    const id = '7b7e0a4e-5d8f-4c4e-9a59-2f4a3c1d0e11';
    const withId = await admin.auth.admin.createUser({ id, email: uniqueEmail('withid') });
    assert.equal(withId.data.user!.id, id);
    const sameId = await admin.auth.admin.createUser({ id, email: uniqueEmail('withid') });
    assert.equal(sameId.error!.code, 'user_already_exists');
    const listed = await asAdmin('GET', '/admin/users?per_page=1000');
    assert.equal(
      listed.body.users.filter((u: { email?: string }) => u.email === email).length,
      1,
      'refused requests created nothing',
    );
    assert.equal(listed.body.users.length, Number(listed.headers.get('x-total-count')));
    const unknown = await asAdmin('GET', '/admin/users/not-a-uuid');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error_code, 'validation_failed'); // GoTrue: "user_id must be an UUID"
    assert.equal(unknown.body.msg, 'user_id must be an UUID');
  });

  test('an unconfirmed user (email_confirm false) cannot sign in by password', async () => {
    const email = uniqueEmail('unconfirmed');
    const password = goodPassword();
    const created = await admin.auth.admin.createUser({ email, password });
    assert.equal(created.data.user!.email_confirmed_at, null);
    const res = await authApi(h, 'POST', '/token?grant_type=password', { body: { email, password } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error_code, 'email_not_confirmed');
    await admin.auth.admin.updateUserById(created.data.user!.id, { email_confirm: true });
    assert.equal((await client(h).auth.signInWithPassword({ email, password })).error, null);
  });

  test('ban_duration: a banned user can neither sign in nor refresh; none lifts the ban', async () => {
    const email = uniqueEmail('ban');
    const password = goodPassword();
    const { data } = await admin.auth.admin.createUser({ email, password, email_confirm: true });
    const id = data.user!.id;
    const session = (await client(h).auth.signInWithPassword({ email, password })).data.session!;

    const banned = await admin.auth.admin.updateUserById(id, { ban_duration: '24h' });
    assert.equal(banned.error, null);
    assert.ok(Date.parse(banned.data.user!.banned_until!) > Date.now() + 23 * 3600_000);

    const signIn = await authApi(h, 'POST', '/token?grant_type=password', { body: { email, password } });
    assert.equal(signIn.status, 400);
    assert.equal(signIn.body.error_code, 'user_banned');
    const refresh = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: session.refresh_token },
    });
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.error_code, 'user_banned');

    const lifted = await admin.auth.admin.updateUserById(id, { ban_duration: 'none' });
    assert.equal(lifted.data.user!.banned_until, undefined);
    // The refused refresh did not spend the token.
    const again = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: session.refresh_token },
    });
    assert.equal(again.status, 200);
  });

  test('admin password change: policy applies, new password works, sessions end', async () => {
    const email = uniqueEmail('pw');
    const { data } = await admin.auth.admin.createUser({ email, password: goodPassword(), email_confirm: true });
    const weak = await admin.auth.admin.updateUserById(data.user!.id, { password: 'short' });
    assert.equal(weak.error!.code, 'weak_password');
    const password = goodPassword();
    assert.equal((await admin.auth.admin.updateUserById(data.user!.id, { password })).error, null);
    assert.equal((await client(h).auth.signInWithPassword({ email, password })).error, null);
  });

  test('POST /admin/users/{id}/logout ends every session of the user; their refresh tokens stop working', async () => {
    const email = uniqueEmail('signout');
    const password = goodPassword();
    const { data } = await admin.auth.admin.createUser({ email, password, email_confirm: true });
    const sessions = [];
    for (let i = 0; i < 2; i++)
      sessions.push((await client(h).auth.signInWithPassword({ email, password })).data.session!);
    const out = await asAdmin('POST', `/admin/users/${data.user!.id}/logout`);
    assert.equal(out.status, 204);
    for (const s of sessions) {
      const refresh = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
        body: { refresh_token: s.refresh_token },
      });
      assert.equal(refresh.status, 401);
      assert.equal(refresh.body.error_code, 'invalid_grant');
      // An access token outlives its session until it expires, but cannot start anything new.
      const enrol = await authApi(h, 'POST', '/factors', { body: { factor_type: 'totp' }, token: s.access_token });
      assert.equal(enrol.status, 403);
      assert.equal(enrol.body.error_code, 'session_not_found');
    }
    assert.equal((await client(h).auth.signInWithPassword({ email, password })).error, null);
    const unknown = await asAdmin('POST', '/admin/users/00000000-0000-0000-0000-000000000000/logout');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error_code, 'user_not_found');
  });

  test('listUsers pages with x-total-count and link headers', async () => {
    for (let i = 0; i < 3; i++) await admin.auth.admin.createUser({ email: uniqueEmail('list'), email_confirm: true });
    const all = await asAdmin('GET', '/admin/users?page=1&per_page=2');
    assert.equal(all.status, 200);
    const total = Number(all.headers.get('x-total-count'));
    assert.ok(total >= 3);
    assert.match(all.headers.get('link')!, /page=2&per_page=2>; rel="next"/);
    assert.equal(all.body.aud, 'authenticated');
    assert.equal(all.body.users.length, 2);

    const page = await admin.auth.admin.listUsers({ page: 1, perPage: 2 });
    assert.equal(page.error, null);
    assert.equal(page.data.users.length, 2);
    assert.equal(page.data.nextPage, 2);
    assert.equal(page.data.total, total);
    assert.match(all.headers.get('link')!, new RegExp(`page=${Math.ceil(total / 2)}&per_page=2>; rel="last"`));
    assert.ok(page.data.lastPage >= 1);

    const only = uniqueEmail('filtered_x%');
    await admin.auth.admin.createUser({ email: only });
    const filtered = await asAdmin('GET', `/admin/users?filter=${encodeURIComponent('filtered_x%')}`);
    assert.deepEqual(
      filtered.body.users.map((u: { email: string }) => u.email),
      [only],
    );
    assert.equal(filtered.headers.get('x-total-count'), '1');

    const bad = await asAdmin('GET', '/admin/users?per_page=0');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error_code, 'validation_failed');
  });

  test('soft delete keeps the row, clears the address and ends sessions', async () => {
    const email = uniqueEmail('soft');
    const password = goodPassword();
    const { data } = await admin.auth.admin.createUser({ email, password, email_confirm: true });
    const session = (await client(h).auth.signInWithPassword({ email, password })).data.session!;
    assert.equal((await admin.auth.admin.deleteUser(data.user!.id, true)).error, null);
    const after = await admin.auth.admin.getUserById(data.user!.id);
    assert.ok(after.data.user!.deleted_at);
    assert.equal(after.data.user!.email, undefined);
    const refresh = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: session.refresh_token },
    });
    assert.equal(refresh.status, 401);
    // The address is free again.
    assert.equal((await admin.auth.admin.createUser({ email })).error, null);
  });

  test('hard delete of a user referenced without cascade is 409 conflict, leaving the user', async () => {
    const { data } = await admin.auth.admin.createUser({ email: uniqueEmail('ref'), email_confirm: true });
    const sql = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    try {
      await sql`create table public.profiles_ref (id uuid primary key references auth.users (id))`;
      await sql`insert into public.profiles_ref values (${data.user!.id})`;
      const res = await asAdmin('DELETE', `/admin/users/${data.user!.id}`, {});
      assert.equal(res.status, 409);
      assert.equal(res.body.error_code, 'conflict');
      assert.equal((await admin.auth.admin.getUserById(data.user!.id)).error, null);
    } finally {
      await sql`drop table if exists public.profiles_ref`;
      await sql.end();
    }
  });
});

describe('admin access', () => {
  test('the publishable key and a user token get 403 not_admin', async () => {
    const email = uniqueEmail('nonadmin');
    const password = goodPassword();
    await admin.auth.admin.createUser({ email, password, email_confirm: true });
    const token = (await client(h).auth.signInWithPassword({ email, password })).data.session!.access_token;
    const calls: [string, string][] = [
      ['GET', '/admin/users'],
      ['POST', '/admin/users'],
      ['GET', '/admin/users/00000000-0000-0000-0000-000000000000'],
      ['DELETE', '/admin/users/00000000-0000-0000-0000-000000000000'],
      ['POST', '/admin/users/00000000-0000-0000-0000-000000000000/logout'],
      ['POST', '/admin/generate_link'],
      ['POST', '/invite'],
    ];
    for (const [method, path] of calls) {
      for (const t of [h.info.PUBLISHABLE_KEY, token]) {
        const res = await authApi(h, method, path, {
          body: method === 'GET' ? undefined : { email: uniqueEmail() },
          token: t,
        });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(res.body.error_code, 'not_admin');
      }
    }
    const ua = createClient(h.info.BASE_URL, h.info.PUBLISHABLE_KEY, {
      auth: { autoRefreshToken: false, persistSession: false },
      realtime: { transport: WebSocket as never },
    });
    const listed = await ua.auth.admin.listUsers();
    assert.equal(listed.error!.status, 403);
    assert.equal(listed.error!.code, 'not_admin');
  });
});

describe('generate_link, invite, MFA admin', () => {
  test('generate_link magiclink: the action link signs in, the otp and hashed_token verify', async () => {
    const email = uniqueEmail('gl');
    await admin.auth.admin.createUser({ email, email_confirm: true });
    const link = await admin.auth.admin.generateLink({
      type: 'magiclink',
      email,
      options: { redirectTo: `${APP}/done` },
    });
    assert.equal(link.error, null);
    const props = link.data.properties!;
    assert.equal(props.verification_type, 'magiclink');
    assert.equal(props.redirect_to, `${APP}/done`);
    assert.match(props.email_otp, /^\d{6}$/);
    assert.equal(link.data.user!.email, email);
    const res = await fetch(props.action_link, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.match(res.headers.get('location')!, /^http:\/\/app\.test\/done#access_token=/);

    const second = (await admin.auth.admin.generateLink({ type: 'magiclink', email })).data.properties!;
    const viaOtp = await client(h).auth.verifyOtp({ email, token: second.email_otp, type: 'magiclink' });
    assert.equal(viaOtp.error, null);
    const third = (await admin.auth.admin.generateLink({ type: 'recovery', email })).data.properties!;
    const viaHash = await client(h).auth.verifyOtp({ token_hash: third.hashed_token, type: 'recovery' });
    assert.equal(viaHash.error, null);
    // Type `email` redeems a recovery link or code too, as GoTrue's does (the guides' /auth/confirm route).
    const fourth = (await admin.auth.admin.generateLink({ type: 'recovery', email })).data.properties!;
    const asEmail = await client(h).auth.verifyOtp({ token_hash: fourth.hashed_token, type: 'email' });
    assert.equal(asEmail.error, null);
    const fifth = (await admin.auth.admin.generateLink({ type: 'recovery', email })).data.properties!;
    const codeAsEmail = await client(h).auth.verifyOtp({ email, token: fifth.email_otp, type: 'email' });
    assert.equal(codeAsEmail.error, null);
  });

  test('generate_link signup creates an unconfirmed user; its link confirms', async () => {
    const email = uniqueEmail('glsignup');
    const password = goodPassword();
    const link = await admin.auth.admin.generateLink({ type: 'signup', email, password });
    assert.equal(link.error, null);
    assert.equal(link.data.user!.email_confirmed_at, null);
    assert.equal((await fetch(link.data.properties!.action_link, { redirect: 'manual' })).status, 302);
    assert.equal((await client(h).auth.signInWithPassword({ email, password })).error, null);
    const again = await admin.auth.admin.generateLink({ type: 'signup', email, password });
    assert.equal(again.error!.code, 'email_exists');

    const missing = await admin.auth.admin.generateLink({ type: 'recovery', email: uniqueEmail('nobody') });
    assert.equal(missing.error!.status, 404);
    assert.equal(missing.error!.code, 'user_not_found');
    const badType = await asAdmin('POST', '/admin/generate_link', { type: 'sms', email });
    assert.equal(badType.status, 400);
    const badRedirect = await asAdmin('POST', '/admin/generate_link?redirect_to=https://evil.test/', {
      type: 'magiclink',
      email,
    });
    assert.equal(badRedirect.status, 400);
    assert.equal(badRedirect.body.error_code, 'bad_redirect');
  });

  test('generate_link email_change_new sets the pending address; the link applies it', async () => {
    const email = uniqueEmail('glchange');
    const newEmail = uniqueEmail('glchanged');
    const { data } = await admin.auth.admin.createUser({ email, email_confirm: true });
    const link = await admin.auth.admin.generateLink({ type: 'email_change_new', email, newEmail });
    assert.equal(link.error, null);
    assert.equal(link.data.user!.new_email, newEmail);
    assert.equal((await fetch(link.data.properties!.action_link, { redirect: 'manual' })).status, 302);
    assert.equal((await admin.auth.admin.getUserById(data.user!.id)).data.user!.email, newEmail);
  });

  test('inviteUserByEmail mails a link that signs the invited user in', async () => {
    const email = uniqueEmail('invite');
    const invited = await admin.auth.admin.inviteUserByEmail(email, {
      data: { team: 'red' },
      redirectTo: `${APP}/welcome`,
    });
    assert.equal(invited.error, null);
    assert.ok(invited.data.user!.invited_at);
    assert.deepEqual(invited.data.user!.user_metadata, { team: 'red' });
    const mail = await inbox.next(email);
    const res = await fetch(linkIn(mail), { redirect: 'manual' });
    assert.match(res.headers.get('location')!, /^http:\/\/app\.test\/welcome#access_token=.*type=invite/);
    const confirmed = await admin.auth.admin.getUserById(invited.data.user!.id);
    assert.ok(confirmed.data.user!.email_confirmed_at);
    const again = await admin.auth.admin.inviteUserByEmail(email);
    assert.equal(again.error!.code, 'email_exists');
  });

  test('six invitations and links for one new address at once: one user, no 500', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => admin.auth.admin.inviteUserByEmail(email)),
      ...Array.from({ length: 2 }, () => admin.auth.admin.generateLink({ type: 'magiclink', email })),
    ]);
    for (const r of results) assert.equal(r.error, null, String(r.error?.message));
    assert.equal(new Set(results.map((r) => r.data.user!.id)).size, 1);
  });

  test("auth.admin.mfa lists and deletes a user's factors", async () => {
    const email = uniqueEmail('mfa');
    const password = goodPassword();
    const { data } = await admin.auth.admin.createUser({ email, password, email_confirm: true });
    const sb = client(h);
    await sb.auth.signInWithPassword({ email, password });
    const enrolled = await sb.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'phone' });
    assert.equal(enrolled.error, null);
    const listed = await admin.auth.admin.mfa.listFactors({ userId: data.user!.id });
    assert.equal(listed.error, null);
    assert.deepEqual(
      listed.data!.factors.map((f) => f.id),
      [enrolled.data!.id],
    );
    const removed = await admin.auth.admin.mfa.deleteFactor({ userId: data.user!.id, id: enrolled.data!.id });
    assert.equal(removed.error, null);
    assert.equal((await admin.auth.admin.mfa.listFactors({ userId: data.user!.id })).data!.factors.length, 0);
    const missing = await admin.auth.admin.mfa.deleteFactor({ userId: data.user!.id, id: enrolled.data!.id });
    assert.equal(missing.error!.status, 404);
  });
});

describe('resend, reauthenticate, settings, health', () => {
  test('resend signup mails an unconfirmed user a code; unknown addresses get the same {}', async () => {
    const email = uniqueEmail('resend');
    await admin.auth.admin.createUser({ email });
    const sb = client(h);
    assert.equal((await sb.auth.resend({ type: 'signup', email })).error, null);
    const code = codeIn(await inbox.next(email));
    const verified = await sb.auth.verifyOtp({ email, token: code, type: 'signup' });
    assert.equal(verified.error, null);
    assert.ok(verified.data.user!.email_confirmed_at);

    const ghost = await authApi(h, 'POST', '/resend', { body: { type: 'signup', email: uniqueEmail('ghost') } });
    assert.equal(ghost.status, 200);
    assert.deepEqual(ghost.body, {});
    const bad = await authApi(h, 'POST', '/resend', { body: { type: 'magic', email } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error_code, 'validation_failed');
    const sms = await authApi(h, 'POST', '/resend', { body: { type: 'sms', phone: '+4712345678' } });
    assert.equal(sms.status, 400);
    assert.equal(sms.body.error_code, 'phone_provider_disabled');
  });

  test('reauthenticate mails a nonce that PUT /user takes instead of current_password', async () => {
    const email = uniqueEmail('reauth');
    const password = goodPassword();
    await admin.auth.admin.createUser({ email, password, email_confirm: true });
    const sb = client(h);
    await sb.auth.signInWithPassword({ email, password });
    const without = await sb.auth.updateUser({ password: goodPassword() });
    assert.equal(without.error!.code, 'reauthentication_required');
    assert.equal((await sb.auth.reauthenticate()).error, null);
    const nonce = codeIn(await inbox.next(email));
    const wrong = await sb.auth.updateUser({
      password: goodPassword(),
      nonce: nonce === '000000' ? '111111' : '000000',
    });
    assert.equal(wrong.error!.status, 422);
    assert.equal(wrong.error!.code, 'reauthentication_not_valid');
    const newPassword = goodPassword();
    const ok = await sb.auth.updateUser({ password: newPassword, nonce });
    assert.equal(ok.error, null);
    assert.equal((await client(h).auth.signInWithPassword({ email, password: newPassword })).error, null);
    const reused = await sb.auth.updateUser({ password: goodPassword(), nonce });
    assert.equal(reused.error!.code, 'reauthentication_not_valid');

    const anon = await authApi(h, 'GET', '/reauthenticate');
    assert.equal(anon.status, 401);
  });

  test('GET /settings and GET /health', async () => {
    const settings = await authApi(h, 'GET', '/settings');
    assert.equal(settings.status, 200);
    assert.equal(settings.body.external.email, true);
    assert.equal(settings.body.external.github, false);
    assert.equal(settings.body.disable_signup, false);
    assert.equal(settings.body.mailer_autoconfirm, true);
    const health = await authApi(h, 'GET', '/health');
    assert.equal(health.status, 200);
    assert.equal(typeof health.body.version, 'string');
    assert.equal(typeof health.body.name, 'string');
    assert.equal(typeof health.body.description, 'string');
  });
});
