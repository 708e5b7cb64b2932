import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StatementResult } from '../../src/platform/database-query.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
let path: string;
before(async () => {
  h = await startTestHearth();
  path = `/v1/projects/${h.info.PROJECT_REF}/database/query`;
});
after(async () => {
  await h?.close();
});

describe('POST /v1/projects/{ref}/database/query', () => {
  test('runs statements as the owner role and answers 201 with the last statement rows', async () => {
    const res = await h.api('POST', path, {
      body: {
        query:
          "create table notes (id int primary key, body text); insert into notes values (1, 'a'), (2, 'b'); select * from notes order by id",
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body, [
      { id: 1, body: 'a' },
      { id: 2, body: 'b' },
    ]);

    // The table belongs to the owner role, and the REST API sees it at once.
    const who = await h.api('POST', path, {
      body: {
        query:
          "select current_user as cur, session_user as ses, (select tableowner from pg_tables where tablename = 'notes') as owner",
      },
    });
    const role = `hearth_${h.info.PROJECT_REF}_owner`;
    assert.deepEqual(who.body, [{ cur: role, ses: role, owner: role }]);
    await h.api('POST', path, { body: { query: 'grant select on notes to service_role' } });
    const rest = await fetch(`${h.info.BASE_URL}/rest/v1/notes?select=body&order=id`, {
      headers: { apikey: h.info.SECRET_KEY },
    });
    assert.deepEqual(await rest.json(), [{ body: 'a' }, { body: 'b' }]);
  });

  test('RESET ROLE cannot reach a superuser: the connection logs in as the owner', async () => {
    const res = await h.api('POST', path, {
      body: {
        query:
          'reset role; select current_user as cur, (select rolsuper from pg_roles where rolname = current_user) as su',
      },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, [{ cur: `hearth_${h.info.PROJECT_REF}_owner`, su: false }]);
  });

  test('format "results" gives every statement with its command, row count and columns', async () => {
    const res = await h.api('POST', path, {
      body: {
        format: 'results',
        query:
          'create table counted (n int); insert into counted select generate_series(1, 3); select n, n::text as t from counted order by n; update counted set n = n + 1',
      },
    });
    assert.equal(res.status, 201);
    assert.equal(typeof res.body.duration_ms, 'number');
    assert.deepEqual(
      res.body.results.map((r: { command: string }) => r.command),
      ['CREATE', 'INSERT', 'SELECT', 'UPDATE'],
    );
    assert.deepEqual(
      res.body.results.slice(1).map((r: { row_count: number }) => r.row_count),
      [3, 3, 3],
    );
    assert.deepEqual(
      res.body.results[2].columns.map((c: { name: string }) => c.name),
      ['n', 't'],
    );
    assert.deepEqual(res.body.results[2].rows[0], { n: 1, t: '1' });
  });

  test('each statement keeps its own columns, a batch may manage its own transaction, values come as JSON', async () => {
    const res = await h.api('POST', path, {
      body: {
        format: 'results',
        query:
          "select 1 as one; begin; create table typed (id int8, tags int[], doc jsonb, day date, price numeric); insert into typed values (1, '{1,2}', '{\"a\":1}', '2024-02-03', 1.50); commit; select * from typed; ;",
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.results.map((r: StatementResult) => [r.command, r.row_count, r.columns.map((c) => c.name)]),
      [
        ['SELECT', 1, ['one']],
        ['BEGIN', null, []],
        ['CREATE', null, []],
        ['INSERT', 1, []],
        ['COMMIT', null, []],
        ['SELECT', 1, ['id', 'tags', 'doc', 'day', 'price']],
      ],
    );
    assert.deepEqual(
      res.body.results[5].columns.map((c: { type_oid: number }) => c.type_oid),
      [20, 1007, 3802, 1082, 1700],
    );
    assert.deepEqual(res.body.results[5].rows, [
      { id: '1', tags: [1, 2], doc: { a: 1 }, day: '2024-02-03', price: '1.50' },
    ]);
  });

  test('values come as PostgreSQL prints them (exact digits, no time zone shift, bytea in hex); numbers, booleans and JSON as JSON', async () => {
    const res = await h.api('POST', path, {
      body: {
        query: `set timezone = 'UTC'; select '\\x0102'::bytea as b, '2026-11-26 21:16:59.347+00'::timestamptz as ts,
          '2020-01-01'::date as d, '2020-01-01 10:00'::timestamp as t, '1 day 02:00'::interval as i,
          9007199254740993::int8 as big, 0.1000000000000000055511151231257827::numeric as num,
          'NaN'::float8 as nan, 1.5::float8 as f, 7::int2 as small, true as yes, '{"a":[1]}'::jsonb as j,
          array['2020-01-01'::date] as days, null::int as nothing`,
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body, [
      {
        b: '\\x0102',
        ts: '2026-11-26 21:16:59.347+00',
        d: '2020-01-01',
        t: '2020-01-01 10:00:00',
        i: '1 day 02:00:00',
        big: '9007199254740993',
        num: '0.1000000000000000055511151231257827',
        nan: 'NaN',
        f: 1.5,
        small: 7,
        yes: true,
        j: { a: [1] },
        days: ['2020-01-01'],
        nothing: null,
      },
    ]);
  });

  test('a NULL element of an array is null, and the text "NULL" stays text (the driver patch; upstream gave "NULL" and NaN)', async () => {
    const res = await h.api('POST', path, {
      body: {
        query: `select array['a b', null, 'NULL'] as texts, array[null::int, 1] as ints, array[[1, null], [null, 2]] as grid`,
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body, [
      {
        texts: ['a b', null, 'NULL'],
        ints: [null, 1],
        grid: [
          [1, null],
          [null, 2],
        ],
      },
    ]);
  });

  test('format "arrays" keeps every column of a repeated name, each row an array in the order of columns', async () => {
    const query = 'select 1 as a, 2 as a, 3, 4';
    const res = await h.api('POST', path, { body: { format: 'arrays', query } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.results[0].columns.map((c: { name: string }) => c.name),
      ['a', 'a', '?column?', '?column?'],
    );
    assert.deepEqual(res.body.results[0].rows, [[1, 2, 3, 4]]);
    // The object forms are unchanged: a later column of the name wins.
    assert.deepEqual((await h.api('POST', path, { body: { query } })).body, [{ a: 2, '?column?': 4 }]);
  });

  test('COPY from STDIN or to STDOUT is 400 invalid_request (no client to send or take the data), and the next query runs', async () => {
    await h.api('POST', path, { body: { query: 'create table copied (n int)' } });
    for (const query of ['copy copied from stdin', 'select 1; copy (select 1) to stdout']) {
      const res = await h.api('POST', path, { body: { query } });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'invalid_request');
    }
    const next = await h.api('POST', path, { body: { query: 'select count(*)::int as n from copied' } });
    assert.deepEqual(next.body, [{ n: 0 }]);
  });

  test('a failing statement is 400 sql_error with the SQLSTATE and position, and nothing of the batch stays', async () => {
    const res = await h.api('POST', path, { body: { query: 'create table half (id int);\nselect * form half' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'sql_error');
    assert.equal(res.body.error.code, 'sql_error');
    assert.equal(res.body.sqlstate, '42601');
    assert.match(res.body.message, /syntax error at or near "form"/);
    assert.equal(res.body.position, 'create table half (id int);\nselect * '.length + 1);
    const gone = await h.api('POST', path, { body: { query: "select to_regclass('half') is null as gone" } });
    assert.deepEqual(gone.body, [{ gone: true }]);
  });

  test('the statement timeout applies (default one minute, timeout_ms to choose)', async () => {
    const res = await h.api('POST', path, { body: { query: 'select pg_sleep(5)', timeout_ms: 200 } });
    assert.equal(res.status, 400);
    assert.equal(res.body.sqlstate, '57014');
  });

  test('bad bodies are 400 invalid_request', async () => {
    for (const body of [
      {},
      { query: '' },
      { query: 5 },
      { query: 'select 1', format: 'csv' },
      { query: 'select 1', timeout_ms: 0 },
      { query: 'select 1', extra: 1 },
      { query: 'select 1\u0000' },
    ]) {
      const res = await h.api('POST', path, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'invalid_request', JSON.stringify(body));
    }
  });

  test('queries are audited; developers and strangers are refused', async () => {
    const audit = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/config/audit`);
    const queries = audit.body.filter((a: { area: string }) => a.area === 'database/query');
    assert.ok(
      queries.some(
        (a: { changes: { query: string; error: string | null } }) =>
          a.changes.query.startsWith('create table half') && a.changes.error === '42601',
      ),
    );
    assert.ok(
      queries.some(
        (a: { changes: { query: string; error: string | null } }) =>
          a.changes.query.startsWith('create table notes') && a.changes.error === null,
      ),
    );

    const [org] = (await h.api('GET', '/v1/organizations')).body;
    await h.api('POST', `/v1/organizations/${org.id}/members`, {
      body: { email: 'dev@query.test', password: 'a-long-password-1', role: 'developer' },
    });
    const login = await h.api('POST', '/v1/login', {
      body: { email: 'dev@query.test', password: 'a-long-password-1' },
      token: null,
    });
    const dev = await h.api('POST', path, { token: login.body.access_token, body: { query: 'drop table notes' } });
    assert.equal(dev.status, 403);
    assert.equal(dev.body.code, 'forbidden');
    const anon = await h.api('POST', path, { token: h.info.SECRET_KEY, body: { query: 'select 1' } });
    assert.equal(anon.status, 401);
    const still = await h.api('POST', path, { body: { query: "select to_regclass('notes') is not null as here" } });
    assert.deepEqual(still.body, [{ here: true }]);
  });
});
