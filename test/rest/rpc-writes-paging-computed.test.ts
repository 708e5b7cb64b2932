// Edge cases found by probing Hearth as an outside PostgREST conformance
// tester: each test pins what PostgREST 12 answers for a combination the
// other suites do not cover.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject, OWNER, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`set role ${OWNER};
    create function sum_all(variadic nums int[]) returns int language sql immutable as 'select sum(n)::int from unnest(nums) n';
    create function headline(p posts) returns text language sql stable as $$ select upper(p.title) $$;
    create function name_info(u users) returns jsonb language sql stable as $$ select jsonb_build_object('len', length(u.name)) $$;
    reset role`);
  await p.reload();
});
after(() => p.close());

describe('rpc', () => {
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

describe('writes', () => {
  test('PATCH with ?columns= sets only the named columns', async () => {
    const res = await p.call('service', 'PATCH', 'posts?id=eq.2&columns=body&select=title,body', {
      body: { body: 'patched', title: 'ignored' },
      headers: { prefer: 'return=representation' },
    });
    assert.equal(res.status, 200, res.body ?? '');
    assert.deepEqual(res.json, [{ title: 'Second thoughts', body: 'patched' }]);
  });

  test('a body that is neither JSON, CSV nor a form is 400 PGRST102 and writes nothing', async () => {
    for (const method of ['POST', 'PATCH']) {
      const res = await p.call('service', method, 'logs?msg=eq.plain', { body: '{"msg":"plain"}', headers: { 'content-type': 'text/plain' } });
      assert.equal(res.status, 400, `${method} ${res.body}`);
      assert.deepEqual(res.json, { message: 'Content-Type not acceptable: text/plain', code: 'PGRST102', details: null, hint: null });
    }
    const rows = await p.admin.unsafe(`select count(*)::int as n from logs where msg = 'plain'`);
    assert.equal(rows[0].n, 0);
  });
});

describe('paging', () => {
  test('a limit or offset of any size is accepted: the limit is capped, a far offset finds nothing', async () => {
    const big = await p.call('anon', 'GET', 'posts?select=id&order=id&limit=10000000000000');
    assert.equal(big.status, 200, big.body ?? '');
    assert.deepEqual(big.json, [{ id: 1 }, { id: 2 }, { id: 3 }]);
    const far = await p.call('anon', 'GET', 'posts?select=id&offset=99999999999999');
    assert.deepEqual([far.status, far.headers['content-range'], far.json], [200, '*/*', []]);
    const counted = await p.call('anon', 'GET', 'posts?select=id&offset=99999999999999', { headers: { prefer: 'count=exact' } });
    assert.deepEqual([counted.status, (counted.json as { code: string }).code], [416, 'PGRST103']);
  });
});

describe('computed fields', () => {
  test('a function of the row is selected, filtered and ordered like a column, also in embeds and write results', async () => {
    const read = await p.call('anon', 'GET', 'posts?select=id,headline,author:users!author_id(name_info->len)&headline=like.*O*&order=headline.desc');
    assert.equal(read.status, 200, read.body ?? '');
    assert.deepEqual(read.json, [
      { id: 2, headline: 'SECOND THOUGHTS', author: { len: 5 } },
      { id: 1, headline: 'HELLO WORLD', author: { len: 5 } },
      { id: 3, headline: 'BOB WRITES', author: { len: 3 } },
    ]);
    const embedded = await p.call('anon', 'GET', 'users?select=name,posts!author_id(headline)&posts.headline=eq.BOB WRITES&order=name');
    assert.deepEqual(embedded.json, [{ name: 'Alice', posts: [] }, { name: 'Bob', posts: [{ headline: 'BOB WRITES' }] }]);
    // `*` is the columns only, as in PostgREST.
    const star = await p.call('anon', 'GET', 'posts?select=*&id=eq.1');
    assert.equal('headline' in (star.json as object[])[0], false);
    const patched = await p.call('service', 'PATCH', 'posts?id=eq.3&select=id,headline', { body: { title: 'Bob rewrites' }, headers: { prefer: 'return=representation' } });
    assert.deepEqual([patched.status, patched.json], [200, [{ id: 3, headline: 'BOB REWRITES' }]]);
  });
});
