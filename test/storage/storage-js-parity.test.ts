/**
 * Every storage-js call that reached a route Hearth
 * did not have (listV2, the info spellings, CDN / vector / analytics
 * clients), each compared with Supabase Storage and the SPEC.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStorageTest, type StorageTest } from './setup.ts';

const ALICE = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';

let t: StorageTest;
before(async () => {
  t = await startStorageTest();
  await t.service.storage.createBucket('tree', { public: false });
  await t.service.storage.createBucket('open', { public: true });
  // Uploaded one by one, so created_at follows this order.
  for (const name of [
    'a/1.txt',
    'a/2.txt',
    'a/sub/x.txt',
    'a/sub/y.txt',
    'a/b.txt',
    'a/sub2/z.txt',
    'root.txt',
    'folder/q.txt',
  ]) {
    const up = await t.service.storage
      .from('tree')
      .upload(name, Buffer.from(name), { contentType: 'text/plain', metadata: { of: name } });
    assert.equal(up.error, null);
  }
});
after(async () => {
  await t?.close();
});

const errorCode = async (res: Response) => (await res.json()).error.code as string;
const status = (r: { error: unknown }) => (r.error as { status?: number } | null)?.status;
type Page = {
  hasNext: boolean;
  nextCursor?: string;
  folders: { name: string; key?: string }[];
  objects: { name: string; key?: string }[];
};

describe('listV2 (POST /object/list-v2/{bucket})', () => {
  test('without a delimiter: every object under the prefix, by full path, with metadata', async () => {
    const { data, error } = await t.service.storage.from('tree').listV2({ prefix: 'a/' });
    assert.equal(error, null);
    assert.equal(data!.hasNext, false);
    assert.equal('nextCursor' in data!, false);
    assert.deepEqual(data!.folders, []);
    assert.deepEqual(
      data!.objects.map((o) => o.name),
      ['a/1.txt', 'a/2.txt', 'a/b.txt', 'a/sub/x.txt', 'a/sub/y.txt', 'a/sub2/z.txt'],
    );
    const first = data!.objects[0]!;
    assert.equal(first.key, '1.txt');
    assert.match(first.id, /^[0-9a-f-]{36}$/);
    assert.equal(first.metadata!.size, 7);
    assert.equal(first.metadata!.mimetype, 'text/plain');
    assert.deepEqual((first as unknown as { user_metadata: unknown }).user_metadata, { of: 'a/1.txt' });
  });

  test('with_delimiter: sub-folders become {name, key} entries, objects are the direct children, named by full path as Supabase Storage names them', async () => {
    const { data, error } = await t.service.storage.from('tree').listV2({ prefix: 'a/', with_delimiter: true });
    assert.equal(error, null);
    assert.deepEqual(data!.folders, [
      { name: 'a/sub/', key: 'sub' },
      { name: 'a/sub2/', key: 'sub2' },
    ]);
    assert.deepEqual(
      data!.objects.map((o) => [o.name, o.key]),
      [
        ['a/1.txt', '1.txt'],
        ['a/2.txt', '2.txt'],
        ['a/b.txt', 'b.txt'],
      ],
    );
    const root = (await t.service.storage.from('tree').listV2({ with_delimiter: true })).data!;
    assert.deepEqual(
      root.folders.map((f) => f.name),
      ['a/', 'folder/'],
    );
    assert.deepEqual(
      root.objects.map((o) => o.name),
      ['root.txt'],
    );
  });

  test('cursor paging visits every entry once; a follow-up call may send only the cursor', async () => {
    const s = t.service.storage.from('tree');
    const pages: string[][] = [];
    let page = (await s.listV2({ prefix: 'a/', with_delimiter: true, limit: 2 })).data as Page;
    for (let i = 0; i < 10; i++) {
      pages.push([...page.folders.map((f) => f.name), ...page.objects.map((o) => o.name)]);
      if (!page.hasNext) break;
      assert.equal(typeof page.nextCursor, 'string');
      const next = await s.listV2({ prefix: 'a/', limit: 2, cursor: page.nextCursor });
      assert.equal(next.error, null);
      page = next.data as Page;
    }
    assert.equal(page.hasNext, false);
    assert.equal(page.nextCursor, undefined);
    // Name order interleaves folders and files (byte order: "b.txt" < "sub/"); a folder ending a page is not repeated.
    assert.deepEqual(pages, [['a/1.txt', 'a/2.txt'], ['a/sub/', 'a/b.txt'], ['a/sub2/']]);
  });

  test('sortBy a timestamp: folders first, then files in that order, across pages', async () => {
    const s = t.service.storage.from('tree');
    const opts = {
      prefix: 'a/',
      with_delimiter: true,
      limit: 3,
      sortBy: { column: 'created_at' as const, order: 'desc' as const },
    };
    const first = (await s.listV2(opts)).data as Page;
    assert.equal(first.hasNext, true);
    assert.deepEqual(
      first.folders.map((f) => f.name),
      ['a/sub2/', 'a/sub/'],
    );
    assert.deepEqual(
      first.objects.map((o) => o.name),
      ['a/b.txt'],
    );
    const second = (await s.listV2({ ...opts, cursor: first.nextCursor })).data as Page;
    assert.equal(second.hasNext, false);
    assert.deepEqual(second.folders, []);
    assert.deepEqual(
      second.objects.map((o) => o.name),
      ['a/2.txt', 'a/1.txt'],
    );
  });

  test('bad input is a 400 invalid_request; an unknown bucket is 404 bucket_not_found', async () => {
    const s = t.service.storage.from('tree');
    const forged = Buffer.from(
      JSON.stringify({ c: 'created_at', o: 'asc', d: false, k: 1, t: '2026-13-45T99:00:00.000000Z', n: 'x' }),
    ).toString('base64url');
    const bodies = [
      { cursor: 'not-a-cursor' },
      { cursor: forged, sortBy: { column: 'created_at' } },
      { limit: 0 },
      { limit: 'ten' },
      { with_delimiter: 'yes' },
      { sortBy: { column: 'size' } },
      { prefix: 7 },
      { prefix: 'a\u0000' },
    ];
    for (const body of bodies) {
      const res = await t.raw('POST', '/object/list-v2/tree', { json: body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(await errorCode(res), 'invalid_request');
    }
    // A cursor is bound to the order it was made in.
    const cursor = (await s.listV2({ limit: 1 })).data!.nextCursor;
    const mixed = await t.raw('POST', '/object/list-v2/tree', { json: { cursor, sortBy: { column: 'updated_at' } } });
    assert.equal(mixed.status, 400);
    assert.equal(await errorCode(mixed), 'invalid_request');

    const missing = await t.raw('POST', '/object/list-v2/nowhere', { json: {} });
    assert.equal(missing.status, 404);
    assert.equal(await errorCode(missing), 'bucket_not_found');
  });

  test('it used to be taken for an upload to a bucket named "list-v2": now it lists and stores nothing', async () => {
    const res = await t.raw('POST', '/object/list-v2/tree', { json: { prefix: 'folder/' } });
    assert.equal(res.status, 200);
    assert.deepEqual(
      (await res.json()).objects.map((o: { name: string }) => o.name),
      ['folder/q.txt'],
    );
    const [row] = await t.owner`select count(*)::int as n from storage.objects where bucket = 'tree'`;
    assert.equal(row!.n, 8);
  });

  test("it is a select under the caller's role: it shows what the read policies admit", async () => {
    assert.deepEqual((await t.anon.storage.from('tree').listV2()).data, { hasNext: false, folders: [], objects: [] });
    await t.owner.unsafe(`create policy "tree: alice reads a/sub" on storage.objects for select to authenticated
      using (bucket = 'tree' and starts_with(name, 'a/sub/') and auth.uid()::text = '${ALICE}')`);
    const alice = await t.as(ALICE);
    const flat = await alice.storage.from('tree').listV2();
    assert.deepEqual(
      flat.data!.objects.map((o) => o.name),
      ['a/sub/x.txt', 'a/sub/y.txt'],
    );
    const nested = await alice.storage.from('tree').listV2({ with_delimiter: true });
    assert.deepEqual(nested.data, { hasNext: false, folders: [{ name: 'a/', key: 'a' }], objects: [] });
  });
});

describe("info under Supabase Storage's other routes", () => {
  test('/object/info/authenticated/{bucket}/{path} is info(); /object/info/public/... needs a public bucket and no key', async () => {
    const viaJs = await t.service.storage.from('tree').info('a/1.txt');
    assert.equal(viaJs.error, null);
    const auth = await t.raw('GET', '/object/info/authenticated/tree/a/1.txt');
    assert.equal(auth.status, 200);
    const body = await auth.json();
    assert.equal(body.id, viaJs.data!.id);
    assert.equal(body.size, 7);
    // Supabase Storage's fields (plus owner); the last write is last_modified, with no updated_at beside it.
    assert.deepEqual(Object.keys(body).sort(), [
      'bucket_id',
      'cache_control',
      'content_type',
      'created_at',
      'etag',
      'id',
      'last_modified',
      'metadata',
      'name',
      'owner',
      'size',
      'version',
    ]);
    assert.equal('updatedAt' in viaJs.data!, false);

    await t.service.storage.from('open').upload('pic.txt', Buffer.from('public'), { contentType: 'text/plain' });
    const open = await t.raw('GET', '/object/info/public/open/pic.txt', { token: null });
    assert.equal(open.status, 200);
    assert.equal((await open.json()).content_type, 'text/plain');
    const closed = await t.raw('GET', '/object/info/public/tree/a/1.txt', { token: null });
    assert.equal(closed.status, 404, 'a private bucket has no public info');
    assert.equal(await errorCode(closed), 'not_found');
    const none = await t.raw('GET', '/object/info/public/nowhere/x.txt', { token: null });
    assert.equal(none.status, 404);
    assert.equal(await errorCode(none), 'bucket_not_found');
  });
});

describe('signed URLs with storage-js options', () => {
  test('createSignedUrls(paths, n, {download}) URLs serve the object as an attachment', async () => {
    const { data, error } = await t.service.storage
      .from('tree')
      .createSignedUrls(['a/1.txt', 'a/none.txt'], 60, { download: true });
    assert.equal(error, null);
    assert.equal(data![1]!.signedUrl, null);
    const res = await fetch(data![0]!.signedUrl!);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-disposition')!, /^attachment; filename="1\.txt"/);
    assert.equal(await res.text(), 'a/1.txt');
    const named = await t.service.storage.from('tree').createSignedUrl('a/1.txt', 60, { download: 'saved.txt' });
    const got = await fetch(named.data!.signedUrl);
    assert.match(got.headers.get('content-disposition')!, /^attachment; filename="saved\.txt"/);
  });
});

describe('signing several objects with a bare array of keys (SPEC 4.2)', () => {
  test('an array body signs each key; expiresIn from the query, else an hour', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const [query, seconds] of [
      ['?expiresIn=120', 120],
      ['', 3600],
    ] as const) {
      const res = await t.raw('POST', `/object/sign/tree${query}`, { json: ['a/1.txt', 'a/none.txt'] });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { path: string; signedURL: string | null }[];
      assert.deepEqual(
        body.map((e) => [e.path, e.signedURL === null]),
        [
          ['a/1.txt', false],
          ['a/none.txt', true],
        ],
      );
      const token = new URL(body[0]!.signedURL!, 'http://x').searchParams.get('token')!;
      const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
      assert.ok(Math.abs(exp - now - seconds) < 30, `${query}: expires in ${exp - now} s`);
      const got = await fetch(`${t.h.info.BASE_URL}/storage/v1${body[0]!.signedURL}`);
      assert.equal(await got.text(), 'a/1.txt');
    }
    const bad = await t.raw('POST', '/object/sign/tree', { json: [1, 2] });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /array of object names/);
  });
});

describe('storage-js clients for services Hearth does not have', () => {
  test('purgeCache, vectors and analytics answer 501 not_implemented, not a 404 that reads as a missing object', async () => {
    const purge = await t.service.storage.from('tree').purgeCache('a/1.txt');
    assert.equal(status(purge), 501);
    assert.match(purge.error!.message, /CDN/);
    const vectors = await t.service.storage.vectors.createBucket('embeddings');
    assert.equal(status(vectors), 501);
    const analytics = await t.service.storage.analytics.createBucket('lake');
    assert.equal(status(analytics), 501);
    for (const [method, path] of [
      ['DELETE', '/cdn/tree'],
      ['POST', '/vector/ListVectorBuckets'],
      ['GET', '/iceberg/bucket'],
    ] as const) {
      const res = await t.raw(method, path, method === 'GET' ? {} : { json: {} });
      assert.equal(res.status, 501, path);
      assert.equal(await errorCode(res), 'not_implemented');
    }
    // Still the project's own API: no key, no answer.
    const anonymous = await t.raw('POST', '/vector/ListVectorBuckets', { token: null, json: {} });
    assert.equal(anonymous.status, 401);
  });
});

describe('buckets as storage-js 2.109 sees them', () => {
  test('buckets carry type STANDARD; createBucket with another type is refused, never silently made standard', async () => {
    const s = t.service.storage;
    assert.equal((await s.getBucket('tree')).data!.type, 'STANDARD');
    assert.deepEqual([...new Set((await s.listBuckets()).data!.map((b) => b.type))], ['STANDARD']);
    assert.equal((await s.createBucket('typed', { public: false, type: 'STANDARD' })).error, null);

    const analytics = await s.createBucket('lakehouse', { public: false, type: 'ANALYTICS' });
    assert.equal(status(analytics), 501);
    assert.match(analytics.error!.message, /ANALYTICS buckets are not available/);
    const odd = await t.raw('POST', '/bucket', { json: { name: 'odd-type', type: 'COLD' } });
    assert.equal(odd.status, 400);
    assert.equal(await errorCode(odd), 'invalid_request');
    assert.equal(status(await s.getBucket('lakehouse')), 404, 'nothing was created');
    assert.equal(status(await s.getBucket('odd-type')), 404);
  });

  test("listBuckets({search}) ignores case, as Supabase's ilike does", async () => {
    assert.deepEqual(
      (await t.service.storage.listBuckets({ search: 'TRE' })).data!.map((b) => b.name),
      ['tree'],
    );
  });
});
