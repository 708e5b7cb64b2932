// RPC (every return shape, GET vs POST, grants), the OpenAPI document, and
// schema-cache reload through the event trigger and NOTIFY pgrst.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSchemaCacheStore } from '../../src/rest/schema-cache.ts';
import { ALICE, createProject, OWNER, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`set role ${OWNER};
    create function sum_all(variadic nums int[]) returns int language sql immutable as 'select sum(n)::int from unnest(nums) n';
    create function log_count() returns int language sql as 'select count(*)::int from logs';
    create function sneaky_log(msg text) returns int language sql stable as 'select log_it(msg)';
    reset role`);
  await p.reload();
});
after(() => p.close());

describe('rpc', () => {
  // [method, path, body, status, response body]
  const cases: [string, string, unknown, number, string | null][] = [
    ['POST', 'rpc/add_numbers', { a: 1, b: 2 }, 200, '3'],
    ['POST', 'rpc/add_numbers', { a: 1 }, 200, '11'],
    ['GET', 'rpc/add_numbers?a=5&b=5', undefined, 200, '10'],
    ['GET', 'rpc/numbers?n=3', undefined, 200, '[1, 2, 3]'],
    ['GET', 'rpc/first_post?select=id,title', undefined, 200, '{"id":1,"title":"Hello world"}'],
    ['GET', 'rpc/post_stats', undefined, 200, '[{"total":3,"published":2}]'],
    ['POST', 'rpc/do_nothing', {}, 204, null],
    ['POST', 'rpc/echo', { any: ['json'] }, 200, '{"any": ["json"]}'],
  ];
  for (const [method, path, body, status, expected] of cases) {
    test(`${method} ${path}`, async () => {
      const res = await p.call('anon', method, path, { body });
      assert.equal(res.status, status, res.body ?? '');
      assert.equal(res.body, expected);
    });
  }

  test('set-returning functions filter, order, embed and count like tables', async () => {
    const res = await p.call(
      'anon',
      'GET',
      `rpc/posts_by?author=${ALICE}&select=id,comments(body)&id=lt.3&order=id.desc&comments.order=id`,
      { headers: { prefer: 'count=exact' } },
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, [
      { id: 2, comments: [] },
      { id: 1, comments: [{ body: 'nice' }, { body: 'thanks' }] },
    ]);
    assert.equal(res.headers['content-range'], '0-1/2');
    const post = await p.call('anon', 'POST', 'rpc/posts_by?select=title&limit=1', { body: { author: ALICE } });
    assert.deepEqual(post.json, [{ title: 'Hello world' }]);
  });

  // [method, path, body, status, code]
  const errors: [string, string, unknown, number, string][] = [
    ['POST', 'rpc/nope', {}, 404, 'PGRST202'],
    ['POST', 'rpc/add_numbers', { c: 1 }, 404, 'PGRST202'],
    ['POST', 'rpc/add_numbers', {}, 404, 'PGRST202'],
    ['GET', 'rpc/log_it?msg=x', undefined, 405, '25006'],
    ['HEAD', 'rpc/log_it?msg=x', undefined, 405, '25006'],
    ['POST', 'rpc/sneaky_log', { msg: 'x' }, 405, '25006'],
    ['GET', 'rpc/add_numbers?a=1&b=2&c=3', undefined, 404, 'PGRST202'],
    ['GET', 'rpc/add_numbers?a=1&_=12345', undefined, 404, 'PGRST202'],
    ['GET', 'rpc/nosuch?x=1', undefined, 404, 'PGRST202'],
    ['PATCH', 'rpc/add_numbers', {}, 405, 'PGRST101'],
    ['GET', 'rpc/hidden', undefined, 401, '42501'],
    ['POST', 'rpc/add_numbers', { a: 'x' }, 400, '22P02'],
    ['POST', 'rpc/fail_with', { msg: 'custom failure' }, 400, 'P0001'],
  ];
  for (const [method, path, body, status, code] of errors) {
    test(`${method} ${path} ${JSON.stringify(body ?? '')} -> ${status} ${code}`, async () => {
      const res = await p.call('anon', method, path, { body });
      assert.equal(res.status, status, res.body ?? '');
      assert.equal((res.json as { code: string }).code, code);
    });
  }

  test('GET of a volatile function runs it READ ONLY: reading works, writing is 405 25006 and keeps nothing', async () => {
    const read = await p.call('anon', 'GET', 'rpc/log_count');
    assert.equal(read.status, 200, read.body ?? '');
    const before = Number(read.body);
    const write = await p.call('anon', 'GET', 'rpc/log_it?msg=via-get');
    assert.deepEqual(write.json, {
      message: 'This request cannot write: GET and HEAD run read-only. Use POST.',
      code: '25006',
      details: null,
      hint: null,
    });
    assert.equal((await p.call('anon', 'GET', 'rpc/log_count')).body, String(before));
  });

  test('POST of a STABLE function that writes says why it ran read-only', async () => {
    const anon = await p.call('anon', 'POST', 'rpc/sneaky_log', { body: { msg: 'x' } });
    assert.equal(anon.status, 405);
    const why = 'the function is declared STABLE or IMMUTABLE, so it runs read-only. Declare it VOLATILE if it writes.';
    assert.equal((anon.json as { message: string }).message, `This request cannot write: ${why}`);
    // The secret key sees the database's own message, and the reason as the hint.
    const secret = await p.call('service', 'POST', 'rpc/sneaky_log', { body: { msg: 'x' } });
    assert.deepEqual(secret.json, {
      message: 'cannot execute INSERT in a read-only transaction',
      code: '25006',
      details: null,
      hint: why,
    });
  });

  test('a volatile function runs with POST and writes', async () => {
    const res = await p.call('service', 'POST', 'rpc/log_it', { body: { msg: 'from rpc' } });
    assert.equal(res.body, '1');
    assert.equal((await p.admin`select count(*)::int as n from logs where msg = 'from rpc'`)[0].n, 1);
  });

  test('RAISE text reaches the client; details stay with the secret key', async () => {
    const anon = await p.call('anon', 'POST', 'rpc/fail_with', { body: { msg: 'custom failure' } });
    assert.deepEqual(anon.json, { code: 'P0001', message: 'custom failure', details: null, hint: null });
    const service = await p.call('service', 'POST', 'rpc/fail_with', { body: { msg: 'custom failure' } });
    assert.equal((service.json as { hint: string }).hint, 'app hint');
  });
});

describe('openapi', () => {
  test('GET / describes what the role may use', async () => {
    const res = await p.call('anon', 'GET', '');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/openapi+json; charset=utf-8');
    const doc = res.json as {
      swagger: string;
      paths: Record<string, unknown>;
      definitions: Record<string, { properties: Record<string, unknown> }>;
    };
    assert.equal(doc.swagger, '2.0');
    assert.ok(doc.paths['/posts'] && doc.paths['/rpc/add_numbers']);
    assert.equal(doc.paths['/secrets'], undefined, 'anon has no privilege on secrets');
    assert.equal(doc.paths['/rpc/hidden'], undefined, 'anon may not execute hidden()');
    // An identity column's default is its sequence, as PostgREST describes it.
    assert.deepEqual(doc.definitions.posts.properties.id, {
      type: 'integer',
      format: 'bigint',
      default: "nextval('public.posts_id_seq')",
      description: 'Note:\nThis is a Primary Key.<pk/>',
    });
    const service = await p.call('service', 'GET', '');
    assert.ok((service.json as { paths: Record<string, unknown> }).paths['/secrets']);
  });
});

describe('schema reload', () => {
  test('DDL over the direct connection reaches the cache, and so does NOTIFY pgrst', async () => {
    const store = await createSchemaCacheStore(p.sql, ['public']);
    try {
      const before = await store.get();
      assert.equal(before.relations.has('public\u0000gadgets'), false);
      const reloaded = new Promise<void>((resolve) => {
        const t = setInterval(async () => {
          if ((await store.get()).relations.has('public\u0000gadgets')) {
            clearInterval(t);
            resolve();
          }
        }, 20);
      });
      await p.admin.unsafe('set role hearth_test_owner; create table gadgets (id int primary key); reset role');
      await reloaded;

      // A user's own notification also reloads (a change the event trigger cannot see).
      const cached = await store.get();
      await p.admin.unsafe(`notify pgrst, 'reload schema'`);
      await new Promise<void>((resolve) => {
        const t = setInterval(async () => {
          if ((await store.get()) !== cached) {
            clearInterval(t);
            resolve();
          }
        }, 20);
      });
    } finally {
      await store.close();
    }
  });
});

describe('rpc with a VARIADIC argument', () => {
  test('a VARIADIC argument takes a JSON array (POST) or repeated parameters (GET)', async () => {
    const post = await p.call('anon', 'POST', 'rpc/sum_all', { body: { nums: [1, 2, 3] } });
    assert.equal(post.status, 200, post.body ?? '');
    assert.equal(post.body, '6');
    const get = await p.call('anon', 'GET', 'rpc/sum_all?nums=1&nums=5');
    assert.equal(get.status, 200, get.body ?? '');
    assert.equal(get.body, '6');
    const one = await p.call('anon', 'GET', 'rpc/sum_all?nums=4');
    assert.equal(one.body, '4');
  });
});
