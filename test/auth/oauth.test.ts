/**
 * Social sign-in and identity linking against a real OpenID provider
 * (oidc-provider on a local port): the whole redirect dance with state,
 * nonce and PKCE, sign-in by existing identity, linking by verified e-mail,
 * new accounts, PKCE towards the app, linking and unlinking, guests becoming
 * permanent, and the refusals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, client, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';
import { startProvider, type TestProvider } from './oidc-provider.ts';

let h: TestHearth;
let op: TestProvider;
const APP = 'http://app.test/welcome';

before(async () => {
  h = await startTestHearth({ env: { HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  op = await startProvider([`${h.info.BASE_URL}/auth/v1/callback`]);
  await configureAuth(h, { rate_limit_signups: 1000, rate_limit_anonymous_users: 1000 });
});
after(async () => {
  await op?.close();
  await h?.close();
});

const enableProvider = () =>
  configureAuth(h, {
    uri_allow_list: 'http://app.test/**',
    external_oidc_enabled: true,
    external_oidc_client_id: op.clientId,
    external_oidc_secret: op.secret,
    external_oidc_url: op.issuer,
  });

/** GET /authorize → provider → Hearth's callback → the final redirect (Location). */
async function socialSignIn(login: string, query: Record<string, string> = {}): Promise<URL> {
  const start = await fetch(
    `${h.info.BASE_URL}/auth/v1/authorize?${new URLSearchParams({ provider: 'oidc', redirect_to: APP, ...query })}`,
    { redirect: 'manual' },
  );
  assert.equal(start.status, 302, await start.clone().text());
  return followToApp(start.headers.get('location')!, login);
}

async function followToApp(providerUrl: string, login: string): Promise<URL> {
  const callback = await op.signIn(providerUrl, login);
  assert.ok(callback.startsWith(`${h.info.BASE_URL}/auth/v1/callback?`), callback);
  const done = await fetch(callback, { redirect: 'manual' });
  assert.equal(done.status, 302);
  return new URL(done.headers.get('location')!);
}

const fragment = (u: URL) => new URLSearchParams(u.hash.slice(1));

/** The provider's userinfo for one of its access tokens (what an app does with provider_token). */
async function providerUser(providerToken: string): Promise<{ sub: string }> {
  const res = await fetch(op.userinfo, { headers: { authorization: `Bearer ${providerToken}` } });
  assert.equal(res.status, 200, `userinfo answered ${res.status}`);
  return (await res.json()) as { sub: string };
}

function person(login: string, email: string | undefined, verified = true) {
  op.people.set(login, { email, email_verified: verified, name: login });
}

async function passwordUser(email = uniqueEmail('pw')) {
  const res = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
  assert.equal(res.status, 201);
  const [emailIdentity] = res.body.user.identities;
  assert.equal(emailIdentity.provider, 'email', "the sign-up answer shows GoTrue's email identity");
  return {
    token: res.body.access_token as string,
    id: res.body.user.id as string,
    email,
    emailIdentityId: emailIdentity.identity_id as string,
  };
}

describe('before configuration', () => {
  test('a provider that is not enabled answers 400 provider_disabled, an unknown one 400 validation_failed, whatever redirect_to is', async () => {
    const off = await authApi(h, 'GET', '/authorize?provider=oidc');
    assert.equal(off.status, 400);
    assert.equal(off.body.error_code, 'provider_disabled');
    const gh = await authApi(h, 'GET', '/authorize?provider=github');
    assert.equal(gh.body.error_code, 'provider_disabled');
    const unknown = await authApi(h, 'GET', '/authorize?provider=myspace');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error_code, 'validation_failed');
    // The provider is checked before redirect_to (as GoTrue does): a target off the allowlist does not hide it.
    const target = encodeURIComponent('http://localhost:3000/cb');
    const offWithTarget = await authApi(h, 'GET', `/authorize?provider=oidc&redirect_to=${target}`);
    assert.equal(offWithTarget.body.error_code, 'provider_disabled');
    const unknownWithTarget = await authApi(h, 'GET', `/authorize?provider=myspace&redirect_to=${target}`);
    assert.equal(unknownWithTarget.body.error_code, 'validation_failed');
    const linker = await passwordUser();
    const linkOff = await authApi(h, 'GET', `/user/identities/authorize?provider=oidc&redirect_to=${target}`, {
      token: linker.token,
    });
    assert.equal(linkOff.status, 400);
    assert.equal(linkOff.body.error_code, 'provider_disabled');
    // The secret is redacted in config reads.
    await enableProvider();
    const cfg = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/config/auth`);
    assert.notEqual(cfg.body.external_oidc_secret, op.secret);
  });
});

describe('social sign-in', () => {
  test('authorize redirects to the provider with state, nonce and S256 PKCE; the callback signs a new user in', async () => {
    const start = await fetch(
      `${h.info.BASE_URL}/auth/v1/authorize?provider=oidc&redirect_to=${encodeURIComponent(APP)}`,
      { redirect: 'manual' },
    );
    assert.equal(start.status, 302);
    const to = new URL(start.headers.get('location')!);
    assert.equal(to.origin, op.issuer);
    assert.equal(to.searchParams.get('client_id'), op.clientId);
    assert.equal(to.searchParams.get('redirect_uri'), `${h.info.BASE_URL}/auth/v1/callback`);
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(to.searchParams.get('state')!.length >= 32);
    assert.ok(to.searchParams.get('nonce'));
    assert.match(to.searchParams.get('scope')!, /openid/);

    person('alice', 'alice@oidc.test');
    const landed = await followToApp(to.toString(), 'alice');
    assert.equal(landed.origin + landed.pathname, APP);
    const f = fragment(landed);
    assert.equal(f.get('token_type'), 'bearer');
    assert.equal(f.get('expires_in'), '3600');
    assert.ok(f.get('refresh_token'));
    // The provider's own access token, for the app to call the provider's API; this provider gave no refresh token.
    assert.equal((await providerUser(f.get('provider_token')!)).sub, 'alice');
    assert.equal(f.has('provider_refresh_token'), false);
    const claims = decodeJwt(f.get('access_token')!);
    assert.equal(claims.email, 'alice@oidc.test');
    assert.deepEqual(
      (claims.amr as { method: string }[]).map((a) => a.method),
      ['oauth'],
    );
    const user = await authApi(h, 'GET', '/user', { token: f.get('access_token')! });
    assert.equal(user.body.email, 'alice@oidc.test');
    assert.equal(user.body.identities.length, 1);
    assert.equal(user.body.identities[0].provider, 'oidc');
    assert.equal(user.body.identities[0].id, 'alice');
    assert.equal(user.body.identities[0].identity_data.email, 'alice@oidc.test');
    assert.deepEqual(user.body.app_metadata.providers, ['oidc']);

    // The same identity again signs the same user in; the state cannot be replayed.
    const again = await socialSignIn('alice');
    assert.equal(decodeJwt(fragment(again).get('access_token')!).sub, claims.sub);
  });

  test('a provider-verified e-mail links to the matching account; an unverified one makes a separate account without it', async () => {
    const bob = await passwordUser(uniqueEmail('bob'));
    person('bob-oidc', bob.email, true);
    const linked = await socialSignIn('bob-oidc');
    assert.equal(decodeJwt(fragment(linked).get('access_token')!).sub, bob.id);
    const user = await authApi(h, 'GET', '/user', { token: bob.token });
    assert.deepEqual(
      user.body.identities.map((i: { id: string }) => i.id),
      ['bob-oidc'],
    );

    const carol = await passwordUser(uniqueEmail('carol'));
    person('carol-oidc', carol.email, false);
    const separate = await socialSignIn('carol-oidc');
    const token = fragment(separate).get('access_token')!;
    assert.notEqual(decodeJwt(token).sub, carol.id);
    const other = await authApi(h, 'GET', '/user', { token });
    assert.equal(other.body.email, undefined);
    assert.equal(other.body.is_anonymous, false);
  });

  test('with code_challenge the callback answers ?code=, exchanged once by grant_type=pkce', async () => {
    person('pkce-user', 'pkce@oidc.test');
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const landed = await socialSignIn('pkce-user', { code_challenge: challenge, code_challenge_method: 's256' });
    assert.equal(landed.hash, '');
    const code = landed.searchParams.get('code')!;
    const res = await authApi(h, 'POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: verifier },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.user.email, 'pkce@oidc.test');
    assert.equal((await providerUser(res.body.provider_token)).sub, 'pkce-user');
    assert.equal('provider_refresh_token' in res.body, false);
    assert.deepEqual(
      (decodeJwt(res.body.access_token).amr as { method: string }[]).map((a) => a.method),
      ['oauth'],
    );
    const twice = await authApi(h, 'POST', '/token?grant_type=pkce', {
      body: { auth_code: code, code_verifier: verifier },
    });
    assert.equal(twice.body.error_code, 'flow_state_not_found');
  });

  test('supabase-js signInWithOAuth (PKCE) and exchangeCodeForSession', async () => {
    person('sbjs', 'sbjs@oidc.test');
    const sb = client(h, { flowType: 'pkce' });
    const { data, error } = await sb.auth.signInWithOAuth({
      provider: 'oidc' as never,
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    assert.equal(error, null);
    const start = await fetch(data.url!, { redirect: 'manual' });
    assert.equal(start.status, 302);
    const landed = await followToApp(start.headers.get('location')!, 'sbjs');
    const exchanged = await sb.auth.exchangeCodeForSession(landed.searchParams.get('code')!);
    assert.equal(exchanged.error, null);
    assert.equal(exchanged.data.user!.email, 'sbjs@oidc.test');
  });

  test('provider_token and provider_refresh_token: in the fragment, or kept sealed in the PKCE flow until the exchange, which clears them', async () => {
    person('offline', 'offline@oidc.test');
    op.refreshTokensFor.add('offline');
    const implicit = fragment(await socialSignIn('offline'));
    assert.equal((await providerUser(implicit.get('provider_token')!)).sub, 'offline');
    assert.ok(implicit.get('provider_refresh_token'));

    const sb = client(h, { flowType: 'pkce' });
    const { data } = await sb.auth.signInWithOAuth({
      provider: 'oidc' as never,
      options: { redirectTo: APP, skipBrowserRedirect: true },
    });
    const start = await fetch(data.url!, { redirect: 'manual' });
    const landed = await followToApp(start.headers.get('location')!, 'offline');
    const project = (await h.hearth.registry.defaultProject())!;
    const flowOf = async () =>
      (
        await project.sql`select provider_token_sealed, provider_refresh_token_sealed from auth.flow_state
          where user_id = ${decodeJwt(implicit.get('access_token')!).sub!} order by created_at desc limit 1`
      )[0]!;
    const waiting = await flowOf();
    const exchanged = await sb.auth.exchangeCodeForSession(landed.searchParams.get('code')!);
    assert.equal(exchanged.error, null);
    const session = exchanged.data.session!;
    assert.equal((await providerUser(session.provider_token!)).sub, 'offline');
    assert.ok(session.provider_refresh_token);
    assert.notEqual(session.provider_refresh_token, implicit.get('provider_refresh_token'));
    // At rest they were sealed with the master key, never in the clear; the exchange removed them.
    assert.ok(waiting.provider_token_sealed && !waiting.provider_token_sealed.includes(session.provider_token!));
    assert.ok(
      waiting.provider_refresh_token_sealed &&
        !waiting.provider_refresh_token_sealed.includes(session.provider_refresh_token!),
    );
    assert.deepEqual({ ...(await flowOf()) }, { provider_token_sealed: null, provider_refresh_token_sealed: null });
  });

  test('refusals: a redirect_to off the allowlist is 400 bad_redirect; an unknown state returns to site_url with bad_oauth_state; a provider error is passed on', async () => {
    const bad = await authApi(
      h,
      'GET',
      `/authorize?provider=oidc&redirect_to=${encodeURIComponent('https://evil.test/')}`,
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error_code, 'bad_redirect');
    // With the allowlist empty (the default) social sign-in does nothing (SPEC 5), site_url or not.
    await configureAuth(h, { uri_allow_list: '' });
    try {
      for (const query of ['', `&redirect_to=${encodeURIComponent('http://localhost:3000')}`]) {
        const off = await authApi(h, 'GET', `/authorize?provider=oidc${query}`);
        assert.equal(off.status, 400, query);
        assert.equal(off.body.error_code, 'bad_redirect', query);
      }
    } finally {
      await enableProvider();
    }
    const forged = await fetch(`${h.info.BASE_URL}/auth/v1/callback?code=abc&state=forged`, { redirect: 'manual' });
    assert.equal(forged.status, 302);
    const to = new URL(forged.headers.get('location')!);
    assert.equal(to.origin, 'http://localhost:3000');
    assert.equal(fragment(to).get('error_code'), 'bad_oauth_state');
    const start = await fetch(
      `${h.info.BASE_URL}/auth/v1/authorize?provider=oidc&redirect_to=${encodeURIComponent(APP)}`,
      { redirect: 'manual' },
    );
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const denied = await fetch(
      `${h.info.BASE_URL}/auth/v1/callback?error=access_denied&error_description=nope&state=${state}`,
      { redirect: 'manual' },
    );
    const deniedTo = new URL(denied.headers.get('location')!);
    assert.equal(deniedTo.origin + deniedTo.pathname, APP);
    assert.equal(fragment(deniedTo).get('error'), 'access_denied');
    assert.equal(fragment(deniedTo).get('error_code'), 'oauth_provider_error');
    // In the query too, as GoTrue sends it, for a server-side callback route, which never sees the fragment.
    for (const to of [deniedTo, new URL(forged.headers.get('location')!)])
      assert.equal(to.searchParams.get('error_code'), fragment(to).get('error_code'));
    assert.equal(deniedTo.searchParams.get('error_description'), fragment(deniedTo).get('error_description'));
  });
});

const providersOf = (identities: { provider: string }[]) => identities.map((i) => i.provider);

describe('identity linking', () => {
  test('link, list in GET /user, unlink; the last sign-in method cannot be unlinked', async () => {
    const dave = await passwordUser(uniqueEmail('dave'));
    person('dave-oidc', 'dave-other@oidc.test');
    const link = await authApi(
      h,
      'GET',
      `/user/identities/authorize?provider=oidc&redirect_to=${encodeURIComponent(APP)}`,
      { token: dave.token },
    );
    assert.equal(link.status, 200);
    assert.ok(link.body.url.startsWith(op.issuer));
    const landed = await followToApp(link.body.url, 'dave-oidc');
    assert.equal(decodeJwt(fragment(landed).get('access_token')!).sub, dave.id);
    const user = await authApi(h, 'GET', '/user', { token: dave.token });
    assert.equal(user.body.email, dave.email);
    const identity = user.body.identities.find((i: { provider: string }) => i.provider === 'oidc');
    assert.equal(identity.id, 'dave-oidc');
    const removed = await authApi(h, 'DELETE', `/user/identities/${identity.identity_id}`, { token: dave.token });
    assert.equal(removed.status, 200);
    assert.deepEqual((await authApi(h, 'GET', '/user', { token: dave.token })).body.identities, []);
    // The email identity a sign-up answer shows (the account's own address and password) is not unlinked.
    const email = await authApi(h, 'DELETE', `/user/identities/${dave.emailIdentityId}`, { token: dave.token });
    assert.equal(email.status, 422);
    assert.equal(email.body.error_code, 'single_identity_not_deletable');
    const unknown = await authApi(h, 'DELETE', `/user/identities/${identity.identity_id}`, { token: dave.token });
    assert.equal(unknown.status, 422); // GoTrue's status
    assert.equal(unknown.body.error_code, 'identity_not_found');

    // A social-only account: its one identity is its only way in.
    person('solo', 'solo@oidc.test');
    const solo = fragment(await socialSignIn('solo')).get('access_token')!;
    const soloUser = await authApi(h, 'GET', '/user', { token: solo });
    const last = await authApi(h, 'DELETE', `/user/identities/${soloUser.body.identities[0].identity_id}`, {
      token: solo,
    });
    assert.equal(last.status, 422);
    assert.equal(last.body.error_code, 'single_identity_not_deletable');
  });

  test('DELETE /user/identities/{id} also takes the `id` GET /user shows for the identity (SPEC 4.1 names it {id})', async () => {
    const gina = await passwordUser(uniqueEmail('gina'));
    person('gina-oidc', 'gina-other@oidc.test');
    const link = await authApi(
      h,
      'GET',
      `/user/identities/authorize?provider=oidc&redirect_to=${encodeURIComponent(APP)}`,
      { token: gina.token },
    );
    await followToApp(link.body.url, 'gina-oidc');
    const [identity] = (await authApi(h, 'GET', '/user', { token: gina.token })).body.identities;
    assert.equal(identity.id, 'gina-oidc');
    const removed = await authApi(h, 'DELETE', `/user/identities/${encodeURIComponent(identity.id)}`, {
      token: gina.token,
    });
    assert.equal(removed.status, 200);
    assert.deepEqual((await authApi(h, 'GET', '/user', { token: gina.token })).body.identities, []);
    const gone = await authApi(h, 'DELETE', `/user/identities/${encodeURIComponent(identity.id)}`, {
      token: gina.token,
    });
    assert.equal(gone.status, 422);
    assert.equal(gone.body.error_code, 'identity_not_found');
  });

  test('linking an identity bound to another account is refused and nothing moves', async () => {
    person('taken', 'taken@oidc.test');
    const owner = decodeJwt(fragment(await socialSignIn('taken')).get('access_token')!).sub;
    const eve = await passwordUser(uniqueEmail('eve'));
    const link = await authApi(
      h,
      'GET',
      `/user/identities/authorize?provider=oidc&redirect_to=${encodeURIComponent(APP)}`,
      { token: eve.token },
    );
    const landed = await followToApp(link.body.url, 'taken');
    assert.equal(fragment(landed).get('error_code'), 'identity_already_exists');
    assert.equal(fragment(landed).get('access_token'), null);
    assert.deepEqual((await authApi(h, 'GET', '/user', { token: eve.token })).body.identities, []);
    const again = await socialSignIn('taken');
    assert.equal(decodeJwt(fragment(again).get('access_token')!).sub, owner);
  });

  test('with security_manual_linking_enabled off, linking and unlinking are 404 manual_linking_disabled (GoTrue); sign-in still works', async () => {
    const ivy = await passwordUser(uniqueEmail('ivy'));
    person('ivy-oidc', 'ivy-other@oidc.test');
    const link = () =>
      authApi(h, 'GET', `/user/identities/authorize?provider=oidc&redirect_to=${encodeURIComponent(APP)}`, {
        token: ivy.token,
      });
    await followToApp((await link()).body.url, 'ivy-oidc');
    const identity = (await authApi(h, 'GET', '/user', { token: ivy.token })).body.identities.find(
      (i: { provider: string }) => i.provider === 'oidc',
    );
    await configureAuth(h, { security_manual_linking_enabled: false });
    try {
      for (const res of [
        await link(),
        await authApi(h, 'DELETE', `/user/identities/${identity.identity_id}`, { token: ivy.token }),
      ]) {
        assert.equal(res.status, 404);
        assert.equal(res.body.error_code, 'manual_linking_disabled');
        assert.equal(res.body.msg, 'Manual linking is disabled');
      }
      // The linked identity is still there, and still signs Ivy in.
      assert.deepEqual(providersOf((await authApi(h, 'GET', '/user', { token: ivy.token })).body.identities), ['oidc']);
      assert.equal(decodeJwt(fragment(await socialSignIn('ivy-oidc')).get('access_token')!).sub, ivy.id);
    } finally {
      await configureAuth(h, { security_manual_linking_enabled: null });
    }
  });

  test('a guest who links an identity becomes permanent with the same id', async () => {
    const guest = await authApi(h, 'POST', '/signup', { body: {} });
    assert.equal(guest.body.user.is_anonymous, true);
    person('frank', 'frank@oidc.test');
    const link = await authApi(
      h,
      'GET',
      `/user/identities/authorize?provider=oidc&redirect_to=${encodeURIComponent(APP)}`,
      { token: guest.body.access_token },
    );
    const landed = await followToApp(link.body.url, 'frank');
    const claims = decodeJwt(fragment(landed).get('access_token')!);
    assert.equal(claims.sub, guest.body.user.id);
    assert.equal(claims.is_anonymous, false);
    assert.equal(claims.email, 'frank@oidc.test');
  });

  test('linking needs the user token: 401 no_authorization', async () => {
    const res = await authApi(h, 'GET', '/user/identities/authorize?provider=oidc');
    assert.equal(res.status, 401);
    assert.equal(res.body.error_code, 'no_authorization');
  });
});
