// Embedded resources as PostgREST 12 answers them: a filter on the embedded
// resource itself takes is.null / not.is.null only (PGRST120), and aggregates
// in a spread apply at the parent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
});
after(() => p.close());

describe('a filter on an embedded resource itself', () => {
  test('takes is.null / not.is.null only; any other operator is 400 PGRST120', async () => {
    const kept = await p.call('anon', 'GET', 'users?select=name,posts!author_id(id)&posts=not.is.null&order=name');
    assert.equal(kept.status, 200, kept.body ?? '');
    for (const query of ['posts=eq.1', 'or=(posts.eq.1,name.eq.Bob)']) {
      const res = await p.call('anon', 'GET', `users?select=name,posts!author_id(id)&${query}`);
      assert.equal(res.status, 400, res.body ?? '');
      assert.deepEqual(res.json, {
        message: "Bad operator on the 'posts' embedded resource",
        code: 'PGRST120',
        details: 'Only is null or not is null filters are allowed on embedded resources',
        hint: null,
      });
    }
  });
});

describe('aggregates in a spread', () => {
  test('apply at the parent, grouped by its other columns (PostgREST hoists them)', async () => {
    const hoisted = await p.call(
      'anon',
      'GET',
      'posts?select=published,...users!author_id(last:name.max(),count())&order=published',
    );
    assert.equal(hoisted.status, 200, hoisted.body ?? '');
    assert.deepEqual(hoisted.json, [
      { published: false, last: 'Alice', count: 1 },
      { published: true, last: 'Bob', count: 2 },
    ]);
    const groupedBySpread = await p.call('anon', 'GET', 'posts?select=id.count(),...users!author_id(name)');
    assert.deepEqual(
      (groupedBySpread.json as { name: string }[]).sort((a, b) => a.name.localeCompare(b.name)),
      [
        { count: 2, name: 'Alice' },
        { count: 1, name: 'Bob' },
      ],
    );
    // In a to-one embed (not spread) they aggregate that embed's one row, as PostgREST does.
    const toOne = await p.call('anon', 'GET', 'posts?select=users!author_id(name.max())&order=id');
    assert.deepEqual(
      [toOne.status, toOne.json],
      [200, [{ users: { max: 'Alice' } }, { users: { max: 'Alice' } }, { users: { max: 'Bob' } }]],
    );
  });
});
