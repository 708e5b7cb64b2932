/**
 * The REST API through the real server with supabase-js (postgrest-js), as an
 * app would use it: RLS per user, counts, single objects, RPC, errors in
 * PostgREST's envelope, and schema changes over the direct SQL connection
 * seen without a restart.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import postgres from 'postgres';
import WebSocket from 'ws';
import { signAccessToken } from '../../src/auth/access-token.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

let h: TestHearth;
let owner: postgres.Sql;
const ALICE = '00000000-0000-4000-8000-0000000000a1';
const BOB = '00000000-0000-4000-8000-0000000000b0';

type Answer<T> = PromiseLike<{ status: number; error: { code: string } | null; data: T | null }>;
type MaxAffected = {
  maxAffected(n: number): Answer<unknown> & {
    select(columns: string): { order(column: string): Answer<{ title: string; done: boolean }[]> };
  };
};

function client(token?: string, key = h.info.PUBLISHABLE_KEY): SupabaseClient {
  return createClient(h.info.BASE_URL, key, {
    realtime: { transport: WebSocket as never },
    auth: { persistSession: false, autoRefreshToken: false },
    global: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
}

async function tokenFor(sub: string) {
  const project = (await h.hearth.registry.defaultProject())!;
  return signAccessToken(project, { sub, role: 'authenticated', aud: 'authenticated' }, h.clock, `${h.url}/auth/v1`);
}

before(async () => {
  h = await startTestHearth();
  owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
  await owner.unsafe(`
    create table public.todos (id bigint generated always as identity primary key, owner uuid not null default auth.uid(), title text not null, done boolean not null default false);
    alter table public.todos enable row level security;
    create policy mine on public.todos for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
    create table public.lists (id int primary key, name text not null);
    create table public.items (id int primary key, list_id int not null references public.lists(id), label text);
    insert into public.lists values (1, 'groceries'), (2, 'chores');
    insert into public.items values (1, 1, 'milk'), (2, 1, 'eggs'), (3, 2, 'dishes');
    create function public.add(a int, b int) returns int language sql immutable as 'select a + b';
    create function public.list_count() returns int language sql as 'select count(*)::int from public.lists';`);
});
after(async () => {
  await owner?.end();
  await h?.close();
});

describe('supabase-js against /rest/v1', () => {
  test('each user inserts and reads only their own rows (RLS with auth.uid())', async () => {
    const alice = client(await tokenFor(ALICE));
    const bob = client(await tokenFor(BOB));
    const ins = await alice
      .from('todos')
      .insert([{ title: 'a1' }, { title: 'a2' }])
      .select();
    assert.equal(ins.error, null);
    assert.equal(ins.status, 201);
    assert.deepEqual(
      ins.data!.map((r) => r.title),
      ['a1', 'a2'],
    );
    await bob.from('todos').insert({ title: 'b1' });
    const mine = await alice.from('todos').select('title', { count: 'exact' }).order('title');
    assert.deepEqual(
      mine.data!.map((r) => r.title),
      ['a1', 'a2'],
    );
    assert.equal(mine.count, 2);
    const anon = await client().from('todos').select('*');
    assert.deepEqual(anon.data, []);
    const forged = await bob.from('todos').insert({ title: 'x', owner: ALICE });
    assert.equal(forged.status, 403);
    assert.equal(forged.error!.code, '42501');
  });

  test('update and delete with filters; single() and maybeSingle()', async () => {
    const alice = client(await tokenFor(ALICE));
    const upd = await alice.from('todos').update({ done: true }).eq('title', 'a1').select('title, done').single();
    assert.deepEqual(upd.data, { title: 'a1', done: true });
    const none = await alice.from('todos').select('*').eq('title', 'nope').single();
    assert.equal(none.status, 406);
    assert.equal(none.error!.code, 'PGRST116');
    const maybe = await alice.from('todos').select('*').eq('title', 'nope').maybeSingle();
    assert.equal(maybe.data, null);
    const del = await alice.from('todos').delete().eq('title', 'a2');
    assert.equal(del.status, 204);
  });

  test('embedding, filters on embeds, range and RPC', async () => {
    const svc = client(undefined, h.info.SECRET_KEY);
    const lists = await svc.from('lists').select('name, items(label)').eq('items.label', 'milk').order('id');
    assert.deepEqual(lists.data, [
      { name: 'groceries', items: [{ label: 'milk' }] },
      { name: 'chores', items: [] },
    ]);
    const page = await svc.from('items').select('id', { count: 'exact' }).order('id').range(0, 1);
    assert.equal(page.status, 206);
    assert.equal(page.count, 3);
    const stripped = await svc.from('items').select('id, label').eq('id', 3).stripNulls();
    assert.deepEqual(stripped.data, [{ id: 3, label: 'dishes' }]);
    await owner.unsafe(`update public.items set label = null where id = 3`);
    const noLabel = await svc.from('items').select('id, label').eq('id', 3).stripNulls();
    assert.deepEqual(noLabel.data, [{ id: 3 }]);
    const sum = await svc.rpc('add', { a: 2, b: 3 });
    assert.equal(sum.data, 5);
  });

  test('database detail only for the secret key', async () => {
    const anon = await client().from('items').insert({ id: 1, list_id: 1 });
    const svc = await client(undefined, h.info.SECRET_KEY).from('items').insert({ id: 1, list_id: 1 });
    assert.equal(anon.status, 409);
    assert.equal(svc.status, 409);
    assert.equal(svc.error!.code, '23505');
    assert.match(svc.error!.details ?? '', /already exists/);
    assert.equal(anon.error!.details, null);
  });

  test('a table created over the direct SQL connection is served without a restart', async () => {
    const svc = client(undefined, h.info.SECRET_KEY);
    assert.equal((await svc.from('late').select('*')).status, 404);
    await owner.unsafe(`create table public.late (id int primary key); insert into public.late values (7);`);
    const res = await until(
      async () => svc.from('late').select('*'),
      (r) => r.status === 200,
    );
    assert.deepEqual(res.data, [{ id: 7 }]);
  });

  test('every project is served under /project/{ref}/rest/v1 too, with its own key only', async () => {
    const orgs = await h.api('GET', '/v1/organizations');
    const other = await h.api('POST', '/v1/projects', { body: { name: 'Other', organization_id: orgs.body[0].id } });
    const keys = await h.api('GET', `/v1/projects/${other.body.ref}/api-keys`);
    const key = keys.body.find((k: { type: string }) => k.type === 'secret').api_key;
    const c = createClient(other.body.base_url, key, {
      realtime: { transport: WebSocket as never },
      auth: { persistSession: false },
    });
    const res = await c.from('todos').select('*');
    assert.equal(res.status, 404); // its own, empty schema
    const wrong = await fetch(`${other.body.base_url}/rest/v1/`, { headers: { apikey: h.info.SECRET_KEY } });
    assert.equal(wrong.status, 401);
  });

  test('rollback(), maxAffected() and a limited update through supabase-js', async () => {
    const alice = client(await tokenFor(ALICE));
    const dry = await alice.from('todos').insert({ title: 'dry run' }).select('title').rollback();
    assert.deepEqual([dry.status, dry.data], [201, [{ title: 'dry run' }]]);
    const kept = await alice.from('todos').select('title').eq('title', 'dry run');
    assert.deepEqual(kept.data, []);
    await alice.from('todos').insert([{ title: 'm1' }, { title: 'm2' }]);
    // postgrest-js types maxAffected() for PostgREST 13+ clients only; the header it sends is what is tested.
    const capped = await (alice.from('todos').delete().like('title', 'm*') as unknown as MaxAffected).maxAffected(1);
    assert.deepEqual([capped.status, capped.error?.code], [400, 'PGRST124']);
    const limited = await alice
      .from('todos')
      .update({ done: true })
      .like('title', 'm*')
      .order('id')
      .limit(1)
      .select('title');
    assert.deepEqual(limited.data, [{ title: 'm1' }]);
    const left = await (alice.from('todos').delete().like('title', 'm*') as unknown as MaxAffected)
      .maxAffected(2)
      .select('title, done')
      .order('title');
    assert.deepEqual(left.data?.map((r) => [r.title, r.done]).sort(), [
      ['m1', true],
      ['m2', false],
    ]);
  });

  test('a refused access token is 401 PGRST301, "JWT expired" when it has expired', async () => {
    const token = await tokenFor(ALICE);
    h.clock.advance(2 * 3600_000);
    const expired = await fetch(`${h.info.BASE_URL}/rest/v1/todos`, {
      headers: { apikey: h.info.PUBLISHABLE_KEY, authorization: `Bearer ${token}` },
    });
    assert.equal(expired.status, 401);
    assert.deepEqual(await expired.json(), { message: 'JWT expired', code: 'PGRST301', details: null, hint: null });
    assert.equal(
      expired.headers.get('www-authenticate'),
      'Bearer error="invalid_token", error_description="JWT expired"',
    );
    const forged = await client(`${token.slice(0, -4)}AAAA`)
      .from('todos')
      .select('*');
    assert.deepEqual([forged.status, forged.error?.code], [401, 'PGRST301']);
  });

  test('bodies by Content-Type: text, XML and bytes go whole to a one-parameter function; a table takes JSON, CSV or a form only', async () => {
    await owner.unsafe(`create function public.shout(text) returns text language sql immutable as 'select upper($1)';
      create function public.byte_len(bytea) returns int language sql immutable as 'select length($1)';
      create function public.root_name(xml) returns text language sql immutable as $$ select (xpath('name(/*)', $1))[1]::text $$;`);
    const post = (path: string, type: string, body: string | Blob) =>
      fetch(`${h.info.BASE_URL}/rest/v1/${path}`, {
        method: 'POST',
        headers: { apikey: h.info.SECRET_KEY, 'content-type': type },
        body,
      });
    await until(
      () => post('rpc/shout', 'text/plain', 'x'),
      (r) => r.status === 200,
    );
    assert.equal(await (await post('rpc/shout', 'text/plain; charset=utf-8', 'héllo')).text(), '"HÉLLO"');
    // Not UTF-8: the bytes must arrive as sent.
    assert.equal(
      await (
        await post('rpc/byte_len', 'application/octet-stream', new Blob([new Uint8Array([0, 0xff, 0xfe, 1])]))
      ).text(),
      '4',
    );
    assert.equal(await (await post('rpc/root_name', 'text/xml', '<list><a/></list>')).text(), '"list"');
    const noText = await post('rpc/add', 'text/plain', '1');
    assert.equal(noText.status, 404);
    assert.equal((await noText.json()).code, 'PGRST202');
    const table = await post('lists', 'text/plain', '{"id":9,"name":"plain"}');
    assert.equal(table.status, 400);
    assert.deepEqual(await table.json(), {
      message: 'Content-Type not acceptable: text/plain',
      code: 'PGRST102',
      details: null,
      hint: null,
    });
    const none = await owner.unsafe(`select count(*)::int as n from public.lists where id = 9`);
    assert.equal(none[0].n, 0);
  });

  test('GET of a volatile function runs it read-only, as PostgREST does', async () => {
    // create function's default volatility is VOLATILE; this one only reads.
    const { data, error } = await client().rpc('list_count', {}, { get: true });
    assert.equal(error, null);
    assert.equal(data, 2);
  });

  test('query parameters as PostgREST reads them: arguments by name, empty limit, keys without a value', async () => {
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${h.info.BASE_URL}/rest/v1/${path}`, { headers: { apikey: h.info.PUBLISHABLE_KEY, ...headers } });
    // A parameter that is no operator expression is an argument: no add(a, b, c), no nosuch(x).
    for (const path of ['rpc/add?a=1&b=2&c=3', 'rpc/nosuch?x=1']) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      assert.equal((await res.json()).code, 'PGRST202');
    }
    const added = await get('rpc/add?a=1&b=2');
    assert.equal(await added.text(), '3');
    // An empty limit or offset is none; a key without "=" is no parameter.
    const lists = await get('lists?select=id&order=id&limit=&offset=&nocache');
    assert.equal(lists.status, 200);
    assert.deepEqual(await lists.json(), [{ id: 1 }, { id: 2 }]);
  });

  test('Accept is ranked by q-value; Content-Profile alone names the schema of a write', async () => {
    const one = await fetch(`${h.info.BASE_URL}/rest/v1/lists?id=eq.1&select=name`, {
      headers: {
        apikey: h.info.PUBLISHABLE_KEY,
        accept: 'application/json;q=0.9, application/vnd.pgrst.object+json',
      },
    });
    assert.equal(one.status, 200);
    assert.match(one.headers.get('content-type') ?? '', /^application\/vnd\.pgrst\.object\+json/);
    assert.deepEqual(await one.json(), { name: 'groceries' });

    // Accept-Profile does not choose the schema of a POST: an unexposed one is not even looked at.
    const written = await fetch(`${h.info.BASE_URL}/rest/v1/lists`, {
      method: 'POST',
      headers: { apikey: h.info.SECRET_KEY, 'content-type': 'application/json', 'accept-profile': 'nope' },
      body: JSON.stringify({ id: 3, name: 'errands' }),
    });
    assert.equal(written.status, 201);
    const refused = await fetch(`${h.info.BASE_URL}/rest/v1/lists`, {
      method: 'POST',
      headers: { apikey: h.info.SECRET_KEY, 'content-type': 'application/json', 'content-profile': 'nope' },
      body: JSON.stringify({ id: 4, name: 'never' }),
    });
    assert.equal(refused.status, 406);
    assert.equal((await refused.json()).code, 'PGRST106');
    await owner.unsafe('delete from public.lists where id = 3');
  });
});

describe('numbers and JSON as sent', () => {
  test('writes and RPC arguments keep every digit of a number and the text of a json value, as PostgREST passes the body through', async () => {
    await owner.unsafe(`
      create table public.exact (id int primary key, big bigint, num numeric, jb jsonb, j json);
      grant all on public.exact to service_role;
      create function public.echo_num(x numeric) returns numeric language sql immutable as 'select x';
      create function public.echo_json(x json) returns json language sql immutable as 'select x';`);
    const headers = {
      apikey: h.info.SECRET_KEY,
      authorization: `Bearer ${h.info.SECRET_KEY}`,
      'content-type': 'application/json',
      prefer: 'return=representation',
    };
    const post = async (path: string, body: string, method = 'POST') => {
      const res = await fetch(`${h.info.BASE_URL}/rest/v1/${path}`, { method, headers, body });
      const text = await res.text();
      assert.ok(res.ok, `${path}: ${res.status} ${text}`);
      return text;
    };
    // One object, an array, PUT and PATCH: each reaches PostgreSQL as the client's text.
    await post(
      'exact',
      '{"id":1,"big":9223372036854775807,"num":12345678901234567890.12345678901234567890,"jb":{"x":9007199254740993,"y":1.50},"j":{"b":1,"a":1.0}}',
    );
    await post('exact', '[{"id":2,"big":9007199254740993,"num":1.50,"jb":null,"j":null}]');
    await post('exact?id=eq.3', '{"id":3,"big":-9007199254740995,"num":0.1,"jb":null,"j":[1e400]}', 'PUT');
    await post('exact?id=eq.2', '{"num":0.30000000000000000001}', 'PATCH');
    const rows = await owner`select id, big::text, num::text, jb::text, j::text from public.exact order by id`;
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [
        {
          id: 1,
          big: '9223372036854775807',
          num: '12345678901234567890.12345678901234567890',
          jb: '{"x": 9007199254740993, "y": 1.50}',
          j: '{"b":1,"a":1.0}',
        },
        { id: 2, big: '9007199254740993', num: '0.30000000000000000001', jb: null, j: null },
        { id: 3, big: '-9007199254740995', num: '0.1', jb: null, j: '[1e400]' },
      ],
    );
    assert.equal(await post('rpc/echo_num', '{"x":0.1234567890123456789012345}'), '0.1234567890123456789012345');
    assert.equal(
      await post('rpc/echo_json', '{"x":{"a":1.50,"b":12345678901234567890}}'),
      '{"a":1.50,"b":12345678901234567890}',
    );
  });

  test('a body nested deeper than 1000 levels is 400 PGRST102, never PostgreSQL running out of stack', async () => {
    const write = (depth: number) =>
      fetch(`${h.info.BASE_URL}/rest/v1/exact`, {
        method: 'POST',
        headers: {
          apikey: h.info.SECRET_KEY,
          authorization: `Bearer ${h.info.SECRET_KEY}`,
          'content-type': 'application/json',
        },
        // The row object is one level; brackets inside strings do not count.
        body: `{"id":${depth},"j":{"s":"[[[{{"},"jb":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`,
      });
    assert.equal((await write(999)).status, 201);
    for (const depth of [1001, 100_000]) {
      const res = await write(depth);
      assert.equal(res.status, 400, String(depth));
      assert.equal((await res.json()).code, 'PGRST102');
    }
  });
});

describe('bad requests are 4xx with a code, never a 500', () => {
  const rest = (
    method: string,
    path: string,
    o: { body?: BodyInit; key?: string; headers?: Record<string, string> },
  ) => {
    const key = o.key ?? h.info.PUBLISHABLE_KEY;
    return fetch(`${h.info.BASE_URL}/rest/v1/${path}`, {
      method,
      headers: { apikey: key, authorization: `Bearer ${key}`, 'content-type': 'application/json', ...o.headers },
      body: o.body,
    });
  };
  before(async () => {
    await owner.unsafe(`
      create table public.uniq (email text primary key, n int);
      create view public.list_items as select l.name, i.label from public.lists l join public.items i on i.list_id = l.id;
      grant all on public.uniq, public.list_items to anon;`);
  });

  test('an upsert naming one row twice is 400 21000 (PostgREST says 500), generic for anon, detailed for the secret key', async () => {
    const body = JSON.stringify([
      { email: 'twice@x', n: 1 },
      { email: 'twice@x', n: 2 },
    ]);
    const headers = { prefer: 'resolution=merge-duplicates' };
    const anon = await rest('POST', 'uniq?on_conflict=email', { body, headers });
    assert.equal(anon.status, 400);
    assert.deepEqual(await anon.json(), {
      code: '21000',
      message: 'The body names one row twice: each row of an upsert needs a conflict key of its own.',
      details: null,
      hint: null,
    });
    const service = await rest('POST', 'uniq', { body, headers, key: h.info.SECRET_KEY });
    assert.equal(service.status, 400);
    assert.match((await service.json()).message, /ON CONFLICT DO UPDATE command cannot affect row a second time/);
    assert.equal((await owner`select count(*)::int as n from public.uniq`)[0]!.n, 0);
  });

  test('a write to a view PostgreSQL cannot write through is 405, as OPTIONS says', async () => {
    const allow = (await rest('OPTIONS', 'list_items', {})).headers.get('allow');
    assert.equal(allow, 'OPTIONS,GET,HEAD');
    for (const [method, path] of [
      ['POST', 'list_items'],
      ['PATCH', 'list_items?name=eq.groceries'],
      ['DELETE', 'list_items?name=eq.groceries'],
    ] as const) {
      const res = await rest(method, path, { body: method === 'DELETE' ? undefined : '{"label":"x"}' });
      assert.equal(res.status, 405, `${method} ${path}`);
      const e = await res.json();
      assert.equal(e.code, '55000', method);
      assert.match(e.message, /cannot be written through/, method);
    }
  });

  test('a select list past 1664 columns is 400 54011', async () => {
    const res = await rest('GET', `lists?select=${Array(2000).fill('id').join(',')}`, {});
    assert.equal(res.status, 400);
    assert.equal((await res.json()).code, '54011');
  });

  test('a body that is not UTF-8 is 400 PGRST102 and writes nothing (PostgREST refuses it too)', async () => {
    const bytes = Buffer.concat([Buffer.from('{"email":"'), Buffer.from([0xff, 0xfe]), Buffer.from('@x","n":1}')]);
    const res = await rest('POST', 'uniq', { body: bytes });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).code, 'PGRST102');
    assert.equal((await owner`select count(*)::int as n from public.uniq`)[0]!.n, 0);
    assert.equal((await rest('POST', 'uniq', { body: '{"email":"ünïcode@x","n":1}' })).status, 201);
  });

  test('a method REST does not serve (TRACE, PROPFIND, PURGE) is 405 PGRST117, not 404', async () => {
    // (node:http: fetch refuses to send TRACE.)
    const send = (method: string, path: string) =>
      new Promise<{ status: number; body: { code: string } }>((resolve, reject) => {
        const req = http.request(`${h.info.BASE_URL}/rest/v1/${path}`, {
          method,
          headers: { apikey: h.info.PUBLISHABLE_KEY },
        });
        req.on('response', async (res) => {
          let text = '';
          for await (const chunk of res) text += chunk;
          resolve({ status: res.statusCode!, body: JSON.parse(text) });
        });
        req.on('error', reject);
        req.end();
      });
    for (const method of ['TRACE', 'PROPFIND', 'PURGE']) {
      for (const path of ['lists', '']) {
        const res = await send(method, path);
        assert.equal(res.status, 405, `${method} /${path}`);
        assert.equal(res.body.code, 'PGRST117', method);
      }
    }
  });
});
