/**
 * GET /auth/v1/user reads the user, its identities and its factors in one
 * statement that builds the lists in SQL: it must show exactly what the
 * admin API (which reads them as rows) shows, timestamps included, down to
 * how a microsecond instant becomes milliseconds. Sessions are issued, and
 * refresh tokens rotated, by single statements too: the rows they leave must
 * be those of a sign-in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { withDatabase } from '../../src/db/pools.ts';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { authApi, configureAuth, goodPassword, uniqueEmail } from './helpers.ts';

let h: TestHearth;
let sql: postgres.Sql;

before(async () => {
  h = await startTestHearth();
  const project = (await h.hearth.registry.defaultProject())!;
  sql = postgres(withDatabase(serverUrl(), project.dbName), { max: 1, onnotice: () => {} });
});
after(async () => {
  await sql?.end();
  await h?.close();
});

const asAdmin = (path: string) =>
  h.api('GET', `/auth/v1${path}`, { token: h.info.SECRET_KEY, headers: { apikey: h.info.SECRET_KEY } });

describe('GET /auth/v1/user', () => {
  test('identities and factors match the admin view, timestamps truncated to the millisecond', async () => {
    const email = uniqueEmail('read');
    const s = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
    assert.equal(s.status, 201);
    const id = s.body.user.id as string;
    const factor = await authApi(h, 'POST', '/factors', {
      token: s.body.access_token,
      body: { factor_type: 'totp', friendly_name: 'phone' },
    });
    assert.equal(factor.status, 200);
    await sql`insert into auth.identities (user_id, provider, provider_id, identity_data, email, last_sign_in_at, created_at, updated_at)
      values (${id}, 'github', '4242', ${sql.json({ sub: '4242', name: 'Ada', n: 1.5 })}, ${email},
        null, '2024-05-01 10:00:00.123987+00', '2024-05-02 11:30:00.999999+00')`;

    const mine = await authApi(h, 'GET', '/user', { token: s.body.access_token });
    assert.equal(mine.status, 200);
    const admin = await asAdmin(`/admin/users/${id}`);
    assert.equal(admin.status, 200);
    assert.deepEqual(mine.body, admin.body);

    // The linked social identities (SPEC 2.2); the sign-up answer showed the email identity, in the same shape.
    const [identity] = mine.body.identities;
    assert.deepEqual(Object.keys(s.body.user.identities[0]), Object.keys(identity));
    assert.equal(identity.created_at, '2024-05-01T10:00:00.123Z');
    assert.equal(identity.updated_at, '2024-05-02T11:30:00.999Z');
    assert.equal(identity.last_sign_in_at, null);
    assert.deepEqual(identity.identity_data, { sub: '4242', name: 'Ada', n: 1.5 });
    assert.deepEqual(Object.keys(identity), [
      'identity_id',
      'id',
      'user_id',
      'provider',
      'identity_data',
      'email',
      'last_sign_in_at',
      'created_at',
      'updated_at',
    ]);
    assert.deepEqual(
      mine.body.factors.map((f: Record<string, unknown>) => [f.id, f.type, f.factor_type, f.friendly_name, f.status]),
      [[factor.body.id, 'totp', 'totp', 'phone', 'unverified']],
    );
  });

  test('a user with no identities or factors gets empty lists; a deleted user is 403 user_not_found', async () => {
    const s = await authApi(h, 'POST', '/signup', { body: {} });
    const mine = await authApi(h, 'GET', '/user', { token: s.body.access_token });
    assert.deepEqual([mine.body.identities, mine.body.factors, mine.body.is_anonymous], [[], [], true]);
    await sql`delete from auth.users where id = ${s.body.user.id}`;
    const gone = await authApi(h, 'GET', '/user', { token: s.body.access_token });
    assert.equal(gone.status, 403);
    assert.equal(gone.body.error_code, 'user_not_found');
  });
});

describe('sessions issued and rotated in one statement', () => {
  test('sign-up stamps last_sign_in_at and records one session with one live token; a refresh chains the next', async () => {
    const email = uniqueEmail('rows');
    const s = await authApi(h, 'POST', '/signup', { body: { email, password: goodPassword() } });
    const id = s.body.user.id as string;
    const [user] = await sql`select last_sign_in_at, created_at, updated_at from auth.users where id = ${id}`;
    assert.equal(user!.last_sign_in_at.getTime(), user!.created_at.getTime());
    assert.equal(s.body.user.last_sign_in_at, user!.last_sign_in_at.toISOString());
    const sessions = await sql`select id, aal, amr from auth.sessions where user_id = ${id}`;
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0]!.amr[0].method, 'password');

    const r = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: s.body.refresh_token },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.user.id, id);
    const tokens =
      await sql`select id::text, parent::text, revoked, session_id from auth.refresh_tokens where user_id = ${id} order by id`;
    assert.deepEqual(
      tokens.map((t) => [t.revoked, t.session_id]),
      [
        [true, sessions[0]!.id],
        [false, sessions[0]!.id],
      ],
    );
    assert.equal(tokens[1]!.parent, tokens[0]!.id);
    const [session] = await sql`select refreshed_at from auth.sessions where id = ${sessions[0]!.id}`;
    assert.ok(session!.refreshed_at);
    const claims = JSON.parse(Buffer.from(r.body.access_token.split('.')[1], 'base64url').toString());
    assert.equal(claims.session_id, sessions[0]!.id);
    assert.equal(claims.exp - claims.iat, 3600);
    assert.equal(claims.iss, `${h.url}/auth/v1`);
  });

  test('an expired token is invalid_grant and ends nothing; a reused one ends the session', async () => {
    const s = await authApi(h, 'POST', '/signup', { body: {} });
    await sql`update auth.refresh_tokens set expires_at = now() - interval '1 second' where user_id = ${s.body.user.id}`;
    const expired = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: s.body.refresh_token },
    });
    assert.deepEqual([expired.status, expired.body.error_code], [401, 'invalid_grant']);
    assert.match(expired.body.msg ?? expired.body.message ?? JSON.stringify(expired.body), /expired/);
    assert.equal((await sql`select count(*)::int as n from auth.sessions where user_id = ${s.body.user.id}`)[0]!.n, 1);

    const t = await authApi(h, 'POST', '/signup', { body: {} });
    const first = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: t.body.refresh_token },
    });
    assert.equal(first.status, 200);
    const reuse = () =>
      authApi(h, 'POST', '/token?grant_type=refresh_token', { body: { refresh_token: t.body.refresh_token } });
    const sessions = async () =>
      (await sql`select count(*)::int as n from auth.sessions where user_id = ${t.body.user.id}`)[0]!.n;
    // Within 10 s a reuse is taken for two refreshes at once: refused, the session kept.
    const raced = await reuse();
    assert.deepEqual([raced.status, raced.body.error_code], [401, 'invalid_grant']);
    assert.equal(await sessions(), 1);
    h.clock.advance(11_000);
    const reused = await reuse();
    assert.deepEqual([reused.status, reused.body.error_code], [401, 'invalid_grant']);
    assert.equal(await sessions(), 0);
    const unknown = await authApi(h, 'POST', '/token?grant_type=refresh_token', {
      body: { refresh_token: 'x'.repeat(40) },
    });
    assert.deepEqual([unknown.status, unknown.body.error_code], [401, 'invalid_grant']);
  });

  test('a guest sign-in over rate_limit_anonymous_users is 429 and creates no user, session or token', async () => {
    const count = async () =>
      (
        await sql`select (select count(*) from auth.users)::int + (select count(*) from auth.sessions)::int + (select count(*) from auth.refresh_tokens)::int as n`
      )[0]!.n;
    await configureAuth(h, { rate_limit_anonymous_users: 0 });
    try {
      const before = await count();
      const refused = await authApi(h, 'POST', '/signup', { body: {} });
      assert.deepEqual([refused.status, refused.body.error_code], [429, 'over_request_rate_limit']);
      assert.equal(await count(), before);
    } finally {
      await configureAuth(h, { rate_limit_anonymous_users: 30 });
    }
  });
});
