import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, rowCount, startStorageTest, storedFiles, type StorageTest } from './setup.ts';

let t: StorageTest;
before(async () => {
  t = await startStorageTest();
});
after(async () => {
  await t?.close();
});

describe('buckets (secret key only)', () => {
  test('create, get, list, update, empty and delete through storage-js', async () => {
    const s = t.service.storage;
    assert.deepEqual(
      (await s.createBucket('photos', { public: true, fileSizeLimit: '1MB', allowedMimeTypes: ['image/*'] })).data,
      { name: 'photos' },
    );
    const got = await s.getBucket('photos');
    assert.equal(got.error, null);
    assert.equal(got.data!.id, 'photos');
    assert.equal(got.data!.public, true);
    assert.equal(got.data!.file_size_limit, 1_000_000); // decimal units, as Supabase reads "1MB"
    assert.deepEqual(got.data!.allowed_mime_types, ['image/*']);
    await s.createBucket('zz-private');
    const list = await s.listBuckets();
    assert.deepEqual(
      list.data!.map((b) => b.name),
      ['photos', 'zz-private'],
    );
    assert.deepEqual(
      (await s.listBuckets({ sortColumn: 'name', sortOrder: 'desc', limit: 1 })).data!.map((b) => b.name),
      ['zz-private'],
    );
    assert.deepEqual(
      (await s.listBuckets({ search: 'phot' })).data!.map((b) => b.name),
      ['photos'],
    );

    assert.equal(
      (await s.updateBucket('photos', { public: false, fileSizeLimit: null, allowedMimeTypes: null })).error,
      null,
    );
    const updated = (await s.getBucket('photos')).data!;
    assert.equal(updated.public, false);
    assert.equal(updated.file_size_limit, null);
    assert.equal(updated.allowed_mime_types, null);

    await s.from('photos').upload('a.png', Buffer.from('png bytes'), { contentType: 'image/png' });
    const busy = await s.deleteBucket('photos');
    assert.equal(busy.error?.message.includes('empty it first'), true);
    const raw = await t.raw('DELETE', '/bucket/photos', { json: {} });
    assert.equal(raw.status, 409);
    assert.equal((await raw.json()).error.code, 'bucket_not_empty');

    assert.equal(storedFiles(t.h).length, 1);
    assert.equal((await s.emptyBucket('photos')).error, null);
    // The bytes go first, then their removal record: wait for both.
    await eventually(
      async () => storedFiles(t.h).length === 0 && (await rowCount(t, 'pending_bytes')) === 0,
      'the bytes of emptied objects are removed',
    );
    assert.equal((await s.deleteBucket('photos')).error, null);
    assert.equal((await s.getBucket('photos')).error?.message, 'Bucket not found');
  });

  test('publishable key and user tokens cannot manage buckets (403 forbidden)', async () => {
    const user = await t.as('11111111-1111-4111-8111-111111111111');
    for (const c of [t.anon, user]) {
      const made = await c.storage.createBucket('nope');
      assert.equal((made.error as { status?: number }).status, 403);
    }
    for (const [method, path] of [
      ['GET', '/bucket'],
      ['GET', '/bucket/zz-private'],
      ['PUT', '/bucket/zz-private'],
      ['POST', '/bucket/zz-private/empty'],
      ['DELETE', '/bucket/zz-private'],
    ] as const) {
      const res = await t.raw(method, path, {
        token: t.h.info.PUBLISHABLE_KEY,
        json: method === 'GET' ? undefined : {},
      });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal((await res.json()).error.code, 'forbidden');
    }
    const none = await t.raw('GET', '/bucket', { token: null });
    assert.equal(none.status, 401);
  });

  test('bad input is a 4xx with a code', async () => {
    const cases: [unknown, number, string][] = [
      [{ name: 'A' }, 400, 'invalid_bucket_name'],
      [{ name: 'Upper' }, 400, 'invalid_bucket_name'],
      [{ name: 'x'.repeat(64) }, 400, 'invalid_bucket_name'],
      [{ name: 'public' }, 400, 'invalid_bucket_name'],
      [{ name: 'okay', public: 'yes' }, 400, 'invalid_request'],
      [{ name: 'okay', file_size_limit: '53MB' }, 400, 'invalid_file_size_limit'],
      [{ name: 'okay', file_size_limit: 'lots' }, 400, 'invalid_file_size_limit'],
      // No whole number of bytes: refused, not rounded.
      [{ name: 'okay', file_size_limit: 1.5 }, 400, 'invalid_file_size_limit'],
      [{ name: 'okay', file_size_limit: '1.5' }, 400, 'invalid_file_size_limit'],
      [{ name: 'okay', file_size_limit: '1.0005KB' }, 400, 'invalid_file_size_limit'],
      // id and name are one thing: a different name would be dropped.
      [{ id: 'idx', name: 'namey' }, 400, 'invalid_request'],
      [{ name: 'okay', allowed_mime_types: ['not a type'] }, 400, 'invalid_mime_types'],
      [{ name: 'zz-private' }, 409, 'bucket_exists'],
    ];
    for (const [body, status, code] of cases) {
      const res = await t.raw('POST', '/bucket', { json: body });
      assert.equal(res.status, status, JSON.stringify(body));
      const env = await res.json();
      assert.equal(env.error.code, code, JSON.stringify(body));
      assert.equal(env.statusCode, String(status));
    }
    for (const [method, path] of [
      ['GET', '/bucket/missing'],
      ['PUT', '/bucket/missing'],
      ['POST', '/bucket/missing/empty'],
      ['DELETE', '/bucket/missing'],
    ] as const) {
      const res = await t.raw(method, path, { json: method === 'GET' ? undefined : {} });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal((await res.json()).error.code, 'bucket_not_found');
    }
    const badList = await t.raw('GET', '/bucket?sortColumn=owner');
    assert.equal(badList.status, 400);
    assert.equal((await t.raw('GET', '/bucket/idx')).status, 404, 'a refused create makes nothing');
    // storage-js sends id and name, equal; either alone names the bucket too.
    for (const body of [{ id: 'same', name: 'same' }, { id: 'only-id' }, { name: 'only-name' }]) {
      const res = await t.raw('POST', '/bucket', { json: body });
      assert.equal(res.status, 200, JSON.stringify(body));
      const name = body.id ?? body.name;
      assert.deepEqual(await res.json(), { name });
      assert.equal((await t.service.storage.getBucket(name!)).data!.name, name);
    }
  });
});

const errorCode = async (res: Response) => (await res.json()).error.code as string;

describe('bucket rules as Supabase reads them', () => {
  test('a bucket named ".." is refused: no URL could address it', async () => {
    const res = await t.raw('POST', '/bucket', { json: { name: '..' } });
    assert.equal(res.status, 400);
    assert.equal(await errorCode(res), 'invalid_bucket_name');
    assert.equal((await t.raw('POST', '/bucket', { json: { name: '...' } })).status, 200);
  });

  test('"list-v2" is reserved: storage-js listV2() posts to /object/list-v2/{bucket}', async () => {
    const res = await t.raw('POST', '/bucket', { json: { name: 'list-v2' } });
    assert.equal(res.status, 400);
    assert.equal(await errorCode(res), 'invalid_bucket_name');
  });

  test('file_size_limit strings use decimal units: "1MB" is 1,000,000 bytes', async () => {
    const s = t.service.storage;
    assert.equal((await s.createBucket('decimal', { public: false, fileSizeLimit: '1MB' })).error, null);
    assert.equal((await s.getBucket('decimal')).data!.file_size_limit, 1_000_000);
    const over = await t.raw('POST', '/object/decimal/over.bin', {
      body: Buffer.alloc(1_000_001),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(over.status, 413);
    assert.equal(await errorCode(over), 'entity_too_large');
    const fits = await t.raw('POST', '/object/decimal/fits.bin', {
      body: Buffer.alloc(1_000_000),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(fits.status, 201);

    assert.equal((await s.updateBucket('decimal', { public: false, fileSizeLimit: '1.5KB' })).error, null);
    assert.equal((await s.getBucket('decimal')).data!.file_size_limit, 1500);
    assert.equal((await s.updateBucket('decimal', { public: false, fileSizeLimit: '1.100KB' })).error, null);
    assert.equal((await s.getBucket('decimal')).data!.file_size_limit, 1100);
    assert.equal((await s.updateBucket('decimal', { public: false, fileSizeLimit: '0.000001 GB' })).error, null);
    assert.equal((await s.getBucket('decimal')).data!.file_size_limit, 1000);
    const fraction = await t.raw('PUT', '/bucket/decimal', { json: { file_size_limit: 1.5 } });
    assert.equal(fraction.status, 400);
    assert.equal(await errorCode(fraction), 'invalid_file_size_limit');
    assert.equal((await s.getBucket('decimal')).data!.file_size_limit, 1000, 'a refused update changes nothing');
    // "50MB" (50,000,000) is under the 50 MiB ceiling; "53MB" is over it.
    assert.equal((await s.updateBucket('decimal', { public: false, fileSizeLimit: '50MB' })).error, null);
    const tooBig = await t.raw('PUT', '/bucket/decimal', { json: { file_size_limit: '53MB' } });
    assert.equal(tooBig.status, 400);
    assert.equal(await errorCode(tooBig), 'invalid_file_size_limit');
  });

  test('an empty allowed_mime_types list restricts nothing', async () => {
    assert.equal(
      (await t.service.storage.createBucket('anytype', { public: false, allowedMimeTypes: [] })).error,
      null,
    );
    for (const type of ['image/png', 'application/octet-stream', 'text/plain; charset=utf-8']) {
      const res = await t.raw('POST', `/object/anytype/${type.replace(/\W/g, '-')}`, {
        body: 'x',
        headers: { 'content-type': type },
      });
      assert.equal(res.status, 201, type);
    }
  });
});
