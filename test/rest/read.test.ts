// GET/HEAD against a real project database: statuses, Content-Range, embeds,
// spreads, RLS, singular and CSV responses, and request errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALICE, createProject, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
});
after(() => p.close());

describe('Content-Range and status', () => {
  // [query, Prefer, Range, status, Content-Range, rows]
  const cases: [string, string | null, string | null, number, string, number][] = [
    ['posts?select=id', null, null, 200, '0-2/*', 3],
    ['posts?select=id&id=gt.99', null, null, 200, '*/*', 0],
    ['posts?select=id', 'count=exact', null, 200, '0-2/3', 3],
    ['posts?select=id&limit=2', 'count=exact', null, 206, '0-1/3', 2],
    ['posts?select=id&limit=1&offset=1', 'count=exact', null, 206, '1-1/3', 1],
    ['posts?select=id&id=gt.99', 'count=exact', null, 200, '*/0', 0],
    ['posts?select=id&offset=3', 'count=exact', null, 206, '*/3', 0],
    ['posts?select=id&offset=3', null, null, 200, '*/*', 0],
    ['posts?select=id', null, '0-1', 200, '0-1/*', 2],
    ['posts?select=id', 'count=exact', '1-', 206, '1-2/3', 2],
    ['posts?select=id&limit=1', 'count=exact', '0-5', 206, '0-0/3', 1],
    ['posts?select=id', 'count=planned', null, 200, '0-2/', 3],
    ['posts?select=id', 'count=estimated', null, 200, '0-2/3', 3],
  ];
  for (const [query, prefer, range, status, contentRange, rows] of cases) {
    test(`${query} ${prefer ?? ''} ${range ?? ''}`, async () => {
      const headers: Record<string, string> = {};
      if (prefer) headers.prefer = prefer;
      if (range) headers.range = range;
      const res = await p.call('anon', 'GET', query, { headers });
      // A planned count is the planner's estimate: the status follows it.
      if (prefer === 'count=planned') {
        assert.match(res.headers['content-range'], /^0-2\/\d+$/);
      } else {
        assert.equal(res.status, status);
        assert.equal(res.headers['content-range'], contentRange);
      }
      assert.equal((res.json as unknown[]).length, rows);
      if (prefer) assert.equal(res.headers['preference-applied'], prefer);
    });
  }

  test('offset past the end with a count is 416 PGRST103', async () => {
    const res = await p.call('anon', 'GET', 'posts?offset=10', { headers: { prefer: 'count=exact' } });
    assert.equal(res.status, 416);
    assert.deepEqual(res.json, {
      code: 'PGRST103',
      message: 'Requested range not satisfiable',
      details: 'An offset of 10 was requested, but there are only 3 rows.',
      hint: null,
    });
  });

  test('a Range whose end precedes its start is 416', async () => {
    const res = await p.call('anon', 'GET', 'posts', { headers: { range: '5-2' } });
    assert.equal(res.status, 416);
    assert.equal((res.json as { code: string }).code, 'PGRST103');
  });

  test('HEAD answers the headers without a body', async () => {
    const res = await p.call('anon', 'HEAD', 'posts', { headers: { prefer: 'count=exact' } });
    assert.equal(res.status, 200);
    assert.equal(res.body, null);
    assert.equal(res.headers['content-range'], '0-2/3');
  });

  test('limit is capped at 1000 and defaults to 100', async () => {
    await p.admin`insert into logs (msg) select 'm' || i from generate_series(1, 1200) i`;
    const dflt = await p.call('anon', 'GET', 'logs?select=msg', { headers: { prefer: 'count=exact' } });
    assert.equal(dflt.status, 206);
    assert.equal(dflt.headers['content-range'], '0-99/1200');
    const big = await p.call('anon', 'GET', 'logs?select=msg&limit=5000');
    assert.equal(big.headers['content-range'], '0-999/*');
    await p.admin`delete from logs`;
  });
});

describe('select and filters', () => {
  const rows: [string, unknown][] = [
    ['posts?select=id&order=id.desc', [{ id: 3 }, { id: 2 }, { id: 1 }]],
    ['posts?select=t:title,id::text&id=eq.1', [{ t: 'Hello world', id: '1' }]],
    [
      'posts?select=id,meta->>lang,v:meta->stats->views&order=meta->stats->views.desc',
      [
        { id: 1, lang: 'en', v: 10 },
        { id: 3, lang: 'en', v: 7 },
        { id: 2, lang: 'fr', v: 3 },
      ],
    ],
    ['posts?select=id&meta->>lang=eq.fr', [{ id: 2 }]],
    ['posts?select=id&meta->stats->views=gt.5&order=id', [{ id: 1 }, { id: 3 }]],
    ['posts?select=id&title=like.*world', [{ id: 1 }]],
    ['posts?select=id&title=ilike.*BOB*', [{ id: 3 }]],
    ['posts?select=id&title=match.^S', [{ id: 2 }]],
    ['posts?select=id&title=imatch.^s', [{ id: 2 }]],
    ['posts?select=id&id=in.(1,3)&order=id', [{ id: 1 }, { id: 3 }]],
    ['posts?select=id&id=not.in.(1,3)', [{ id: 2 }]],
    ['posts?select=id&id=in.()', []],
    ['posts?select=id&body=is.null', [{ id: 3 }]],
    ['posts?select=id&published=is.false', [{ id: 2 }]],
    ['posts?select=id&editor_id=isdistinct.00000000-0000-4000-8000-00000000000b&order=id', [{ id: 2 }, { id: 3 }]],
    ['posts?select=id&tags=cs.{hello}&order=id', [{ id: 1 }, { id: 3 }]],
    ['posts?select=id&tags=cd.{hello,intro}&order=id', [{ id: 1 }, { id: 2 }, { id: 3 }]],
    ['posts?select=id&tags=ov.{intro}', [{ id: 1 }]],
    ['posts?select=id&title=like(any).{Hello*,Bob*}&order=id', [{ id: 1 }, { id: 3 }]],
    ['posts?select=id&search=fts(english).thoughts', [{ id: 2 }]],
    ['posts?select=id&title=plfts.bob writes', [{ id: 3 }]],
    ['posts?select=id&title=phfts(english).hello world', [{ id: 1 }]],
    ['posts?select=id&search=wfts.hello -bob', [{ id: 1 }]],
    ['posts?select=id&or=(id.eq.1,and(published.is.false,title.ilike.*second*))&order=id', [{ id: 1 }, { id: 2 }]],
    ['posts?select=id&not.and=(published.is.true,id.lt.3)&order=id', [{ id: 2 }, { id: 3 }]],
    [
      'posts?select=id,body&order=body.desc.nullsfirst',
      [
        { id: 3, body: null },
        { id: 2, body: 'more words' },
        { id: 1, body: 'first post' },
      ],
    ],
    [
      'posts?select=id,body&order=body.asc.nullslast',
      [
        { id: 1, body: 'first post' },
        { id: 2, body: 'more words' },
        { id: 3, body: null },
      ],
    ],
    ['posts?select=', [{}, {}, {}]],
  ];
  for (const [query, expected] of rows) {
    test(query, async () => {
      const res = await p.call('anon', 'GET', query);
      assert.equal(res.status, 200, res.body ?? '');
      assert.deepEqual(res.json, expected);
    });
  }
});

describe('embedding', () => {
  const rows: [string, unknown][] = [
    [
      'posts?select=id,author:users!author_id(name)&order=id',
      [
        { id: 1, author: { name: 'Alice' } },
        { id: 2, author: { name: 'Alice' } },
        { id: 3, author: { name: 'Bob' } },
      ],
    ],
    [
      'posts?select=id,users!posts_editor_id_fkey(name)&order=id',
      [
        { id: 1, users: { name: 'Bob' } },
        { id: 2, users: null },
        { id: 3, users: { name: 'Alice' } },
      ],
    ],
    [
      'users?select=name,written:posts!author_id(id)&written.order=id.desc',
      [
        { name: 'Alice', written: [{ id: 2 }, { id: 1 }] },
        { name: 'Bob', written: [{ id: 3 }] },
      ],
    ],
    [
      'users?select=name,posts!editor_id(id)',
      [
        { name: 'Alice', posts: [{ id: 3 }] },
        { name: 'Bob', posts: [{ id: 1 }] },
      ],
    ],
    [
      'posts?select=id,comments(body,user:users(name))&id=eq.1&comments.order=id',
      [
        {
          id: 1,
          comments: [
            { body: 'nice', user: { name: 'Bob' } },
            { body: 'thanks', user: { name: 'Alice' } },
          ],
        },
      ],
    ],
    [
      'posts?select=id,comments(body)&comments.body=eq.nice&id=lt.3&order=id',
      [
        { id: 1, comments: [{ body: 'nice' }] },
        { id: 2, comments: [] },
      ],
    ],
    ['posts?select=id,comments!inner(body)&comments.body=eq.nice', [{ id: 1, comments: [{ body: 'nice' }] }]],
    [
      'posts?select=id,comments(body)&comments.limit=1&comments.order=id.desc&id=eq.1',
      [{ id: 1, comments: [{ body: 'thanks' }] }],
    ],
    [
      'posts?select=id,comments(body)&comments.offset=1&comments.order=id&id=eq.1',
      [{ id: 1, comments: [{ body: 'thanks' }] }],
    ],
    [
      'users?select=name,posts!author_id(id,comments(body))&posts.comments.body=eq.hi bob&name=eq.Bob',
      [{ name: 'Bob', posts: [{ id: 3, comments: [{ body: 'hi bob' }] }] }],
    ],
    ['posts?select=id,comments()&comments=is.null&order=id', [{ id: 2 }]],
    [
      'posts?select=id,editor:users!editor_id(name)&editor=not.is.null&order=id',
      [
        { id: 1, editor: { name: 'Bob' } },
        { id: 3, editor: { name: 'Alice' } },
      ],
    ],
    [
      'posts?select=id,author:users!author_id(name)&order=author(name).desc,id',
      [
        { id: 3, author: { name: 'Bob' } },
        { id: 1, author: { name: 'Alice' } },
        { id: 2, author: { name: 'Alice' } },
      ],
    ],
    // composite foreign keys, both directions
    [
      'shops?select=name,regions(name)&order=id',
      [
        { name: 'Paris shop', regions: { name: 'Ile-de-France' } },
        { name: 'LA shop', regions: { name: 'California' } },
        { name: 'Nowhere', regions: null },
      ],
    ],
    [
      'regions?select=code,shops(name)&country=eq.fr&order=code',
      [
        { code: 'ara', shops: [] },
        { code: 'idf', shops: [{ name: 'Paris shop' }] },
      ],
    ],
    // one-to-one is an object in both directions
    [
      'users?select=name,profiles(bio)&order=name',
      [
        { name: 'Alice', profiles: { bio: 'Alice bio' } },
        { name: 'Bob', profiles: null },
      ],
    ],
    ['profiles?select=bio,users(name)', [{ bio: 'Alice bio', users: { name: 'Alice' } }]],
    // a view reaches its base table's foreign keys
    [
      'post_summaries?select=title,users(name)&order=id',
      [
        { title: 'Hello world', users: { name: 'Alice' } },
        { title: 'Bob writes', users: { name: 'Bob' } },
      ],
    ],
    [
      'users?select=name,post_summaries(title)&name=eq.Bob',
      [{ name: 'Bob', post_summaries: [{ title: 'Bob writes' }] }],
    ],
    // spreads
    [
      'posts?select=id,...users!author_id(author:name,email)&order=id&limit=1',
      [{ id: 1, author: 'Alice', email: 'alice@example.com' }],
    ],
    [
      'posts?select=id,...users!editor_id(editor:name)&order=id',
      [
        { id: 1, editor: 'Bob' },
        { id: 2, editor: null },
        { id: 3, editor: 'Alice' },
      ],
    ],
    [
      'posts?select=id,...users!editor_id!inner(editor:name)&order=id',
      [
        { id: 1, editor: 'Bob' },
        { id: 3, editor: 'Alice' },
      ],
    ],
    ['posts?select=id,...users!author_id(name)&users.name=eq.Bob', [{ id: 3, name: 'Bob' }]],
    [
      'comments?select=body,...posts(title,...users!author_id(author:name))&id=eq.3',
      [{ body: 'hi bob', title: 'Bob writes', author: 'Bob' }],
    ],
  ];
  for (const [query, expected] of rows) {
    test(query, async () => {
      const res = await p.call('anon', 'GET', query);
      assert.equal(res.status, 200, res.body ?? '');
      assert.deepEqual(res.json, expected);
    });
  }

  // [query, status, code, message pattern]
  const errors: [string, number, string, RegExp][] = [
    ['posts?select=id,users(name)', 400, 'PGRST201', /more than one relationship was found for 'posts' and 'users'/],
    ['posts?select=id,users!nope(name)', 400, 'PGRST200', /Could not find a relationship between 'posts' and 'users'/],
    ['posts?select=id,nothing(*)', 400, 'PGRST200', /'posts' and 'nothing'/],
    ['posts?select=id,tags(name)', 400, 'PGRST127', /many-to-many relationship through 'post_tags'/],
    ['users?select=name,...posts!author_id(id)', 400, 'PGRST119', /spread operation on 'posts'/],
    ['posts?select=id,...users!author_id(name)&users.limit=1', 400, 'PGRST119', /cannot be applied to the spread/],
    ['posts?select=id,...users!author_id(name)&users.order=name', 400, 'PGRST119', /cannot be applied to the spread/],
    ['posts?select=id,...users!author_id(*)', 400, 'PGRST100', /select parameter/],
    ['posts?select=id&comments.body=eq.x', 400, 'PGRST108', /'comments' is not an embedded resource/],
    ['users?select=name,posts!author_id(id)&order=posts(id)', 400, 'PGRST118', /related order on 'posts'/],
    ['posts?select=nope', 400, '42703', /column posts.nope does not exist/],
    ['posts?nope=eq.1', 400, '42703', /column posts.nope does not exist/],
    ['posts?order=nope', 400, '42703', /column posts.nope does not exist/],
    // An embedded table is named <table>_<depth>, as in PostgREST's SQL and its 42703 message.
    ['posts?select=id,comments(nope)', 400, '42703', /^column comments_1.nope does not exist$/],
    ['nope', 404, 'PGRST205', /Could not find the table 'public.nope' in the schema cache/],
    ['posts/1', 404, 'PGRST125', /Invalid path/],
    ['posts?id=eq.abc', 400, '22P02', /not valid/],
  ];
  for (const [query, status, code, message] of errors) {
    test(`${query} -> ${status} ${code}`, async () => {
      const res = await p.call('anon', 'GET', query);
      assert.equal(res.status, status, res.body ?? '');
      const body = res.json as { code: string; message: string };
      assert.equal(body.code, code);
      assert.match(body.message, message);
      assert.deepEqual(Object.keys(body).sort(), ['code', 'details', 'hint', 'message']);
    });
  }

  test('the ambiguity error lists every candidate', async () => {
    const res = await p.call('anon', 'GET', 'posts?select=id,users(name)');
    const body = res.json as { details: string; hint: string };
    assert.match(body.hint, /'users!posts_author_id_fkey', 'users!posts_editor_id_fkey'/);
    assert.match(body.details, /posts\(author_id\).*posts\(editor_id\)/);
  });
});

describe('aggregate functions', () => {
  const rows: [string, unknown][] = [
    ['posts?select=count()', [{ count: 3 }]],
    ['posts?select=count()&published=is.true', [{ count: 2 }]],
    // the other selected columns are grouped by; filters apply before grouping
    [
      'posts?select=published,n:count(),id.sum(),id.max()::text&order=published',
      [
        { published: false, n: 1, sum: 2, max: '2' },
        { published: true, n: 2, sum: 4, max: '3' },
      ],
    ],
    ['posts?select=meta->stats->views::int.sum(),meta->stats->views::int.avg()::int', [{ sum: 20, avg: 7 }]],
    // Supabase's `comments(count)` idiom and its count() spelling, per parent row
    [
      'posts?select=id,comments(count)&order=id',
      [
        { id: 1, comments: [{ count: 2 }] },
        { id: 2, comments: [{ count: 0 }] },
        { id: 3, comments: [{ count: 1 }] },
      ],
    ],
    ['posts?select=id,c:comments(n:count())&id=eq.3', [{ id: 3, c: [{ n: 1 }] }]],
    // a to-one embed or a spread can be a grouping column
    [
      'posts?select=count(),author:users!author_id(name)&order=author(name)',
      [
        { count: 2, author: { name: 'Alice' } },
        { count: 1, author: { name: 'Bob' } },
      ],
    ],
    ['posts?select=count(),...users!author_id(name)&users.name=eq.Bob', [{ count: 1, name: 'Bob' }]],
    ['rpc/numbers?n=4&select=count(),numbers.sum()', [{ count: 4, sum: 10 }]],
  ];
  for (const [query, expected] of rows) {
    test(query, async () => {
      const res = await p.call('anon', 'GET', query);
      assert.equal(res.status, 200, res.body ?? '');
      assert.deepEqual(res.json, expected);
    });
  }

  test('count=exact counts the groups', async () => {
    const res = await p.call('anon', 'GET', 'posts?select=published,count()&order=published&limit=1', {
      headers: { prefer: 'count=exact' },
    });
    assert.equal(res.status, 206);
    assert.equal(res.headers['content-range'], '0-0/2');
    assert.deepEqual(res.json, [{ published: false, count: 1 }]);
  });

  test('aggregates run under RLS', async () => {
    const res = await p.call('alice', 'GET', 'todos?select=done,count()&order=done');
    assert.deepEqual(res.json, [
      { done: false, count: 1 },
      { done: true, count: 1 },
    ]);
  });

  test('ordering groups by a column that is not grouped is 400 42803, explained', async () => {
    const res = await p.call('anon', 'GET', 'posts?select=published,count()&order=id');
    assert.equal(res.status, 400);
    assert.equal((res.json as { code: string }).code, '42803');
    assert.match((res.json as { message: string }).message, /order only by the plain columns/);
  });

  test('an aggregate inside a to-one embed aggregates its row (in a spread it applies at the parent)', async () => {
    const res = await p.call('anon', 'GET', 'posts?select=id,users!author_id(count())&order=id');
    assert.equal(res.status, 200, res.body ?? '');
    assert.deepEqual(
      res.json,
      [1, 2, 3].map((id) => ({ id, users: { count: 1 } })),
    );
    const spread = await p.call('anon', 'GET', 'posts?select=...users!author_id(name.count())');
    assert.deepEqual([spread.status, spread.json], [200, [{ count: 3 }]]);
  });
});

describe('row-level security', () => {
  test('a user sees only their own rows; anon sees none', async () => {
    const alice = await p.call('alice', 'GET', 'todos?select=task&order=id');
    assert.deepEqual(alice.json, [{ task: 'alice 1' }, { task: 'alice 2' }]);
    const bob = await p.call('bob', 'GET', 'todos?select=task');
    assert.deepEqual(bob.json, [{ task: 'bob 1' }]);
    const anon = await p.call('anon', 'GET', 'todos', { headers: { prefer: 'count=exact' } });
    assert.equal(anon.headers['content-range'], '*/0');
  });

  test('embeds run under the same policies', async () => {
    await p.admin.unsafe(
      `create table todo_notes (id serial primary key, todo_id int references todos(id), note text); grant all on todo_notes to anon, authenticated;`,
    );
    await p.admin.unsafe(`insert into todo_notes (todo_id, note) values (1, 'a1'), (3, 'b1')`);
    await p.reload();
    const res = await p.call('alice', 'GET', 'todo_notes?select=note,todos(task)&order=id');
    assert.deepEqual(res.json, [
      { note: 'a1', todos: { task: 'alice 1' } },
      { note: 'b1', todos: null },
    ]);
  });

  test('a table without grants is 401 for anon, 403 for a user, generic text', async () => {
    const anon = await p.call('anon', 'GET', 'secrets');
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.json, { code: '42501', message: 'Permission denied.', details: null, hint: null });
    const user = await p.call('alice', 'GET', 'secrets');
    assert.equal(user.status, 403);
    const service = await p.call('service', 'GET', 'secrets');
    assert.equal(service.status, 200);
  });

  test('GET runs read-only', async () => {
    await p.admin.unsafe(
      `set role hearth_test_owner; create view counter as select nextval('posts_id_seq') as n; reset role`,
    );
    await p.reload();
    const res = await p.call('service', 'GET', 'counter');
    assert.equal(res.status, 405);
    assert.equal((res.json as { code: string }).code, '25006');
  });
});

describe('media types', () => {
  test('object accept answers one object', async () => {
    const res = await p.call('anon', 'GET', `users?select=name&id=eq.${ALICE}`, {
      headers: { accept: 'application/vnd.pgrst.object+json' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/vnd.pgrst.object+json; charset=utf-8');
    assert.deepEqual(JSON.parse(res.body!), { name: 'Alice' });
  });

  for (const [query, n] of [
    ['users?id=eq.00000000-0000-4000-8000-000000000000', 0],
    ['users', 2],
  ] as const) {
    test(`object accept with ${n} rows is 406 PGRST116`, async () => {
      const res = await p.call('anon', 'GET', query, { headers: { accept: 'application/vnd.pgrst.object+json' } });
      assert.equal(res.status, 406);
      assert.deepEqual(res.json, {
        code: 'PGRST116',
        message: 'Cannot coerce the result to a single JSON object',
        details: `The result contains ${n} rows`,
        hint: null,
      });
    });
  }

  test('nulls=stripped leaves null fields out (supabase-js stripNulls())', async () => {
    const query = 'posts?select=id,body,editor_id&order=id&id=gt.1';
    const array = await p.call('anon', 'GET', query, {
      headers: { accept: 'application/vnd.pgrst.array+json;nulls=stripped' },
    });
    assert.deepEqual(JSON.parse(array.body!), [
      { id: 2, body: 'more words' },
      { id: 3, editor_id: '00000000-0000-4000-8000-00000000000a' },
    ]);
    const object = await p.call('anon', 'GET', `${query}&limit=1`, {
      headers: { accept: 'application/vnd.pgrst.object+json;nulls=stripped' },
    });
    assert.deepEqual(JSON.parse(object.body!), { id: 2, body: 'more words' });
    const plain = await p.call('anon', 'GET', query, { headers: { accept: 'application/vnd.pgrst.array+json' } });
    assert.deepEqual(JSON.parse(plain.body!)[0], { id: 2, body: 'more words', editor_id: null });
  });

  test('text/csv', async () => {
    const res = await p.call('anon', 'GET', 'posts?select=id,title,body&order=id', { headers: { accept: 'text/csv' } });
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(
      res.body,
      'id,title,body\n1,"Hello world","first post"\n2,"Second thoughts","more words"\n3,"Bob writes",',
    );
  });

  test('an unknown media type is 406 PGRST107', async () => {
    const res = await p.call('anon', 'GET', 'posts', { headers: { accept: 'image/png' } });
    assert.equal(res.status, 406);
    assert.equal((res.json as { code: string }).code, 'PGRST107');
  });

  test('an unknown profile is 406 PGRST106', async () => {
    const res = await p.call('anon', 'GET', 'posts', { headers: { 'accept-profile': 'auth' } });
    assert.equal(res.status, 406);
    assert.deepEqual(res.json, {
      code: 'PGRST106',
      message: 'The schema must be one of the following: public',
      details: null,
      hint: null,
    });
  });
});

describe('paging', () => {
  test('a limit or offset of any size is accepted: the limit is capped, a far offset finds nothing', async () => {
    const big = await p.call('anon', 'GET', 'posts?select=id&order=id&limit=10000000000000');
    assert.equal(big.status, 200, big.body ?? '');
    assert.deepEqual(big.json, [{ id: 1 }, { id: 2 }, { id: 3 }]);
    const far = await p.call('anon', 'GET', 'posts?select=id&offset=99999999999999');
    assert.deepEqual([far.status, far.headers['content-range'], far.json], [200, '*/*', []]);
    const counted = await p.call('anon', 'GET', 'posts?select=id&offset=99999999999999', {
      headers: { prefer: 'count=exact' },
    });
    assert.deepEqual([counted.status, (counted.json as { code: string }).code], [416, 'PGRST103']);
  });
});
