// Injection attempts at every part of the grammar, as anon and as a user:
// each must be answered 2xx/4xx (never 500), quickly (pg_sleep never runs),
// must not reveal a secret row, and must leave the canary table standing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createProject, type Project } from './fixture.ts';

const SECRET = 'TOPSECRET-9f3a';

const ATTACKS = [
  `"; drop table canary; --`,
  `'); drop table canary; --`,
  `id"; select pg_sleep(3); --`,
  `1) or 1=1; drop table canary; --`,
  `*/ drop table canary; /*`,
  `$$; drop table canary; $$`,
  `\\'; drop table canary; --`,
  `$1`,
  `(select value from secrets)`,
  `pg_sleep(3)`,
  `secrets`,
  `id,secrets(*)`,
  `x\u0000y`,
  `1::int; drop table canary`,
  `"id"`,
  `id) union select value from secrets --`,
];

type Request = { method: string; path: string; body?: unknown; headers?: Record<string, string> };
const q = encodeURIComponent;

/** Every place a client-controlled string enters the grammar. */
function requests(a: string): [string, Request][] {
  return [
    ['select column', { method: 'GET', path: `posts?select=${q(a)}` }],
    ['select alias', { method: 'GET', path: `posts?select=${q(a)}:id` }],
    ['select cast', { method: 'GET', path: `posts?select=id::${q(a)}` }],
    ['select json key', { method: 'GET', path: `posts?select=meta->${q(a)}` }],
    ['filter column', { method: 'GET', path: `posts?${q(a)}=eq.1` }],
    ['filter json key', { method: 'GET', path: `posts?meta->>${q(a)}=eq.1` }],
    ['operator', { method: 'GET', path: `posts?id=${q(a)}.1` }],
    ['eq value', { method: 'GET', path: `posts?title=eq.${q(a)}` }],
    ['like value', { method: 'GET', path: `posts?title=like.${q(a)}` }],
    ['in value', { method: 'GET', path: `posts?id=in.(${q(a)})` }],
    ['quantified value', { method: 'GET', path: `posts?title=eq(any).${q(a)}` }],
    ['fts config', { method: 'GET', path: `posts?search=fts(${q(a)}).x` }],
    ['fts value', { method: 'GET', path: `posts?search=wfts.${q(a)}` }],
    ['logic tree', { method: 'GET', path: `posts?or=(${q(a)})` }],
    ['logic value', { method: 'GET', path: `posts?or=(title.eq.${q(a)},id.eq.1)` }],
    ['order column', { method: 'GET', path: `posts?order=${q(a)}` }],
    ['order direction', { method: 'GET', path: `posts?order=id.${q(a)}` }],
    ['related order', { method: 'GET', path: `posts?select=id,author:users!author_id(name)&order=author(${q(a)})` }],
    ['limit', { method: 'GET', path: `posts?limit=${q(a)}` }],
    ['embed', { method: 'GET', path: `posts?select=id,${q(a)}(*)` }],
    ['embed hint', { method: 'GET', path: `posts?select=id,users!${q(a)}(*)` }],
    ['embed column', { method: 'GET', path: `posts?select=id,comments(${q(a)})` }],
    ['embed path', { method: 'GET', path: `posts?select=id,comments(id)&${q(a)}.id=eq.1` }],
    ['spread', { method: 'GET', path: `posts?select=id,...${q(a)}(id)` }],
    ['table', { method: 'GET', path: `${q(a)}?select=id` }],
    ['profile', { method: 'GET', path: 'posts', headers: { 'accept-profile': a } }],
    ['prefer', { method: 'GET', path: 'posts', headers: { prefer: a } }],
    ['range', { method: 'GET', path: 'posts', headers: { range: a } }],
    ['insert key', { method: 'POST', path: 'logs', body: { [a]: 1 } }],
    ['insert value', { method: 'POST', path: 'logs', body: { msg: a, level: 1 } }],
    ['columns', { method: 'POST', path: `logs?columns=${q(a)}`, body: { msg: 'x' } }],
    [
      'on_conflict',
      {
        method: 'POST',
        path: `tags?on_conflict=${q(a)}`,
        body: { name: 'x' },
        headers: { prefer: 'resolution=merge-duplicates' },
      },
    ],
    ['patch key', { method: 'PATCH', path: 'logs?msg=eq.none', body: { [a]: 1 } }],
    ['patch filter', { method: 'PATCH', path: `logs?msg=eq.${q(a)}`, body: { level: 2 } }],
    ['delete filter', { method: 'DELETE', path: `logs?${q(a)}=eq.1` }],
    ['rpc name', { method: 'POST', path: `rpc/${q(a)}`, body: {} }],
    ['rpc arg name', { method: 'POST', path: 'rpc/add_numbers', body: { [a]: 1 } }],
    ['rpc arg value', { method: 'POST', path: 'rpc/add_numbers', body: { a } }],
    ['rpc GET arg value', { method: 'GET', path: `rpc/add_numbers?a=${q(a)}` }],
    ['rpc text arg', { method: 'POST', path: 'rpc/fail_with', body: { msg: a } }],
    ['rpc filter', { method: 'GET', path: `rpc/numbers?n=2&${q(a)}=eq.1` }],
  ];
}

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(
    `set role hearth_test_owner; create table canary (id int); insert into canary values (1); reset role`,
  );
  await p.admin`insert into secrets values (2, ${SECRET})`;
  await p.reload();
});
after(() => p.close());

for (const who of ['anon', 'alice'] as const) {
  test(`injection attempts as ${who}`, async () => {
    const failures: string[] = [];
    for (const attack of ATTACKS) {
      for (const [where, r] of requests(attack)) {
        const [path, query] = r.path.split('?', 2);
        const decoded = decodeURIComponent(path) + (query === undefined ? '' : `?${query}`);
        const started = Date.now();
        let res: Awaited<ReturnType<typeof p.call>>;
        try {
          res = await p.call(who, r.method, decoded, { body: r.body, headers: r.headers });
        } catch (e) {
          failures.push(`${where} ${JSON.stringify(attack)}: threw ${(e as Error).message}`);
          continue;
        }
        const ms = Date.now() - started;
        if (res.status >= 500) failures.push(`${where} ${JSON.stringify(attack)}: ${res.status} ${res.body}`);
        if (ms > 1500) failures.push(`${where} ${JSON.stringify(attack)}: took ${ms} ms`);
        if (res.body?.includes(SECRET)) failures.push(`${where} ${JSON.stringify(attack)}: leaked the secret`);
      }
    }
    assert.deepEqual(failures, []);
    const [{ n }] = await p.admin`select count(*)::int as n from canary`;
    assert.equal(n, 1, 'the canary table still stands');
  });
}

test('values that look like SQL are stored verbatim', async () => {
  const attack = `'); drop table canary; -- stored`;
  const res = await p.call('service', 'POST', 'logs?select=msg', {
    body: { msg: attack },
    headers: { prefer: 'return=representation' },
  });
  assert.deepEqual(res.json, [{ msg: attack }]);
  const found = await p.call('service', 'GET', `logs?select=msg&msg=eq.${attack}`);
  assert.deepEqual(found.json, [{ msg: attack }]);
});
