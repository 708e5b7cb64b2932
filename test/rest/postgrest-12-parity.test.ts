// Third black-box sweep against PostgREST 12 as postgrest-js and curl use it.
// Most tests pin an answer that differed before: JSON arrows on non-JSON
// columns and index-ended path names, PGRST120, aggregates in spreads, JSON
// key characters, SQLSTATE -> status, RAISE SQLSTATE 'PGRST', the 401
// challenge, OPTIONS, Content-Profile. The SPEC 7 detail rule and the
// postgrest-js builder sweep guard answers that were already right.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@supabase/supabase-js';
import postgres from 'postgres';
import WebSocket from 'ws';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { loadSchemaCache } from '../../src/rest/schema-cache.ts';
import { createProject, OWNER, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`set role ${OWNER};
    create type coords as (lat numeric, lng numeric);
    create table places (id int primary key, loc coords, langs text[], doc jsonb);
    insert into places values (1, '(48.8,2.3)', '{fr,en}', '{"tags":["a","b"],"@n!$":7}'), (2, '(52.5,13.4)', '{de}', '{"tags":["c"]}');
    create view place_count as select count(*) as n from places;
    create function raise_with(state text) returns int language plpgsql as $$ begin raise exception using errcode = state, message = 'raised ' || state, detail = 'raise detail'; end $$;
    create function pay_up() returns int language plpgsql as $$ begin
      raise sqlstate 'PGRST' using
        message = '{"code":"123","message":"Payment Required","details":"Quota exceeded","hint":"Upgrade your plan"}',
        detail = '{"status":402,"headers":{"X-Powered-By":"Nerd Rage"}}';
    end $$;
    create function pgrst_no_detail() returns int language plpgsql as $$ begin raise sqlstate 'PGRST' using message = '{"code":"1","message":"m"}'; end $$;
    create function pgrst_raise(msg text, det text) returns int language plpgsql as $$ begin raise sqlstate 'PGRST' using message = msg, detail = det; end $$;
    reset role`);
  await p.reload();
});
after(() => p.close());

const error = (res: { json: unknown }) => res.json as { message: string; code: string; details: unknown; hint: unknown };

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
    assert.deepEqual(res.json, [{ tags: 'a', last: 'b' }, { tags: 'c', last: 'c' }]);
  });
});

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
    const hoisted = await p.call('anon', 'GET', 'posts?select=published,...users!author_id(last:name.max(),count())&order=published');
    assert.equal(hoisted.status, 200, hoisted.body ?? '');
    assert.deepEqual(hoisted.json, [
      { published: false, last: 'Alice', count: 1 },
      { published: true, last: 'Bob', count: 2 },
    ]);
    const groupedBySpread = await p.call('anon', 'GET', 'posts?select=id.count(),...users!author_id(name)');
    assert.deepEqual((groupedBySpread.json as { name: string }[]).sort((a, b) => a.name.localeCompare(b.name)), [
      { count: 2, name: 'Alice' },
      { count: 1, name: 'Bob' },
    ]);
    // In a to-one embed (not spread) they aggregate that embed's one row, as PostgREST does.
    const toOne = await p.call('anon', 'GET', 'posts?select=users!author_id(name.max())&order=id');
    assert.deepEqual([toOne.status, toOne.json], [200, [{ users: { max: 'Alice' } }, { users: { max: 'Alice' } }, { users: { max: 'Bob' } }]]);
  });
});

describe('JSON keys', () => {
  test('may hold any character but . , : ( ) and "->", as in PostgREST', async () => {
    const res = await p.call('anon', 'GET', `places?select=id,doc->>@n!$&${encodeURIComponent('doc->>@n!$')}=eq.7`);
    assert.deepEqual([res.status, res.json], [200, [{ id: 1, '@n!$': '7' }]]);
  });
});

describe('SQLSTATE to HTTP status', () => {
  const cases: [string, number][] = [
    ['23502', 400],
    ['23503', 409],
    ['23505', 409],
    ['23514', 400],
    ['25006', 405],
    ['42P01', 404],
    ['42883', 404],
    ['53300', 503],
    ['53400', 500],
    ['57014', 500],
    ['P0001', 400],
    ['P0002', 500],
    ['PT418', 418],
    ['PT4XX', 500],
    ['57P01', 503],
    // Only pg-safeupdate's "... requires a WHERE clause" is the client's fault.
    ['21000', 500],
    ['22023', 400],
  ];
  for (const [state, status] of cases) {
    test(`${state} answers ${status}`, async () => {
      const res = await p.call('service', 'POST', 'rpc/raise_with', { body: { state } });
      assert.deepEqual([res.status, error(res).code, error(res).message], [status, state, `raised ${state}`]);
    });
  }
});

describe('database detail (SPEC 7)', () => {
  // Each write breaks one constraint; anon and a user get the code, the status and a generic text.
  const cases: [string, string, string, unknown, number, string][] = [
    ['not-null', 'POST', 'users', { id: '00000000-0000-4000-8000-0000000000c1' }, 400, '23502'],
    ['foreign key', 'POST', 'comments', { post_id: 999, body: 'x' }, 409, '23503'],
    ['unique', 'POST', 'tags', { name: 'intro' }, 409, '23505'],
    ['bad value', 'POST', 'tags', { id: 'abc', name: 'n' }, 400, '22P02'],
  ];
  before(() => p.admin.unsafe(`grant insert on all tables in schema public to anon, authenticated; grant usage on all sequences in schema public to anon, authenticated`));
  for (const [what, method, path, body, status, code] of cases) {
    test(`${what}: ${status} ${code}; only the secret key sees what Postgres said`, async () => {
      const svc = await p.call('service', method, path, { body });
      assert.equal(svc.status, status);
      assert.match(error(svc).message, /violates|invalid input/);
      for (const who of ['anon', 'alice'] as const) {
        const res = await p.call(who, method, path, { body });
        assert.equal(res.status, status, `${who} ${res.body}`);
        const e = error(res);
        assert.equal(e.code, code);
        assert.deepEqual([e.details, e.hint], [null, null], who);
        // Generic text: nothing Postgres wrote (it quotes names and values).
        assert.notEqual(e.message, error(svc).message);
        assert.doesNotMatch(e.message, /"/, who);
      }
    });
  }
});

describe("RAISE SQLSTATE 'PGRST'", () => {
  test('MESSAGE is the body and DETAIL the status and headers, for every caller', async () => {
    for (const who of ['anon', 'alice', 'service'] as const) {
      const res = await p.call(who, 'POST', 'rpc/pay_up');
      assert.equal(res.status, 402, `${who} ${res.body}`);
      assert.equal(res.headers['x-powered-by'], 'Nerd Rage');
      assert.deepEqual(res.json, { message: 'Payment Required', code: '123', details: 'Quota exceeded', hint: 'Upgrade your plan' });
    }
  });

  const malformed: [string, string, string, string][] = [
    ['MESSAGE that is not JSON', 'not json', '{"status":400,"headers":{}}', 'MESSAGE'],
    ['MESSAGE without a code', '{"message":"m"}', '{"status":400,"headers":{}}', 'MESSAGE'],
    ['DETAIL that is not JSON', '{"code":"1","message":"m"}', 'nope', 'DETAIL'],
    ['MESSAGE with non-string details', '{"code":"1","message":"m","details":{"a":1}}', '{"status":400,"headers":{}}', 'MESSAGE'],
    ['DETAIL without a status', '{"code":"1","message":"m"}', '{"headers":{}}', 'DETAIL'],
    ['DETAIL without headers', '{"code":"1","message":"m"}', '{"status":400}', 'DETAIL'],
    ['DETAIL with a non-string header', '{"code":"1","message":"m"}', '{"status":400,"headers":{"X-A":1}}', 'DETAIL'],
  ];
  for (const [what, msg, det, part] of malformed) {
    test(`${what} is 500 PGRST121`, async () => {
      const res = await p.call('anon', 'POST', 'rpc/pgrst_raise', { body: { msg, det } });
      assert.equal(res.status, 500, res.body ?? '');
      assert.equal(error(res).code, 'PGRST121');
      assert.equal(error(res).message, `Could not parse JSON in the "RAISE SQLSTATE 'PGRST'" error`);
      assert.match(String(error(res).details), new RegExp(`^Invalid JSON value for ${part}`));
      assert.match(String(error(res).hint), new RegExp(`^${part} must be a JSON object`));
    });
  }

  test('a missing DETAIL is 500 PGRST121', async () => {
    const res = await p.call('anon', 'POST', 'rpc/pgrst_no_detail');
    assert.deepEqual([res.status, error(res).code, error(res).details], [500, 'PGRST121', 'DETAIL is missing in the RAISE statement']);
  });

  test('optional parts may be left out; a header the HTTP layer owns is not taken', async () => {
    const res = await p.call('anon', 'POST', 'rpc/pgrst_raise', {
      body: { msg: '{"code":"C1","message":"teapot"}', det: '{"status":418,"headers":{"Content-Length":"1","X-Trace":"t1"}}' },
    });
    assert.deepEqual([res.status, res.json], [418, { message: 'teapot', code: 'C1', details: null, hint: null }]);
    assert.equal(res.headers['x-trace'], 't1');
    assert.equal(res.headers['content-length'], undefined);
  });
});

describe('a permission denial', () => {
  test('is 401 with a Bearer challenge for anon, 403 without one for a user', async () => {
    const anon = await p.call('anon', 'GET', 'secrets');
    assert.deepEqual([anon.status, error(anon).code, anon.headers['www-authenticate']], [401, '42501', 'Bearer']);
    const user = await p.call('alice', 'GET', 'secrets');
    assert.deepEqual([user.status, error(user).code, user.headers['www-authenticate']], [403, '42501', undefined]);
  });
});

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
      const written = await p.call('anon', 'POST', 'notes', { body: { id: 1, body: 'x' }, headers: { 'content-profile': 'extra', prefer: 'return=representation' } });
      assert.deepEqual([written.status, written.headers['content-profile'], written.json], [201, 'extra', [{ id: 1, body: 'x' }]]);
    } finally {
      p.cache = single;
    }
  });
});

describe('over HTTP', () => {
  let h: TestHearth;
  before(async () => {
    h = await startTestHearth();
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    try {
      await owner.unsafe(`create table public.things (id int primary key);
        create table public.countries (id int primary key, name text not null, tags text[], data jsonb, span int4range);
        create table public.cities (id int primary key, country_id int references public.countries(id), name text not null);
        insert into public.countries values (1, 'France', '{a,b}', '{"a":{"b":"x","n":1}}', '[1,10)'), (2, 'Germany', '{b,c}', '{"a":{"b":"y","n":2}}', '[5,20)'), (3, 'Spain', '{}', null, null);
        insert into public.cities values (1, 1, 'Paris'), (2, 1, 'Lyon'), (3, 2, 'Berlin');
        create function public.pay_up() returns int language plpgsql as $$ begin
          raise sqlstate 'PGRST' using message = '{"code":"123","message":"Payment Required"}', detail = '{"status":402,"headers":{"X-Powered-By":"Nerd Rage"}}';
        end $$;`);
    } finally {
      await owner.end();
    }
  });
  after(() => h?.close());

  const rest = (path: string, init: RequestInit = {}) =>
    fetch(`${h.info.BASE_URL}/rest/v1/${path}`, { ...init, headers: { apikey: h.info.PUBLISHABLE_KEY, ...(init.headers as Record<string, string>) } });

  test('OPTIONS answers Allow; a CORS preflight is still answered by CORS', async () => {
    const res = await until(() => rest('things', { method: 'OPTIONS' }), (r) => r.status === 200);
    assert.equal(res.headers.get('allow'), 'OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE');
    assert.equal(await res.text(), '');
    const preflight = await fetch(`${h.info.BASE_URL}/rest/v1/things`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
  });

  // postgrest-js builder methods as an app calls them; answers as PostgREST 12 gives them.
  test('postgrest-js filters and modifiers', async () => {
    const db = createClient(h.info.BASE_URL, h.info.PUBLISHABLE_KEY, { realtime: { transport: WebSocket as never }, auth: { persistSession: false } });
    const ids = (q: PromiseLike<{ data: { id: number }[] | null; error: unknown }>) => Promise.resolve(q).then((r) => (r.error ? r.error : r.data!.map((x) => x.id).sort()));
    const c = () => db.from('countries').select('id');
    await until(() => ids(c()), (r) => Array.isArray(r));
    const cases: [string, PromiseLike<{ data: { id: number }[] | null; error: unknown }>, unknown][] = [
      ['contains array', c().contains('tags', ['a']), [1]],
      ['containedBy array', c().containedBy('tags', ['a', 'b']), [1, 3]],
      ['overlaps array', c().overlaps('tags', ['c', 'a']), [1, 2]],
      ['contains jsonb', c().contains('data', { a: { n: 2 } }), [2]],
      ['containedBy jsonb', c().containedBy('data', { a: { b: 'x', n: 1 }, z: 1 }), [1]],
      ['contains range', c().contains('span', '[2,3)'), [1]],
      ['overlaps range', c().overlaps('span', '[15,16)'), [2]],
      ['rangeGt (sr)', c().rangeGt('span', '[0,1)'), [1, 2]],
      ['rangeLt (sl)', c().rangeLt('span', '[30,40)'), [1, 2]],
      ['rangeGte (nxl)', c().rangeGte('span', '[0,6)'), [1, 2]],
      ['rangeLte (nxr)', c().rangeLte('span', '[0,12)'), [1]],
      ['rangeAdjacent', c().rangeAdjacent('span', '[10,12)'), [1]],
      ['filter with a raw operator', c().filter('id', 'not.in', '(1,2)'), [3]],
      ['JSON path filter', c().eq('data->a->>b', 'y'), [2]],
      ['textSearch websearch', c().textSearch('name', "'France' or 'Spain'", { type: 'websearch', config: 'english' }), [1, 3]],
      ['likeAnyOf', c().likeAnyOf('name', ['F%', 'S%']), [1, 3]],
      ['isDistinct', c().isDistinct('name', 'France'), [2, 3]],
    ];
    for (const [what, query, expected] of cases) assert.deepEqual(await ids(query), expected, what);

    const referenced = await db.from('countries').select('name, cities(name)').or('name.eq.Lyon,name.eq.Berlin', { referencedTable: 'cities' }).order('id');
    assert.deepEqual(referenced.data, [{ name: 'France', cities: [{ name: 'Lyon' }] }, { name: 'Germany', cities: [{ name: 'Berlin' }] }, { name: 'Spain', cities: [] }]);
    const ordered = await db.from('countries').select('name, cities(name)').order('name', { referencedTable: 'cities', ascending: false }).limit(1, { referencedTable: 'cities' }).eq('id', 1);
    assert.deepEqual(ordered.data, [{ name: 'France', cities: [{ name: 'Paris' }] }]);
    const head = await db.from('cities').select('*', { count: 'exact', head: true }).eq('country_id', 1);
    assert.deepEqual([head.status, head.count, head.data], [200, 2, null]);
    const csv = await db.from('countries').select('id,tags').order('id').csv();
    assert.equal(csv.data, 'id,tags\n1,"{a,b}"\n2,"{b,c}"\n3,{}');
    const cast = await db.from('countries').select('id::text, n:data->a->n::int').eq('id', 2).single();
    assert.deepEqual(cast.data, { id: '2', n: 2 });
    const explain = await db.from('countries').select('id').explain();
    assert.deepEqual([explain.status, explain.error?.code], [406, 'PGRST107']);
  });

  test("a RAISE SQLSTATE 'PGRST' status and headers reach the client", async () => {
    const res = await rest('rpc/pay_up', { method: 'POST' });
    assert.equal(res.status, 402);
    assert.equal(res.headers.get('x-powered-by'), 'Nerd Rage');
    assert.deepEqual(await res.json(), { message: 'Payment Required', code: '123', details: null, hint: null });
  });
});
