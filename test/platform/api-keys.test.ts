import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectionInfo } from '../../src/platform/connection-info.ts';
import { firstOwner } from '../../src/platform/accounts.ts';
import { findProject } from '../../src/platform/projects.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

// API key management: create, use, rename and revoke keys of a project (docs/management-api.md "API keys").
let h: TestHearth;
let second: TestHearth;
let orgId: string;
before(async () => {
  h = await startTestHearth();
  // A second process on the same control database: a revocation must reach its caches too.
  second = await startTestHearth({
    controlDb: h.config.controlDb,
    dataDir: h.config.dataDir,
    env: { HEARTH_ROLE: 'api' },
  });
  orgId = (await h.api('GET', '/v1/organizations')).body[0].id;
});
after(async () => {
  await second?.close();
  await h?.close();
});

interface Project {
  ref: string;
  keys: string;
  publishable: string;
  secret: string;
}

/** A fresh project with a table `notes` (one row) that anon and service_role may read. */
async function newProject(name: string): Promise<Project> {
  const created = await h.api('POST', '/v1/projects', { body: { name, organization_id: orgId } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const ref = created.body.ref as string;
  const sql = await h.api('POST', `/v1/projects/${ref}/database/query`, {
    body: {
      query:
        "create table public.notes (id int primary key, body text); insert into public.notes values (1, 'hi'); grant select on public.notes to anon, service_role",
    },
  });
  assert.equal(sql.status, 201, JSON.stringify(sql.body));
  const list = await h.api('GET', `/v1/projects/${ref}/api-keys`);
  const value = (type: string) => list.body.find((k: { type: string }) => k.type === type).api_key as string;
  return { ref, keys: `/v1/projects/${ref}/api-keys`, publishable: value('publishable'), secret: value('secret') };
}

const rest = (server: TestHearth, ref: string, key: string) =>
  fetch(`${server.url}/project/${ref}/rest/v1/notes?select=id`, { headers: { apikey: key } });
const buckets = (server: TestHearth, ref: string, key: string) =>
  fetch(`${server.url}/project/${ref}/storage/v1/bucket`, { headers: { authorization: `Bearer ${key}` } });

describe('creating keys', () => {
  let pr: Project;
  before(async () => {
    pr = await newProject('Keys');
  });

  test('a new secret key: 201 with its full value, listed, stored hashed, and works on REST and storage', async () => {
    const res = await h.api('POST', pr.keys, {
      body: { type: 'secret', name: 'backend_v2', description: 'the new API server' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['api_key', 'description', 'id', 'inserted_at', 'name', 'type']);
    assert.equal(res.body.type, 'secret');
    assert.equal(res.body.name, 'backend_v2');
    assert.equal(res.body.description, 'the new API server');
    assert.match(res.body.api_key, /^sb_secret_[A-Za-z0-9]{40}$/);

    const list = await h.api('GET', pr.keys);
    assert.deepEqual(
      list.body.map((k: { type: string; name: string }) => `${k.type}:${k.name}`),
      ['publishable:default', 'secret:default', 'secret:backend_v2'],
    );
    assert.equal(list.body.find((k: { id: string }) => k.id === res.body.id).api_key, res.body.api_key);
    // One key by id, as Supabase's GET .../api-keys/{id}; an unknown or malformed id is 404.
    const one = await h.api('GET', `${pr.keys}/${res.body.id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, res.body);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope'])
      assert.equal((await h.api('GET', `${pr.keys}/${id}`)).body.error.code, 'not_found');
    const [plain] = await h.hearth.p.dbs
      .control`select count(*)::int as n from platform.api_keys where key_sealed like ${`%${res.body.api_key}%`}`;
    assert.equal(plain!.n, 0);

    const read = await rest(h, pr.ref, res.body.api_key);
    assert.equal(read.status, 200);
    assert.deepEqual(await read.json(), [{ id: 1 }]);
    // Bucket management is service_role-only: the new key is a secret key.
    assert.equal((await buckets(h, pr.ref, res.body.api_key)).status, 200);
    assert.equal((await buckets(h, pr.ref, pr.publishable)).status, 403);
  });

  test('a new publishable key works as anon; it is no key of another project', async () => {
    const res = await h.api('POST', pr.keys, { body: { type: 'publishable', name: 'mobile_app' } });
    assert.equal(res.status, 201);
    assert.equal(res.body.description, null);
    assert.match(res.body.api_key, /^sb_publishable_/);
    assert.equal((await rest(h, pr.ref, res.body.api_key)).status, 200);
    assert.equal((await buckets(h, pr.ref, res.body.api_key)).status, 403);
    assert.equal((await rest(h, h.info.PROJECT_REF, res.body.api_key)).status, 401);
  });

  test('the same name twice for one type is 409 api_key_exists; the other type may use it', async () => {
    assert.equal((await h.api('POST', pr.keys, { body: { type: 'secret', name: 'twice' } })).status, 201);
    const again = await h.api('POST', pr.keys, { body: { type: 'secret', name: 'twice' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'api_key_exists');
    assert.equal((await h.api('POST', pr.keys, { body: { type: 'publishable', name: 'twice' } })).status, 201);
  });

  const bad: [string, unknown, string][] = [
    ['no type', { name: 'good_name' }, 'invalid_field'],
    ['unknown type', { type: 'legacy', name: 'good_name' }, 'invalid_field'],
    ['no name', { type: 'secret' }, 'invalid_name'],
    ['a name too short', { type: 'secret', name: 'abc' }, 'invalid_name'],
    ['a name too long', { type: 'secret', name: 'a'.repeat(65) }, 'invalid_name'],
    ['upper case and spaces', { type: 'secret', name: 'My Key' }, 'invalid_name'],
    ['a leading digit', { type: 'secret', name: '1key' }, 'invalid_name'],
    ['a name that is a number', { type: 'secret', name: 1234 }, 'invalid_name'],
    ['a description that is a number', { type: 'secret', name: 'good_name', description: 5 }, 'invalid_field'],
    ['a description too long', { type: 'secret', name: 'good_name', description: 'x'.repeat(257) }, 'invalid_field'],
    ['a description with NUL', { type: 'secret', name: 'good_name', description: 'a\u0000b' }, 'invalid_field'],
    ['an unknown field', { type: 'secret', name: 'good_name', role: 'service_role' }, 'unknown_field'],
    ['an array', [1], 'invalid_request'],
  ];
  for (const [name, body, code] of bad) {
    test(`create with ${name} is 400 ${code}, and no key is made`, async () => {
      const before = (await h.api('GET', pr.keys)).body.length;
      const res = await h.api('POST', pr.keys, { body });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, code);
      assert.equal((await h.api('GET', pr.keys)).body.length, before);
    });
  }
});

describe('renaming keys', () => {
  let pr: Project;
  let id: string;
  before(async () => {
    pr = await newProject('Rename');
    id = (await h.api('POST', pr.keys, { body: { type: 'secret', name: 'worker' } })).body.id;
  });

  test('PATCH changes name and description, and the key keeps working', async () => {
    const res = await h.api('PATCH', `${pr.keys}/${id}`, { body: { name: 'queue_worker', description: 'cron box' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.name, 'queue_worker');
    assert.equal(res.body.description, 'cron box');
    const onlyDescription = await h.api('PATCH', `${pr.keys}/${id}`, { body: { description: null } });
    assert.equal(onlyDescription.body.name, 'queue_worker');
    assert.equal(onlyDescription.body.description, null);
    const listed = (await h.api('GET', pr.keys)).body.find((k: { id: string }) => k.id === id);
    assert.equal(listed.name, 'queue_worker');
    assert.equal((await rest(h, pr.ref, listed.api_key)).status, 200);
  });

  test('bad renames: taken name 409, bad name 400, type or unknown field 400, unknown id 404', async () => {
    const cases: [string, unknown, number, string][] = [
      [id, { name: 'default' }, 409, 'api_key_exists'],
      [id, { name: 'Bad Name' }, 400, 'invalid_name'],
      [id, { type: 'publishable' }, 400, 'unknown_field'],
      [id, { api_key: 'sb_secret_mine' }, 400, 'unknown_field'],
      ['00000000-0000-0000-0000-000000000000', { name: 'other' }, 404, 'not_found'],
      ['not-a-uuid', { name: 'other' }, 404, 'not_found'],
    ];
    for (const [key, body, status, code] of cases) {
      const res = await h.api('PATCH', `${pr.keys}/${key}`, { body });
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.error.code, code, JSON.stringify(body));
    }
    // A key of another project is not found through this one.
    const other = (await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/api-keys`)).body[0].id;
    assert.equal((await h.api('PATCH', `${pr.keys}/${other}`, { body: { name: 'stolen' } })).status, 404);
  });
});

describe('revoking keys', () => {
  test('a revoked key is 401 at once on REST and storage, in this process and in another one', async () => {
    const pr = await newProject('Revoke');
    const made = await h.api('POST', pr.keys, { body: { type: 'secret', name: 'leaked' } });
    const key = made.body.api_key as string;
    // Both processes have resolved (and cached) the key.
    for (const server of [h, second]) {
      assert.equal((await rest(server, pr.ref, key)).status, 200);
      assert.equal((await buckets(server, pr.ref, key)).status, 200);
    }
    const del = await h.api('DELETE', `${pr.keys}/${made.body.id}`);
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.equal(del.body.id, made.body.id);
    for (const res of [await rest(h, pr.ref, key), await buckets(h, pr.ref, key)]) {
      assert.equal(res.status, 401);
    }
    assert.equal(
      await until(
        () => rest(second, pr.ref, key).then((r) => r.status),
        (s) => s === 401,
      ),
      401,
    );
    assert.equal((await buckets(second, pr.ref, key)).status, 401);
    // The project's other keys are untouched; the revoked one is no longer listed.
    assert.equal((await rest(h, pr.ref, pr.secret)).status, 200);
    assert.equal((await rest(second, pr.ref, pr.publishable)).status, 200);
    assert.ok(!(await h.api('GET', pr.keys)).body.some((k: { id: string }) => k.id === made.body.id));
    assert.equal((await h.api('DELETE', `${pr.keys}/${made.body.id}`)).status, 404);
  });

  test('the last publishable or secret key cannot be revoked (409 last_api_key); with a new one it can', async () => {
    const pr = await newProject('Last');
    const list = (await h.api('GET', pr.keys)).body as { id: string; type: string }[];
    for (const k of list) {
      const res = await h.api('DELETE', `${pr.keys}/${k.id}`);
      assert.equal(res.status, 409, k.type);
      assert.equal(res.body.error.code, 'last_api_key');
    }
    assert.equal((await rest(h, pr.ref, pr.secret)).status, 200);

    // Replacing the default secret key: create, then revoke the old one.
    const fresh = await h.api('POST', pr.keys, { body: { type: 'secret', name: 'replacement' } });
    const old = list.find((k) => k.type === 'secret')!;
    assert.equal((await h.api('DELETE', `${pr.keys}/${old.id}`)).status, 200);
    assert.equal((await rest(h, pr.ref, pr.secret)).status, 401);
    assert.equal((await rest(h, pr.ref, fresh.body.api_key)).status, 200);
    // What `hearth status` prints is a key that still exists.
    const project = (await findProject(h.hearth.p.dbs.control, pr.ref))!;
    const owner = await firstOwner(h.hearth.p.dbs.control, project.organization_id);
    const info = await connectionInfo(h.hearth.p, project, owner.id);
    assert.equal(info.SECRET_KEY, fresh.body.api_key);
    assert.equal(info.PUBLISHABLE_KEY, pr.publishable);
  });

  test('two revocations at once cannot remove both of the last two secret keys', async () => {
    const pr = await newProject('Race');
    await h.api('POST', pr.keys, { body: { type: 'secret', name: 'second_key' } });
    const secrets = (await h.api('GET', pr.keys)).body.filter((k: { type: string }) => k.type === 'secret');
    const results = await Promise.all(secrets.map((k: { id: string }) => h.api('DELETE', `${pr.keys}/${k.id}`)));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
    assert.equal((await h.api('GET', pr.keys)).body.filter((k: { type: string }) => k.type === 'secret').length, 1);
  });
});

describe('who may manage keys', () => {
  test('a developer may list keys but not create, rename or revoke them (403); a stranger gets 403 everywhere', async () => {
    const pr = await newProject('Perms');
    for (const [email, org] of [
      ['dev@keys.test', orgId],
      ['stranger@keys.test', (await h.api('POST', '/v1/organizations', { body: { name: 'Elsewhere' } })).body.id],
    ]) {
      const added = await h.api('POST', `/v1/organizations/${org}/members`, {
        body: { email, password: 'a-long-password', role: 'developer' },
      });
      assert.equal(added.status, 201);
    }
    const login = async (email: string) =>
      (await h.api('POST', '/v1/login', { body: { email, password: 'a-long-password' }, token: null })).body
        .access_token as string;
    const dev = await login('dev@keys.test');
    const stranger = await login('stranger@keys.test');
    const id = (await h.api('GET', pr.keys)).body[0].id;
    assert.equal((await h.api('GET', pr.keys, { token: dev })).status, 200);
    assert.equal((await h.api('GET', pr.keys, { token: stranger })).status, 403);
    for (const token of [dev, stranger]) {
      for (const [method, path, body] of [
        ['POST', pr.keys, { type: 'secret', name: 'mine_now' }],
        ['PATCH', `${pr.keys}/${id}`, { name: 'renamed' }],
        ['DELETE', `${pr.keys}/${id}`, undefined],
      ] as const) {
        const res = await h.api(method, path, { token, body });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(res.body.error.code, 'forbidden');
      }
    }
    assert.equal(
      (await h.api('POST', pr.keys, { token: null, body: { type: 'secret', name: 'anon_try' } })).status,
      401,
    );
    // A project key is no management credential.
    const withKey = await h.api('POST', pr.keys, { token: pr.secret, body: { type: 'secret', name: 'self_made' } });
    assert.equal(withKey.status, 401);
    assert.equal((await h.api('GET', pr.keys)).body.length, 2);
  });
});
