import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { SignJWT, calculateJwkThumbprint, createLocalJWKSet, generateKeyPair, jwtVerify } from 'jose';
import postgres from 'postgres';
import { signAccessToken } from '../../src/auth/access-token.ts';
import { withRole } from '../../src/db/with-role.ts';
import type { ProjectRuntime } from '../../src/platform/registry.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

let h: TestHearth;
let project: ProjectRuntime;
let other: { ref: string; base_url: string; publishable: string };

const USER_A = '00000000-0000-4000-8000-00000000000a';
const USER_B = '00000000-0000-4000-8000-00000000000b';

before(async () => {
  h = await startTestHearth({ env: { HEARTH_PROJECT_DOMAIN: 'hearth.test' } });
  project = (await h.hearth.registry.defaultProject())!;
  const orgs = await h.api('GET', '/v1/organizations');
  const created = await h.api('POST', '/v1/projects', { body: { name: 'Other', organization_id: orgs.body[0].id } });
  const keys = await h.api('GET', `/v1/projects/${created.body.ref}/api-keys`);
  other = {
    ref: created.body.ref,
    base_url: created.body.base_url,
    publishable: keys.body.find((k: { type: string }) => k.type === 'publishable').api_key,
  };
});
after(async () => {
  await h?.close();
});

const userToken = (sub: string, extra: Record<string, unknown> = {}) =>
  signAccessToken(project, { sub, role: 'authenticated', aud: 'authenticated', ...extra }, h.clock, `${h.url}/auth/v1`);

/** GET with node:http, which (unlike fetch) lets the test choose the Host header. */
function jwks(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      })
      .on('error', reject);
  });
}

describe('JWKS', () => {
  test('served without credentials with the SPEC 2.4 fields; kid is the RFC 7638 thumbprint', async () => {
    const { status, body } = await jwks(`${h.url}/auth/v1/.well-known/jwks.json`);
    assert.equal(status, 200);
    assert.equal(body.keys.length, 1);
    const k = body.keys[0];
    assert.deepEqual(Object.keys(k).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    assert.deepEqual([k.kty, k.crv, k.alg, k.use], ['EC', 'P-256', 'ES256', 'sig']);
    assert.equal(k.kid, await calculateJwkThumbprint({ kty: k.kty, crv: k.crv, x: k.x, y: k.y }));
  });

  test('tokens verify offline against the JWKS by kid', async () => {
    const token = await userToken(USER_A);
    const { body } = await jwks(`${h.url}/auth/v1/.well-known/jwks.json`);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(body));
    assert.equal(payload.sub, USER_A);
    assert.equal(protectedHeader.kid, body.keys[0].kid);
  });

  test('each project is reachable under /project/{ref}/ and at {ref}.{HEARTH_PROJECT_DOMAIN}', async () => {
    const byPath = await jwks(`${other.base_url}/auth/v1/.well-known/jwks.json`);
    const byHost = await jwks(`${h.url}/auth/v1/.well-known/jwks.json`, { host: `${other.ref}.hearth.test` });
    const root = await jwks(`${h.url}/auth/v1/.well-known/jwks.json`);
    assert.equal(byPath.status, 200);
    assert.deepEqual(byHost.body, byPath.body);
    assert.notEqual(byPath.body.keys[0].kid, root.body.keys[0].kid);
    const missing = await jwks(`${h.url}/project/zzzzzzzzzzzzzzzzzzzz/auth/v1/.well-known/jwks.json`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'project_not_found');
  });
});

describe('credentials', () => {
  // A route that takes any project credential and answers 200 (the JWKS ignores credentials altogether).
  const url = () => `${h.url}/auth/v1/health`;

  test('the project key in apikey or Bearer is accepted', async () => {
    assert.equal((await fetch(url(), { headers: { apikey: h.info.PUBLISHABLE_KEY } })).status, 200);
    assert.equal((await fetch(url(), { headers: { authorization: `Bearer ${h.info.SECRET_KEY}` } })).status, 200);
  });

  const refusals: [string, () => Promise<Record<string, string>>, string][] = [
    ["another project's key", async () => ({ apikey: other.publishable }), 'invalid_api_key'],
    ['an unknown key', async () => ({ apikey: 'sb_publishable_nope' }), 'invalid_api_key'],
    ['a malformed Authorization header', async () => ({ authorization: 'Token abc' }), 'bad_authorization'],
    [
      'an expired token',
      async () => {
        const t = await userToken(USER_A);
        h.clock.advance(3601_000);
        return { authorization: `Bearer ${t}` };
      },
      'bad_jwt',
    ],
    [
      'a token signed by another key',
      async () => {
        const { privateKey } = await generateKeyPair('ES256');
        const t = await new SignJWT({ sub: USER_A, role: 'authenticated' })
          .setProtectedHeader({ alg: 'ES256', kid: project.jwks.keys[0]!.kid })
          .setExpirationTime('1h')
          .sign(privateKey);
        return { authorization: `Bearer ${t}` };
      },
      'bad_jwt',
    ],
    [
      'a token with an unknown role',
      async () => ({ authorization: `Bearer ${await userToken(USER_A, { role: 'postgres' })}` }),
      'bad_jwt',
    ],
    [
      'a tampered token',
      async () => {
        const [hd, , sig] = (await userToken(USER_A)).split('.');
        const body = Buffer.from(JSON.stringify({ sub: USER_B, role: 'service_role', exp: 9999999999 })).toString(
          'base64url',
        );
        return { authorization: `Bearer ${hd}.${body}.${sig}` };
      },
      'bad_jwt',
    ],
    [
      'an unsigned token (alg none, empty signature)',
      async () => {
        const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
        return {
          authorization: `Bearer ${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: USER_A, role: 'service_role', exp: 9999999999 })}.`,
        };
      },
      'bad_jwt',
    ],
  ];
  for (const [name, headers, code] of refusals) {
    test(`401 ${code} for ${name}, in the auth envelope`, async () => {
      try {
        const res = await fetch(url(), { headers: await headers() });
        assert.equal(res.status, 401);
        const body = await res.json();
        assert.equal(body.error.code, code);
        assert.equal(typeof body.error.message, 'string');
      } finally {
        h.clock.advance(-h.clock.now().getTime() + Date.now());
      }
    });
  }

  test('a token signed with the project key but without exp is refused in every area, as an invalid token there', async () => {
    const { kid, key } = await project.signingKey();
    const token = await new SignJWT({ sub: USER_A, role: 'authenticated', aud: 'authenticated' })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .setIssuedAt()
      .sign(key);
    const headers = { apikey: h.info.PUBLISHABLE_KEY, authorization: `Bearer ${token}` };
    const user = await fetch(`${h.url}/auth/v1/user`, { headers });
    assert.equal(user.status, 401);
    assert.equal((await user.json()).error.code, 'bad_jwt');
    const buckets = await fetch(`${h.url}/storage/v1/bucket`, { headers });
    assert.equal(buckets.status, 401);
    assert.equal((await buckets.json()).error.code, 'bad_jwt');
    const rest = await fetch(`${h.url}/rest/v1/anything`, { headers });
    assert.equal(rest.status, 401);
    assert.equal((await rest.json()).code, 'PGRST301');
    // The same claims with an exp pass, so it is the missing exp that is refused.
    const withExp = await fetch(`${h.url}/auth/v1/user`, {
      headers: { ...headers, authorization: `Bearer ${await userToken(USER_A)}` },
    });
    assert.notEqual(withExp.status, 401);
  });

  test("the key may ride in the query string (?apikey=), as Supabase's gateway takes it; REST does not read it as a filter", async () => {
    const root = await fetch(`${h.url}/rest/v1/?apikey=${h.info.PUBLISHABLE_KEY}`);
    assert.equal(root.status, 200);
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    try {
      await owner`create table public.keyed (id int)`;
      await owner`insert into public.keyed values (1), (2)`;
      await owner`grant select on public.keyed to anon`;
    } finally {
      await owner.end();
    }
    const read = () => fetch(`${h.url}/rest/v1/keyed?select=id&id=gt.1&apikey=${h.info.PUBLISHABLE_KEY}`);
    const rows = await until(read, (r) => r.status !== 404, 10_000);
    assert.equal(rows.status, 200);
    assert.deepEqual(await rows.json(), [{ id: 2 }]);
    assert.equal((await fetch(`${url()}?apikey=${h.info.SECRET_KEY}`)).status, 200);
    const wrong = await fetch(`${url()}?apikey=${other.publishable}`);
    assert.equal(wrong.status, 401);
    assert.equal((await wrong.json()).error.code, 'invalid_api_key');
  });

  test('a non-public route without any credential is 401 no_api_key', async () => {
    const res = await fetch(`${h.url}/rest/v1/anything`);
    assert.equal(res.status, 401);
  });

  test('a user token alone is a credential; a key of another project beside a valid token is still 401 invalid_api_key', async () => {
    const token = await userToken(USER_A);
    const alone = await fetch(`${h.url}/rest/v1/anything`, { headers: { authorization: `Bearer ${token}` } });
    assert.notEqual(alone.status, 401);
    const mixed = await fetch(url(), { headers: { apikey: other.publishable, authorization: `Bearer ${token}` } });
    assert.equal(mixed.status, 401);
    assert.equal((await mixed.json()).error.code, 'invalid_api_key');
  });

  test('a token accepted before is refused with bad_jwt once it has expired (verified tokens are remembered, expiry is not)', async () => {
    const headers = { authorization: `Bearer ${await userToken(USER_A)}` };
    try {
      assert.equal((await fetch(url(), { headers })).status, 200);
      assert.equal((await fetch(url(), { headers })).status, 200);
      h.clock.advance(3601_000);
      const res = await fetch(url(), { headers });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, 'bad_jwt');
    } finally {
      h.clock.advance(-h.clock.now().getTime() + Date.now());
    }
  });

  test('a remembered token vouches only for itself: its signature on other claims, or the token at another project, is 401 bad_jwt', async () => {
    const token = await userToken(USER_A);
    assert.equal((await fetch(url(), { headers: { authorization: `Bearer ${token}` } })).status, 200);
    const [hd, , sig] = token.split('.');
    const claims = Buffer.from(
      JSON.stringify({ sub: USER_B, role: 'service_role', aud: 'authenticated', exp: 9999999999 }),
    ).toString('base64url');
    const forged = await fetch(url(), { headers: { authorization: `Bearer ${hd}.${claims}.${sig}` } });
    assert.equal(forged.status, 401);
    assert.equal((await forged.json()).error.code, 'bad_jwt');
    const elsewhere = await fetch(`${other.base_url}/auth/v1/health`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(elsewhere.status, 401);
    assert.equal((await elsewhere.json()).error.code, 'bad_jwt');
  });

  test('the data plane is exactly /auth/v1, /rest/v1, /storage/v1 and /functions/v1 (alone, or followed by / or ?)', async () => {
    assert.equal((await fetch(`${h.url}/rest/v1?select=*`)).status, 401);
    assert.equal((await fetch(`${h.url}/storage/v1`)).status, 401);
    // Not a data-plane path: no credential check, so no route is 404 rather than 401.
    assert.equal((await fetch(`${h.url}/rest/v10/notes`)).status, 404);
  });
});

describe('withRole and row-level security', () => {
  before(async () => {
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    try {
      await owner.unsafe(`
        create table public.notes (id serial primary key, owner uuid not null, body text not null);
        alter table public.notes enable row level security;
        create policy own_notes on public.notes using (owner = auth.uid());
        insert into public.notes (owner, body) values ('${USER_A}', 'a1'), ('${USER_A}', 'a2'), ('${USER_B}', 'b1');`);
    } finally {
      await owner.end();
    }
  });

  test('auth.uid() sees the caller: each user reads only their rows; anon none; service_role all', async () => {
    const read = (role: 'anon' | 'authenticated' | 'service_role', sub?: string) =>
      withRole(
        project.sql,
        { role, claims: sub ? { sub, role } : { role } },
        (tx) => tx`select body from public.notes order by body`,
      );
    assert.deepEqual(
      (await read('authenticated', USER_A)).map((r) => r.body),
      ['a1', 'a2'],
    );
    assert.deepEqual(
      (await read('authenticated', USER_B)).map((r) => r.body),
      ['b1'],
    );
    assert.deepEqual(
      (await read('anon')).map((r) => r.body),
      [],
    );
    assert.deepEqual(
      (await read('service_role')).map((r) => r.body),
      ['a1', 'a2', 'b1'],
    );
  });

  test('role, claims and a 10 s statement timeout are set for the transaction only', async () => {
    const [row] = await withRole(
      project.sql,
      { role: 'authenticated', claims: { sub: USER_A, role: 'authenticated', email: 'a@x.test' } },
      (tx) =>
        tx`select current_user as who, auth.uid()::text as uid, auth.role() as role, auth.jwt()->>'email' as email, current_setting('statement_timeout') as timeout`,
    );
    assert.deepEqual(
      { ...row },
      { who: 'authenticated', uid: USER_A, role: 'authenticated', email: 'a@x.test', timeout: '10s' },
    );
    const [after] = await project.sql`select current_user as who`;
    assert.notEqual(after!.who, 'authenticated');
  });

  test("the owner role cannot connect to another project's database and is not superuser", async () => {
    const u = new URL(h.info.DB_URL);
    u.pathname = `/hearth_${other.ref}`;
    const intruder = postgres(u.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
    try {
      await assert.rejects(intruder`select 1`, /permission denied|not permitted|does not have CONNECT/i);
    } finally {
      await intruder.end();
    }
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    try {
      const [r] = await owner`select rolsuper from pg_roles where rolname = current_user`;
      assert.equal(r!.rolsuper, false);
    } finally {
      await owner.end();
    }
  });
});

describe('health', () => {
  test('GET /health answers 200 {"status":"ok"} while the database is reachable', async () => {
    const res = await fetch(`${h.url}/health`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });
});

describe('CORS (browser apps on another origin)', () => {
  const origin = 'http://localhost:3000';

  test('a preflight of auth, rest and storage is 204 without a key, allowing any origin and the asked headers', async () => {
    for (const path of [
      '/rest/v1/notes?select=*',
      '/auth/v1/token?grant_type=password',
      '/storage/v1/object/list/avatars',
      `/project/${other.ref}/rest/v1/notes`,
    ]) {
      const res = await fetch(`${h.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,apikey,content-type,x-client-info,prefer',
        },
      });
      assert.equal(res.status, 204, path);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
      assert.match(res.headers.get('access-control-allow-methods')!, /PATCH/);
      assert.equal(
        res.headers.get('access-control-allow-headers'),
        'authorization,apikey,content-type,x-client-info,prefer',
      );
    }
  });

  test('answers (errors included) carry Access-Control-Allow-Origin and expose Content-Range', async () => {
    const ok = await fetch(`${h.url}/auth/v1/.well-known/jwks.json`, { headers: { origin } });
    assert.equal(ok.headers.get('access-control-allow-origin'), '*');
    assert.match(ok.headers.get('access-control-expose-headers')!, /Content-Range/);
    const refused = await fetch(`${h.url}/rest/v1/notes`, { headers: { origin } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
  });

  test('only requests with an Origin, on the opened prefixes, get CORS headers', async () => {
    const plain = await fetch(`${h.url}/auth/v1/.well-known/jwks.json`);
    assert.equal(plain.headers.get('access-control-allow-origin'), null);
    const root = await fetch(`${h.url}/rest/v1?select=*`, { headers: { origin } });
    assert.equal(root.headers.get('access-control-allow-origin'), '*');
    const near = await fetch(`${h.url}/rest/v10/notes`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'GET' },
    });
    assert.notEqual(near.status, 204);
    assert.equal(near.headers.get('access-control-allow-origin'), null);
  });

  test('management routes are not opened to other origins', async () => {
    const res = await fetch(`${h.url}/v1/projects`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'GET' },
    });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });
});

describe('project runtime cache', () => {
  test('past the TTL an unchanged project keeps its runtime (schema cache, plans); a changed row gets a new one', async () => {
    const registry = h.hearth.registry;
    const before = (await registry.byReference(other.ref))!;
    before.loadedAt = 0; // past the TTL
    const confirmed = (await registry.byReference(other.ref))!;
    assert.equal(confirmed, before, 'confirmed, not rebuilt');
    assert.ok(Date.now() - confirmed.loadedAt < 5000);
    // A change nobody announced (the TTL is the safety net for a lost NOTIFY).
    await h.hearth.p.dbs.control`update platform.projects set name = 'Renamed quietly' where ref = ${other.ref}`;
    confirmed.loadedAt = 0;
    const rebuilt = (await registry.byReference(other.ref))!;
    assert.notEqual(rebuilt, before);
    assert.equal(rebuilt.row.name, 'Renamed quietly');
  });
});
