// OPTIONS answers Allow with the methods a table, view or function takes (as
// PostgREST 12), and Content-Profile names the schema an answer came from.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadSchemaCache } from '../../src/rest/schema-cache.ts';
import { createProject, OWNER, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`set role ${OWNER};
    create table places (id int primary key);
    create view place_count as select count(*) as n from places;
    reset role`);
  await p.reload();
});
after(() => p.close());

describe('OPTIONS', () => {
  const cases: [string, number, string | null][] = [
    ['', 200, 'OPTIONS,GET,HEAD'],
    ['posts', 200, 'OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE'],
    // No primary key: no PUT.
    ['logs', 200, 'OPTIONS,GET,HEAD,POST,PATCH,DELETE'],
    // An auto-updatable view keeps its writes; an aggregate view is read-only.
    ['post_summaries', 200, 'OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE'],
    ['place_count', 200, 'OPTIONS,GET,HEAD'],
    ['rpc/add_numbers', 200, 'OPTIONS,GET,HEAD,POST'],
    ['rpc/log_it', 200, 'OPTIONS,POST'],
    ['nope', 404, null],
    ['rpc/nope', 404, null],
  ];
  for (const [path, status, allow] of cases) {
    test(`/${path} answers ${status}${allow ? ` Allow: ${allow}` : ''}`, async () => {
      const res = await p.call('anon', 'OPTIONS', path);
      assert.equal(res.status, status, res.body ?? '');
      assert.equal(res.headers.allow, allow ?? undefined);
      if (status === 200) assert.equal(res.body, null);
    });
  }
});

describe('Content-Profile', () => {
  test('names the schema answered from when the request chose one or there are several', async () => {
    const plain = await p.call('anon', 'GET', 'tags?select=name&limit=1');
    assert.equal(plain.headers['content-profile'], undefined);
    const named = await p.call('anon', 'GET', 'tags?select=name&limit=1', { headers: { 'accept-profile': 'public' } });
    assert.deepEqual([named.status, named.headers['content-profile']], [200, 'public']);

    await p.admin.unsafe(`create schema extra authorization ${OWNER};
      set role ${OWNER};
      create table extra.notes (id int primary key, body text);
      grant usage on schema extra to anon;
      grant select, insert on extra.notes to anon;
      reset role`);
    const single = p.cache;
    p.cache = await loadSchemaCache(p.sql, ['public', 'extra']);
    try {
      const byDefault = await p.call('anon', 'GET', 'tags?select=name&limit=1');
      assert.equal(byDefault.headers['content-profile'], 'public');
      const written = await p.call('anon', 'POST', 'notes', {
        body: { id: 1, body: 'x' },
        headers: { 'content-profile': 'extra', prefer: 'return=representation' },
      });
      assert.deepEqual(
        [written.status, written.headers['content-profile'], written.json],
        [201, 'extra', [{ id: 1, body: 'x' }]],
      );
    } finally {
      p.cache = single;
    }
  });
});
