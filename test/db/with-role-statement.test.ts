// withRoleStatement sends the caller's settings as the driver's prelude: no BEGIN
// or COMMIT, one Sync after the two statements (scripts/patch-postgres.js). These
// tests hold it to the transaction withRole opens explicitly: the statement sees
// the caller (RLS, auth.uid(), claims, timeout, READ ONLY), and nothing of it is
// left on the connection afterwards. Every pool here has one connection, so each
// call runs on the connection the previous one used.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { type Caller, withRoleStatement } from '../../src/db/with-role.ts';
import { createProjectDb, type ProjectDb } from '../helpers/project-db.ts';

const USER_A = '00000000-0000-4000-8000-00000000000a';
const USER_B = '00000000-0000-4000-8000-00000000000b';
const user = (sub: string, email = `${sub.slice(-1)}@x.test`): Caller => ({
  role: 'authenticated',
  claims: { sub, role: 'authenticated', email },
});

let db: ProjectDb;
let sql: postgres.Sql;

before(async () => {
  db = await createProjectDb();
  const owner = postgres(db.ownerUrl, { max: 1, onnotice: () => {} });
  try {
    await owner.unsafe(`
      create table public.notes (id serial primary key, owner uuid not null, body text not null);
      alter table public.notes enable row level security;
      create policy own_notes on public.notes using (owner = auth.uid()) with check (owner = auth.uid());
      grant select, insert on public.notes to anon, authenticated, service_role;
      grant usage on sequence public.notes_id_seq to authenticated;
      insert into public.notes (owner, body) values ('${USER_A}', 'a1'), ('${USER_A}', 'a2'), ('${USER_B}', 'b1');`);
  } finally {
    await owner.end();
  }
  sql = postgres(db.adminUrl, { max: 1, onnotice: () => {} });
});

after(async () => {
  await sql?.end();
  await db?.drop();
});

const bodies = async (caller: Caller) =>
  (await withRoleStatement(sql, caller, 'select body from public.notes order by body', [], { readOnly: true })).map(
    (r) => r.body,
  );

describe('withRoleStatement (settings as a prelude, one implicit transaction)', () => {
  test('RLS sees the caller: each user their rows, anon none, service_role all, one connection throughout', async () => {
    assert.deepEqual(await bodies(user(USER_A)), ['a1', 'a2']);
    assert.deepEqual(await bodies(user(USER_B)), ['b1']);
    assert.deepEqual(await bodies({ role: 'anon', claims: { role: 'anon' } }), []);
    assert.deepEqual(await bodies({ role: 'service_role', claims: { role: 'service_role' } }), ['a1', 'a2', 'b1']);
    assert.deepEqual(await bodies(user(USER_A)), ['a1', 'a2']);
  });

  test('the statement sees role, claims, request settings and the 10 s timeout; the next statement sees none of them', async () => {
    const [row] = await withRoleStatement(
      sql,
      user(USER_A, 'a@x.test'),
      `select current_user as who, auth.uid()::text as uid, auth.role() as role, auth.jwt()->>'email' as email,
        current_setting('statement_timeout') as timeout, current_setting('request.method') as method,
        current_setting('request.path') as path, current_setting('request.headers')::json->>'x-test' as header,
        current_setting('transaction_read_only') as read_only, $1::int as n`,
      [7],
      { method: 'GET', path: '/rest/v1/notes', headers: { 'x-test': 'yes' }, readOnly: true },
    );
    assert.deepEqual(
      { ...row },
      {
        who: 'authenticated',
        uid: USER_A,
        role: 'authenticated',
        email: 'a@x.test',
        timeout: '10s',
        method: 'GET',
        path: '/rest/v1/notes',
        header: 'yes',
        read_only: 'on',
        n: 7,
      },
    );
    const [after] =
      await sql`select current_user as who, coalesce(current_setting('request.jwt.claims', true), '') as claims,
      current_setting('statement_timeout') as timeout, current_setting('transaction_read_only') as read_only`;
    assert.deepEqual({ ...after }, { who: 'postgres', claims: '', timeout: '0', read_only: 'off' });
  });

  test('readOnly refuses a write (25006); without it the write commits, under the caller and its policy', async () => {
    await assert.rejects(
      withRoleStatement(sql, user(USER_A), 'insert into public.notes (owner, body) values ($1, $2)', [USER_A, 'x'], {
        readOnly: true,
      }),
      (err: { code?: string }) => err.code === '25006',
    );
    await withRoleStatement(sql, user(USER_A), 'insert into public.notes (owner, body) values ($1, $2)', [
      USER_A,
      'a3',
    ]);
    assert.deepEqual(await bodies(user(USER_A)), ['a1', 'a2', 'a3']);
    // The policy's check runs as the caller: A cannot write B's row, and the failure leaves nothing behind.
    await assert.rejects(
      withRoleStatement(sql, user(USER_A), 'insert into public.notes (owner, body) values ($1, $2)', [USER_B, 'b2']),
      (err: { code?: string }) => err.code === '42501',
    );
    assert.deepEqual(await bodies(user(USER_B)), ['b1']);
  });

  test('a failed statement leaves the connection clean for the next caller', async () => {
    await assert.rejects(
      withRoleStatement(sql, user(USER_A), 'select * from public.no_such_table', []),
      (err: { code?: string }) => err.code === '42P01',
    );
    assert.deepEqual(await bodies(user(USER_B)), ['b1']);
    const [row] = await sql`select current_user as who`;
    assert.equal(row!.who, 'postgres');
  });

  test('concurrent callers on a shared pool each see their own rows', async () => {
    const shared = postgres(db.adminUrl, { max: 2, onnotice: () => {} });
    try {
      const seen = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          withRoleStatement(shared, user(i % 2 ? USER_A : USER_B), 'select count(*)::int as n from public.notes', [], {
            readOnly: true,
          }).then((rows) => [i % 2 ? 'A' : 'B', rows[0]!.n]),
        ),
      );
      const counts = new Map(seen.map(([who, n]) => [who, new Set([n])]));
      for (const [who, n] of seen) counts.get(who)!.add(n);
      assert.deepEqual([...counts.get('A')!], [3]);
      assert.deepEqual([...counts.get('B')!], [1]);
    } finally {
      await shared.end();
    }
  });

  test('a slow statement holds up no other: the next statement waits for a free connection, not behind it', async () => {
    const shared = postgres(db.adminUrl, { max: 2, onnotice: () => {} });
    try {
      await Promise.all([shared`select 1`, shared`select 1`]); // both connections open
      const order: string[] = [];
      const slow = withRoleStatement(shared, user(USER_A), 'select pg_sleep(1.5)', []).then(() => order.push('slow'));
      await new Promise((r) => setTimeout(r, 100)); // the slow one holds a connection
      const quick = Array.from({ length: 20 }, (_, i) =>
        withRoleStatement(shared, user(USER_B), 'select $1::int as i', [i]).then(() => order.push('quick')),
      );
      await Promise.all([slow, ...quick]);
      assert.equal(order.indexOf('slow'), 20, `every quick statement finished first: ${order.join(' ')}`);
    } finally {
      await shared.end();
    }
  });
});
