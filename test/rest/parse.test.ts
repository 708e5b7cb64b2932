// The /rest/v1 grammar, a row per case: what parses to what, and what is a
// 400 PGRST100 naming the parameter. Pure: no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HearthError } from '../../src/errors.ts';
import { parseOrder, parseQuery, parseSelect } from '../../src/rest/parse.ts';

const col = (name: string, extra: object = {}) => ({
  type: 'column',
  field: { name, json: [] },
  alias: null,
  cast: null,
  ...extra,
});
const agg = (fn: string, field: string | null, extra: object = {}) => ({
  type: 'aggregate',
  fn,
  field: field === null ? null : { name: field, json: [] },
  inputCast: null,
  alias: null,
  cast: null,
  ...extra,
});
const embed = (relation: string, select: unknown[], extra: object = {}) => ({
  type: 'embed',
  relation,
  alias: null,
  hint: null,
  join: 'left',
  spread: false,
  select,
  ...extra,
});

describe('select', () => {
  const cases: [string, unknown][] = [
    ['*', [{ type: 'star' }]],
    ['', []],
    ['id,name', [col('id'), col('name')]],
    ['n:name', [col('name', { alias: 'n' })]],
    ['id::text', [col('id', { cast: 'text' })]],
    ['big:id::int8', [col('id', { alias: 'big', cast: 'int8' })]],
    ['tags::text[]', [col('tags', { cast: 'text[]' })]],
    ['"my col"', [col('my col')]],
    [
      'data->a->>b',
      [
        {
          type: 'column',
          field: {
            name: 'data',
            json: [
              { arrow: '->', key: 'a' },
              { arrow: '->>', key: 'b' },
            ],
          },
          alias: null,
          cast: null,
        },
      ],
    ],
    [
      'data->0',
      [{ type: 'column', field: { name: 'data', json: [{ arrow: '->', key: '0' }] }, alias: null, cast: null }],
    ],
    ['users(*)', [embed('users', [{ type: 'star' }])]],
    ['posts()', [embed('posts', [])]],
    ['a:users!author_id(name)', [embed('users', [col('name')], { alias: 'a', hint: 'author_id' })]],
    ['users!inner(name)', [embed('users', [col('name')], { join: 'inner' })]],
    ['users!fk!left(id)', [embed('users', [col('id')], { hint: 'fk', join: 'left' })]],
    ['...users(name,n:name)', [embed('users', [col('name'), col('name', { alias: 'n' })], { spread: true })]],
    ['...users!fk!inner(id)', [embed('users', [col('id')], { spread: true, hint: 'fk', join: 'inner' })]],
    ['id,posts(id,comments(body))', [col('id'), embed('posts', [col('id'), embed('comments', [col('body')])])]],
    // aggregates: input cast before the function, output cast after it
    ['count()', [agg('count', null)]],
    ['n:count()::text', [agg('count', null, { alias: 'n', cast: 'text' })]],
    ['amount.sum(),amount.avg()', [agg('sum', 'amount'), agg('avg', 'amount')]],
    ['total:amount::numeric.max()::int', [agg('max', 'amount', { alias: 'total', inputCast: 'numeric', cast: 'int' })]],
    ['day,id.min(),comments(count)', [col('day'), agg('min', 'id'), embed('comments', [col('count')])]],
  ];
  for (const [raw, expected] of cases) test(`select=${raw}`, () => assert.deepEqual(parseSelect(raw), expected));

  const bad: [string, RegExp][] = [
    ['id,', /position 4/],
    ['users(id', /expected "\)"/],
    ['id::', /type name/],
    ['id::text;drop', /"," or end of input/],
    ['a->>b->c', /last step/],
    ['users!inner!left(id)', /only one of !inner/],
    ['users!a!b(id)', /only one !hint/],
    ['x:...users(id)', /spread takes no alias/],
    ['id)', /"," or end/],
    ['(id)', /expected a column/],
    ['id.median()', /aggregate function: count\(\), sum\(\), avg\(\), max\(\), min\(\)/],
    ['id.sum', /aggregate function/],
  ];
  for (const [raw, details] of bad) {
    test(`select=${raw} is PGRST100`, () =>
      assert.throws(
        () => parseSelect(raw),
        (e: HearthError) =>
          e.status === 400 &&
          e.code === 'PGRST100' &&
          e.message === `failed to parse select parameter (${raw})` &&
          details.test(e.details ?? ''),
      ));
  }
});

describe('filters', () => {
  const filter = (query: string) => parseQuery(new URLSearchParams(query)).nodes.get('')!.conditions[0];
  const cases: [string, unknown][] = [
    [
      'id=eq.1',
      {
        type: 'filter',
        field: { name: 'id', json: [] },
        negate: false,
        operation: { op: 'eq', quantifier: null, value: '1' },
      },
    ],
    [
      'id=not.eq.1',
      {
        type: 'filter',
        field: { name: 'id', json: [] },
        negate: true,
        operation: { op: 'eq', quantifier: null, value: '1' },
      },
    ],
    [
      'a=eq.x.y.z',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'eq', quantifier: null, value: 'x.y.z' },
      },
    ],
    [
      'a=eq.',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'eq', quantifier: null, value: '' },
      },
    ],
    [
      'a=like.*x*',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'like', quantifier: null, value: '*x*' },
      },
    ],
    [
      'a=like(any).{a*,b*}',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'like', quantifier: 'any', value: '{a*,b*}' },
      },
    ],
    [
      'a=in.(1,2,"x,y","q\\"q")',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'in', values: ['1', '2', 'x,y', 'q"q'] },
      },
    ],
    ['a=in.()', { type: 'filter', field: { name: 'a', json: [] }, negate: false, operation: { op: 'in', values: [] } }],
    [
      'a=is.NULL',
      { type: 'filter', field: { name: 'a', json: [] }, negate: false, operation: { op: 'is', value: 'null' } },
    ],
    [
      'a=not.is.unknown',
      { type: 'filter', field: { name: 'a', json: [] }, negate: true, operation: { op: 'is', value: 'unknown' } },
    ],
    [
      'a=isdistinct.3',
      { type: 'filter', field: { name: 'a', json: [] }, negate: false, operation: { op: 'isdistinct', value: '3' } },
    ],
    [
      'a=fts(english).cat',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'fts', config: 'english', value: 'cat' },
      },
    ],
    [
      'a=wfts.cat dog',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'wfts', config: null, value: 'cat dog' },
      },
    ],
    [
      'a=cs.{1,2}',
      {
        type: 'filter',
        field: { name: 'a', json: [] },
        negate: false,
        operation: { op: 'cs', quantifier: null, value: '{1,2}' },
      },
    ],
    [
      'd->x->>y=eq.1',
      {
        type: 'filter',
        field: {
          name: 'd',
          json: [
            { arrow: '->', key: 'x' },
            { arrow: '->>', key: 'y' },
          ],
        },
        negate: false,
        operation: { op: 'eq', quantifier: null, value: '1' },
      },
    ],
  ];
  for (const [query, expected] of cases) test(query, () => assert.deepEqual(filter(query), expected));

  test('embed-scoped parameters go to their path', () => {
    const p = parseQuery(
      new URLSearchParams(
        'posts.comments.body=eq.x&posts.limit=2&posts.order=id.desc&posts.comments.or=(a.eq.1)&"my emb".x=eq.1',
      ),
    );
    assert.equal(p.nodes.get('posts.comments')!.conditions.length, 2);
    assert.equal(p.nodes.get('posts')!.limit, 2);
    assert.deepEqual(p.nodes.get('posts')!.order, [
      { relation: null, field: { name: 'id', json: [] }, direction: 'desc', nulls: null },
    ]);
    assert.equal(p.nodes.get('my emb')!.conditions.length, 1);
  });

  test('logic trees nest, negate and quote', () => {
    const p = parseQuery(new URLSearchParams('not.or=(a.eq.1,and(b.in.(1,2),c.not.is.null),d.eq."x,)y",or(e.gt.2))'));
    assert.deepEqual(p.nodes.get('')!.conditions[0], {
      type: 'logic',
      op: 'or',
      negate: true,
      children: [
        {
          type: 'filter',
          field: { name: 'a', json: [] },
          negate: false,
          operation: { op: 'eq', quantifier: null, value: '1' },
        },
        {
          type: 'logic',
          op: 'and',
          negate: false,
          children: [
            {
              type: 'filter',
              field: { name: 'b', json: [] },
              negate: false,
              operation: { op: 'in', values: ['1', '2'] },
            },
            { type: 'filter', field: { name: 'c', json: [] }, negate: true, operation: { op: 'is', value: 'null' } },
          ],
        },
        {
          type: 'filter',
          field: { name: 'd', json: [] },
          negate: false,
          operation: { op: 'eq', quantifier: null, value: 'x,)y' },
        },
        {
          type: 'logic',
          op: 'or',
          negate: false,
          children: [
            {
              type: 'filter',
              field: { name: 'e', json: [] },
              negate: false,
              operation: { op: 'gt', quantifier: null, value: '2' },
            },
          ],
        },
      ],
    });
  });

  const bad: [string, string][] = [
    ['id=1', 'filter id'],
    ['id=eq1', 'filter id'],
    ['id=foo.1', 'filter id'],
    ['id=not.1', 'filter id'],
    ['id=is.maybe', 'filter id'],
    ['id=in.1,2', 'filter id'],
    ['id=in.(1,2', 'filter id'],
    ['id=fts(bad config).x', 'filter id'],
    ['id=neq(any).{1}', 'filter id'],
    ['or=(a.eq.1', 'logic tree'],
    ['or=a.eq.1', 'logic tree'],
    ['or=(a.zz.1)', 'logic tree'],
    ['and=()', 'logic tree'],
    ['limit=-1', 'limit parameter'],
    ['limit=ten', 'limit parameter'],
    ['offset=1.5', 'offset parameter'],
    ['order=id.up', 'order parameter'],
    ['order=id.asc.desc', 'order parameter'],
    ['columns=a,,b', 'columns parameter'],
    ['select=a&select=b', 'select parameter'],
  ];
  for (const [query, what] of bad) {
    test(`${query} is PGRST100`, () =>
      assert.throws(
        () => parseQuery(new URLSearchParams(query)),
        (e: HearthError) =>
          e.status === 400 && e.code === 'PGRST100' && e.message.startsWith(`failed to parse ${what}`) && !!e.details,
      ));
  }
});

describe('order', () => {
  const cases: [string, unknown][] = [
    ['id', [{ relation: null, field: { name: 'id', json: [] }, direction: null, nulls: null }]],
    [
      'id.desc.nullslast,name.asc',
      [
        { relation: null, field: { name: 'id', json: [] }, direction: 'desc', nulls: 'last' },
        { relation: null, field: { name: 'name', json: [] }, direction: 'asc', nulls: null },
      ],
    ],
    ['id.nullsfirst', [{ relation: null, field: { name: 'id', json: [] }, direction: null, nulls: 'first' }]],
    ['author(name).desc', [{ relation: 'author', field: { name: 'name', json: [] }, direction: 'desc', nulls: null }]],
    [
      'meta->stats->>views.desc',
      [
        {
          relation: null,
          field: {
            name: 'meta',
            json: [
              { arrow: '->', key: 'stats' },
              { arrow: '->>', key: 'views' },
            ],
          },
          direction: 'desc',
          nulls: null,
        },
      ],
    ],
  ];
  for (const [raw, expected] of cases) test(`order=${raw}`, () => assert.deepEqual(parseOrder(raw), expected));
});

test('rpc arguments are taken out of the filters', () => {
  const p = parseQuery(new URLSearchParams('a=1&b=x&id=eq.3&a=2'), true);
  // Every value of a repeated argument is kept: a VARIADIC one takes them all.
  assert.deepEqual(
    [...p.args],
    [
      ['a', ['1', '2']],
      ['b', ['x']],
    ],
  );
  assert.equal(p.nodes.get('')!.conditions.length, 1);
});

describe('GET /rpc parameters, as PostgREST tells arguments from filters', () => {
  // [query, arguments, number of root filters]
  const cases: [string, [string, string[]][], number][] = [
    ['_=12345', [['_', ['12345']]], 0],
    ['id=', [['id', ['']]], 0],
    ['q=hello world&n=eq.1', [['q', ['hello world']]], 1],
    ['a=eq', [['a', ['eq']]], 0],
    [
      'a=not&b=isdistinct',
      [
        ['a', ['not']],
        ['b', ['isdistinct']],
      ],
      0,
    ],
    ['a=fts(bad config).x', [['a', ['fts(bad config).x']]], 0],
    ['a=not.eq.1&b=in.(1,2)', [], 2],
    ['limit=&offset=', [], 0],
  ];
  for (const [query, args, filters] of cases) {
    test(query, () => {
      const p = parseQuery(new URLSearchParams(query), true);
      assert.deepEqual([...p.args], args);
      assert.equal(p.nodes.get('')!.conditions.length, filters);
    });
  }
  // Started as an operator expression and malformed: a filter that fails, as in PostgREST.
  for (const query of ['a=not.x', 'a=in.1', 'a=is.maybe', 'x.a=1']) {
    test(`${query} is PGRST100`, () =>
      assert.throws(() => parseQuery(new URLSearchParams(query), true), { code: 'PGRST100' }));
  }
});

test('an empty limit or offset is none', () => {
  const root = parseQuery(new URLSearchParams('limit=&offset=')).nodes.get('')!;
  assert.deepEqual([root.limit, root.offset], [null, null]);
});
