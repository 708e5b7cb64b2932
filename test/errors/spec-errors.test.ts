/**
 * SPEC 7 (and every other place in SPEC that names an error) provoked the way
 * a user would: over HTTP (SQL for queues), asserting the status, the code in
 * the area's envelope (SPEC 2.16) and, wherever the request would have
 * written, that nothing was written. "Nothing" is a digest of every row of
 * every table a refused request could touch, plus the stored object files and
 * the capture triggers, taken before and after. docs/errors.md maps each code
 * to the test that proves it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { goodPassword, uniqueEmail } from '../auth/helpers.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { storedFiles } from '../storage/setup.ts';
import { enableWorkflows } from '../workflows/helpers.ts';

let h: TestHearth;
let owner: postgres.Sql;
let ref: string;

before(async () => {
  // Role api: no engine, scheduler or maintenance runs beside the requests, so
  // any change between two snapshots was made by the request itself.
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api' } });
  ref = h.info.PROJECT_REF;
  owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
  await owner.unsafe(`
    create table public.authors (id int primary key, name text not null);
    create table public.posts (id int primary key, title text not null,
      author_id int references public.authors (id), editor_id int references public.authors (id));
    create table public.tags (id int primary key, name text not null);
    create table public.post_tags (post_id int references public.posts (id), tag_id int references public.tags (id), primary key (post_id, tag_id));
    create table public.logs (msg text not null);
    create table public.orders (id serial primary key, status text);
    create table public.notes (id int primary key);
    alter table public.notes enable row level security;
    insert into public.authors values (1, 'Ada'), (2, 'Grace');
    insert into public.posts values (1, 'one', 1, 2), (2, 'two', 2, 1);
    insert into public.logs values ('kept'), ('also kept');
    select pgmq.create('jobs');`);
});
after(async () => {
  await owner?.end();
  await h?.close();
});

const PROJECT_TABLES = [
  'auth.users',
  'auth.identities',
  'auth.mfa_factors',
  'auth.mfa_challenges',
  'auth.sessions',
  'auth.refresh_tokens',
  'auth.one_time_tokens',
  'auth.flow_state',
  'storage.buckets',
  'storage.objects',
  'storage.pending_bytes',
  'pgmq.meta',
  'public.authors',
  'public.posts',
  'public.tags',
  'public.post_tags',
  'public.logs',
  'public.orders',
  'public.notes',
];
const CONTROL_TABLES = [
  'platform.workflow_definitions',
  'platform.workflow_runs',
  'platform.workflow_run_steps',
  'platform.workflow_signals',
  'platform.workflow_queue_triggers',
  'platform.workflow_row_triggers',
  'platform.cron_jobs',
];

/** Every row of every table a refused request could write, as one digest per table. */
async function snapshot(): Promise<Record<string, unknown>> {
  const project = h.hearth.p.dbs.project(h.hearth.project.db_name);
  const control = h.hearth.p.dbs.control;
  const digest = async (sql: postgres.Sql, table: string) =>
    (await sql`select md5(coalesce(string_agg(t::text, E'\n' order by t::text), '')) as d from ${sql(table)} t`)[0]!
      .d as string;
  const out: Record<string, unknown> = {};
  for (const t of PROJECT_TABLES) out[t] = await digest(project, t);
  for (const t of CONTROL_TABLES) out[t] = await digest(control, t);
  out.triggers = (
    await project`select coalesce(string_agg(tgname, ',' order by tgname), '') as t from pg_trigger where not tgisinternal`
  )[0]!.t;
  out.files = storedFiles(h).length;
  return out;
}

/** Runs a refused request and asserts it changed nothing. */
async function refusedWithoutWrites<T>(what: string, request: () => Promise<T>): Promise<T> {
  const before = await snapshot();
  const res = await request();
  const now = await snapshot();
  assert.deepEqual(
    Object.keys(before).filter((k) => now[k] !== before[k]),
    [],
    `${what}: the refused request changed these`,
  );
  return res;
}

const authCall = (method: string, path: string, o: { body?: unknown; token?: string } = {}) =>
  h.api(method, `/auth/v1${path}`, { body: o.body, token: o.token ?? h.info.PUBLISHABLE_KEY });

describe('auth (SPEC 4.1, 5, 7, 8): {error: {code, message}}', () => {
  let session: { access_token: string; user: { id: string } };
  let email: string;
  let password: string;
  before(async () => {
    email = uniqueEmail('errors');
    password = goodPassword();
    const res = await authCall('POST', '/signup', { body: { email, password } });
    assert.equal(res.status, 201);
    session = res.body;
  });

  test('each refusal has its status and code and writes nothing', async () => {
    const put = (body: unknown) => () => authCall('PUT', '/user', { token: session.access_token, body });
    const cases: [string, () => Promise<{ status: number; body: any }>, number, string | null][] = [
      [
        'sign-up with a breached password',
        () => authCall('POST', '/signup', { body: { email: uniqueEmail(), password: 'password123' } }),
        400,
        'leaked_password',
      ],
      [
        'sign-up with an existing e-mail',
        () => authCall('POST', '/signup', { body: { email, password: goodPassword() } }),
        409,
        'email_taken',
      ],
      [
        'sign-up with a 9-character password',
        () => authCall('POST', '/signup', { body: { email: uniqueEmail(), password: 'Short-pw1' } }),
        422,
        'weak_password',
      ],
      [
        'password change without current_password',
        put({ password: goodPassword(), data: { plan: 'pro' } }),
        400,
        'reauthentication_required',
      ],
      [
        'e-mail change without current_password',
        put({ email: uniqueEmail(), data: { plan: 'pro' } }),
        400,
        'reauthentication_required',
      ],
      [
        'password change with a wrong current_password',
        put({ password: goodPassword(), current_password: 'wrong-password-1', data: { plan: 'pro' } }),
        401,
        'invalid_current_password',
      ],
      [
        'e-mail change with a wrong current_password',
        put({ email: uniqueEmail(), current_password: 'wrong-password-1', data: { plan: 'pro' } }),
        401,
        'invalid_current_password',
      ],
      [
        'password change to a breached password',
        put({ password: 'password123', current_password: password, data: { plan: 'pro' } }),
        400,
        'leaked_password',
      ],
      [
        'an e-mail code for a new address with redirect_to off the allowlist',
        () =>
          authCall('POST', `/otp?redirect_to=${encodeURIComponent('http://evil.test/')}`, {
            body: { email: uniqueEmail() },
          }),
        400,
        'bad_redirect',
      ],
      [
        'a passkey enrolment before rpId and origins are set',
        () =>
          authCall('POST', '/factors', {
            token: session.access_token,
            body: { factor_type: 'webauthn', friendly_name: 'key' },
          }),
        422,
        'webauthn_not_configured',
      ],
      [
        'passkey sign-in options before rpId and origins are set',
        () => h.api('POST', '/auth/v1/webauthn/authenticate/options', { token: null, body: {} }),
        422,
        'webauthn_not_configured',
      ],
    ];
    for (const [what, request, status, code] of cases) {
      const res = await refusedWithoutWrites(what, request);
      assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(typeof res.body.error.code, 'string', what);
      assert.equal(typeof res.body.error.message, 'string', what);
      if (code) assert.equal(res.body.error.code, code, what);
    }
    assert.equal(
      (await authCall('POST', '/token?grant_type=password', { body: { email, password } })).status,
      200,
      'the old password still signs in',
    );
  });

  test('a refresh token used a second time is 401 invalid_grant', async () => {
    const signIn = await authCall('POST', '/token?grant_type=password', { body: { email, password } });
    assert.equal(signIn.status, 200);
    const refresh = () =>
      authCall('POST', '/token?grant_type=refresh_token', { body: { refresh_token: signIn.body.refresh_token } });
    assert.equal((await refresh()).status, 200);
    const again = await refresh();
    assert.equal(again.status, 401);
    assert.equal(again.body.error.code, 'invalid_grant');
  });

  // SPEC 7's notes: refusals whose status SPEC does not show.
  test('a disabled social provider is 400 provider_disabled; a code after five wrong tries is 429 otp_locked', async () => {
    const provider = await refusedWithoutWrites('disabled provider', () =>
      authCall('GET', '/authorize?provider=github'),
    );
    assert.equal(provider.status, 400);
    assert.equal(provider.body.error.code, 'provider_disabled');
    const address = uniqueEmail('locked');
    assert.equal((await authCall('POST', '/otp', { body: { email: address } })).status, 200);
    // The code is issued after the answer, with its mail.
    const project = h.hearth.p.dbs.project(h.hearth.project.db_name);
    const issued = await until(
      async () =>
        (await project`select count(*)::int as n from auth.one_time_tokens where email = ${address}`)[0]!.n as number,
      (n) => n > 0,
    );
    assert.equal(issued, 1);
    const verify = () => authCall('POST', '/verify', { body: { type: 'email', email: address, token: '000000' } });
    for (let i = 0; i < 5; i++) assert.equal((await verify()).status, 403);
    const locked = await verify();
    assert.equal(locked.status, 429);
    assert.equal(locked.body.error.code, 'otp_locked');
  });

  test('a bad magic link is a 302 with error=access_denied&error_code=otp_expired and changes nothing', async () => {
    const res = await refusedWithoutWrites('bad magic link', () =>
      fetch(`${h.info.BASE_URL}/auth/v1/verify?type=magiclink&token=not-a-real-token`, { redirect: 'manual' }),
    );
    assert.equal(res.status, 302);
    const fragment = new URLSearchParams(new URL(res.headers.get('location')!).hash.slice(1));
    assert.equal(fragment.get('error'), 'access_denied');
    assert.equal(fragment.get('error_code'), 'otp_expired');
  });
});

describe('storage (SPEC 4.2, 5, 7, 8): {error: {code, message}}', () => {
  const upload = (path: string, body: string | Buffer, token = h.info.SECRET_KEY) =>
    h.api('POST', `/storage/v1/object/${path}`, {
      raw: body as string,
      token,
      headers: { 'content-type': 'text/plain' },
    });

  before(async () => {
    assert.equal(
      (
        await h.api('POST', '/storage/v1/bucket', {
          token: h.info.SECRET_KEY,
          body: { name: 'private-files', public: false },
        })
      ).status,
      200,
    );
    assert.equal((await upload('private-files/report.txt', 'first')).status, 201);
  });

  test('other bytes under an existing name are 409; a private bucket without a policy refuses with the RLS message; neither writes', async () => {
    const other = await refusedWithoutWrites('409 upload', () => upload('private-files/report.txt', 'second'));
    assert.equal(other.status, 409);
    assert.equal(other.body.error.code, 'duplicate');
    const denied = await refusedWithoutWrites('RLS upload', () =>
      upload('private-files/mine.txt', 'x', h.info.PUBLISHABLE_KEY),
    );
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'row_level_security');
    assert.equal(denied.body.error.message, 'new row violates row-level security policy');
    const bucket = await refusedWithoutWrites('bucket by the publishable key', () =>
      h.api('POST', '/storage/v1/bucket', { token: h.info.PUBLISHABLE_KEY, body: { name: 'mine', public: true } }),
    );
    assert.equal(bucket.status, 403);
    assert.equal(bucket.body.error.code, 'forbidden');
  });

  test('a tampered signed URL is 400', async () => {
    const signed = await h.api('POST', '/storage/v1/object/sign/private-files/report.txt', {
      token: h.info.SECRET_KEY,
      body: { expiresIn: 60 },
    });
    assert.equal(signed.status, 200);
    const url = new URL(`${h.info.BASE_URL}/storage/v1${signed.body.signedURL}`);
    url.searchParams.set('token', `${url.searchParams.get('token')!}x`);
    const res = await fetch(url);
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, 'invalid_signature');
  });

  test('an upload over the project quota is 422 quota_exceeded and writes nothing', async () => {
    const config = `/v1/projects/${ref}/config/storage`;
    const [usage] = await h.hearth.p.dbs.project(h.hearth.project.db_name)`select bytes from storage.usage`;
    assert.equal((await h.api('PATCH', config, { body: { quota_bytes: Number(usage!.bytes) + 10 } })).status, 200);
    try {
      const res = await refusedWithoutWrites('over quota', () => upload('private-files/big.txt', 'x'.repeat(11)));
      assert.equal(res.status, 422);
      assert.equal(res.body.error.code, 'quota_exceeded');
    } finally {
      await h.api('PATCH', config, { body: { quota_bytes: null } });
    }
  });
});

describe('data (SPEC 4.3, 7): flat {message, code, details, hint}', () => {
  const rest = (
    method: string,
    path: string,
    o: { body?: unknown; headers?: Record<string, string>; token?: string } = {},
  ) =>
    h.api(method, `/rest/v1/${path}`, { body: o.body, headers: o.headers, token: o.token ?? h.info.PUBLISHABLE_KEY });
  const OBJECT = { accept: 'application/vnd.pgrst.object+json' };

  function assertEnvelope(body: any, code: string, what: string) {
    assert.deepEqual(Object.keys(body).sort(), ['code', 'details', 'hint', 'message'], what);
    assert.equal(body.code, code, what);
    assert.ok(body.message.length > 10, what);
  }

  test('embedding and spread refusals are 400 over HTTP', async () => {
    const cases: [string, string, RegExp][] = [
      ['posts?select=id,authors(name)', 'PGRST201', /posts_author_id_fkey[\s\S]*posts_editor_id_fkey/],
      ['posts?select=id,authors!nope(name)', 'PGRST200', /'posts' and 'authors'/],
      ['posts?select=id,tags(name)', 'PGRST127', /many-to-many/],
      ['authors?select=name,...posts!author_id(title)', 'PGRST119', /spread/],
      ['posts?select=id,...authors!author_id(name)&authors.order=name', 'PGRST119', /spread/],
      ['posts?select=id,...authors!author_id(name)&authors.limit=1', 'PGRST119', /spread/],
      ['posts?select=id,...authors!author_id(name)&authors.offset=1', 'PGRST119', /spread/],
    ];
    for (const [query, code, text] of cases) {
      const res = await rest('GET', query);
      assert.equal(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
      assertEnvelope(res.body, code, query);
      assert.match(JSON.stringify(res.body), text, query);
    }
  });

  test('an upsert on a table without a primary key and no on_conflict is 400 and writes nothing', async () => {
    const res = await refusedWithoutWrites('upsert without key', () =>
      rest('POST', 'logs', { body: { msg: 'x' }, headers: { prefer: 'resolution=merge-duplicates' } }),
    );
    assert.equal(res.status, 400);
    assertEnvelope(res.body, 'PGRST100', 'upsert');
    assert.match(res.body.message, /no primary key and no on_conflict/);
  });

  test('Accept: object with other than one row is 406 PGRST116, and a write that asked for it is undone', async () => {
    const cases: [string, string, unknown][] = [
      ['GET', 'authors', undefined],
      ['GET', 'authors?id=eq.99', undefined],
      ['PATCH', 'authors?id=in.(1,2)', { name: 'renamed' }],
      ['DELETE', 'logs?msg=like.*kept', undefined],
      ['DELETE', 'authors?id=eq.99', undefined],
      ['POST', 'logs', [{ msg: 'a' }, { msg: 'b' }]],
    ];
    for (const [method, path, body] of cases) {
      const res = await refusedWithoutWrites(`${method} ${path}`, () =>
        rest(method, path, { body, token: h.info.SECRET_KEY, headers: { ...OBJECT, prefer: 'return=representation' } }),
      );
      assert.equal(res.status, 406, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assertEnvelope(res.body, 'PGRST116', `${method} ${path}`);
    }
  });

  test('PATCH or DELETE without a filter is refused and writes nothing', async () => {
    for (const method of ['PATCH', 'DELETE']) {
      const res = await refusedWithoutWrites(method, () =>
        rest(method, 'logs', { body: method === 'PATCH' ? { msg: 'all' } : undefined, token: h.info.SECRET_KEY }),
      );
      assert.ok(res.status >= 400 && res.status < 500, `${method}: ${res.status}`);
      assertEnvelope(res.body, '21000', method);
    }
  });

  test('a row-security denial is 42501 with a generic text: 401 for the publishable key, 403 for a user', async () => {
    const signUp = await h.api('POST', '/auth/v1/signup', {
      token: h.info.PUBLISHABLE_KEY,
      body: { email: uniqueEmail('rls'), password: goodPassword() },
    });
    assert.equal(signUp.status, 201);
    for (const [token, status] of [
      [h.info.PUBLISHABLE_KEY, 401],
      [signUp.body.access_token, 403],
    ] as const) {
      const res = await refusedWithoutWrites(`insert as ${status}`, () =>
        rest('POST', 'notes', { body: { id: 1 }, token }),
      );
      assert.equal(res.status, status, JSON.stringify(res.body));
      assertEnvelope(res.body, '42501', `insert as ${status}`);
      assert.equal(res.body.details, null);
    }
  });

  test('a database error is generic for the publishable key, detailed for the secret key; a failing batch writes no row', async () => {
    const batch = [
      { id: 10, title: 'fine' },
      { id: 11, title: null },
    ];
    const anon = await refusedWithoutWrites('anon batch', () => rest('POST', 'posts', { body: batch }));
    assert.equal(anon.status, 400);
    assert.deepEqual(anon.body, {
      code: '23502',
      message: 'A required value is missing: a column that cannot be null was null.',
      details: null,
      hint: null,
    });
    const secret = await refusedWithoutWrites('secret batch', () =>
      rest('POST', 'posts', { body: batch, token: h.info.SECRET_KEY }),
    );
    assert.equal(secret.status, 400);
    assert.equal(secret.body.code, '23502');
    assert.match(secret.body.message, /"title"/);
    assert.notEqual(secret.body.details, null);
  });
});

describe('queues (SPEC 2.15, 4.4, 8): SQL errors', () => {
  test('an invalid queue name is 22023 and creates nothing; a missing queue is 42P01', async () => {
    for (const name of ['Jobs', 'service-jobs', '1jobs', 'a'.repeat(49)]) {
      const err = await refusedWithoutWrites(name, () =>
        owner`select pgmq.create(${name})`.then(
          () => null,
          (e: { code: string; message: string }) => e,
        ),
      );
      assert.equal(err?.code, '22023', name);
      assert.match(err!.message, /invalid queue name/);
    }
    const missing = await owner`select pgmq.send('missing', '{}')`.then(
      () => null,
      (e: { code: string }) => e,
    );
    assert.equal(missing?.code, '42P01');
  });
});

describe('workflows management (SPEC 4.6, 7): {error: {code, message}}', () => {
  const base = () => `/v1/projects/${ref}/workflows`;
  const qBase = () => `/v1/projects/${ref}/workflow-queue-triggers`;
  const rBase = () => `/v1/projects/${ref}/workflow-row-triggers`;
  const SQL = { key: 'one', kind: 'sql', target: 'select 1' };
  let live: string;
  let finished: string;
  let developer: string;

  before(async () => {
    await enableWorkflows(h);
    for (const [name, enabled] of [
      ['orders', true],
      ['audit', true],
      ['off', false],
    ] as const) {
      assert.equal((await h.api('PUT', `${base()}/${name}`, { body: { enabled, steps: [SQL] } })).status, 201);
    }
    live = (await h.api('POST', `${base()}/orders/runs`, { body: {} })).body.id;
    finished = (await h.api('POST', `${base()}/orders/runs`, { body: {} })).body.id;
    assert.equal((await h.api('POST', `${base()}/orders/runs/${finished}/cancel`)).status, 200);
    assert.equal((await h.api('POST', qBase(), { body: { queue: 'jobs', workflow: 'orders' } })).status, 201);
    assert.equal(
      (await h.api('POST', rBase(), { body: { table: 'orders', events: ['insert'], workflow: 'orders' } })).status,
      201,
    );
    const orgs = await h.api('GET', '/v1/organizations');
    await h.api('POST', `/v1/organizations/${orgs.body[0].id}/members`, {
      body: { email: 'dev@errors.test', password: 'a-long-password', role: 'developer' },
    });
    developer = (
      await h.api('POST', '/v1/login', { body: { email: 'dev@errors.test', password: 'a-long-password' }, token: null })
    ).body.access_token;
  });

  test('each refusal has its status and code and writes nothing', async () => {
    const none = '00000000-0000-0000-0000-000000000000';
    const json = { 'content-type': 'application/json' };
    const text = { 'content-type': 'text/plain' };
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    type Call = { body?: unknown; raw?: string; headers?: Record<string, string>; token?: string | null };
    const cases: [string, string, () => string, Call, number, string][] = [
      [
        'bad sleep_for',
        'PUT',
        () => `${base()}/orders`,
        { body: { steps: [{ key: 's', kind: 'sleep', sleep_for: 'soon' }] } },
        400,
        'invalid_definition',
      ],
      [
        'a rule broken deep in a fan-out',
        'PUT',
        () => `${base()}/orders`,
        {
          body: {
            steps: [SQL, { key: 'f', kind: 'fanout', children: [{ key: 'c', kind: 'sleep', sleep_for: '1s' }] }],
          },
        },
        400,
        'invalid_definition',
      ],
      ['malformed workflow name', 'PUT', () => `${base()}/Bad.Name`, { body: { steps: [SQL] } }, 400, 'invalid_name'],
      [
        'reserved queue prefix',
        'POST',
        qBase,
        { body: { queue: 'service_jobs', workflow: 'audit' } },
        400,
        'invalid_queue',
      ],
      ['malformed queue name', 'POST', qBase, { body: { queue: 'Jobs', workflow: 'audit' } }, 400, 'invalid_queue'],
      [
        'malformed workflow in a queue binding',
        'POST',
        qBase,
        { body: { queue: 'jobs', workflow: 'Bad Name' } },
        400,
        'invalid_workflow',
      ],
      [
        'malformed table',
        'POST',
        rBase,
        { body: { table: 'no such', events: ['insert'], workflow: 'audit' } },
        400,
        'invalid_table',
      ],
      [
        'a table that does not exist',
        'POST',
        rBase,
        { body: { table: 'missing', events: ['insert'], workflow: 'audit' } },
        400,
        'invalid_table',
      ],
      ['no events', 'POST', rBase, { body: { table: 'orders', events: [], workflow: 'audit' } }, 400, 'invalid_events'],
      [
        'nested filter',
        'POST',
        rBase,
        { body: { table: 'orders', events: ['insert'], filter: { status: { in: [1] } }, workflow: 'audit' } },
        400,
        'invalid_filter',
      ],
      [
        'filter on a missing column',
        'POST',
        rBase,
        { body: { table: 'orders', events: ['insert'], filter: { nope: 1 }, workflow: 'audit' } },
        400,
        'invalid_filter',
      ],
      [
        'a platform table (auth.users)',
        'POST',
        rBase,
        { body: { table: 'auth.users', events: ['insert'], workflow: 'audit' } },
        400,
        'invalid_table',
      ],
      [
        'the capture table itself',
        'POST',
        rBase,
        { body: { table: 'hearth_workflows.changes', events: ['insert'], workflow: 'audit' } },
        400,
        'invalid_table',
      ],
      [
        'a NUL in a filter value',
        'POST',
        rBase,
        { body: { table: 'orders', events: ['insert'], filter: { status: 'a\u0000' }, workflow: 'audit' } },
        400,
        'invalid_filter',
      ],
      [
        'a NUL in a step payload',
        'PUT',
        () => `${base()}/orders`,
        { body: { steps: [{ ...SQL, payload: { note: 'a\u0000b' } }] } },
        400,
        'invalid_definition',
      ],
      [
        'an unpaired surrogate in a step target',
        'PUT',
        () => `${base()}/orders`,
        { raw: '{"steps": [{"key": "one", "kind": "sql", "target": "select \'\\ud800\'"}]}', headers: json },
        400,
        'invalid_definition',
      ],
      [
        'a step payload nested 5,000 deep',
        'PUT',
        () => `${base()}/orders`,
        {
          raw: `{"steps": [{"key": "one", "kind": "sql", "target": "select 1", "payload": ${deep(5000)}}]}`,
          headers: json,
        },
        400,
        'invalid_definition',
      ],
      [
        'malformed signal name',
        'POST',
        () => `${base()}/orders/runs/${live}/signals`,
        { body: { signal: 'no spaces' } },
        400,
        'invalid_signal',
      ],
      [
        'malformed JSON',
        'PUT',
        () => `${base()}/orders`,
        { raw: '{"steps": [', headers: json },
        400,
        'invalid_request',
      ],
      ['PATCH without enabled', 'PATCH', () => `${base()}/off`, { body: {} }, 400, 'invalid_request'],
      [
        'run input that is not JSON',
        'POST',
        () => `${base()}/orders/runs`,
        { raw: 'input=1', headers: text },
        400,
        'invalid_request',
      ],
      [
        'idempotency key over 200 characters',
        'POST',
        () => `${base()}/orders/runs`,
        { body: { idempotency_key: 'k'.repeat(201) } },
        400,
        'invalid_request',
      ],
      [
        'signal payload that is not JSON',
        'POST',
        () => `${base()}/orders/runs/${live}/signals`,
        { raw: 'go', headers: text },
        400,
        'invalid_request',
      ],
      [
        'a NUL in the run input',
        'POST',
        () => `${base()}/orders/runs`,
        { body: { input: { note: 'a\u0000' } } },
        400,
        'invalid_request',
      ],
      [
        'an unpaired surrogate in a run input key',
        'POST',
        () => `${base()}/orders/runs`,
        { raw: '{"input": {"\\udc00": 1}}', headers: json },
        400,
        'invalid_request',
      ],
      [
        'a run input nested 5,000 deep',
        'POST',
        () => `${base()}/orders/runs`,
        { raw: `{"input": ${deep(5000)}}`, headers: json },
        400,
        'invalid_request',
      ],
      [
        'a NUL in a run idempotency key',
        'POST',
        () => `${base()}/orders/runs`,
        { body: { idempotency_key: 'a\u0000' } },
        400,
        'invalid_request',
      ],
      [
        'a NUL in a signal payload',
        'POST',
        () => `${base()}/orders/runs/${live}/signals`,
        { body: { signal: 'go', payload: '\u0000' } },
        400,
        'invalid_request',
      ],
      [
        'a signal payload nested 5,000 deep',
        'POST',
        () => `${base()}/orders/runs/${live}/signals`,
        { raw: `{"signal": "go", "payload": ${deep(5000)}}`, headers: json },
        400,
        'invalid_request',
      ],
      [
        'a NUL in a signal idempotency key',
        'POST',
        () => `${base()}/orders/runs/${live}/signals`,
        { body: { signal: 'go', idempotency_key: 'k\u0000' } },
        400,
        'invalid_request',
      ],
      [
        'signal payload over 32 KiB',
        'POST',
        () => `${base()}/orders/runs/${live}/signals`,
        { body: { signal: 'go', payload: 'x'.repeat(32 * 1024) } },
        400,
        'invalid_request',
      ],
      ['no bearer token', 'POST', () => `${base()}/orders/runs`, { body: {}, token: null }, 401, 'unauthorized'],
      [
        'an invalid session',
        'POST',
        () => `${base()}/orders/runs`,
        { body: {}, token: 'not-a-session' },
        401,
        'unauthorized',
      ],
      [
        'a project secret key',
        'POST',
        () => `${base()}/orders/runs`,
        { body: {}, token: h.info.SECRET_KEY },
        401,
        'unauthorized',
      ],
      [
        'a developer, not an owner or admin',
        'POST',
        () => `${base()}/orders/runs`,
        { body: {}, token: developer },
        403,
        'forbidden',
      ],
      [
        'a developer publishing',
        'PUT',
        () => `${base()}/orders`,
        { body: { steps: [SQL] }, token: developer },
        403,
        'forbidden',
      ],
      ['start of a workflow never published', 'POST', () => `${base()}/never/runs`, { body: {} }, 404, 'not_found'],
      [
        'start of a workflow with no enabled version',
        'POST',
        () => `${base()}/off/runs`,
        { body: {} },
        404,
        'not_found',
      ],
      ['PATCH of an unknown workflow', 'PATCH', () => `${base()}/never`, { body: { enabled: true } }, 404, 'not_found'],
      [
        'cancel of a run of another workflow',
        'POST',
        () => `${base()}/audit/runs/${live}/cancel`,
        {},
        404,
        'not_found',
      ],
      [
        'signal to a run of another workflow',
        'POST',
        () => `${base()}/audit/runs/${live}/signals`,
        { body: { signal: 'go' } },
        404,
        'not_found',
      ],
      [
        'signal to an unknown run',
        'POST',
        () => `${base()}/orders/runs/${none}/signals`,
        { body: { signal: 'go' } },
        404,
        'not_found',
      ],
      [
        'queue binding to an unknown workflow',
        'POST',
        qBase,
        { body: { queue: 'jobs', workflow: 'never' } },
        404,
        'not_found',
      ],
      [
        'row binding to an unknown workflow',
        'POST',
        rBase,
        { body: { table: 'orders', events: ['insert'], workflow: 'never' } },
        404,
        'not_found',
      ],
      ['DELETE of an unknown queue binding', 'DELETE', () => `${qBase()}/${none}`, {}, 404, 'not_found'],
      ['DELETE of an unknown row binding', 'DELETE', () => `${rBase()}/${none}`, {}, 404, 'not_found'],
      ['cancel of a finished run', 'POST', () => `${base()}/orders/runs/${finished}/cancel`, {}, 409, 'run_finished'],
      [
        'signal to a finished run',
        'POST',
        () => `${base()}/orders/runs/${finished}/signals`,
        { body: { signal: 'go' } },
        409,
        'run_finished',
      ],
      [
        'a second binding of the queue',
        'POST',
        qBase,
        { body: { queue: 'jobs', workflow: 'audit' } },
        409,
        'queue_bound',
      ],
      [
        'the table bound twice to the same workflow',
        'POST',
        rBase,
        { body: { table: 'orders', events: ['update'], workflow: 'orders' } },
        409,
        'table_bound',
      ],
    ];
    for (const [what, method, path, call, status, code] of cases) {
      const res = await refusedWithoutWrites(what, () => h.api(method, path(), call));
      assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, code, what);
      assert.equal(typeof res.body.error.message, 'string', what);
    }
  });

  test('an expired session is 401 unauthorized and starts nothing', async () => {
    const login = await h.api('POST', '/v1/login', {
      body: { email: h.hearth.owner.email, password: h.hearth.owner.password },
      token: null,
    });
    assert.equal(login.status, 200);
    h.clock.advance(25 * 3600 * 1000);
    try {
      const res = await refusedWithoutWrites('expired session', () =>
        h.api('POST', `${base()}/orders/runs`, { body: {}, token: login.body.access_token }),
      );
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
    } finally {
      h.clock.advance(-25 * 3600 * 1000);
    }
  });

  test('every route is 403 forbidden while workflows are off for the project, and nothing is written', async () => {
    const config = `/v1/projects/${ref}/config/workflows`;
    assert.equal((await h.api('PATCH', config, { body: { enabled: false } })).status, 200);
    try {
      const calls: [string, string, unknown][] = [
        ['PUT', `${base()}/orders`, { steps: [SQL] }],
        ['POST', `${base()}/orders/runs`, {}],
        ['POST', `${base()}/orders/runs/${live}/cancel`, undefined],
        ['POST', qBase(), { queue: 'jobs', workflow: 'audit' }],
      ];
      for (const [method, path, body] of calls) {
        const res = await refusedWithoutWrites(`${method} ${path}`, () => h.api(method, path, { body }));
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(res.body.error.code, 'forbidden');
      }
    } finally {
      await enableWorkflows(h);
    }
  });
});
