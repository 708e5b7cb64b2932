// PUT (single-row upsert), Prefer: handling / tx / max-affected / params,
// and limit/order on PATCH and DELETE, as PostgREST 12 behaves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BOB, createProject, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`
    set role hearth_test_owner;
    create table items (id int primary key, v int not null default 0);
    insert into items select i, 0 from generate_series(1, 6) i;
    create view log_view as select msg, level from logs;
    create function sum_of(payload json) returns int language sql immutable as $$ select (payload->>'a')::int + (payload->>'b')::int $$;
    reset role;`);
  await p.reload();
});
after(() => p.close());

const code = (res: { json: unknown }) => (res.json as { code?: string } | undefined)?.code;
const rows = async (pathAndQuery: string) => (await p.call('service', 'GET', pathAndQuery)).json;

describe('PUT', () => {
  test('inserts the row, then replaces it; return= is honoured', async () => {
    const put = (body: unknown, headers: Record<string, string> = {}) =>
      p.call('service', 'PUT', 'regions?country=eq.de&code=eq.by', { body, headers });
    const created = await put({ country: 'de', code: 'by', name: 'Bayern' });
    assert.deepEqual([created.status, created.body], [204, null]);
    const replaced = await put({ country: 'de', code: 'by', name: 'Bavaria' }, { prefer: 'return=representation' });
    assert.deepEqual(
      [replaced.status, replaced.json, replaced.headers['preference-applied']],
      [200, [{ country: 'de', code: 'by', name: 'Bavaria' }], 'return=representation'],
    );
    const single = await p.call('service', 'PUT', 'regions?code=eq.by&country=eq.de&select=name', {
      body: [{ country: 'de', code: 'by', name: 'Freistaat' }],
      headers: { prefer: 'return=representation', accept: 'application/vnd.pgrst.object+json' },
    });
    assert.deepEqual([single.status, single.json], [200, { name: 'Freistaat' }]);
    assert.deepEqual(await rows('regions?country=eq.de'), [{ country: 'de', code: 'by', name: 'Freistaat' }]);
  });

  const cases: [string, string, unknown, number, string][] = [
    [
      'a key column without a filter',
      'regions?country=eq.de',
      { country: 'de', code: 'x', name: 'n' },
      405,
      'PGRST105',
    ],
    [
      'a filter beside the key',
      'regions?country=eq.de&code=eq.x&name=eq.n',
      { country: 'de', code: 'x', name: 'n' },
      405,
      'PGRST105',
    ],
    ['an operator other than eq', 'items?id=gte.7', { id: 7, v: 1 }, 405, 'PGRST105'],
    ['a negated eq', 'items?id=not.eq.7', { id: 7, v: 1 }, 405, 'PGRST105'],
    ['the key twice', 'items?id=eq.7&id=eq.7', { id: 7, v: 1 }, 405, 'PGRST105'],
    ['a table without a primary key', 'logs?msg=eq.x', { msg: 'x' }, 405, 'PGRST105'],
    ['limit', 'items?id=eq.7&limit=1', { id: 7, v: 1 }, 400, 'PGRST114'],
    ['a body key that differs from the URL', 'items?id=eq.7', { id: 8, v: 1 }, 400, 'PGRST115'],
    ['a body without the key', 'items?id=eq.7', { v: 1 }, 400, 'PGRST115'],
    [
      'two rows',
      'items?id=eq.7',
      [
        { id: 7, v: 1 },
        { id: 7, v: 2 },
      ],
      400,
      'PGRST115',
    ],
    ['a body that is not an object', 'items?id=eq.7', '3', 400, 'PGRST102'],
  ];
  for (const [what, path, body, status, errorCode] of cases) {
    test(`${what}: ${status} ${errorCode}, nothing written`, async () => {
      const res = await p.call('service', 'PUT', path, { body });
      assert.deepEqual([res.status, code(res)], [status, errorCode]);
      assert.deepEqual(await rows('items?id=gte.7'), []);
    });
  }

  test('a Range header is PGRST114', async () => {
    const res = await p.call('service', 'PUT', 'items?id=eq.7', { body: { id: 7, v: 1 }, headers: { range: '0-0' } });
    assert.deepEqual([res.status, code(res)], [400, 'PGRST114']);
  });

  test("RLS: a user cannot PUT over another user's row", async () => {
    const res = await p.call('alice', 'PUT', 'todos?id=eq.3', {
      body: { id: 3, owner: BOB, task: 'taken', done: true },
    });
    assert.deepEqual([res.status, code(res)], [403, '42501']);
    assert.deepEqual(await rows('todos?id=eq.3&select=task'), [{ task: 'bob 1' }]);
  });
});

describe('Prefer: handling', () => {
  const cases: [string, number, string | undefined, string | undefined][] = [
    ['handling=strict, foo, bar', 400, 'PGRST122', 'Invalid preferences: foo, bar'],
    ['handling=strict, return=everything', 400, 'PGRST122', 'Invalid preferences: return=everything'],
    ['handling=strict, max-affected=many', 400, 'PGRST122', 'Invalid preferences: max-affected=many'],
    ['handling=strict, timezone=Jupiter/Red_Spot', 400, 'PGRST122', 'Invalid preferences: timezone=Jupiter/Red_Spot'],
    ['handling=lenient, foo, bar', 200, undefined, undefined],
    ['foo, count=exact', 200, undefined, undefined],
    ['handling=strict, count=exact', 200, undefined, undefined],
  ];
  for (const [prefer, status, errorCode, details] of cases) {
    test(`${prefer} -> ${status}`, async () => {
      const res = await p.call('anon', 'GET', 'tags?select=name', { headers: { prefer } });
      assert.equal(res.status, status);
      assert.equal(code(res), errorCode);
      if (details) assert.equal((res.json as { details: string }).details, details);
    });
  }

  test('strict handling is echoed with what was applied', async () => {
    const res = await p.call('anon', 'GET', 'tags?select=name', {
      headers: { prefer: 'handling=strict, count=exact' },
    });
    assert.equal(res.headers['preference-applied'], 'count=exact, handling=strict');
  });
});

describe('Prefer: timezone', () => {
  before(async () => {
    await p.admin.unsafe(`set role hearth_test_owner;
      create table stamps (id int primary key, at timestamptz not null);
      insert into stamps values (1, '2023-10-18 12:37:59.611+00');
      create function stamp_at() returns timestamptz language sql stable as $$ select at from stamps where id = 1 $$;
      reset role;`);
    await p.reload();
  });

  test('timestamps are read in the zone asked for, and it is echoed', async () => {
    const res = await p.call('anon', 'GET', 'stamps?select=at', {
      headers: { prefer: 'timezone=America/Los_Angeles' },
    });
    assert.deepEqual(res.json, [{ at: '2023-10-18T05:37:59.611-07:00' }]);
    assert.equal(res.headers['preference-applied'], 'timezone=America/Los_Angeles');
  });

  test('an unknown zone is ignored: the server default zone, nothing applied', async () => {
    const res = await p.call('anon', 'GET', 'stamps?select=at', { headers: { prefer: 'timezone=Jupiter/Red_Spot' } });
    const plain = await p.call('anon', 'GET', 'stamps?select=at');
    assert.deepEqual([res.status, res.json, res.headers['preference-applied']], [200, plain.json, undefined]);
  });

  test('writes read offset-less input in that zone; RPC answers in it', async () => {
    const ins = await p.call('service', 'POST', 'stamps', {
      body: { id: 2, at: '2024-01-01 09:00' },
      headers: { prefer: 'timezone=Asia/Tokyo, return=representation' },
    });
    assert.deepEqual(
      [ins.status, ins.json, ins.headers['preference-applied']],
      [201, [{ id: 2, at: '2024-01-01T09:00:00+09:00' }], 'return=representation, timezone=Asia/Tokyo'],
    );
    const [stored] = await p.admin`select to_char(at at time zone 'UTC', 'HH24:MI') as t from stamps where id = 2`;
    assert.equal(stored.t, '00:00');
    const rpc = await p.call('anon', 'POST', 'rpc/stamp_at', {
      body: {},
      headers: { prefer: 'timezone=Europe/Paris' },
    });
    assert.deepEqual(
      [rpc.json, rpc.headers['preference-applied']],
      ['2023-10-18T14:37:59.611+02:00', 'timezone=Europe/Paris'],
    );
  });
});

describe('Prefer: tx', () => {
  const writes: [string, string, unknown, string][] = [
    ['POST', 'tags?select=name', { name: 'rolled back' }, 'tags?name=eq.rolled back'],
    ['PATCH', 'tags?name=eq.intro&select=name', { name: 'renamed' }, 'tags?name=eq.renamed'],
    ['DELETE', 'items?id=eq.2&select=id', undefined, 'items?id=eq.2'],
    ['PUT', 'items?id=eq.100&select=id', { id: 100, v: 1 }, 'items?id=eq.100'],
  ];
  for (const [method, path, body, check] of writes) {
    test(`${method} with tx=rollback answers the rows and keeps nothing`, async () => {
      const before = await rows(check);
      const res = await p.call('service', method, path, {
        body,
        headers: { prefer: 'tx=rollback, return=representation' },
      });
      assert.ok(res.status === 200 || res.status === 201, `status ${res.status}`);
      assert.equal((res.json as unknown[]).length, 1);
      assert.equal(res.headers['preference-applied'], 'return=representation, tx=rollback');
      assert.deepEqual(await rows(check), before);
    });
  }

  test('RPC with tx=rollback runs the function and undoes its writes', async () => {
    const res = await p.call('service', 'POST', 'rpc/log_it', {
      body: { msg: 'never kept' },
      headers: { prefer: 'tx=rollback' },
    });
    assert.deepEqual([res.status, res.json, res.headers['preference-applied']], [200, 1, 'tx=rollback']);
    assert.deepEqual(await rows('logs?msg=eq.never kept'), []);
  });

  test('tx=commit keeps the write and is echoed', async () => {
    const res = await p.call('service', 'POST', 'tags', { body: { name: 'kept' }, headers: { prefer: 'tx=commit' } });
    assert.deepEqual([res.status, res.headers['preference-applied']], [201, 'tx=commit']);
    assert.deepEqual(await rows('tags?name=eq.kept&select=name'), [{ name: 'kept' }]);
  });

  test('a GET with tx=rollback reads as usual', async () => {
    const res = await p.call('anon', 'GET', 'tags?select=name&name=eq.kept', { headers: { prefer: 'tx=rollback' } });
    assert.deepEqual(
      [res.status, res.json, res.headers['preference-applied']],
      [200, [{ name: 'kept' }], 'tx=rollback'],
    );
  });
});

describe('Prefer: max-affected', () => {
  before(async () => {
    await p.call('service', 'POST', 'logs', {
      body: [
        { msg: 'm', level: 7 },
        { msg: 'm', level: 7 },
        { msg: 'm', level: 7 },
      ],
    });
  });

  const cases: [string, string, unknown, string, number, string | undefined][] = [
    ['DELETE', 'logs?level=eq.7', undefined, 'handling=strict, max-affected=2', 400, 'PGRST124'],
    ['PATCH', 'logs?level=eq.7', { msg: 'n' }, 'handling=strict, max-affected=2', 400, 'PGRST124'],
    ['PATCH', 'logs?level=eq.7', { msg: 'm' }, 'max-affected=1', 204, undefined],
    ['PATCH', 'logs?level=eq.7', { msg: 'm' }, 'handling=strict, max-affected=3', 204, undefined],
  ];
  for (const [method, path, body, prefer, status, errorCode] of cases) {
    test(`${method} ${path} with ${prefer} -> ${status}`, async () => {
      const res = await p.call('service', method, path, { body, headers: { prefer } });
      assert.deepEqual([res.status, code(res)], [status, errorCode]);
      if (errorCode) assert.equal((res.json as { details: string }).details, 'The query affects 3 rows');
      if (prefer.includes('strict') && !errorCode)
        assert.equal(res.headers['preference-applied'], 'handling=strict, max-affected=3');
      if (!prefer.includes('strict')) assert.equal(res.headers['preference-applied'], undefined);
      assert.deepEqual(await rows('logs?level=eq.7&select=msg'), [{ msg: 'm' }, { msg: 'm' }, { msg: 'm' }]);
    });
  }

  test('RPC: a set beyond the limit is PGRST124; a scalar function is PGRST128', async () => {
    const over = await p.call('service', 'POST', 'rpc/numbers', {
      body: { n: 5 },
      headers: { prefer: 'handling=strict, max-affected=3' },
    });
    assert.deepEqual([over.status, code(over)], [400, 'PGRST124']);
    const within = await p.call('service', 'POST', 'rpc/numbers', {
      body: { n: 3 },
      headers: { prefer: 'handling=strict, max-affected=3' },
    });
    assert.deepEqual([within.status, within.json], [200, [1, 2, 3]]);
    const scalar = await p.call('service', 'POST', 'rpc/add_numbers', {
      body: { a: 1 },
      headers: { prefer: 'handling=strict, max-affected=3' },
    });
    assert.deepEqual([scalar.status, code(scalar)], [400, 'PGRST128']);
  });
});

describe('Prefer: params=single-object', () => {
  test('the whole body is the one json argument', async () => {
    const res = await p.call('anon', 'POST', 'rpc/sum_of', {
      body: { a: 1, b: 2 },
      headers: { prefer: 'params=single-object' },
    });
    assert.deepEqual([res.status, res.json, res.headers['preference-applied']], [200, 3, 'params=single-object']);
  });

  test('without it the keys are argument names', async () => {
    const res = await p.call('anon', 'POST', 'rpc/sum_of', { body: { a: 1, b: 2 } });
    assert.deepEqual([res.status, code(res)], [404, 'PGRST202']);
  });

  test('a function without one json argument is PGRST202', async () => {
    const res = await p.call('anon', 'POST', 'rpc/add_numbers', {
      body: { a: 1 },
      headers: { prefer: 'params=single-object' },
    });
    assert.deepEqual([res.status, code(res)], [404, 'PGRST202']);
  });
});

describe('limit and order on PATCH and DELETE', () => {
  test('PATCH updates the first rows of the order only', async () => {
    const res = await p.call('service', 'PATCH', 'items?v=eq.0&order=id.desc&limit=2&select=id', {
      body: { v: 1 },
      headers: { prefer: 'return=representation' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual((res.json as { id: number }[]).map((r) => r.id).sort(), [5, 6]);
    assert.deepEqual(await rows('items?v=eq.1&select=id&order=id'), [{ id: 5 }, { id: 6 }]);
  });

  test('DELETE honours offset', async () => {
    const res = await p.call('service', 'DELETE', 'items?v=eq.0&order=id&limit=1&offset=1');
    assert.deepEqual([res.status, res.headers['content-range']], [204, '0-0/*']);
    assert.deepEqual(await rows('items?v=eq.0&select=id&order=id'), [{ id: 1 }, { id: 3 }, { id: 4 }]);
  });

  test('a table without a primary key is limited by row', async () => {
    const res = await p.call('service', 'DELETE', 'logs?level=eq.7&limit=2');
    assert.deepEqual([res.status, res.headers['content-range']], [204, '0-1/*']);
    assert.equal(((await rows('logs?level=eq.7')) as unknown[]).length, 1);
  });

  const errors: [string, string, number, string][] = [
    ['a view without a key', 'log_view?level=eq.7&limit=1', 400, 'PGRST127'],
    ['no filter', 'items?order=id&limit=1', 400, '21000'],
    ['an order by an embed', 'items?id=gt.0&order=x(id)&limit=1', 400, 'PGRST127'],
    ['a negative limit', 'items?id=gt.0&limit=-1', 400, 'PGRST100'],
  ];
  for (const [what, path, status, errorCode] of errors) {
    test(`${what}: ${status} ${errorCode}`, async () => {
      const res = await p.call('service', 'DELETE', path);
      assert.deepEqual([res.status, code(res)], [status, errorCode]);
    });
  }
});

describe('planned reads are kept per schema cache', () => {
  test('the same URL answers by its headers, and sees a schema change after reload', async () => {
    const url = 'regions?country=eq.fr&order=code&select=*';
    const first = await p.call('anon', 'GET', url);
    const again = await p.call('anon', 'GET', url);
    assert.deepEqual(again.json, first.json);
    const csv = await p.call('anon', 'GET', url, { headers: { accept: 'text/csv' } });
    assert.equal(csv.body, 'country,code,name\nfr,ara,Auvergne\nfr,idf,Ile-de-France');
    const counted = await p.call('anon', 'GET', url, { headers: { prefer: 'count=exact', range: '0-0' } });
    assert.deepEqual([counted.status, counted.headers['content-range']], [206, '0-0/2']);
    await p.admin.unsafe(`alter table regions add column note text default 'n'`);
    await p.reload();
    const after = await p.call('anon', 'GET', url);
    assert.deepEqual((after.json as Record<string, unknown>[])[0], {
      country: 'fr',
      code: 'ara',
      name: 'Auvergne',
      note: 'n',
    });
  });
});
