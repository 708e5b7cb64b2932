// Cron-job management routes (SPEC 4.5): who may call them, what they accept,
// and every error code they answer. A role api process, so no scheduler runs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
let base: string;
before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api' } });
  base = `/v1/projects/${h.info.PROJECT_REF}/cron-jobs`;
  const db = new pg.Client({ connectionString: h.info.DB_URL });
  await db.connect();
  await db.query(`select pgmq.create('jobs')`);
  await db.end();
});
after(async () => {
  await h?.close();
});

const valid = {
  name: 'nightly',
  schedule: '0 3 * * *',
  target_kind: 'enqueue',
  target: 'jobs',
  payload: { task: 'report' },
};

async function login(email: string): Promise<string> {
  const res = await h.api('POST', '/v1/login', { body: { email, password: 'a-long-password' }, token: null });
  assert.equal(res.status, 200);
  return res.body.access_token;
}

describe('access', () => {
  test('missing, invalid and project-key bearers are 401 unauthorized', async () => {
    for (const token of [null, 'nonsense', h.info.SECRET_KEY, h.info.PUBLISHABLE_KEY]) {
      for (const [method, path] of [
        ['GET', base],
        ['POST', base],
        ['DELETE', `${base}/x`],
        ['GET', `${base}/x`],
      ] as const) {
        const res = await h.api(method, path, { token, body: method === 'POST' ? valid : undefined });
        assert.equal(res.status, 401, `${method} ${path} with ${token}`);
        assert.equal(res.body.error.code, 'unauthorized');
      }
    }
  });

  test('a developer of the organization and a non-member are 403 forbidden', async () => {
    const project = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}`);
    const orgId = project.body.organization_id;
    const added = await h.api('POST', `/v1/organizations/${orgId}/members`, {
      body: { email: 'dev@cron.test', password: 'a-long-password', role: 'developer' },
    });
    assert.equal(added.status, 201);
    const other = await h.api('POST', '/v1/organizations', { body: { name: 'Elsewhere' } });
    await h.api('POST', `/v1/organizations/${other.body.id}/members`, {
      body: { email: 'outsider@cron.test', password: 'a-long-password', role: 'owner' },
    });
    for (const email of ['dev@cron.test', 'outsider@cron.test']) {
      const token = await login(email);
      for (const [method, path] of [
        ['GET', base],
        ['POST', base],
        ['DELETE', `${base}/x`],
      ] as const) {
        const res = await h.api(method, path, { token, body: method === 'POST' ? valid : undefined });
        assert.equal(res.status, 403, `${email} ${method}`);
        assert.equal(res.body.error.code, 'forbidden');
      }
    }
  });

  test('an admin may manage jobs', async () => {
    const project = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}`);
    await h.api('POST', `/v1/organizations/${project.body.organization_id}/members`, {
      body: { email: 'admin@cron.test', password: 'a-long-password', role: 'admin' },
    });
    const token = await login('admin@cron.test');
    const created = await h.api('POST', base, { token, body: { ...valid, name: 'by-admin' } });
    assert.equal(created.status, 201);
    assert.equal((await h.api('DELETE', `${base}/by-admin`, { token })).status, 200);
  });

  test('an unknown project is 404 not_found', async () => {
    for (const ref of ['abcdefghijklmnopqrst', 'not-a-ref']) {
      const res = await h.api('GET', `/v1/projects/${ref}/cron-jobs`);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
    }
  });
});

describe('create, list, get, delete', () => {
  test('an enqueue job: 201, listed with its schedule, next run and no runs yet; deleted once', async () => {
    const created = await h.api('POST', base, { body: { ...valid, schedule: ' 0  3 * * MON-FRI ' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'nightly');
    assert.equal(created.body.schedule, '0 3 * * MON-FRI', 'the names as written');
    assert.equal(created.body.target_kind, 'enqueue');
    assert.equal(created.body.target, 'jobs');
    assert.deepEqual(created.body.payload, { task: 'report' });
    assert.equal(created.body.secret, undefined);
    assert.equal(created.body.secret_set, undefined);
    assert.equal(created.body.last_run, null);
    assert.deepEqual(created.body.runs, []);
    const next = new Date(created.body.next_run_at);
    assert.equal(next.getUTCHours(), 3);
    assert.equal(next.getUTCMinutes(), 0);
    assert.ok([1, 2, 3, 4, 5].includes(next.getUTCDay()));
    assert.ok(next > h.clock.now());

    const list = await h.api('GET', base);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((j: { name: string }) => j.name),
      ['nightly'],
    );
    assert.deepEqual(list.body[0], created.body);
    const one = await h.api('GET', `${base}/nightly`);
    assert.deepEqual(one.body, created.body);

    const dup = await h.api('POST', base, { body: { ...valid, schedule: '* * * * *' } });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.code, 'job_exists');

    const gone = await h.api('DELETE', `${base}/nightly`);
    assert.equal(gone.status, 200);
    assert.deepEqual(gone.body, { name: 'nightly', deleted: true });
    for (const [method, path] of [
      ['DELETE', `${base}/nightly`],
      ['GET', `${base}/nightly`],
    ] as const) {
      const res = await h.api(method, path);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.deepEqual((await h.api('GET', base)).body, []);
  });

  test('a webhook job shows its secret once, in the creation response only', async () => {
    const created = await h.api('POST', base, {
      body: {
        name: 'hook',
        schedule: '*/5 * * * *',
        target_kind: 'webhook',
        target: 'https://hooks.example.com/in',
        payload: [1, 'two'],
      },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.secret, /^whsec_[A-Za-z0-9]{40}$/);
    assert.equal(created.body.secret_set, true);
    for (const res of [await h.api('GET', base), await h.api('GET', `${base}/hook`)]) {
      const text = JSON.stringify(res.body);
      assert.ok(!text.includes(created.body.secret), 'the secret is not readable again');
      assert.ok(text.includes('"secret_set":true'));
    }
    const [row] = await h.hearth.p.dbs.control`select secret_sealed from platform.cron_jobs where name = 'hook'`;
    assert.ok(!String(row.secret_sealed).includes(created.body.secret), 'stored sealed');
    assert.equal(h.hearth.p.master.decrypt(row.secret_sealed), created.body.secret);
    await h.api('DELETE', `${base}/hook`);
  });

  test('payload defaults to {} and may be any JSON value', async () => {
    for (const [name, payload, expected] of [
      ['p1', undefined, {}],
      ['p2', null, null],
      ['p3', 'text', 'text'],
      ['p4', 42, 42],
    ] as const) {
      const created = await h.api('POST', base, { body: { ...valid, name, payload } });
      assert.equal(created.status, 201, name);
      assert.deepEqual(created.body.payload, expected);
      await h.api('DELETE', `${base}/${name}`);
    }
  });
});

describe('validation', () => {
  const cases: Array<[string, Record<string, unknown> | string, number, string]> = [
    ['malformed JSON', '{"name": ', 400, 'invalid_request'],
    ['body not an object', '[1]', 400, 'invalid_request'],
    ['unknown field', { ...valid, secret: 'mine' }, 400, 'unknown_field'],
    ['missing name', { ...valid, name: undefined }, 400, 'invalid_name'],
    ['upper-case name', { ...valid, name: 'Nightly' }, 400, 'invalid_name'],
    ['name starting with -', { ...valid, name: '-x' }, 400, 'invalid_name'],
    ['name over 64', { ...valid, name: 'a'.repeat(65) }, 400, 'invalid_name'],
    ['missing schedule', { ...valid, schedule: undefined }, 400, 'invalid_schedule'],
    ['four fields', { ...valid, schedule: '* * * *' }, 400, 'invalid_schedule'],
    ['six fields', { ...valid, schedule: '0 * * * * *' }, 400, 'invalid_schedule'],
    ['minute 60', { ...valid, schedule: '60 * * * *' }, 400, 'invalid_schedule'],
    ['hour 24', { ...valid, schedule: '0 24 * * *' }, 400, 'invalid_schedule'],
    ['day 0', { ...valid, schedule: '0 0 0 * *' }, 400, 'invalid_schedule'],
    ['month 13', { ...valid, schedule: '0 0 * 13 *' }, 400, 'invalid_schedule'],
    ['weekday 8', { ...valid, schedule: '0 0 * * 8' }, 400, 'invalid_schedule'],
    ['step 0', { ...valid, schedule: '*/0 * * * *' }, 400, 'invalid_schedule'],
    ['backwards range', { ...valid, schedule: '5-1 * * * *' }, 400, 'invalid_schedule'],
    ['unknown name', { ...valid, schedule: '0 0 * * funday' }, 400, 'invalid_schedule'],
    ['name in the minute field', { ...valid, schedule: 'mon * * * *' }, 400, 'invalid_schedule'],
    ['croner extension L', { ...valid, schedule: '0 0 L * *' }, 400, 'invalid_schedule'],
    ['croner extension #', { ...valid, schedule: '0 0 * * 1#2' }, 400, 'invalid_schedule'],
    ['croner extension L in day-of-week', { ...valid, schedule: '0 0 * * 7L' }, 400, 'invalid_schedule'],
    ['a day name in the month field', { ...valid, schedule: '0 0 * mon *' }, 400, 'invalid_schedule'],
    ['nickname', { ...valid, schedule: '@hourly' }, 400, 'invalid_schedule'],
    ['never matches', { ...valid, schedule: '0 0 30 2 *' }, 400, 'invalid_schedule'],
    ['schedule not a string', { ...valid, schedule: 5 }, 400, 'invalid_schedule'],
    ['missing target_kind', { ...valid, target_kind: undefined }, 400, 'invalid_target_kind'],
    ['unknown target_kind', { ...valid, target_kind: 'sql' }, 400, 'invalid_target_kind'],
    ['missing target', { ...valid, target: undefined }, 400, 'invalid_target'],
    ['malformed queue name', { ...valid, target: 'Jobs!' }, 400, 'invalid_queue'],
    ['queue that does not exist', { ...valid, target: 'nope' }, 400, 'queue_not_found'],
    [
      'webhook over http',
      { ...valid, target_kind: 'webhook', target: 'http://hooks.example.com/' },
      400,
      'invalid_target',
    ],
    ['webhook not a URL', { ...valid, target_kind: 'webhook', target: 'hooks.example.com' }, 400, 'invalid_target'],
    [
      'webhook with credentials',
      { ...valid, target_kind: 'webhook', target: 'https://u:p@hooks.example.com/' },
      400,
      'invalid_target',
    ],
    ['webhook to loopback', { ...valid, target_kind: 'webhook', target: 'https://127.0.0.1/' }, 400, 'invalid_target'],
    [
      'webhook to metadata',
      { ...valid, target_kind: 'webhook', target: 'https://169.254.169.254/latest' },
      400,
      'invalid_target',
    ],
    [
      'webhook URL over 2048',
      { ...valid, target_kind: 'webhook', target: `https://hooks.example.com/${'a'.repeat(2048)}` },
      400,
      'invalid_target',
    ],
    ['bad workflow name', { ...valid, target_kind: 'workflow', target: 'Bad Name' }, 400, 'invalid_workflow'],
    [
      'workflow target never published',
      { ...valid, target_kind: 'workflow', target: 'onboarding' },
      400,
      'workflow_not_found',
    ],
    ['payload over 256 KiB', { ...valid, payload: 'x'.repeat(256 * 1024) }, 400, 'invalid_payload'],
    // jsonb cannot store these, so they must be refused before they reach Postgres.
    ['NUL in a payload string', { ...valid, payload: { a: 'x\u0000y' } }, 400, 'invalid_payload'],
    ['NUL in a payload key', { ...valid, payload: { 'k\u0000': 1 } }, 400, 'invalid_payload'],
    [
      'unpaired surrogate in the payload',
      '{"name":"s","schedule":"* * * * *","target_kind":"enqueue","target":"jobs","payload":["\\ud800"]}',
      400,
      'invalid_payload',
    ],
    [
      'payload nested 5,000 deep',
      `{"name":"d","schedule":"* * * * *","target_kind":"enqueue","target":"jobs","payload":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      400,
      'invalid_payload',
    ],
    [
      'webhook URL with NUL',
      { ...valid, target_kind: 'webhook', target: 'https://hooks.example.com/a\u0000b' },
      400,
      'invalid_target',
    ],
    [
      'webhook URL with a newline',
      { ...valid, target_kind: 'webhook', target: 'https://hooks.exam\nple.com/' },
      400,
      'invalid_target',
    ],
    // A URL parser would percent-encode or drop these, so the URL called would not be the one saved.
    ...[
      'https://example.com/a b',
      ' https://example.com/',
      'https://example.com/\t',
      'https://example.com/a\u00a0b',
    ].map((target): [string, Record<string, unknown>, number, string] => [
      `webhook URL with white space ${JSON.stringify(target)}`,
      { ...valid, target_kind: 'webhook', target },
      400,
      'invalid_target',
    ]),
  ];
  for (const [what, body, status, code] of cases) {
    test(`${what} → ${status} ${code}`, async () => {
      const res =
        typeof body === 'string'
          ? await h.api('POST', base, { raw: body, headers: { 'content-type': 'application/json' } })
          : await h.api('POST', base, { body });
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(res.body.error.code, code);
      assert.ok(res.body.error.message.length > 10);
    });
  }

  test('a payload nested 512 deep is accepted', async () => {
    const res = await h.api('POST', base, {
      raw: JSON.stringify({ ...valid, name: 'deep', payload: JSON.parse(`${'['.repeat(511)}1${']'.repeat(511)}`) }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal((await h.api('DELETE', `${base}/deep`)).status, 200);
  });

  test('a job name no job can have (NUL, upper case) is 404 not_found on GET and DELETE', async () => {
    for (const name of ['a%00b', '%00', 'Nightly']) {
      for (const method of ['GET', 'DELETE']) {
        const res = await h.api(method, `${base}/${name}`);
        assert.equal(res.status, 404, `${method} ${name}`);
        assert.equal(res.body.error.code, 'not_found');
      }
    }
  });

  test('refused requests leave no job behind', async () => {
    const rows = await h.hearth.p.dbs.control`select count(*)::int as n from platform.cron_jobs`;
    assert.equal(rows[0].n, 0);
  });
});
