/**
 * The S3 backend against an in-process S3-compatible server (s3rver). It
 * checks no signatures, and it would store the SDK's streamed checksum
 * framing as object bytes, so every test compares the bytes themselves.
 * Unlike S3, s3rver writes a PUT's body straight to the object's file, so an
 * upload the client aborted leaves a partial object when its handler runs
 * after the DeleteObject that followed the abort (as it can on a busy
 * machine): `storeOnlyWholeObjects` gives it S3's rule that a PUT stores an
 * object only once the whole body arrived.
 */
import S3rver from '@20minutes/s3rver';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { S3Backend } from '../../src/storage/backend/s3.ts';
import { sweepProject } from '../../src/storage/sweeper.ts';
import {
  abandonUpload,
  eventually,
  projectSql,
  projectWithObjects,
  rowCount,
  startStorageTest,
  type StorageTest,
} from './setup.ts';

/** s3rver's store writes each PUT to a file of its own and renames it into place only once the body is whole. */
function storeOnlyWholeObjects(): void {
  const store = createRequire(import.meta.url)('@20minutes/s3rver/lib/stores/filesystem.js').prototype as {
    putContent(objectPath: string, content: Buffer | Readable): Promise<[number, string]>;
  };
  const writeInPlace = store.putContent;
  store.putContent = async function (objectPath, content) {
    // (Its own path for a buffer settles before the file is written: a stream is always waited for.)
    const body = Buffer.isBuffer(content) ? Readable.from([content]) : content;
    const partial = `${objectPath}.partial-${randomUUID()}`;
    try {
      const written = await writeInPlace.call(this, partial, body);
      await rename(partial, objectPath);
      return written;
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  };
}

let t: StorageTest;
let s3: InstanceType<typeof S3rver>;
let s3dir: string;
let endpoint: string;

before(async () => {
  storeOnlyWholeObjects();
  s3dir = mkdtempSync(path.join(tmpdir(), 'hearth-s3-'));
  s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    allowMismatchedSignatures: true,
    directory: s3dir,
    configureBuckets: [{ name: 'hearth-objects' }],
  });
  const addr = (await s3.run()) as { port: number };
  endpoint = `http://127.0.0.1:${addr.port}`;
  t = await startStorageTest({
    env: {
      HEARTH_STORAGE_BACKEND: 's3',
      HEARTH_S3_ENDPOINT: endpoint,
      HEARTH_S3_BUCKET: 'hearth-objects',
      HEARTH_S3_ACCESS_KEY_ID: 'S3RVER',
      HEARTH_S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
  });
  await t.service.storage.createBucket('s3b');
  await t.service.storage.createBucket('s3homes');
  await t.owner.unsafe(
    `create policy "s3homes own folder insert" on storage.objects for insert to authenticated
       with check (bucket_id = 's3homes' and (storage.foldername(name))[1] = auth.uid()::text)`,
  );
});
after(async () => {
  await t?.close();
  await s3?.close();
  rmSync(s3dir, { recursive: true, force: true });
});

const storeClient = () =>
  new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });

async function storeKeys(): Promise<string[]> {
  const client = storeClient();
  try {
    const res = await client.send(new ListObjectsV2Command({ Bucket: 'hearth-objects' }));
    return (res.Contents ?? []).map((o) => o.Key!);
  } finally {
    client.destroy();
  }
}

/** Waits until no staged record and no key is left in the store; a time-out says what is. */
async function nothingLeft(what: string): Promise<void> {
  const left = async () => ({ staged: await rowCount(t, 'pending_bytes'), keys: await storeKeys() });
  await eventually(async () => {
    const { staged, keys } = await left();
    return staged === 0 && keys.length === 0;
  }, what).catch(async (err: Error) => {
    throw new Error(`${err.message}; left: ${JSON.stringify(await left())}`);
  });
}

const pattern = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31) % 251));

describe('S3 backend', () => {
  test('upload with a known length, download, range, copy and delete keep the exact bytes', async () => {
    const s = t.service.storage.from('s3b');
    const bytes = pattern(300_000);
    assert.equal((await s.upload('data.bin', bytes, { contentType: 'application/octet-stream' })).error, null);
    assert.deepEqual(Buffer.from(await (await s.download('data.bin')).data!.arrayBuffer()), bytes);
    const part = await t.raw('GET', '/object/s3b/data.bin', { headers: { range: 'bytes=1000-1999' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(1000, 2000));
    assert.equal((await s.copy('data.bin', 'copy.bin')).error, null);
    assert.deepEqual(Buffer.from(await (await s.download('copy.bin')).data!.arrayBuffer()), bytes);
    assert.equal((await storeKeys()).length, 2);
    await s.remove(['data.bin', 'copy.bin']);
    await eventually(async () => (await storeKeys()).length === 0, 'deleted bytes leave the S3 store');
  });

  test('a chunked body of unknown length goes up in parts', async () => {
    const bytes = pattern(9 * 1024 * 1024 + 123);
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (offset >= bytes.length) return c.close();
        c.enqueue(bytes.subarray(offset, offset + 65536));
        offset += 65536;
      },
    });
    const res = await t.raw('POST', '/object/s3b/chunked.bin', {
      body: body as never,
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(res.status, 201);
    assert.equal((await res.json()).size, bytes.length);
    const down = await t.raw('GET', '/object/s3b/chunked.bin');
    assert.deepEqual(Buffer.from(await down.arrayBuffer()), bytes);
    await t.service.storage.from('s3b').remove(['chunked.bin']);
    await nothingLeft('bytes removed');
  });

  test('an over-limit body leaves nothing in the store', async () => {
    await t.service.storage.createBucket('s3small', { public: false, fileSizeLimit: 1000 });
    const res = await t.raw('POST', '/object/s3small/x.bin', {
      body: pattern(5000),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(res.status, 413);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(pattern(800));
        c.enqueue(pattern(800));
        c.close();
      },
    });
    const streamed = await t.raw('POST', '/object/s3small/y.bin', {
      body: body as never,
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(streamed.status, 413);
    assert.deepEqual(await storeKeys(), []);
    assert.equal(await rowCount(t, 'pending_bytes'), 0);
  });

  test('an upload refused by RLS while its known-length body streams answers 403 at once and leaves nothing in the store', async () => {
    const alice = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
    const token = await t.token(alice);
    const body = pattern(3 * 1024 * 1024);
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const res = await t.raw('POST', `/object/s3homes/someone-else/big${i}.bin`, {
        token,
        body,
        headers: { apikey: t.h.info.PUBLISHABLE_KEY, 'content-type': 'application/octet-stream' },
        signal: AbortSignal.timeout(15_000),
      });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error.code, 'row_level_security');
      assert.ok(Date.now() - started < 5000, `answered after ${Date.now() - started} ms`);
    }
    await nothingLeft('no staged record and no bytes');
  });

  test('a client that goes away mid-body leaves no staged record and no bytes', async () => {
    await abandonUpload(t, '/object/s3b/aborted.bin', 4 * 1024 * 1024, pattern(1024 * 1024));
    await nothingLeft('no staged record and no bytes');
  });

  test("deleting a project removes every key under its ref; the other projects' stay", async () => {
    assert.equal((await t.service.storage.from('s3b').upload('kept.bin', pattern(10))).error, null);
    const doomed = await projectWithObjects(t.h);
    const underRef = async () => (await storeKeys()).filter((k) => k.startsWith(`${doomed.ref}/`));
    assert.equal((await underRef()).length, 2);
    assert.equal(await doomed.remove(), 200);
    assert.deepEqual(await underRef(), []);
    assert.equal((await storeKeys()).length, 1, "the default project's object stays");
    await t.service.storage.from('s3b').remove(['kept.bin']);
    await eventually(async () => (await storeKeys()).length === 0, 'removed object');
  });

  test("a crashed writer's upload is swept from the store, on a store that cannot list multipart uploads too", async () => {
    // What a process killed mid-upload leaves: a staging record of a writer whose lock nobody holds, and its bytes.
    const version = randomUUID();
    const key = `${t.h.hearth.project.ref}/${version}`;
    await projectSql(t.h)`insert into storage.pending_bytes (version, writer) values (${version}, 1)`;
    const client = storeClient();
    await client.send(new PutObjectCommand({ Bucket: 'hearth-objects', Key: key, Body: 'partial' }));
    client.destroy();
    const backend = new S3Backend(t.h.config.s3);
    try {
      const swept = await sweepProject(t.h.hearth.p, backend, t.h.hearth.project.ref, projectSql(t.h), {
        crashed: true,
        self: 0,
      });
      assert.equal(swept, 1, 'ListMultipartUploads answered NotImplemented (s3rver); the bytes went all the same');
    } finally {
      backend.close();
    }
    assert.deepEqual(await storeKeys(), []);
    assert.equal(await rowCount(t, 'pending_bytes'), 0);
  });

  test('with the store down, downloads and uploads are 503 storage_unavailable (not the database), and serve again once it is back', async () => {
    assert.equal((await t.service.storage.from('s3b').upload('kept.bin', pattern(100))).error, null);
    const port = Number(new URL(endpoint).port);
    await s3.close();
    try {
      for (const res of [
        await t.raw('GET', '/object/s3b/kept.bin'),
        await t.raw('POST', '/object/s3b/new.bin', {
          body: pattern(100),
          headers: { 'content-type': 'application/octet-stream' },
        }),
      ]) {
        assert.equal(res.status, 503);
        assert.equal((await res.json()).error.code, 'storage_unavailable');
        assert.equal(res.headers.get('retry-after'), '2');
      }
    } finally {
      s3 = new S3rver({ port, address: '127.0.0.1', silent: true, allowMismatchedSignatures: true, directory: s3dir });
      await s3.run();
    }
    const back = await t.raw('GET', '/object/s3b/kept.bin');
    assert.equal(back.status, 200);
    assert.deepEqual(Buffer.from(await back.arrayBuffer()), Buffer.from(pattern(100)));
  });
});
