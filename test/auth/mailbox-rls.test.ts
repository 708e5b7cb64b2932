import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jwtVerify, createRemoteJWKSet } from 'jose';
import postgres from 'postgres';
import { purgeExpiredAuthRows } from '../../src/auth/maintenance.ts';
import { withRole } from '../../src/db/with-role.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { HANDLE_NEW_USER } from '../helpers/supabase-guides.ts';
import { authApi, client, codeIn, goodPassword, linkIn, uniqueEmail } from './helpers.ts';

let h: TestHearth;
let owner: postgres.Sql;
before(async () => {
  h = await startTestHearth();
  owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
  // Magic links need the redirect allowlist (SPEC 5).
  const res = await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, {
    body: { uri_allow_list: 'http://localhost:3000/**' },
  });
  assert.equal(res.status, 200);
});
after(async () => {
  await owner?.end();
  await h?.close();
});

async function mailbox(): Promise<{ to: string; subject: string; body: string }[]> {
  const res = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/mailbox`);
  assert.equal(res.status, 200);
  return res.body;
}

async function mailTo(to: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const m = (await mailbox()).find((x) => x.to === to);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} in the development mailbox`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('development mailbox (no smtp_host)', () => {
  test('/otp mail is kept in the mailbox the management API lists, and its code signs in', async () => {
    const email = uniqueEmail('dev');
    const sb = client(h);
    assert.equal((await sb.auth.signInWithOtp({ email })).error, null);
    const mail = await mailTo(email);
    assert.match(mail.subject, /sign-in code/);
    const { data, error } = await sb.auth.verifyOtp({ email, token: codeIn(mail), type: 'email' });
    assert.equal(error, null);
    assert.equal(data.user!.email, email);
  });

  test('an app can redeem the link token by POST /verify {type, token_hash}', async () => {
    const email = uniqueEmail('hash');
    await authApi(h, 'POST', '/otp', { body: { email } });
    const token = new URL(linkIn(await mailTo(email))).searchParams.get('token')!;
    const res = await authApi(h, 'POST', '/verify', { body: { type: 'magiclink', token_hash: token } });
    assert.equal(res.status, 200);
    assert.equal(res.body.user.email, email);
    const again = await authApi(h, 'POST', '/verify', { body: { type: 'magiclink', token_hash: token } });
    assert.equal(again.status, 403);
    assert.equal(again.body.error.code, 'otp_expired');
    assert.equal(again.body.msg, 'Email link is invalid or has expired');
  });

  test('the mailbox needs a management session; project keys are refused', async () => {
    const res = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/mailbox`, { token: h.info.SECRET_KEY });
    assert.equal(res.status, 401);
    const none = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/mailbox`, { token: null });
    assert.equal(none.status, 401);
    const unknown = await h.api('GET', '/v1/projects/abcdefghijabcdefghij/mailbox');
    assert.equal(unknown.status, 404);
    const badLimit = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/mailbox?limit=0`);
    assert.equal(badLimit.status, 400);
  });

  test('without a mailer an e-mail change applies at once and a notice lands in the mailbox', async () => {
    const password = goodPassword();
    const sb = client(h);
    await sb.auth.signUp({ email: uniqueEmail(), password });
    const fresh = uniqueEmail('fresh');
    const upd = await sb.auth.updateUser({ email: fresh, current_password: password } as never);
    assert.equal(upd.error, null);
    assert.equal(upd.data.user!.email, fresh);
    assert.match((await mailTo(fresh)).subject, /changed/);
  });
});

describe('row-level security with auth.uid()', () => {
  test('two users see only their own rows', async () => {
    await owner.unsafe(`
      create table public.notes (id serial primary key, owner uuid not null default auth.uid() references auth.users (id), body text not null);
      alter table public.notes enable row level security;
      create policy own_notes on public.notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());`);
    const jwks = createRemoteJWKSet(new URL(`${h.info.BASE_URL}/auth/v1/.well-known/jwks.json`));
    const users = [];
    for (const name of ['alice', 'bob']) {
      const { data } = await client(h).auth.signUp({ email: uniqueEmail(name), password: goodPassword() });
      const { payload } = await jwtVerify(data.session!.access_token, jwks, { currentDate: h.clock.now() });
      users.push({
        name,
        id: data.user!.id,
        caller: { role: 'authenticated' as const, claims: payload as Record<string, unknown> },
      });
    }
    const project = (await h.hearth.registry.defaultProject())!;
    for (const u of users) {
      await withRole(
        project.sql,
        u.caller,
        (tx) => tx`insert into public.notes (body) values (${`note of ${u.name}`})`,
      );
    }
    for (const u of users) {
      const rows = await withRole(project.sql, u.caller, (tx) => tx`select owner, body from public.notes`);
      assert.deepEqual(
        rows.map((r) => [r.owner, r.body]),
        [[u.id, `note of ${u.name}`]],
      );
    }
    const [alice, bob] = users;
    await assert.rejects(
      withRole(
        project.sql,
        alice!.caller,
        (tx) => tx`insert into public.notes (owner, body) values (${bob!.id}, 'forged')`,
      ),
      /row-level security/,
    );
    const anon = await withRole(
      project.sql,
      { role: 'anon', claims: { role: 'anon' } },
      (tx) => tx`select * from public.notes`,
    );
    assert.equal(anon.length, 0);
  });

  test("the owner's triggers on auth.users: Supabase's handle_new_user makes a profile per sign-up; a before-insert check refuses one", async () => {
    // Word for word as Supabase's user-management guide writes it, over the owner's own connection.
    await owner.unsafe(`
      create table public.profiles (id uuid not null references auth.users on delete cascade primary key, full_name text, avatar_url text);
      ${HANDLE_NEW_USER}`);
    const email = uniqueEmail('profiled');
    // Every column but the password hash is readable (app metadata feeds is_admin()-style checks).
    const { data, error } = await client(h).auth.signUp({
      email,
      password: goodPassword(),
      options: { data: { full_name: 'Ada Lovelace', avatar_url: 'ada.png' } },
    });
    assert.equal(error, null);
    const [row] =
      await owner`select raw_app_meta_data, email_confirmed_at, banned_until from auth.users where id = ${data.user!.id}`;
    assert.deepEqual(row!.raw_app_meta_data, { provider: 'email', providers: ['email'] });
    await assert.rejects(owner`select encrypted_password from auth.users limit 1`, /permission denied/);
    assert.deepEqual(
      [...(await owner`select id, full_name, avatar_url from public.profiles where id = ${data.user!.id}`)],
      [{ id: data.user!.id, full_name: 'Ada Lovelace', avatar_url: 'ada.png' }],
    );

    await owner.unsafe(`
      create function public.only_example_com() returns trigger language plpgsql as $$
      begin
        if new.email not like '%@example.com' then raise exception 'sign-ups are for example.com addresses'; end if;
        return new;
      end $$;
      create trigger only_example_com before insert on auth.users for each row execute function public.only_example_com();`);
    const refused = await authApi(h, 'POST', '/signup', {
      body: { email: 'someone@elsewhere.org', password: goodPassword() },
    });
    assert.equal(refused.status, 500);
    // GoTrue's answer, the text people search for.
    assert.equal(refused.body.error_code, 'unexpected_failure');
    assert.equal(refused.body.msg, 'Database error saving new user');
    assert.equal(
      (await owner`select count(*)::int as n from auth.users where email = 'someone@elsewhere.org'`)[0]!.n,
      0,
    );
    // Supabase's other columns are there for SQL written against them (a trigger reading new.phone).
    assert.deepEqual(
      {
        ...(
          await owner`select aud, role, instance_id, phone, confirmed_at is not distinct from email_confirmed_at as same,
            is_sso_user from auth.users where id = ${data.user!.id}`
        )[0],
      },
      {
        aud: 'authenticated',
        role: 'authenticated',
        instance_id: '00000000-0000-0000-0000-000000000000',
        phone: null,
        same: true,
        is_sso_user: false,
      },
    );
    // A unique index a trigger writes to is the trigger's failure, not a taken e-mail.
    await owner.unsafe(`
      drop function public.only_example_com() cascade;
      create table public.handles (handle text unique);
      create function public.one_handle() returns trigger language plpgsql security definer as $$
      begin insert into public.handles values (new.raw_user_meta_data->>'handle'); return new; end $$;
      create trigger one_handle after insert on auth.users for each row execute function public.one_handle();`);
    const first = await authApi(h, 'POST', '/signup', {
      body: { email: uniqueEmail('handle'), password: goodPassword(), data: { handle: 'ada' } },
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const second = await authApi(h, 'POST', '/signup', {
      body: { email: uniqueEmail('handle'), password: goodPassword(), data: { handle: 'ada' } },
    });
    assert.equal(second.status, 500);
    assert.equal(second.body.error_code, 'unexpected_failure');
    await owner.unsafe('drop function public.one_handle() cascade; drop table public.handles');
    await owner.unsafe(`create function public.only_example_com() returns trigger language plpgsql as $$ begin return new; end $$;
      create trigger only_example_com before insert on auth.users for each row execute function public.only_example_com();`);
    // DROP TRIGGER needs the table's owner; dropping the trigger's function with cascade removes it.
    await assert.rejects(owner.unsafe('drop trigger only_example_com on auth.users'), /must be owner/);
    await owner.unsafe(`
      create or replace trigger on_auth_user_created after insert on auth.users for each row execute procedure public.handle_new_user();
      drop function public.only_example_com() cascade;
      drop function public.handle_new_user() cascade;`);
    const left = await owner`select tgname from pg_trigger where tgrelid = 'auth.users'::regclass and not tgisinternal`;
    assert.deepEqual([...left], []);
  });

  test("a deleted user's still-valid access token gets 403 user_not_found on /user (GoTrue's answer)", async () => {
    const { data } = await client(h).auth.signUp({ email: uniqueEmail('gone'), password: goodPassword() });
    const project = (await h.hearth.registry.defaultProject())!;
    await project.sql`delete from auth.users where id = ${data.user!.id}`;
    const res = await authApi(h, 'GET', '/user', { token: data.session!.access_token });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'user_not_found');
  });
});

describe('maintenance', () => {
  test('purgeExpiredAuthRows removes sessions whose refresh tokens all expired, and stale codes', async () => {
    const { data } = await client(h).auth.signUp({ email: uniqueEmail('old'), password: goodPassword() });
    const codeTo = uniqueEmail('oldcode');
    await authApi(h, 'POST', '/otp', { body: { email: codeTo } });
    await mailTo(codeTo); // the code row is written before the mail, after the answer
    const project = (await h.hearth.registry.defaultProject())!;
    const later = new Date(h.clock.now().getTime() + 31 * 86400_000);
    const purged = await purgeExpiredAuthRows(project, later);
    assert.ok(purged.sessions >= 1 && purged.tokens >= 1, JSON.stringify(purged));
    const [left] = await project.sql`select count(*)::int as n from auth.sessions where user_id = ${data.user!.id}`;
    assert.equal(left!.n, 0);
  });
});
