/**
 * Malformed input found by fuzzing every route: each used to answer 500 or to
 * store something other than what was sent. Each is now a 4xx with a code
 * in the area's envelope, and nothing is written.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows } from '../workflows/helpers.ts';

let h: TestHearth;
let owner: postgres.Sql;
const service = () => ({ apikey: h.info.SECRET_KEY });

before(async () => {
  h = await startTestHearth({ env: { HEARTH_ROLE: 'api' } });
  owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
  await owner.unsafe(`create table public.items (id serial primary key, data jsonb);
    grant all on public.items to anon; grant usage on sequence public.items_id_seq to anon;`);
  assert.equal(
    (await h.api('POST', '/storage/v1/bucket', { token: h.info.SECRET_KEY, body: { name: 'b1' } })).status,
    200,
  );
  assert.equal(
    (
      await h.api('POST', '/storage/v1/object/b1/a.txt', {
        token: h.info.SECRET_KEY,
        raw: 'a',
        headers: { 'content-type': 'text/plain' },
      })
    ).status,
    201,
  );
});
after(async () => {
  await owner?.end();
  await h?.close();
});

test('REST: a JSON body nested 5,000 deep is 400 PGRST102, no row', async () => {
  const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
  const res = await h.api('POST', '/rest/v1/items', {
    token: h.info.PUBLISHABLE_KEY,
    raw: `{"data":${deep}}`,
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.code, 'PGRST102');
  assert.equal((await owner`select count(*)::int as n from public.items`)[0]!.n, 0);
});

test('storage: a bucket update or creation whose body is not an object is 400 invalid_request', async () => {
  for (const raw of ['42', '"s"', 'true', '[1]']) {
    for (const [method, path] of [
      ['PUT', '/storage/v1/bucket/b1'],
      ['POST', '/storage/v1/bucket'],
    ] as const) {
      const res = await h.api(method, path, {
        token: h.info.SECRET_KEY,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400, `${method} ${raw}`);
      assert.equal(res.body.error.code, 'invalid_request', `${method} ${raw}`);
    }
  }
});

test('storage: offsets beyond 2^53 are 400, not a database error', async () => {
  const buckets = await h.api('GET', '/storage/v1/bucket?offset=1e20', {
    token: h.info.SECRET_KEY,
    headers: service(),
  });
  assert.equal(buckets.status, 400);
  assert.equal(buckets.body.error.code, 'invalid_request');
  for (const offset of [1e20, 1e308]) {
    const list = await h.api('POST', '/storage/v1/object/list/b1', {
      token: h.info.SECRET_KEY,
      body: { prefix: '', offset },
    });
    assert.equal(list.status, 400, String(offset));
    assert.equal(list.body.error.code, 'invalid_request');
  }
});

test('storage: an object name with an unpaired surrogate is 400 invalid_key (it would be stored as U+FFFD)', async () => {
  const res = await h.api('POST', '/storage/v1/object/copy', {
    token: h.info.SECRET_KEY,
    body: { bucketId: 'b1', sourceKey: 'a.txt', destinationKey: 's\ud800x' },
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'invalid_key');
  const names = await owner`select name from storage.objects order by name`;
  assert.deepEqual(
    names.map((r) => r.name),
    ['a.txt'],
  );
});

test('management: a config area holding NUL is 404, not a database error', async () => {
  const res = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/config/%00`);
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'not_found');
});

test('functions: a secret value with an unpaired surrogate is 400 and nothing is stored', async () => {
  const res = await h.api('PUT', `/v1/projects/${h.info.PROJECT_REF}/secrets`, {
    body: [{ name: 'S', value: 'x\ud800' }],
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'invalid_request');
  const list = await h.api('GET', `/v1/projects/${h.info.PROJECT_REF}/secrets`);
  assert.deepEqual(list.body, []);
});

test('storage: a download= file name over 255 characters is 400 (it would make a header clients cannot read)', async () => {
  const long = await h.api('GET', `/storage/v1/object/b1/a.txt?download=${'x'.repeat(10_000)}`, {
    token: h.info.SECRET_KEY,
  });
  assert.equal(long.status, 400);
  assert.equal(long.body.error.code, 'invalid_request');
  const fine = await fetch(`${h.info.BASE_URL}/storage/v1/object/b1/a.txt?download=${'x'.repeat(255)}`, {
    headers: { authorization: `Bearer ${h.info.SECRET_KEY}` },
  });
  assert.equal(fine.status, 200);
  assert.match(fine.headers.get('content-disposition')!, /^attachment; filename="x{255}"/);
});

/** Sends raw bytes and returns the status line and the JSON body of the answer. */
async function rawHttp(request: string): Promise<{ status: number; body: any }> {
  const url = new URL(h.info.BASE_URL);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.end(request);
  let text = '';
  for await (const chunk of socket) text += chunk;
  return { status: Number(text.split(' ')[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) };
}

test('requests Node cannot parse (a control byte in a header, a header block over 16 KiB) are answered in the area envelope', async () => {
  const badHeader = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n`;
  const rest = await rawHttp(badHeader('/rest/v1/items'));
  assert.equal(rest.status, 400);
  assert.equal(rest.body.code, 'malformed_request');
  assert.ok('hint' in rest.body, 'the flat PostgREST envelope');
  const storage = await rawHttp(badHeader(`/project/${h.info.PROJECT_REF}/storage/v1/bucket`));
  assert.equal(storage.status, 400);
  assert.equal(storage.body.error.code, 'malformed_request');
  const huge = await rawHttp(`GET /auth/v1/settings HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.equal(huge.status, 431);
  assert.equal(huge.body.error_code, 'headers_too_large');
});

test('workflows: run input nested 1,000 deep is 400 invalid_request with a short message naming where', async () => {
  await enableWorkflows(h);
  const put = await h.api('PUT', `/v1/projects/${h.info.PROJECT_REF}/workflows/deep`, {
    body: { steps: [{ key: 'q', kind: 'enqueue', target: 'jobs' }] },
  });
  assert.equal(put.status, 201);
  const deep = `${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`;
  const res = await h.api('POST', `/v1/projects/${h.info.PROJECT_REF}/workflows/deep/runs`, {
    raw: `{"input":${deep}}`,
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'invalid_request');
  assert.match(res.body.error.message, /^input\.a\.a.*nested more than 512 levels deep/);
  assert.ok(res.body.error.message.length < 400, `${res.body.error.message.length} characters`);
});

test('REST: return=headers-only with Accept: text/csv is 201 with Location (it was a 500 after the row was written)', async () => {
  const res = await fetch(`${h.info.BASE_URL}/rest/v1/items`, {
    method: 'POST',
    headers: {
      apikey: h.info.PUBLISHABLE_KEY,
      prefer: 'return=headers-only',
      accept: 'text/csv',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ data: { probe: 'csv' } }),
  });
  assert.equal(res.status, 201);
  const [row] = await owner`select id from public.items where data->>'probe' = 'csv'`;
  assert.equal(res.headers.get('location'), `/items?id=eq.${row!.id}`);
});
