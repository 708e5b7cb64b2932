// POST/PATCH/DELETE and upsert: statuses, Content-Range, Prefer handling,
// RLS on writes, and error mapping for constraint violations.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALICE, BOB, createProject, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
});
after(() => p.close());

const rep = { prefer: 'return=representation' };

describe('insert', () => {
  test('minimal: 201, no body, Content-Range */*', async () => {
    const res = await p.call('service', 'POST', 'tags', { body: { name: 'a' } });
    assert.deepEqual([res.status, res.body, res.headers['content-range']], [201, null, '*/*']);
  });

  test('representation of an array, select and count', async () => {
    const res = await p.call('service', 'POST', 'tags?select=name', {
      body: [{ name: 'b' }, { name: 'c' }],
      headers: { prefer: 'return=representation,count=exact' },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, [{ name: 'b' }, { name: 'c' }]);
    assert.equal(res.headers['content-range'], '*/2');
    assert.equal(res.headers['preference-applied'], 'return=representation, count=exact');
  });

  test('representation with an embed', async () => {
    const res = await p.call('service', 'POST', 'comments?select=body,posts(title)', {
      body: { post_id: 1, body: 'embedded' },
      headers: rep,
    });
    assert.deepEqual(res.json, [{ body: 'embedded', posts: { title: 'Hello world' } }]);
  });

  test('headers-only gives Location', async () => {
    const res = await p.call('service', 'POST', 'tags', {
      body: { name: 'loc' },
      headers: { prefer: 'return=headers-only' },
    });
    assert.equal(res.status, 201);
    assert.match(res.headers.location, /^\/tags\?id=eq\.\d+$/);
    assert.equal(res.body, null);
  });

  test('all object keys must match, unless columns= names them', async () => {
    const bad = await p.call('service', 'POST', 'logs', { body: [{ msg: 'a' }, { level: 2 }] });
    assert.equal(bad.status, 400);
    assert.equal((bad.json as { code: string }).code, 'PGRST102');
    const ok = await p.call('service', 'POST', 'logs?columns=msg,level', {
      body: [{ msg: 'a', extra: 1 }, { level: 2 }],
      headers: rep,
    });
    assert.deepEqual(ok.json, [
      { msg: 'a', level: null },
      { msg: null, level: 2 },
    ]);
  });

  test('missing=default uses column defaults for absent keys', async () => {
    const res = await p.call('service', 'POST', 'logs?columns=msg,level', {
      body: [{ msg: 'x' }],
      headers: { prefer: 'return=representation,missing=default' },
    });
    assert.deepEqual(res.json, [{ msg: 'x', level: 1 }]);
    assert.equal(res.headers['preference-applied'], 'missing=default, return=representation');
  });

  test('a form body inserts one row, its values read by the column types', async () => {
    const res = await p.call('service', 'POST', 'logs', {
      body: 'msg=from+a+form&level=7',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...rep },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, [{ msg: 'from a form', level: 7 }]);
  });

  test('an unknown column is PGRST204', async () => {
    const res = await p.call('service', 'POST', 'tags', { body: { nope: 1 } });
    assert.equal(res.status, 400);
    assert.equal(
      (res.json as { message: string }).message,
      "Could not find the 'nope' column of 'tags' in the schema cache",
    );
  });

  test('invalid JSON is PGRST102', async () => {
    const res = await p.call('service', 'POST', 'tags', {
      body: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.equal((res.json as { code: string }).code, 'PGRST102');
  });

  test('CSV bodies insert rows', async () => {
    const res = await p.call('service', 'POST', 'logs', {
      body: 'msg,level\ncsv one,5\n"csv, two",',
      headers: { 'content-type': 'text/csv', ...rep },
    });
    assert.deepEqual(res.json, [
      { msg: 'csv one', level: 5 },
      { msg: 'csv, two', level: null },
    ]);
  });

  test('a duplicate key is 409; only the secret key sees the detail', async () => {
    const anon = await p.call('anon', 'POST', 'users', { body: { id: ALICE, name: 'dup' } });
    assert.equal(anon.status, 409);
    assert.deepEqual(anon.json, {
      code: '23505',
      message: 'A row with the same unique value already exists.',
      details: null,
      hint: null,
    });
    const service = await p.call('service', 'POST', 'users', { body: { id: ALICE, name: 'dup' } });
    assert.equal(service.status, 409);
    assert.match((service.json as { message: string }).message, /users_pkey/);
    assert.match((service.json as { details: string }).details, /already exists/);
  });

  test('a missing foreign key is 409 23503; a bad value is 400 22P02', async () => {
    const fk = await p.call('service', 'POST', 'comments', { body: { post_id: 999, body: 'x' } });
    assert.deepEqual([fk.status, (fk.json as { code: string }).code], [409, '23503']);
    const bad = await p.call('service', 'POST', 'comments', { body: { post_id: 'abc', body: 'x' } });
    assert.deepEqual([bad.status, (bad.json as { code: string }).code], [400, '22P02']);
  });

  test('object accept on a write of two rows is 406 and rolls back', async () => {
    const res = await p.call('service', 'POST', 'tags', {
      body: [{ name: 'r1' }, { name: 'r2' }],
      headers: { ...rep, accept: 'application/vnd.pgrst.object+json' },
    });
    assert.equal(res.status, 406);
    assert.equal((await p.admin`select count(*)::int as n from tags where name in ('r1', 'r2')`)[0].n, 0);
    const one = await p.call('service', 'POST', 'tags?select=name', {
      body: { name: 'r3' },
      headers: { ...rep, accept: 'application/vnd.pgrst.object+json' },
    });
    assert.deepEqual(JSON.parse(one.body!), { name: 'r3' });
  });
});

describe('upsert', () => {
  test('merge-duplicates on the primary key', async () => {
    const res = await p.call('service', 'POST', 'regions', {
      body: [
        { country: 'fr', code: 'idf', name: 'Paris region' },
        { country: 'de', code: 'by', name: 'Bayern' },
      ],
      headers: { prefer: 'resolution=merge-duplicates,return=representation' },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, [
      { country: 'fr', code: 'idf', name: 'Paris region' },
      { country: 'de', code: 'by', name: 'Bayern' },
    ]);
    assert.equal(res.headers['preference-applied'], 'resolution=merge-duplicates, return=representation');
  });

  test('ignore-duplicates with on_conflict', async () => {
    const res = await p.call('service', 'POST', 'users?on_conflict=email', {
      body: { id: '00000000-0000-4000-8000-0000000000cc', name: 'Other', email: 'alice@example.com' },
      headers: { prefer: 'resolution=ignore-duplicates,return=representation' },
    });
    assert.deepEqual(res.json, []);
  });

  test('on_conflict naming no unique column set is 400 42P10, explained to every caller', async () => {
    const res = await p.call('anon', 'POST', 'posts?on_conflict=title', {
      body: { author_id: ALICE, title: 'x' },
      headers: { prefer: 'resolution=merge-duplicates' },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, {
      code: '42P10',
      message: 'on_conflict must name the columns of a primary key or unique constraint.',
      details: null,
      hint: null,
    });
    const rows = await p.admin`select 1 from posts where title = 'x'`;
    assert.equal(rows.length, 0);
  });

  test('no primary key and no on_conflict is a 400 that says what to do', async () => {
    const res = await p.call('service', 'POST', 'logs', {
      body: { msg: 'x' },
      headers: { prefer: 'resolution=merge-duplicates' },
    });
    assert.equal(res.status, 400);
    assert.match((res.json as { message: string }).message, /no primary key and no on_conflict/);
    assert.match((res.json as { hint: string }).hint, /on_conflict=/);
  });
});

describe('update and delete', () => {
  for (const method of ['PATCH', 'DELETE']) {
    test(`${method} without a filter is 400 21000`, async () => {
      const res = await p.call('service', method, 'logs', { body: { msg: 'x' } });
      assert.equal(res.status, 400);
      assert.equal((res.json as { code: string }).code, '21000');
    });
  }

  test('PATCH: 204, or 200 with the rows; Content-Range counts them', async () => {
    const minimal = await p.call('service', 'PATCH', 'posts?id=in.(1,2)', { body: { published: true } });
    assert.deepEqual([minimal.status, minimal.body, minimal.headers['content-range']], [204, null, '0-1/*']);
    const full = await p.call('service', 'PATCH', 'posts?id=eq.2&select=id,published', {
      body: { published: false },
      headers: { prefer: 'return=representation,count=exact' },
    });
    assert.deepEqual(
      [full.status, full.json, full.headers['content-range']],
      [200, [{ id: 2, published: false }], '0-0/1'],
    );
    const none = await p.call('service', 'PATCH', 'posts?id=eq.99', { body: { published: true } });
    assert.equal(none.headers['content-range'], '*/*');
  });

  test('boolean, json and array values keep their meaning', async () => {
    await p.call('service', 'PATCH', 'posts?id=eq.3', {
      body: { meta: { lang: 'de', n: [1] }, tags: ['a', 'b'], published: true },
    });
    const res = await p.call(
      'anon',
      'GET',
      'posts?select=id&published=eq.true&meta=eq.{"lang":"de","n":[1]}&tags=eq.{a,b}',
    );
    assert.deepEqual(res.json, [{ id: 3 }]);
  });

  test('RLS: a user updates and deletes only their rows', async () => {
    const other = await p.call('alice', 'PATCH', `todos?owner=eq.${BOB}`, { body: { done: true }, headers: rep });
    assert.deepEqual(other.json, []);
    const own = await p.call('alice', 'PATCH', 'todos?id=eq.1&select=task,done', {
      body: { done: true },
      headers: rep,
    });
    assert.deepEqual(own.json, [{ task: 'alice 1', done: true }]);
    const insertForOther = await p.call('alice', 'POST', 'todos', { body: { task: 'x', owner: BOB } });
    assert.equal(insertForOther.status, 403);
    assert.deepEqual(insertForOther.json, {
      code: '42501',
      message: 'new row violates row-level security policy',
      details: null,
      hint: null,
    });
    const del = await p.call('bob', 'DELETE', 'todos?task=like.alice*', { headers: rep });
    assert.deepEqual(del.json, []);
    const delOwn = await p.call('bob', 'DELETE', 'todos?task=eq.bob 1&select=task', { headers: rep });
    assert.deepEqual([delOwn.status, delOwn.json], [200, [{ task: 'bob 1' }]]);
  });

  test('DELETE minimal is 204', async () => {
    const res = await p.call('service', 'DELETE', 'logs?msg=eq.x');
    assert.equal(res.status, 204);
  });
});

describe('PATCH columns and bodies of other types', () => {
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
      const res = await p.call('service', method, 'logs?msg=eq.plain', {
        body: '{"msg":"plain"}',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(res.status, 400, `${method} ${res.body}`);
      assert.deepEqual(res.json, {
        message: 'Content-Type not acceptable: text/plain',
        code: 'PGRST102',
        details: null,
        hint: null,
      });
    }
    const rows = await p.admin.unsafe(`select count(*)::int as n from logs where msg = 'plain'`);
    assert.equal(rows[0].n, 0);
  });
});
