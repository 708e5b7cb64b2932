import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth();
});
after(async () => {
  await h?.close();
});

describe('management sessions', () => {
  test('POST /v1/login returns a bearer session; a wrong password is 401 unauthorized (the status issue 2 gives bad credentials)', async () => {
    const owner = h.hearth.owner;
    const ok = await h.api('POST', '/v1/login', {
      body: { email: owner.email, password: owner.password },
      token: null,
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.token_type, 'bearer');
    assert.ok(ok.body.expires_in > 0);
    const orgs = await h.api('GET', '/v1/organizations', { token: ok.body.access_token });
    assert.equal(orgs.status, 200);
    const bad = await h.api('POST', '/v1/login', {
      body: { email: owner.email, password: 'wrong-password!!' },
      token: null,
    });
    assert.equal(bad.status, 401);
    assert.equal(bad.body.error.code, 'unauthorized');
  });

  test('missing, invalid and project-key bearers are 401 unauthorized', async () => {
    for (const token of [null, 'nonsense', h.info.SECRET_KEY, h.info.PUBLISHABLE_KEY]) {
      const res = await h.api('GET', '/v1/projects', { token });
      assert.equal(res.status, 401, String(token));
      assert.equal(res.body.error.code, 'unauthorized');
    }
    // A project key in apikey (the data-plane habit) is not a session either.
    const apikey = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/cron-jobs`, {
      token: null,
      headers: { apikey: h.info.SECRET_KEY },
    });
    assert.equal(apikey.status, 401);
  });

  test('management errors carry the code and message both in error and at the top level', async () => {
    for (const [method, path, token, status, code] of [
      ['GET', '/v1/projects', null, 401, 'unauthorized'],
      ['GET', `/v1/projects/${h.info.PROJECT_REF}/workflows`, h.info.SECRET_KEY, 401, 'unauthorized'],
      ['GET', '/v1/projects/abcdefghijabcdefghij', undefined, 404, 'not_found'],
      ['GET', '/v1/no-such-route', null, 404, 'not_found'],
    ] as const) {
      const res = await h.api(method, path, { token });
      assert.equal(res.status, status, path);
      assert.match(res.headers.get('content-type')!, /^application\/json/);
      assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error', 'message'], path);
      assert.equal(res.body.code, code, path);
      assert.equal(res.body.error.code, code, path);
      assert.equal(res.body.message, res.body.error.message, path);
    }
  });

  test('an expired session is refused', async () => {
    const login = await h.api('POST', '/v1/login', {
      body: { email: h.hearth.owner.email, password: h.hearth.owner.password },
      token: null,
    });
    h.clock.advance(25 * 3600 * 1000);
    try {
      const res = await h.api('GET', '/v1/projects', { token: login.body.access_token });
      assert.equal(res.status, 401);
    } finally {
      h.clock.advance(-25 * 3600 * 1000);
    }
  });
});

describe('organizations, members and projects', () => {
  test('create an organization, add a developer, who cannot create projects or change config', async () => {
    const org = await h.api('POST', '/v1/organizations', { body: { name: 'Acme' } });
    assert.equal(org.status, 201);
    const member = await h.api('POST', `/v1/organizations/${org.body.id}/members`, {
      body: { email: 'dev@acme.test', password: 'a-long-password', role: 'developer' },
    });
    assert.equal(member.status, 201);
    const members = await h.api('GET', `/v1/organizations/${org.body.id}/members`);
    assert.deepEqual(members.body.map((m: { role: string }) => m.role).sort(), ['developer', 'owner']);

    const devLogin = await h.api('POST', '/v1/login', {
      body: { email: 'dev@acme.test', password: 'a-long-password' },
      token: null,
    });
    const dev = devLogin.body.access_token;
    const denied = await h.api('POST', '/v1/projects', {
      token: dev,
      body: { name: 'x', organization_id: org.body.id },
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'forbidden');

    // The developer is not a member of the default organization: its project is 403.
    const other = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}`, { token: dev });
    assert.equal(other.status, 403);
    const addAsDev = await h.api('POST', `/v1/organizations/${org.body.id}/members`, {
      token: dev,
      body: { email: 'x@y.test', password: 'a-long-password', role: 'admin' },
    });
    assert.equal(addAsDev.status, 403);
  });

  test('create a project: 201 with ref and base_url, its database, role and keys exist', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const res = await h.api('POST', '/v1/projects', { body: { name: 'Second', organization_id: orgs.body[0].id } });
    assert.equal(res.status, 201);
    assert.match(res.body.ref, /^[a-z]{20}$/);
    assert.equal(res.body.base_url, `${h.url}/project/${res.body.ref}`);

    const keys = await h.api('GET', `/v1/projects/${res.body.ref}/api-keys`);
    assert.equal(keys.status, 200);
    assert.deepEqual(keys.body.map((k: { type: string }) => k.type).sort(), ['publishable', 'secret']);
    for (const k of keys.body) assert.ok(k.api_key.startsWith(`sb_${k.type}_`));

    // Keys are stored hashed (and sealed), never in plain text.
    const [stored] = await h.hearth.p.dbs
      .control`select count(*)::int as n from platform.api_keys where key_sealed like ${`%${keys.body[0].api_key}%`}`;
    assert.equal(stored!.n, 0);

    const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
    try {
      const [db] = await admin`select 1 from pg_database where datname = ${`hearth_${res.body.ref}`}`;
      assert.ok(db);
      const [role] =
        await admin`select rolsuper, rolcanlogin from pg_roles where rolname = ${`hearth_${res.body.ref}_owner`}`;
      assert.deepEqual({ ...role }, { rolsuper: false, rolcanlogin: true });
    } finally {
      await admin.end();
    }

    // The new project's JWKS is served under /project/{ref}/.
    const jwks = await fetch(`${res.body.base_url}/auth/v1/.well-known/jwks.json`).then((r) => r.json());
    assert.equal(jwks.keys[0].kty, 'EC');

    const list = await h.api('GET', '/v1/projects');
    assert.ok(list.body.some((p: { ref: string }) => p.ref === res.body.ref));
  });

  test('delete needs {confirm: ref}; afterwards the database is gone and the keys are 401', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const created = await h.api('POST', '/v1/projects', { body: { name: 'Doomed', organization_id: orgs.body[0].id } });
    const ref = created.body.ref;
    const keys = await h.api('GET', `/v1/projects/${ref}/api-keys`);
    const key = keys.body[0].api_key;
    assert.equal((await fetch(`${h.url}/project/${ref}/auth/v1/health`, { headers: { apikey: key } })).status, 200);

    const unconfirmed = await h.api('DELETE', `/v1/projects/${ref}`, { body: {} });
    assert.equal(unconfirmed.status, 400);
    assert.equal(unconfirmed.body.error.code, 'confirmation_required');
    const misspelt = await h.api('DELETE', `/v1/projects/${ref}`, { body: { confirm: ref, cascade: true } });
    assert.equal(misspelt.status, 400);
    assert.equal(misspelt.body.error.code, 'unknown_field');
    assert.equal((await h.api('GET', `/v1/projects/${ref}`)).status, 200, 'nothing deleted');
    const del = await h.api('DELETE', `/v1/projects/${ref}`, { body: { confirm: ref } });
    assert.equal(del.status, 200);
    assert.equal((await h.api('GET', `/v1/projects/${ref}`)).status, 404);

    const gone = await fetch(`${h.url}/project/${ref}/auth/v1/health`, { headers: { apikey: key } });
    assert.equal(gone.status, 404);
    const wrongProject = await fetch(`${h.url}/auth/v1/health`, { headers: { apikey: key } });
    assert.equal(wrongProject.status, 401);
    const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
    try {
      assert.equal((await admin`select 1 from pg_database where datname = ${`hearth_${ref}`}`).length, 0);
      assert.equal((await admin`select 1 from pg_roles where rolname = ${`hearth_${ref}_owner`}`).length, 0);
    } finally {
      await admin.end();
    }
  });

  test('a project creation that fails at any step leaves no database, role or row', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
    try {
      for (const point of ['project.create.role', 'project.create.migrated', 'project.create.rows']) {
        let ref = '';
        h.faults.arm(point, (info) => (ref = info.ref as string));
        const res = await h.api('POST', '/v1/projects', { body: { name: 'Broken', organization_id: orgs.body[0].id } });
        assert.equal(res.status, 500, point);
        assert.match(ref, /^[a-z]{20}$/);
        assert.equal((await admin`select 1 from pg_database where datname = ${`hearth_${ref}`}`).length, 0, point);
        assert.equal((await admin`select 1 from pg_roles where rolname = ${`hearth_${ref}_owner`}`).length, 0, point);
        assert.equal(
          (await h.hearth.p.dbs.control`select 1 from platform.projects where ref = ${ref}`).length,
          0,
          point,
        );
      }
    } finally {
      await admin.end();
    }
  });

  test('a database refusing connections (too many clients) is 503 database_unavailable, not a 500', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    h.faults.arm('project.create.role', () => {
      // As PostgreSQL sends it when a connection is refused: FATAL, so the session never started.
      throw Object.assign(new Error('sorry, too many clients already'), { code: '53300', severity: 'FATAL' });
    });
    const res = await h.api('POST', '/v1/projects', { body: { name: 'Busy', organization_id: orgs.body[0].id } });
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'database_unavailable');
  });
});

describe('project configuration', () => {
  const ref = () => h.info.PROJECT_REF;

  test('GET returns defaults; PATCH validates, applies, audits and redacts secrets', async () => {
    const got = await h.api('GET', `/v1/projects/${ref()}/config/auth`);
    assert.equal(got.status, 200);
    assert.equal(got.body.uri_allow_list, '');
    const patched = await h.api('PATCH', `/v1/projects/${ref()}/config/auth`, {
      body: { site_url: 'https://app.example.com', smtp_pass: 'hunter2hunter2' },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.site_url, 'https://app.example.com');
    assert.equal(patched.body.smtp_pass, '********');
    const audit = await h.api('GET', `/v1/projects/${ref()}/config/audit`);
    assert.equal(audit.status, 200);
    assert.equal(audit.body[0].changes.site_url.to, 'https://app.example.com');
    assert.equal(audit.body[0].changes.smtp_pass.to, '********');
    assert.equal(JSON.stringify(audit.body).includes('hunter2'), false);

    const wf = await h.api('PATCH', `/v1/projects/${ref()}/config/workflows`, { body: { enabled: true } });
    assert.equal(wf.body.enabled, true);
    const storage = await h.api('GET', `/v1/projects/${ref()}/config/storage`);
    assert.equal(typeof storage.body.quota_bytes, 'number');
  });

  test('config/api db_schema naming a schema the project database lacks is 400 invalid_field naming it', async () => {
    const before = await h.api('GET', `/v1/projects/${ref()}/config/api`);
    const res = await h.api('PATCH', `/v1/projects/${ref()}/config/api`, { body: { db_schema: 'public, nosuch' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_field');
    assert.match(
      res.body.error.message,
      /config\/api\.db_schema names "nosuch", which the project database does not have/,
    );
    assert.deepEqual((await h.api('GET', `/v1/projects/${ref()}/config/api`)).body, before.body);
    // Existing schemas are accepted.
    const ok = await h.api('PATCH', `/v1/projects/${ref()}/config/api`, { body: { db_schema: 'public,storage' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.db_schema, 'public,storage');
    await h.api('PATCH', `/v1/projects/${ref()}/config/api`, { body: { db_schema: null } });
  });

  const bad: [string, string, unknown, number, string][] = [
    ['unknown field', 'auth', { nope: 1 }, 400, 'unknown_field'],
    ['wrong type', 'auth', { rate_limit_signups: 'many' }, 400, 'invalid_field'],
    ['out of range', 'auth', { smtp_port: 70000 }, 400, 'invalid_field'],
    ['not a URL', 'auth', { site_url: 'javascript:alert(1)' }, 400, 'invalid_field'],
    ['too long', 'auth', { smtp_host: 'x'.repeat(300) }, 400, 'invalid_field'],
    ['not an object', 'auth', [1, 2], 400, 'invalid_request'],
    ['boolean wanted', 'workflows', { enabled: 'yes' }, 400, 'invalid_field'],
    ['unknown area', 'nothing', { a: 1 }, 404, 'not_found'],
  ];
  for (const [name, area, body, status, code] of bad) {
    test(`PATCH config: ${name} → ${status} ${code}, nothing written`, async () => {
      const before = await h.api('GET', `/v1/projects/${ref()}/config/auth`);
      const res = await h.api('PATCH', `/v1/projects/${ref()}/config/${area}`, { body });
      assert.equal(res.status, status);
      assert.equal(res.body.error.code, code);
      assert.deepEqual((await h.api('GET', `/v1/projects/${ref()}/config/auth`)).body, before.body);
    });
  }
});

describe('bad input', () => {
  test('malformed JSON is 400 invalid_request', async () => {
    const res = await h.api('POST', '/v1/organizations', {
      raw: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_request');
  });
  test('a body that is not JSON is 400 invalid_request on every /v1 route alike (SPEC 7), whatever its Content-Type', async () => {
    const ref = h.info.PROJECT_REF;
    const routes: [string, string, string | null | undefined][] = [
      ['POST', '/v1/login', null],
      ['POST', '/v1/organizations', undefined],
      ['POST', '/v1/projects', undefined],
      ['PATCH', `/v1/projects/${ref}/config/api`, undefined],
      ['POST', `/v1/projects/${ref}/api-keys`, undefined],
      ['POST', `/v1/projects/${ref}/database/query`, undefined],
      ['POST', `/v1/projects/${ref}/config/auth/smtp-test`, undefined],
      ['PUT', `/v1/projects/${ref}/functions/hello`, undefined],
      ['POST', `/v1/projects/${ref}/cron-jobs`, undefined],
    ];
    for (const [method, path, token] of routes) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await h.api(method, path, { token, raw: '{"name": "x"}', headers: { 'content-type': type } });
        assert.equal(res.status, 400, `${method} ${path} ${type}`);
        assert.equal(res.body.error.code, 'invalid_request', `${method} ${path} ${type}`);
        assert.match(res.body.error.message, /Content-Type: application\/json/, `${method} ${path} ${type}`);
      }
    }
  });
  test('Content-Type: application/json with no body is a request without a body, not malformed JSON', async () => {
    const ref = h.info.PROJECT_REF;
    const json = { 'content-type': 'application/json' };
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    try {
      await owner`select pgmq.create('bodyless')`;
    } finally {
      await owner.end();
    }
    const created = await h.api('POST', `/v1/projects/${ref}/cron-jobs`, {
      body: { name: 'bodyless-delete', schedule: '0 0 1 1 *', target_kind: 'enqueue', target: 'bodyless', payload: {} },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const del = await h.api('DELETE', `/v1/projects/${ref}/cron-jobs/bodyless-delete`, { raw: '', headers: json });
    assert.equal(del.status, 200);
    // Where a body is required, its absence is still a clear 400.
    const login = await h.api('POST', '/v1/login', { raw: '', headers: json, token: null });
    assert.equal(login.status, 400);
    assert.equal(login.body.error.code, 'invalid_request');
    const unconfirmed = await h.api('DELETE', `/v1/projects/${ref}`, { raw: ' ', headers: json });
    assert.equal(unconfirmed.status, 400);
    assert.equal(unconfirmed.body.error.code, 'confirmation_required');
  });

  test('wrong types and over-long names are 400 with a code', async () => {
    assert.equal((await h.api('POST', '/v1/organizations', { body: { name: 42 } })).body.error.code, 'invalid_name');
    const orgs = await h.api('GET', '/v1/organizations');
    const long = await h.api('POST', '/v1/projects', {
      body: { name: 'x'.repeat(200), organization_id: orgs.body[0].id },
    });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, 'invalid_name');
    // 64 is counted in characters, not UTF-16 units: 64 emoji fit, 65 do not.
    const emoji = (n: number) => h.api('POST', '/v1/organizations', { body: { name: '\u{1F525}'.repeat(n) } });
    assert.equal((await emoji(64)).status, 201);
    assert.equal((await emoji(65)).body.error.code, 'invalid_name');
    for (const name of ['two\nlines', 'tab\there', 'bell\u0007'])
      assert.equal((await h.api('POST', '/v1/organizations', { body: { name } })).body.error.code, 'invalid_name');
    const noOrg = await h.api('POST', '/v1/projects', { body: { name: 'ok' } });
    assert.equal(noOrg.body.error.code, 'invalid_organization');
    const badRole = await h.api('POST', `/v1/organizations/${orgs.body[0].id}/members`, {
      body: { email: 'a@b.test', password: 'long-enough-1', role: 'king' },
    });
    assert.equal(badRole.body.error.code, 'invalid_role');
  });
  test('a member without a role is 400 invalid_role, not a developer by default', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const res = await h.api('POST', `/v1/organizations/${orgs.body[0].id}/members`, {
      body: { email: 'no-role@b.test', password: 'long-enough-1' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_role');
    const members = await h.api('GET', `/v1/organizations/${orgs.body[0].id}/members`);
    assert.ok(!members.body.some((m: { email: string }) => m.email === 'no-role@b.test'));
  });
  test('unknown fields on the create routes are 400 unknown_field naming the field, and nothing is made', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const orgId = orgs.body[0].id;
    const projects = (await h.api('GET', '/v1/projects')).body.length;
    for (const [path, body] of [
      ['/v1/organizations', { name: 'Extra Org', extra: 1 }],
      ['/v1/projects', { name: 'Extra', organization_id: orgId, region: 'eu' }],
      [`/v1/organizations/${orgId}/members`, { email: 'extra@b.test', password: 'long-enough-1', role: 'admin', x: 1 }],
    ] as const) {
      const res = await h.api('POST', path, { body });
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error.code, 'unknown_field', path);
      assert.match(res.body.error.message, /"(extra|region|x)"/);
    }
    assert.ok(!(await h.api('GET', '/v1/organizations')).body.some((o: { name: string }) => o.name === 'Extra Org'));
    assert.equal((await h.api('GET', '/v1/projects')).body.length, projects);
    const members = await h.api('GET', `/v1/organizations/${orgId}/members`);
    assert.ok(!members.body.some((m: { email: string }) => m.email === 'extra@b.test'));
  });
  test('unknown project ref is 404; unknown route is 404', async () => {
    assert.equal((await h.api('GET', '/v1/projects/abcdefghijabcdefghij')).status, 404);
    assert.equal((await h.api('GET', '/v1/projects/DROP TABLE')).status, 404);
    const nope = await h.api('GET', '/v1/nothing-here');
    assert.equal(nope.status, 404);
    assert.equal(nope.body.error.code, 'not_found');
  });
  test('a huge body is 413 payload_too_large', async () => {
    const res = await h.api('POST', '/v1/organizations', { body: { name: 'x'.repeat(2 * 1024 * 1024) } });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 'payload_too_large');
  });
});

describe('odd names, strings and races the management API refuses cleanly', () => {
  const ref = () => h.info.PROJECT_REF;
  const configRows = async () =>
    (
      await h.hearth.p.dbs.control`select area, settings from platform.project_config c
      join platform.projects p on p.id = c.project_id where p.ref = ${ref()} order by area`
    ).map((r) => ({ ...r }));

  test('config areas named like Object.prototype members are 404, and nothing is written', async () => {
    const before = await configRows();
    for (const area of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      for (const method of ['GET', 'PATCH']) {
        const res = await h.api(method, `/v1/projects/${ref()}/config/${area}`, method === 'PATCH' ? { body: {} } : {});
        assert.equal(res.status, 404, `${method} ${area}`);
        assert.equal(res.body.error.code, 'not_found', `${method} ${area}`);
      }
    }
    assert.deepEqual(await configRows(), before);
  });

  test('config fields named like Object.prototype members are 400 unknown_field, and nothing is written', async () => {
    const before = await configRows();
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await h.api('PATCH', `/v1/projects/${ref()}/config/storage`, { body: { [name]: 5 } });
      assert.equal(res.status, 400, name);
      assert.equal(res.body.error.code, 'unknown_field', name);
    }
    assert.deepEqual(await configRows(), before);
  });

  test('a config string PostgreSQL cannot store (NUL, lone surrogate) is 400 invalid_field naming the field', async () => {
    for (const value of ['https://a.example/\u0000', 'https://a.example/\ud800']) {
      const res = await h.api('PATCH', `/v1/projects/${ref()}/config/auth`, { body: { site_url: value } });
      assert.equal(res.status, 400, JSON.stringify(value));
      assert.equal(res.body.error.code, 'invalid_field');
      assert.match(res.body.error.message, /config\/auth\.site_url/);
    }
    const list = await h.api('PATCH', `/v1/projects/${ref()}/config/auth`, { body: { uri_allow_list: 'x\u0000' } });
    assert.equal(list.status, 400);
    assert.equal(list.body.error.code, 'invalid_field');
  });

  test('names and e-mail addresses with NUL or lone surrogates are 400 with the field code; login with one is 401', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const orgId = orgs.body[0].id;
    for (const name of ['a\u0000b', 'a\udc00b']) {
      const org = await h.api('POST', '/v1/organizations', { body: { name } });
      assert.equal(org.status, 400, JSON.stringify(name));
      assert.equal(org.body.error.code, 'invalid_name');
      const project = await h.api('POST', '/v1/projects', { body: { name, organization_id: orgId } });
      assert.equal(project.status, 400, JSON.stringify(name));
      assert.equal(project.body.error.code, 'invalid_name');
    }
    const member = await h.api('POST', `/v1/organizations/${orgId}/members`, {
      body: { email: 'x\u0000@example.com', password: 'a-long-password', role: 'developer' },
    });
    assert.equal(member.status, 400);
    assert.equal(member.body.error.code, 'invalid_email');
    const login = await h.api('POST', '/v1/login', {
      token: null,
      body: { email: 'x\u0000@example.com', password: 'a-long-password' },
    });
    assert.equal(login.status, 401);
    assert.equal(login.body.error.code, 'unauthorized');
  });

  test('a malformed organization_id on project creation is 400 invalid_organization', async () => {
    const res = await h.api('POST', '/v1/projects', { body: { name: 'x', organization_id: 'not-a-uuid' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_organization');
  });

  test('the same member added concurrently: one 201, the others 409 already_member', async () => {
    const org = await h.api('POST', '/v1/organizations', { body: { name: 'Race' } });
    // First round: a new account; second round: that account, now existing, into another organization.
    const add = (orgId: string) =>
      Promise.all(
        [1, 2, 3, 4].map(() =>
          h.api('POST', `/v1/organizations/${orgId}/members`, {
            body: { email: 'race@example.com', password: 'a-long-password', role: 'developer' },
          }),
        ),
      );
    const fresh = await add(org.body.id);
    const other = await h.api('POST', '/v1/organizations', { body: { name: 'Race 2' } });
    const existing = await add(other.body.id);
    for (const round of [fresh, existing]) {
      assert.deepEqual(
        round.map((r) => r.status).sort(),
        [201, 409, 409, 409],
        JSON.stringify(round.map((r) => r.body)),
      );
      for (const r of round.filter((x) => x.status === 409)) assert.equal(r.body.error.code, 'already_member');
    }
    const [accounts] = await h.hearth.p.dbs
      .control`select count(*)::int as n from platform.accounts where lower(email) = 'race@example.com'`;
    assert.equal(accounts!.n, 1);
  });
});
