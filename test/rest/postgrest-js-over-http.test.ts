// postgrest-js (supabase-js) and fetch against a real Hearth's /rest/v1:
// OPTIONS and CORS preflights, the builder's filters and modifiers, and a
// RAISE SQLSTATE 'PGRST' status and headers reaching the client.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@supabase/supabase-js';
import postgres from 'postgres';
import WebSocket from 'ws';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

describe('postgrest-js over HTTP', () => {
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
    fetch(`${h.info.BASE_URL}/rest/v1/${path}`, {
      ...init,
      headers: { apikey: h.info.PUBLISHABLE_KEY, ...(init.headers as Record<string, string>) },
    });

  test('OPTIONS answers Allow; a CORS preflight is still answered by CORS', async () => {
    const res = await until(
      () => rest('things', { method: 'OPTIONS' }),
      (r) => r.status === 200,
    );
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
    const db = createClient(h.info.BASE_URL, h.info.PUBLISHABLE_KEY, {
      realtime: { transport: WebSocket as never },
      auth: { persistSession: false },
    });
    const ids = (q: PromiseLike<{ data: { id: number }[] | null; error: unknown }>) =>
      Promise.resolve(q).then((r) => (r.error ? r.error : r.data!.map((x) => x.id).sort()));
    const c = () => db.from('countries').select('id');
    await until(
      () => ids(c()),
      (r) => Array.isArray(r),
    );
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
      [
        'textSearch websearch',
        c().textSearch('name', "'France' or 'Spain'", { type: 'websearch', config: 'english' }),
        [1, 3],
      ],
      ['likeAnyOf', c().likeAnyOf('name', ['F%', 'S%']), [1, 3]],
      ['isDistinct', c().isDistinct('name', 'France'), [2, 3]],
    ];
    for (const [what, query, expected] of cases) assert.deepEqual(await ids(query), expected, what);

    const referenced = await db
      .from('countries')
      .select('name, cities(name)')
      .or('name.eq.Lyon,name.eq.Berlin', { referencedTable: 'cities' })
      .order('id');
    assert.deepEqual(referenced.data, [
      { name: 'France', cities: [{ name: 'Lyon' }] },
      { name: 'Germany', cities: [{ name: 'Berlin' }] },
      { name: 'Spain', cities: [] },
    ]);
    const ordered = await db
      .from('countries')
      .select('name, cities(name)')
      .order('name', { referencedTable: 'cities', ascending: false })
      .limit(1, { referencedTable: 'cities' })
      .eq('id', 1);
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
