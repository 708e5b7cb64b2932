/**
 * The REST schema cache's LISTEN connection lives only while the API is in
 * use: an idle project holds no connection, and a schema change made while
 * nobody listened is still seen by the next request.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { createSchemaCacheStore, relationKey, schemaListener } from '../../src/rest/schema-cache.ts';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

let h: TestHearth;
let server: postgres.Sql;
let owner: postgres.Sql;
let ownerPid: number;
let db: string;

before(async () => {
  schemaListener.idleMs = 1000; // rather than a minute (and longer than a cold schema read on a busy machine)
  h = await startTestHearth();
  server = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
  db = decodeURIComponent(new URL(h.info.DB_URL).pathname.slice(1));
  [{ pid: ownerPid }] = (await owner`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
  await owner.unsafe('create table public.before_idle (id int primary key); insert into public.before_idle values (1)');
});
after(async () => {
  await owner?.end();
  await server?.end();
  await h?.close();
});

/** Connections to the project database other than the test's own direct one. */
async function hearthConnections(): Promise<number> {
  const [row] =
    await server`select count(*)::int as n from pg_stat_activity where datname = ${db} and pid <> ${ownerPid}`;
  return row!.n as number;
}

const rest = (table: string) =>
  fetch(`${h.info.BASE_URL}/rest/v1/${table}?select=id`, {
    headers: { apikey: h.info.SECRET_KEY, authorization: `Bearer ${h.info.SECRET_KEY}` },
  });

test('an idle REST API closes its schema listener, and the next request sees changes made meanwhile', async () => {
  const first = await rest('before_idle');
  assert.equal(first.status, 200);
  assert.deepEqual(await first.json(), [{ id: 1 }]);

  // Listener closed and pool connections timed out: the project holds none.
  assert.equal(await until(hearthConnections, (n) => n === 0, 30_000), 0);

  // Nobody listens for this change's notification.
  await owner.unsafe('create table public.after_idle (id int primary key); insert into public.after_idle values (7)');

  // Several first requests at once: each sees the new table.
  const answers = await Promise.all([rest('after_idle'), rest('after_idle'), rest('after_idle')]);
  for (const res of answers) {
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), [{ id: 7 }]);
  }
});

test('after idle, the store drops its cache and concurrent requests share one reload', async () => {
  // The listener's connection takes the pool's options, so this name finds it in pg_stat_activity.
  const sql = postgres(h.info.DB_URL, {
    max: 2,
    onnotice: () => {},
    connection: { application_name: 'schema-listener-test' },
  });
  const listeners = async () =>
    (
      await server`select count(*)::int as n from pg_stat_activity where application_name = 'schema-listener-test' and query ilike 'listen%'`
    )[0]!.n as number;
  const store = await createSchemaCacheStore(sql, ['public'], { idleMs: 1000 });
  try {
    const old = await store.get();
    assert.equal(store.loaded(), old);
    assert.equal(await until(listeners, (n) => n === 0), 0, 'the idle store stops listening');
    assert.equal(store.loaded(), null, 'and no longer serves its cache');

    await owner.unsafe('create table public.while_unwatched (id int)');
    const [a, b, c] = await Promise.all([store.get(), store.get(), store.get()]);
    assert.ok(a === b && b === c, 'one reload for all');
    assert.notEqual(a, old);
    assert.ok(a.relations.has(relationKey('public', 'while_unwatched')));
  } finally {
    await store.close();
    await sql.end();
  }
});
