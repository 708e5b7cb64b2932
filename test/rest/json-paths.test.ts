// JSON paths as PostgREST 12 takes them: arrows reach composite fields and
// array elements, a path ending in an index is named after its last key, and
// JSON keys may hold any character but the separators.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject, OWNER, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`set role ${OWNER};
    create type coords as (lat numeric, lng numeric);
    create table places (id int primary key, loc coords, langs text[], doc jsonb);
    insert into places values (1, '(48.8,2.3)', '{fr,en}', '{"tags":["a","b"],"@n!$":7}'), (2, '(52.5,13.4)', '{de}', '{"tags":["c"]}');
    reset role`);
  await p.reload();
});
after(() => p.close());

describe('JSON arrows on composite and array columns', () => {
  test('select, filter and order reach composite fields and array elements', async () => {
    const read = await p.call('anon', 'GET', 'places?select=id,loc->>lat,loc->lng,langs->0,second:langs->>1&order=id');
    assert.equal(read.status, 200, read.body ?? '');
    // A path ending in an index is named after the column (or the last key before it).
    assert.deepEqual(read.json, [
      { id: 1, lat: '48.8', lng: 2.3, langs: 'fr', second: 'en' },
      { id: 2, lat: '52.5', lng: 13.4, langs: 'de', second: null },
    ]);
    const filtered = await p.call('anon', 'GET', 'places?select=id&loc->lat=gt.50');
    assert.deepEqual([filtered.status, filtered.json], [200, [{ id: 2 }]]);
    const ordered = await p.call('anon', 'GET', 'places?select=id&order=langs->>0.asc');
    assert.deepEqual(ordered.json, [{ id: 2 }, { id: 1 }]);
  });

  test('a jsonb path ending in an index is named after its last key', async () => {
    const res = await p.call('anon', 'GET', 'places?select=doc->tags->0,last:doc->tags->>-1&order=id');
    assert.equal(res.status, 200, res.body ?? '');
    assert.deepEqual(res.json, [
      { tags: 'a', last: 'b' },
      { tags: 'c', last: 'c' },
    ]);
  });
});

describe('JSON keys', () => {
  test('may hold any character but . , : ( ) and "->", as in PostgREST', async () => {
    const res = await p.call('anon', 'GET', `places?select=id,doc->>@n!$&${encodeURIComponent('doc->>@n!$')}=eq.7`);
    assert.deepEqual([res.status, res.json], [200, [{ id: 1, '@n!$': '7' }]]);
  });
});
