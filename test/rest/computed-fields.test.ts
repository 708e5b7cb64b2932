// Computed fields: a function of a table's row type is selected, filtered
// and ordered like a column (PostgREST 12), in embeds and write results too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject, OWNER, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`set role ${OWNER};
    create function headline(p posts) returns text language sql stable as $$ select upper(p.title) $$;
    create function name_info(u users) returns jsonb language sql stable as $$ select jsonb_build_object('len', length(u.name)) $$;
    reset role`);
  await p.reload();
});
after(() => p.close());

describe('computed fields', () => {
  test('a function of the row is selected, filtered and ordered like a column, also in embeds and write results', async () => {
    const read = await p.call(
      'anon',
      'GET',
      'posts?select=id,headline,author:users!author_id(name_info->len)&headline=like.*O*&order=headline.desc',
    );
    assert.equal(read.status, 200, read.body ?? '');
    assert.deepEqual(read.json, [
      { id: 2, headline: 'SECOND THOUGHTS', author: { len: 5 } },
      { id: 1, headline: 'HELLO WORLD', author: { len: 5 } },
      { id: 3, headline: 'BOB WRITES', author: { len: 3 } },
    ]);
    const embedded = await p.call(
      'anon',
      'GET',
      'users?select=name,posts!author_id(headline)&posts.headline=eq.BOB WRITES&order=name',
    );
    assert.deepEqual(embedded.json, [
      { name: 'Alice', posts: [] },
      { name: 'Bob', posts: [{ headline: 'BOB WRITES' }] },
    ]);
    // `*` is the columns only, as in PostgREST.
    const star = await p.call('anon', 'GET', 'posts?select=*&id=eq.1');
    assert.equal('headline' in (star.json as object[])[0], false);
    const patched = await p.call('service', 'PATCH', 'posts?id=eq.3&select=id,headline', {
      body: { title: 'Bob rewrites' },
      headers: { prefer: 'return=representation' },
    });
    assert.deepEqual([patched.status, patched.json], [200, [{ id: 3, headline: 'BOB REWRITES' }]]);
  });
});
