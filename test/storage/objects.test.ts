import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { eventually, projectSql, rowCount, startStorageTest, storedFiles, type StorageTest } from './setup.ts';

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

describe('upload', () => {
  test('POST answers 201 with the object; the same bytes again are a 200 replay; other bytes 409', async () => {
    const res = await t.raw('POST', '/object/files/docs/report.txt', {
      body: 'first',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(res.status, 201);
    const body = await res.json();
    assert.equal(body.bucket, 'files');
    assert.equal(body.name, 'docs/report.txt');
    assert.equal(body.size, 5);
    assert.equal(body.content_type, 'text/plain');
    assert.match(body.id, /^[0-9a-f-]{36}$/);
    assert.equal(body.Key, 'files/docs/report.txt');

    const again = await t.raw('POST', '/object/files/docs/report.txt', {
      body: 'first',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(again.status, 200);
    const replay = await again.json();
    assert.equal(replay.replayed, true);
    assert.equal(replay.id, body.id);

    const other = await t.raw('POST', '/object/files/docs/report.txt', {
      body: 'other',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(other.status, 409);
    assert.equal(await errorCode(other), 'duplicate');
    const longer = await t.raw('POST', '/object/files/docs/report.txt', {
      body: 'a longer body',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(longer.status, 409);
    const viaJs = await t.service.storage.from('files').upload('docs/report.txt', Buffer.from('other'));
    assert.equal((viaJs.error as { status?: number }).status, 409);
    assert.equal(storedFiles(t.h).length, 1, 'refused uploads leave no bytes');
    assert.equal(await rowCount(t, 'pending_bytes'), 0);
  });

  test('objects hashed before migration 031 (sha256:) still recognise a replay of their bytes', async () => {
    const first = await t.raw('POST', '/object/files/legacy.txt', {
      body: 'legacy bytes',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(first.status, 201);
    const [hashed] = await t.owner`select content_hash from storage.objects where name = 'legacy.txt'`;
    assert.match(hashed!.content_hash, /^blake3:[0-9a-f]{64}$/);
    const sha = createHash('sha256').update('legacy bytes').digest('hex');
    await t.owner`update storage.objects set content_hash = ${`sha256:${sha}`} where name = 'legacy.txt'`;
    const head = await t.raw('HEAD', '/object/files/legacy.txt');
    assert.equal(head.headers.get('etag'), `"${sha}"`, 'the ETag is the digest without its algorithm');
    const again = await t.raw('POST', '/object/files/legacy.txt', {
      body: 'legacy bytes',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(again.status, 200);
    assert.equal((await again.json()).replayed, true);
    const other = await t.raw('POST', '/object/files/legacy.txt', {
      body: 'legacy bytez',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(other.status, 409);
    assert.equal((await t.service.storage.from('files').remove(['legacy.txt'])).error, null);
    await eventually(async () => (await rowCount(t, 'pending_bytes')) === 0, 'no staged bytes are left');
  });

  test('x-upsert and PUT replace the object; the old bytes are removed', async () => {
    const s = t.service.storage.from('files');
    await s.upload('replace.txt', Buffer.from('v1'), { contentType: 'text/plain' });
    const up = await s.upload('replace.txt', Buffer.from('v2!'), { upsert: true, contentType: 'text/plain' });
    assert.equal(up.error, null);
    assert.equal(await (await s.download('replace.txt')).data!.text(), 'v2!');
    const put = await s.update('replace.txt', Buffer.from('version three'), { contentType: 'text/plain' });
    assert.equal(put.error, null);
    assert.equal(await (await s.download('replace.txt')).data!.text(), 'version three');
    await eventually(async () => (await rowCount(t, 'pending_bytes')) === 0, 'replaced bytes are removed');
    const [row] = await t.owner`select count(*)::int as n from storage.objects where name = 'replace.txt'`;
    assert.equal(row!.n, 1);
  });

  test("POST answers 201 even with x-upsert; PUT answers 200, as Supabase's update does, whether it replaced or created", async () => {
    const headers = { 'content-type': 'text/plain' };
    assert.equal((await t.raw('POST', '/object/files/status.txt', { body: 'one', headers })).status, 201);
    const upsert = await t.raw('POST', '/object/files/status.txt', {
      body: 'two',
      headers: { ...headers, 'x-upsert': 'true' },
    });
    assert.equal(upsert.status, 201);
    const put = await t.raw('PUT', '/object/files/status.txt', { body: 'three', headers });
    assert.equal(put.status, 200);
    const body = await put.json();
    assert.deepEqual(
      [body.bucket, body.name, body.size, body.content_type, body.Key],
      ['files', 'status.txt', 5, 'text/plain', 'files/status.txt'],
    );
    assert.equal(body.replayed, undefined);
    const created = await t.raw('PUT', '/object/files/status-new.txt', { body: 'new', headers });
    assert.equal(created.status, 200);
    assert.equal(await (await t.service.storage.from('files').download('status.txt')).data!.text(), 'three');
    assert.equal(await (await t.service.storage.from('files').download('status-new.txt')).data!.text(), 'new');
  });

  test('Blob and File bodies (multipart) keep their type, cache-control and metadata', async () => {
    const s = t.service.storage.from('files');
    const up = await s.upload('blob.json', new Blob(['{"a":1}'], { type: 'application/json' }), {
      cacheControl: '60',
      metadata: { origin: 'test' },
    });
    assert.equal(up.error, null);
    const info = await s.info('blob.json');
    assert.equal(info.data!.contentType, 'application/json');
    assert.equal(info.data!.cacheControl, 'max-age=60');
    assert.equal(info.data!.size, 7);
    assert.deepEqual(info.data!.metadata, { origin: 'test' });
    assert.equal(await (await s.download('blob.json')).data!.text(), '{"a":1}');
  });

  test('object names: empty segments, dot segments and control characters are 400 invalid_key', async () => {
    for (const name of ['a//b', 'trailing/', 'tab%09name']) {
      const res = await t.raw('POST', `/object/files/${name}`, {
        body: 'x',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(res.status, 400, name);
      assert.equal(await errorCode(res), 'invalid_key', name);
    }
    // HTTP clients resolve dot segments in URLs; names also arrive in JSON bodies.
    await t.service.storage.from('files').upload('dots-src.txt', Buffer.from('x'));
    for (const name of ['a/../b', './a', '']) {
      const res = await t.raw('POST', '/object/copy', {
        json: { bucketId: 'files', sourceKey: 'dots-src.txt', destinationKey: name },
      });
      assert.equal(res.status, 400, name);
      assert.equal(await errorCode(res), name === '' ? 'invalid_request' : 'invalid_key', name);
    }
    const unicode = await t.service.storage.from('files').upload('dossier/été 2024.txt', Buffer.from('ok'));
    assert.equal(unicode.error, null);
    assert.equal(await (await t.service.storage.from('files').download('dossier/été 2024.txt')).data!.text(), 'ok');
  });

  test('a NUL character in a bucket, name, prefix or metadata is 400 invalid_request, never a 500', async () => {
    const nul = '\u0000';
    const cases: [string, string, unknown][] = [
      ['GET', '/bucket/%00', undefined],
      ['PUT', '/bucket/%00', {}],
      ['POST', '/object/list/fi%00les', {}],
      ['POST', '/object/list/files', { prefix: `a${nul}` }],
      ['POST', '/object/sign/files', { expiresIn: 60, paths: [nul] }],
      ['DELETE', '/object/files', { prefixes: [`${nul}x`] }],
      ['POST', '/object/copy', { bucketId: `files${nul}`, sourceKey: 'a.txt', destinationKey: 'b.txt' }],
      ['GET', '/object/public/%00/x.txt', undefined],
    ];
    for (const [method, path, json] of cases) {
      const res = await t.raw(method, path, json === undefined ? {} : { json });
      assert.equal(res.status, 400, `${method} ${path} ${JSON.stringify(json)}`);
      assert.equal(await errorCode(res), 'invalid_request');
    }
    assert.equal(await rowCount(t, 'pending_bytes'), 0);
  });

  test('metadata PostgreSQL cannot store (a NUL, an unpaired surrogate, in a key or a value) is 400 invalid_metadata, never a 500', async () => {
    const form = (metadata: string) => {
      const f = new FormData();
      f.append('metadata', metadata);
      f.append('file', new Blob(['x'], { type: 'text/plain' }), 'x.txt');
      return f;
    };
    for (const metadata of [{ note: '\u0000' }, { note: 'an emoji cut in half \ud83d' }, { '\udc00': 1 }]) {
      const json = JSON.stringify(metadata);
      const raw = await t.raw('POST', '/object/files/bad-meta.txt', {
        body: 'x',
        headers: { 'content-type': 'text/plain', 'x-metadata': Buffer.from(json).toString('base64') },
      });
      assert.equal(raw.status, 400, json);
      assert.equal(await errorCode(raw), 'invalid_metadata', json);
      const multipart = await t.raw('POST', '/object/files/bad-meta.txt', { body: form(json) });
      assert.equal(multipart.status, 400, json);
      assert.equal(await errorCode(multipart), 'invalid_metadata', json);
      const { error } = await t.service.storage.from('files').upload('bad-meta.txt', 'x', { metadata });
      assert.equal((error as { status?: number } | null)?.status, 400, json);
    }
    assert.equal((await t.service.storage.from('files').exists('bad-meta.txt')).data, false);
    assert.equal(await rowCount(t, 'pending_bytes'), 0);
  });

  test('a malformed percent-encoding in the path is 400 in the storage envelope', async () => {
    for (const [method, path] of [
      ['POST', '/object/files/%ZZ.txt'],
      ['GET', '/object/files/%E0%A4%A'],
    ] as const) {
      const res = await t.raw(method, path, { body: method === 'POST' ? 'x' : undefined });
      assert.equal(res.status, 400, path);
      const body = await res.json();
      assert.equal(body.error.code, 'invalid_request', path);
      assert.equal(typeof body.error.message, 'string');
    }
  });

  test('a multipart Content-Type without a boundary is 400 invalid_request; nothing is stored', async () => {
    for (const type of [
      'multipart/form-data',
      'multipart/form-data; charset=utf-8',
      'multipart/form-data; boundary=',
    ]) {
      const res = await t.raw('POST', '/object/files/no-boundary.bin', {
        body: 'raw',
        headers: { 'content-type': type },
      });
      assert.equal(res.status, 400, type);
      const body = await res.json();
      assert.equal(body.error.code, 'invalid_request', type);
      assert.match(body.message, /boundary/, type);
    }
    assert.equal((await t.service.storage.from('files').exists('no-boundary.bin')).data, false);
    assert.equal(await rowCount(t, 'pending_bytes'), 0);
  });

  test('unknown bucket is 404 bucket_not_found', async () => {
    const res = await t.raw('POST', '/object/nowhere/x.txt', { body: 'x' });
    assert.equal(res.status, 404);
    assert.equal(await errorCode(res), 'bucket_not_found');
  });

  test("a bucket id past Fastify's 100-character parameter limit is 404 bucket_not_found, as a 64-100 one is", async () => {
    for (const length of [64, 100, 101, 120, 1000]) {
      const id = 'a'.repeat(length);
      for (const [method, path, json] of [
        ['GET', `/bucket/${id}`],
        ['PUT', `/bucket/${id}`, {}],
        ['POST', `/object/list/${id}`, {}],
        ['POST', `/object/copy`, { bucketId: id, sourceKey: 'a', destinationKey: 'b' }],
      ] as [string, string, unknown?][]) {
        const res = await t.raw(method, path, { json });
        assert.equal(res.status, 404, `${method} ${path.slice(0, 20)} ${length}`);
        assert.equal(await errorCode(res), 'bucket_not_found', `${method} ${path.slice(0, 20)} ${length}`);
      }
      const upload = await t.raw('POST', `/object/${id}/x.txt`, { body: 'x' });
      assert.equal(upload.status, 404, `upload ${length}`);
      assert.equal(await errorCode(upload), 'bucket_not_found', `upload ${length}`);
      // A download from a bucket that does not exist is 404 (its code says not_found up to 100 characters).
      assert.equal((await t.raw('GET', `/object/${id}/x.txt`)).status, 404, `download ${length}`);
    }
    // Object paths are no such parameter: long names and long segments work.
    const name = `${'d'.repeat(150)}/${'n'.repeat(300)}.txt`;
    const stored = await t.raw('POST', `/object/files/${name}`, {
      body: 'long',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(stored.status, 201);
    assert.equal(await (await t.raw('GET', `/object/files/${name}`)).text(), 'long');
  });
});

describe('limits', () => {
  test('bucket file_size_limit and allowed_mime_types; 50 MiB is the ceiling', async () => {
    await t.service.storage.createBucket('small', {
      public: false,
      fileSizeLimit: 10,
      allowedMimeTypes: ['image/png', 'text/*'],
    });
    const big = await t.raw('POST', '/object/small/big.png', {
      body: Buffer.alloc(11),
      headers: { 'content-type': 'image/png' },
    });
    assert.equal(big.status, 413);
    assert.equal(await errorCode(big), 'entity_too_large');
    const fits = await t.raw('POST', '/object/small/ok.png', {
      body: Buffer.alloc(10),
      headers: { 'content-type': 'image/png' },
    });
    assert.equal(fits.status, 201);
    const text = await t.raw('POST', '/object/small/ok.txt', {
      body: 'hi',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    assert.equal(text.status, 201);
    const pdf = await t.raw('POST', '/object/small/x.pdf', {
      body: 'x',
      headers: { 'content-type': 'application/pdf' },
    });
    assert.equal(pdf.status, 415);
    const refused = await pdf.json();
    assert.equal(refused.error.code, 'invalid_mime_type');
    // Supabase Storage's words and code (clients compare them); the hint says what the bucket takes.
    assert.equal(refused.message, 'mime type application/pdf is not supported');
    assert.equal(refused.code, 'InvalidMimeType');
    assert.match(refused.error.hint, /^This bucket accepts /);
    const wildcard = await t.raw('POST', '/object/files/x', { body: 'x', headers: { 'content-type': 'image/*' } });
    assert.equal(wildcard.status, 400);
    assert.equal(await errorCode(wildcard), 'invalid_mime_type');
    const junk = await t.raw('POST', '/object/files/x', { body: 'x', headers: { 'content-type': 'nonsense' } });
    assert.equal(junk.status, 415);
    assert.equal(await errorCode(junk), 'unsupported_media_type');

    const huge = await t.raw('POST', '/object/files/huge.bin', {
      body: Buffer.alloc(50 * 1024 * 1024 + 1),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(huge.status, 413);
    assert.equal(await errorCode(huge), 'entity_too_large');
    assert.equal(await rowCount(t, 'pending_bytes'), 0);
  });

  test('project quota: 422 quota_exceeded; two concurrent uploads cannot both pass', async () => {
    const usage = async () => Number((await projectSql(t.h)`select bytes from storage.usage`)[0]!.bytes);
    const base = await usage();
    const patch = await t.h.api('PATCH', `/v1/projects/${t.h.info.PROJECT_REF}/config/storage`, {
      body: { quota_bytes: base + 1000 },
    });
    assert.equal(patch.status, 200);
    try {
      const over = await t.raw('POST', '/object/files/q0.bin', { body: Buffer.alloc(1001) });
      assert.equal(over.status, 422);
      assert.equal(await errorCode(over), 'quota_exceeded');

      // Two 600-byte uploads, both past the early check (both staged) before either commits.
      const gates: (() => void)[] = [];
      const streamed = (gate: Promise<void>) =>
        new ReadableStream({
          async start(c) {
            c.enqueue(new Uint8Array(300));
            await gate;
            c.enqueue(new Uint8Array(300));
            c.close();
          },
        });
      const uploads = ['q1.bin', 'q2.bin'].map((name) => {
        const gate = new Promise<void>((r) => gates.push(r));
        return t.raw('POST', `/object/files/${name}`, {
          body: streamed(gate) as never,
          headers: { 'content-type': 'application/octet-stream' },
        });
      });
      await eventually(async () => (await rowCount(t, 'pending_bytes')) === 2, 'both uploads are staged');
      for (const open of gates) open();
      const statuses = (await Promise.all(uploads)).map((r) => r.status).sort();
      assert.deepEqual(statuses, [201, 422]);
      assert.ok((await usage()) <= base + 1000);
      await eventually(async () => (await rowCount(t, 'pending_bytes')) === 0, 'the refused upload leaves nothing');
    } finally {
      await t.h.api('PATCH', `/v1/projects/${t.h.info.PROJECT_REF}/config/storage`, { body: { quota_bytes: null } });
    }
  });
});

describe('quota and replaces', () => {
  const usage = async () => Number((await projectSql(t.h)`select bytes from storage.usage`)[0]!.bytes);
  const setQuota = (quota_bytes: number | null) =>
    t.h.api('PATCH', `/v1/projects/${t.h.info.PROJECT_REF}/config/storage`, { body: { quota_bytes } });

  test('a replace near the quota counts the bytes it frees (PUT, x-upsert, copy); a real overrun is still 422', async () => {
    const s = t.service.storage.from('files');
    assert.equal((await s.upload('near/big.bin', Buffer.alloc(200_000, 1))).error, null);
    assert.equal((await s.upload('near/copy.bin', Buffer.alloc(220_000, 1))).error, null);
    const base = await usage();
    assert.equal((await setQuota(base + 50_000)).status, 200);
    try {
      // Content-Length is sent: the early check sees 200 KB coming, and 200 KB going.
      const put = await t.raw('PUT', '/object/files/near/big.bin', { body: Buffer.alloc(200_000, 2) });
      assert.equal(put.status, 200);
      const upsert = await t.raw('POST', '/object/files/near/big.bin', {
        body: Buffer.alloc(230_000, 3),
        headers: { 'x-upsert': 'true' },
      });
      assert.equal(upsert.status, 201);
      assert.equal(await usage(), base + 30_000);
      // 290 KB replacing 230 KB would take usage to base + 90 KB, over the quota.
      const over = await t.raw('PUT', '/object/files/near/big.bin', { body: Buffer.alloc(290_000, 4) });
      assert.equal(over.status, 422);
      assert.equal(await errorCode(over), 'quota_exceeded');
      const overChunked = await t.raw('PUT', '/object/files/near/big.bin', {
        body: new Blob([Buffer.alloc(290_000, 4)]).stream() as never,
      });
      assert.equal(overChunked.status, 422, 'the commit refuses what the early check cannot see');

      // A copy over an existing object frees its bytes too: 230 KB over 220 KB is +10 KB.
      const copy = { bucketId: 'files', sourceKey: 'near/big.bin' };
      const copied = await t.raw('POST', '/object/copy', {
        json: { ...copy, destinationKey: 'near/copy.bin' },
        headers: { 'x-upsert': 'true' },
      });
      assert.equal(copied.status, 200);
      assert.equal(await usage(), base + 40_000);
      const fresh = await t.raw('POST', '/object/copy', { json: { ...copy, destinationKey: 'near/third.bin' } });
      assert.equal(fresh.status, 422);
      assert.equal(await errorCode(fresh), 'quota_exceeded');
      assert.equal(await usage(), base + 40_000);

      // A move to another bucket copies, then removes the source in the same transaction: the
      // total it commits is unchanged, so 230 KB moves though the quota has 10 KB to spare.
      assert.equal((await t.service.storage.createBucket('near-moves')).error, null);
      const moved = await t.raw('POST', '/object/move', {
        json: {
          bucketId: 'files',
          sourceKey: 'near/big.bin',
          destinationBucket: 'near-moves',
          destinationKey: 'big.bin',
        },
      });
      assert.equal(moved.status, 200, await moved.clone().text());
      assert.equal(await usage(), base + 40_000);
      assert.equal((await t.raw('GET', '/object/near-moves/big.bin')).status, 200);
    } finally {
      await setQuota(null);
    }
    await eventually(async () => (await rowCount(t, 'pending_bytes')) === 0, 'refused writes leave nothing');
  });
});

describe('download', () => {
  test('headers, conditional GET, HEAD and ranges', async () => {
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));
    await t.service.storage
      .from('files')
      .upload('media/clip.mp4', bytes, { contentType: 'video/mp4', cacheControl: '120' });
    const full = await t.raw('GET', '/object/files/media/clip.mp4');
    assert.equal(full.status, 200);
    assert.deepEqual(Buffer.from(await full.arrayBuffer()), bytes);
    const etag = full.headers.get('etag')!;
    const modified = full.headers.get('last-modified')!;
    assert.match(etag, /^"[0-9a-f]{64}"$/);
    assert.equal(full.headers.get('cache-control'), 'max-age=120');
    assert.equal(full.headers.get('content-type'), 'video/mp4');
    assert.equal(full.headers.get('accept-ranges'), 'bytes');
    assert.equal(full.headers.get('content-length'), '1000');
    assert.match(full.headers.get('content-disposition')!, /^inline/);

    assert.equal(
      (await t.raw('GET', '/object/files/media/clip.mp4', { headers: { 'if-none-match': etag } })).status,
      304,
    );
    assert.equal(
      (await t.raw('GET', '/object/files/media/clip.mp4', { headers: { 'if-modified-since': modified } })).status,
      304,
    );
    assert.equal(
      (await t.raw('GET', '/object/files/media/clip.mp4', { headers: { 'if-none-match': '"other"' } })).status,
      200,
    );

    const head = await t.raw('HEAD', '/object/files/media/clip.mp4');
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '1000');
    assert.equal(head.headers.get('etag'), etag);
    assert.equal((await t.service.storage.from('files').exists('media/clip.mp4')).data, true);
    assert.equal((await t.service.storage.from('files').exists('media/none.mp4')).data, false);

    const part = await t.raw('GET', '/object/files/media/clip.mp4', { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), 'bytes 100-199/1000');
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(100, 200));
    const tail = await t.raw('GET', '/object/files/media/clip.mp4', { headers: { range: 'bytes=-10' } });
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), bytes.subarray(990));
    const open = await t.raw('GET', '/object/files/media/clip.mp4', { headers: { range: 'bytes=995-' } });
    assert.equal(open.headers.get('content-range'), 'bytes 995-999/1000');
    const outside = await t.raw('GET', '/object/files/media/clip.mp4', { headers: { range: 'bytes=5000-' } });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), 'bytes */1000');
    // An error, not the object: the JSON envelope, none of the object's type or disposition.
    assert.match(outside.headers.get('content-type')!, /^application\/json/);
    assert.equal(outside.headers.get('content-disposition'), null);
    const refusal = await outside.json();
    assert.equal(refusal.error.code, 'invalid_range');
    assert.match(refusal.message, /the object has 1000 bytes/);
    // Malformed, several ranges, or an end before the start (invalid, RFC 9110 14.1.1): the whole object.
    for (const range of ['bytes=a-b', 'bytes=0-1,5-6', 'bytes=5-2']) {
      const whole = await t.raw('GET', '/object/files/media/clip.mp4', { headers: { range } });
      assert.equal(whole.status, 200, range);
      assert.equal((await whole.arrayBuffer()).byteLength, 1000, range);
    }
    const stale = await t.raw('GET', '/object/files/media/clip.mp4', {
      headers: { range: 'bytes=0-9', 'if-range': '"old"' },
    });
    assert.equal(stale.status, 200);

    const missing = await t.raw('GET', '/object/files/media/none.mp4');
    assert.equal(missing.status, 404);
    assert.equal(await errorCode(missing), 'not_found');
  });

  test('images, text, JSON, PDF, audio and video are inline, except types a browser runs (HTML, SVG, XML)', async () => {
    const s = t.service.storage.from('pub');
    const inline = [
      'image/png',
      'image/tiff',
      'text/plain',
      'text/css',
      'text/javascript',
      'application/json',
      'application/ld+json',
      'application/pdf',
      'audio/mpeg',
      'video/webm',
    ];
    const attachment = [
      'text/html',
      'image/svg+xml',
      'text/xml',
      'application/xhtml+xml',
      'application/octet-stream',
      'application/zip',
    ];
    for (const type of [...inline, ...attachment]) {
      const name = `kinds/${type.replace('/', '-')}`;
      assert.equal((await s.upload(name, Buffer.from('x'), { contentType: type })).error, null, type);
      const res = await fetch(`${t.h.info.BASE_URL}/storage/v1/object/public/pub/${name}`);
      assert.equal(res.status, 200, type);
      assert.equal(res.headers.get('content-type'), type);
      assert.match(res.headers.get('content-disposition')!, inline.includes(type) ? /^inline;/ : /^attachment;/, type);
    }
  });

  test('HTML and SVG are never inline; ?download forces attachment', async () => {
    const s = t.service.storage.from('pub');
    await s.upload('evil.html', Buffer.from('<script>alert(1)</script>'), { contentType: 'text/html' });
    await s.upload('evil.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), {
      contentType: 'image/svg+xml',
    });
    await s.upload('pic.png', Buffer.from('png'), { contentType: 'image/png' });
    for (const name of ['evil.html', 'evil.svg']) {
      const res = await fetch(`${t.h.info.BASE_URL}/storage/v1/object/public/pub/${name}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-disposition')!, /^attachment; filename="evil\./);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.match(res.headers.get('content-security-policy')!, /sandbox/);
    }
    const inline = await fetch(`${t.h.info.BASE_URL}/storage/v1/object/public/pub/pic.png`);
    assert.match(inline.headers.get('content-disposition')!, /^inline/);
    const forced = await fetch(s.getPublicUrl('pic.png', { download: true }).data.publicUrl);
    assert.match(forced.headers.get('content-disposition')!, /^attachment; filename="pic.png"/);
    const named = await fetch(s.getPublicUrl('pic.png', { download: 'holiday.png' }).data.publicUrl);
    assert.match(named.headers.get('content-disposition')!, /^attachment; filename="holiday.png"/);
  });

  test('public URLs work without credentials for public buckets only', async () => {
    await t.service.storage.from('pub').upload('open.txt', Buffer.from('open'), { contentType: 'text/plain' });
    await t.service.storage.from('files').upload('closed.txt', Buffer.from('closed'), { contentType: 'text/plain' });
    const open = await fetch(t.anon.storage.from('pub').getPublicUrl('open.txt').data.publicUrl);
    assert.equal(await open.text(), 'open');
    const closed = await fetch(t.anon.storage.from('files').getPublicUrl('closed.txt').data.publicUrl);
    assert.equal(closed.status, 404);
    // The default policy lets anyone read objects of public buckets through the API too.
    assert.equal(await (await t.anon.storage.from('pub').download('open.txt')).data!.text(), 'open');
    assert.equal((await t.anon.storage.from('files').download('closed.txt')).error !== null, true);
  });

  test('public and signed downloads ignore credentials sent along, even expired or foreign ones', async () => {
    await t.service.storage.from('pub').upload('creds.txt', Buffer.from('open'), { contentType: 'text/plain' });
    await t.service.storage.from('files').upload('creds.txt', Buffer.from('signed'), { contentType: 'text/plain' });
    const signed = (await t.service.storage.from('files').createSignedUrl('creds.txt', 3 * 3600)).data!.signedUrl;
    const stale = await t.token('cccccccc-cccc-4ccc-8ccc-cccccccccccc');
    t.h.clock.advance(3600_000 + 1000);
    const sent: Record<string, string>[] = [
      { authorization: `Bearer ${stale}` },
      { authorization: 'Bearer not.a.token' },
      { apikey: 'sb_publishable_of_another_project' },
    ];
    for (const headers of sent) {
      const open = await fetch(`${t.h.info.BASE_URL}/storage/v1/object/public/pub/creds.txt`, { headers });
      assert.equal(open.status, 200, JSON.stringify(headers));
      assert.equal(await open.text(), 'open');
      const viaSignature = await fetch(signed, { headers });
      assert.equal(viaSignature.status, 200, JSON.stringify(headers));
      assert.equal(await viaSignature.text(), 'signed');
    }
    // The other routes still refuse the expired token.
    assert.equal((await t.raw('GET', '/object/files/creds.txt', { token: stale })).status, 401);
  });
});

describe('list, copy, move, remove', () => {
  test('list collapses folders and pages, sorts and searches', async () => {
    await t.service.storage.createBucket('tree');
    const s = t.service.storage.from('tree');
    for (const name of ['a.txt', 'b.txt', 'c.log', 'dir1/x.txt', 'dir1/deep/y.txt', 'dir2/z.txt']) {
      await s.upload(name, Buffer.from(name), { contentType: 'text/plain' });
    }
    const root = (await s.list()).data!;
    assert.deepEqual(
      root.map((e) => [e.name, e.id === null]),
      [
        ['dir1', true],
        ['dir2', true],
        ['a.txt', false],
        ['b.txt', false],
        ['c.log', false],
      ],
    );
    const file = root.find((e) => e.name === 'a.txt')!;
    assert.equal(file.metadata!.size, 5);
    assert.equal(file.metadata!.mimetype, 'text/plain');
    assert.equal(root[0]!.metadata, null);
    assert.deepEqual(
      (await s.list('dir1')).data!.map((e) => e.name),
      ['deep', 'x.txt'],
    );
    assert.deepEqual(
      (await s.list('dir1/')).data!.map((e) => e.name),
      ['deep', 'x.txt'],
    );
    assert.deepEqual(
      (await s.list('', { limit: 2, offset: 2 })).data!.map((e) => e.name),
      ['a.txt', 'b.txt'],
    );
    assert.deepEqual(
      (await s.list('', { sortBy: { column: 'name', order: 'desc' } })).data!.map((e) => e.name),
      ['dir2', 'dir1', 'c.log', 'b.txt', 'a.txt'],
    );
    assert.deepEqual(
      (await s.list('', { search: 'B' })).data!.map((e) => e.name),
      ['b.txt'],
    );
    const bad = await t.raw('POST', '/object/list/tree', { json: { prefix: '', limit: 0 } });
    assert.equal(bad.status, 400);
    assert.equal(await errorCode(bad), 'invalid_request');
    const badSort = await t.raw('POST', '/object/list/tree', { json: { sortBy: { column: 'size' } } });
    assert.equal(badSort.status, 400);
    assert.match(
      (await badSort.json()).message,
      /sortBy.column must be one of name, created_at, updated_at, last_accessed_at/,
    );
    const byAccess = await t.raw('POST', '/object/list/tree', {
      json: { prefix: '', sortBy: { column: 'last_accessed_at', order: 'desc' } },
    });
    const byUpdate = await t.raw('POST', '/object/list/tree', {
      json: { prefix: '', sortBy: { column: 'updated_at', order: 'desc' } },
    });
    assert.deepEqual(await byAccess.json(), await byUpdate.json(), 'last_accessed_at sorts as updated_at');
  });

  test('copy gives independent bytes; move renames or crosses buckets; remove deletes bytes', async () => {
    const s = t.service.storage.from('files');
    await s.upload('orig.txt', Buffer.from('original'), { contentType: 'text/plain' });
    assert.deepEqual((await s.copy('orig.txt', 'copies/one.txt')).data, { path: 'files/copies/one.txt' });
    assert.equal(await (await s.download('copies/one.txt')).data!.text(), 'original');
    const dupe = await t.raw('POST', '/object/copy', {
      json: { bucketId: 'files', sourceKey: 'orig.txt', destinationKey: 'copies/one.txt' },
    });
    assert.equal(dupe.status, 409);
    const dupeBody = await dupe.json();
    assert.equal(dupeBody.error.code, 'duplicate');
    // A copy is no upload: no word of "different bytes" or PUT.
    assert.match(dupeBody.message, /already exists at destinationKey: copy with x-upsert: true to replace it/);
    const ontoItself = await t.raw('POST', '/object/copy', {
      json: { bucketId: 'files', sourceKey: 'orig.txt', destinationKey: 'orig.txt' },
    });
    assert.equal(ontoItself.status, 409);
    assert.match((await ontoItself.json()).message, /name the same object/);
    const missing = await t.raw('POST', '/object/copy', {
      json: { bucketId: 'files', sourceKey: 'none.txt', destinationKey: 'x.txt' },
    });
    assert.equal(missing.status, 404);
    const malformed = await t.raw('POST', '/object/copy', { json: { bucketId: 'files' } });
    assert.equal(malformed.status, 400);

    assert.equal((await s.move('copies/one.txt', 'moved/one.txt')).error, null);
    assert.equal(await (await s.download('moved/one.txt')).data!.text(), 'original');
    assert.equal((await s.download('copies/one.txt')).error !== null, true);
    const clash = await t.raw('POST', '/object/move', {
      json: { bucketId: 'files', sourceKey: 'orig.txt', destinationKey: 'moved/one.txt' },
    });
    assert.equal(clash.status, 409);
    const clashBody = await clash.json();
    assert.equal(clashBody.error.code, 'duplicate');
    assert.match(clashBody.message, /a move does not overwrite it/);
    // Onto itself: as Supabase Storage, a move that changes nothing succeeds once the
    // caller may update the source, and a missing source is 404.
    const inPlace = { bucketId: 'files', sourceKey: 'orig.txt', destinationKey: 'orig.txt' };
    const origRow = async () =>
      (await projectSql(t.h)`select * from storage.objects where bucket = 'files' and name = 'orig.txt'`)[0];
    const unmoved = await origRow();
    const same = await t.raw('POST', '/object/move', { json: inPlace });
    assert.equal(same.status, 200);
    assert.deepEqual(await origRow(), unmoved, 'the row did not change, updated_at neither');
    assert.equal(await (await s.download('orig.txt')).data!.text(), 'original');
    const sameMissing = await t.raw('POST', '/object/move', {
      json: { ...inPlace, sourceKey: 'none.txt', destinationKey: 'none.txt' },
    });
    assert.equal(sameMissing.status, 404);

    assert.equal((await s.move('moved/one.txt', 'from-files.txt', { destinationBucket: 'pub' })).error, null);
    assert.equal(
      await (await fetch(t.anon.storage.from('pub').getPublicUrl('from-files.txt').data.publicUrl)).text(),
      'original',
    );
    assert.equal((await s.exists('moved/one.txt')).data, false);
    await t.service.storage.from('pub').copy('from-files.txt', 'back.txt', { destinationBucket: 'files' });
    assert.equal(await (await s.download('back.txt')).data!.text(), 'original');

    const before = storedFiles(t.h).length;
    const removed = await s.remove(['orig.txt', 'back.txt', 'not-there.txt']);
    assert.deepEqual(removed.data!.map((o) => o.name).sort(), ['back.txt', 'orig.txt']);
    await eventually(() => storedFiles(t.h).length === before - 2, 'removed bytes are deleted');
    const badRemove = await t.raw('DELETE', '/object/files', { json: { prefixes: 'orig.txt' } });
    assert.equal(badRemove.status, 400);
  });
});

describe('ranges', () => {
  test('the range unit is case-insensitive; If-Range takes the Last-Modified date', async () => {
    await t.service.storage
      .from('files')
      .upload('digits.txt', Buffer.from('0123456789'), { contentType: 'text/plain' });
    const upper = await t.raw('GET', '/object/files/digits.txt', { headers: { range: 'BYTES=2-4' } });
    assert.equal(upper.status, 206);
    assert.equal(await upper.text(), '234');

    const modified = (await t.raw('HEAD', '/object/files/digits.txt')).headers.get('last-modified')!;
    const same = await t.raw('GET', '/object/files/digits.txt', {
      headers: { range: 'bytes=-3', 'if-range': modified },
    });
    assert.equal(same.status, 206);
    assert.equal(await same.text(), '789');
    const older = new Date(Date.parse(modified) - 60_000).toUTCString();
    const changed = await t.raw('GET', '/object/files/digits.txt', {
      headers: { range: 'bytes=-3', 'if-range': older },
    });
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
    assert.equal(
      (await t.anon.storage.from('files').download('img/a.png', { transform: { width: 10 } })).error !== null,
      true,
    );

    const url = t.anon.storage.from('pub').getPublicUrl('img/b.png', { transform: { width: 10 }, download: true })
      .data.publicUrl;
    assert.match(url, /\/render\/image\/public\//);
    const open = await fetch(url);
    assert.equal(open.status, 200);
    assert.equal(open.headers.get('content-type'), 'image/png');
    assert.match(open.headers.get('content-disposition')!, /^attachment/);
    assert.deepEqual(Buffer.from(await open.arrayBuffer()), png);
    const closed = await fetch(
      t.anon.storage.from('files').getPublicUrl('img/a.png', { transform: { width: 10 } }).data.publicUrl,
    );
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

describe("Supabase Storage's error codes and words, as storage-js reads them", () => {
  test("the top-level code and message are Supabase Storage's (storage-js: error.code, error.message); Hearth's code stays in error.code of the body", async () => {
    await t.service.storage.createBucket('codes');
    await t.service.storage.from('codes').upload('codes/taken.txt', Buffer.from('one'));
    const cases: [string, Promise<Response>, number, string, string, string][] = [
      [
        'missing bucket',
        t.raw('GET', '/bucket/no-such-bucket'),
        404,
        'NoSuchBucket',
        'bucket_not_found',
        'Bucket not found',
      ],
      [
        'missing object',
        t.raw('GET', '/object/info/codes/never/stored.txt'),
        404,
        'NoSuchKey',
        'not_found',
        'Object not found',
      ],
      [
        'bucket name taken',
        t.raw('POST', '/bucket', { json: { name: 'codes' } }),
        409,
        'ResourceAlreadyExists',
        'bucket_exists',
        'The resource already exists',
      ],
      [
        'invalid bucket name',
        t.raw('POST', '/bucket', { json: { name: 'A B' } }),
        400,
        'InvalidBucketName',
        'invalid_bucket_name',
        '',
      ],
      [
        'object name taken',
        t.raw('POST', '/object/codes/codes/taken.txt', { body: 'two' }),
        409,
        'ResourceAlreadyExists',
        'duplicate',
        'The resource already exists',
      ],
    ];
    for (const [what, call, status, code, hearthCode, message] of cases) {
      const res = await call;
      const body = await res.json();
      assert.equal(res.status, status, what);
      assert.deepEqual([body.statusCode, body.code, body.error.code], [String(status), code, hearthCode], what);
      if (message) assert.equal(body.message, message, what);
    }
    // What storage-js shows: Supabase's words, and Hearth's advice in the body's error.hint.
    const taken = await t.service.storage.from('codes').upload('codes/taken.txt', Buffer.from('three'));
    assert.equal(taken.error!.message, 'The resource already exists');
    const raw = await (await t.raw('POST', '/object/codes/codes/taken.txt', { body: 'three' })).json();
    assert.match(raw.error.hint, /x-upsert/);
  });
});
