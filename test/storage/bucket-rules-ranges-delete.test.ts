/**
 * Edge cases found by probing storage as an outside client would (storage-js
 * plus raw HTTP), each compared with Supabase Storage's behaviour.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, startStorageTest, storedFiles, type StorageTest } from './setup.ts';

let t: StorageTest;
before(async () => {
  t = await startStorageTest();
  await t.service.storage.createBucket('files', { public: false });
  await t.service.storage.createBucket('pub', { public: true });
});
after(async () => {
  await t?.close();
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
    const over = await t.raw('POST', '/object/decimal/over.bin', { body: Buffer.alloc(1_000_001), headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(over.status, 413);
    assert.equal(await errorCode(over), 'entity_too_large');
    const fits = await t.raw('POST', '/object/decimal/fits.bin', { body: Buffer.alloc(1_000_000), headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(fits.status, 201);

    assert.equal((await s.updateBucket('decimal', { public: false, fileSizeLimit: '1.5KB' })).error, null);
    assert.equal((await s.getBucket('decimal')).data!.file_size_limit, 1500);
    // "50MB" (50,000,000) is under the 50 MiB ceiling; "53MB" is over it.
    assert.equal((await s.updateBucket('decimal', { public: false, fileSizeLimit: '50MB' })).error, null);
    const tooBig = await t.raw('PUT', '/bucket/decimal', { json: { file_size_limit: '53MB' } });
    assert.equal(tooBig.status, 400);
    assert.equal(await errorCode(tooBig), 'invalid_file_size_limit');
  });

  test('an empty allowed_mime_types list restricts nothing', async () => {
    assert.equal((await t.service.storage.createBucket('anytype', { public: false, allowedMimeTypes: [] })).error, null);
    for (const type of ['image/png', 'application/octet-stream', 'text/plain; charset=utf-8']) {
      const res = await t.raw('POST', `/object/anytype/${type.replace(/\W/g, '-')}`, { body: 'x', headers: { 'content-type': type } });
      assert.equal(res.status, 201, type);
    }
  });
});

describe('ranges', () => {
  test('the range unit is case-insensitive; If-Range takes the Last-Modified date', async () => {
    await t.service.storage.from('files').upload('digits.txt', Buffer.from('0123456789'), { contentType: 'text/plain' });
    const upper = await t.raw('GET', '/object/files/digits.txt', { headers: { range: 'BYTES=2-4' } });
    assert.equal(upper.status, 206);
    assert.equal(await upper.text(), '234');

    const modified = (await t.raw('HEAD', '/object/files/digits.txt')).headers.get('last-modified')!;
    const same = await t.raw('GET', '/object/files/digits.txt', { headers: { range: 'bytes=-3', 'if-range': modified } });
    assert.equal(same.status, 206);
    assert.equal(await same.text(), '789');
    const older = new Date(Date.parse(modified) - 60_000).toUTCString();
    const changed = await t.raw('GET', '/object/files/digits.txt', { headers: { range: 'bytes=-3', 'if-range': older } });
    assert.equal(changed.status, 200);
    assert.equal(await changed.text(), '0123456789');
  });
});

describe('transform options (no image transformation in Hearth)', () => {
  test('download and getPublicUrl with `transform` serve the original under the same rules', async () => {
    const png = Buffer.from('not really a png');
    await t.service.storage.from('files').upload('img/a.png', png, { contentType: 'image/png' });
    await t.service.storage.from('pub').upload('img/b.png', png, { contentType: 'image/png' });

    const got = await t.service.storage.from('files').download('img/a.png', { transform: { width: 10, height: 10 } });
    assert.equal(got.error, null);
    assert.deepEqual(Buffer.from(await got.data!.arrayBuffer()), png);
    // Still under RLS: the publishable key cannot read the private bucket.
    assert.equal((await t.anon.storage.from('files').download('img/a.png', { transform: { width: 10 } })).error !== null, true);

    const url = t.anon.storage.from('pub').getPublicUrl('img/b.png', { transform: { width: 10 }, download: true }).data.publicUrl;
    assert.match(url, /\/render\/image\/public\//);
    const open = await fetch(url);
    assert.equal(open.status, 200);
    assert.equal(open.headers.get('content-type'), 'image/png');
    assert.match(open.headers.get('content-disposition')!, /^attachment/);
    assert.deepEqual(Buffer.from(await open.arrayBuffer()), png);
    const closed = await fetch(t.anon.storage.from('files').getPublicUrl('img/a.png', { transform: { width: 10 } }).data.publicUrl);
    assert.equal(closed.status, 404);
  });
});

describe('single-object delete', () => {
  test('DELETE /object/{bucket}/{path} removes one object under RLS', async () => {
    await t.service.storage.from('files').upload('one/gone.txt', Buffer.from('bye'), { contentType: 'text/plain' });
    const before = storedFiles(t.h).length;
    const hidden = await t.raw('DELETE', '/object/files/one/gone.txt', { token: t.h.info.PUBLISHABLE_KEY });
    assert.equal(hidden.status, 404, 'no delete policy: the object is not there for this caller');
    assert.equal(await errorCode(hidden), 'not_found');

    const res = await t.raw('DELETE', '/object/files/one/gone.txt');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { message: 'Successfully deleted' });
    assert.equal((await t.service.storage.from('files').exists('one/gone.txt')).data, false);
    await eventually(() => storedFiles(t.h).length === before - 1, 'the bytes are removed');

    const again = await t.raw('DELETE', '/object/files/one/gone.txt');
    assert.equal(again.status, 404);
    const noBucket = await t.raw('DELETE', '/object/nowhere/x.txt');
    assert.equal(noBucket.status, 404);
    assert.equal(await errorCode(noBucket), 'bucket_not_found');
  });
});
