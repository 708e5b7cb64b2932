import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { projectSql, startStorageTest, storedFiles, type StorageTest } from './setup.ts';

const ALICE = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const BOB = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

let t: StorageTest;
before(async () => {
  t = await startStorageTest();
  await t.service.storage.createBucket('private');
  await t.service.storage.createBucket('homes');
  await t.service.storage.createBucket('vip');
  await t.service.storage.createBucket('avatars');
});
after(async () => {
  await t?.close();
});

const status = (r: { error: unknown }) => (r.error as { status?: number } | null)?.status;

describe('storage RLS', () => {
  test('a new project has exactly one policy; private buckets deny until policies are added', async () => {
    const policies = await t.owner`select policyname, cmd from pg_policies where schemaname = 'storage'`;
    assert.deepEqual(
      policies.map((p) => [p.policyname, p.cmd]),
      [['read objects of public buckets', 'SELECT']],
    );
    const alice = await t.as(ALICE);
    const up = await alice.storage.from('private').upload('x.txt', Buffer.from('x'));
    assert.equal(status(up), 403);
    assert.equal(up.error!.message, 'new row violates row-level security policy');
    const raw = await t.raw('POST', '/object/private/x.txt', { token: t.h.info.PUBLISHABLE_KEY, body: 'x' });
    assert.equal(raw.status, 403);
    assert.equal((await raw.json()).error.code, 'row_level_security');
    await t.service.storage.from('private').upload('secret.txt', Buffer.from('s'));
    assert.equal(status(await alice.storage.from('private').download('secret.txt')), 403);
    assert.deepEqual((await alice.storage.from('private').list()).data, []);
    assert.equal(storedFiles(t.h).length, 1, 'refused uploads store nothing');
  });

  test('owner_sub and foldername policies: each user in their own folder', async () => {
    await t.owner.unsafe(`
      create policy "insert own folder" on storage.objects for insert to authenticated
        with check (bucket = 'homes' and (storage.foldername(name))[1] = auth.uid()::text);
      create policy "read own" on storage.objects for select to authenticated
        using (bucket = 'homes' and owner_sub = auth.uid()::text);
      create policy "update own" on storage.objects for update to authenticated
        using (bucket = 'homes' and owner_sub = auth.uid()::text);
      create policy "delete own" on storage.objects for delete to authenticated
        using (bucket = 'homes' and owner_sub = auth.uid()::text);`);
    const alice = await t.as(ALICE);
    const bob = await t.as(BOB);
    assert.equal(
      (await alice.storage.from('homes').upload(`${ALICE}/notes.txt`, Buffer.from('alice notes'))).error,
      null,
    );
    assert.equal(status(await alice.storage.from('homes').upload(`${BOB}/notes.txt`, Buffer.from('forged'))), 403);
    assert.equal((await bob.storage.from('homes').upload(`${BOB}/notes.txt`, Buffer.from('bob notes'))).error, null);

    const [row] =
      await t.owner`select owner_sub from storage.objects where bucket = 'homes' and name = ${`${ALICE}/notes.txt`}`;
    assert.equal(row!.owner_sub, ALICE);
    assert.equal(await (await alice.storage.from('homes').download(`${ALICE}/notes.txt`)).data!.text(), 'alice notes');
    assert.equal(status(await bob.storage.from('homes').download(`${ALICE}/notes.txt`)), 404);
    assert.deepEqual((await bob.storage.from('homes').list(ALICE)).data, []);
    assert.deepEqual(
      (await bob.storage.from('homes').list()).data!.map((e) => e.name),
      [BOB],
    );
    // Bob cannot remove, sign or move Alice's object: it is invisible to him.
    assert.deepEqual((await bob.storage.from('homes').remove([`${ALICE}/notes.txt`])).data, []);
    assert.equal(status(await bob.storage.from('homes').createSignedUrl(`${ALICE}/notes.txt`, 60)), 404);
    assert.equal(status(await bob.storage.from('homes').move(`${ALICE}/notes.txt`, `${BOB}/stolen.txt`)), 404);
    assert.equal(status(await bob.storage.from('homes').copy(`${ALICE}/notes.txt`, `${BOB}/stolen.txt`)), 404);
    // Replacing needs the update policy on the existing row.
    assert.equal(
      (await alice.storage.from('homes').upload(`${ALICE}/notes.txt`, Buffer.from('v2'), { upsert: true })).error,
      null,
    );
    assert.equal((await alice.storage.from('homes').remove([`${ALICE}/notes.txt`])).data!.length, 1);
  });

  test('owner_sub cannot be forged: the platform sets it from the token', async () => {
    const alice = await t.as(ALICE);
    // Even a direct insert under the authenticated role gets the caller's sub.
    const sql = t.h.hearth.p.dbs.project(t.h.hearth.project.db_name);
    const version = crypto.randomUUID();
    await sql`insert into storage.pending_bytes (version, writer) values (${version}, 1)`;
    await sql.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: ALICE, role: 'authenticated' })}, true)`;
      await tx`insert into storage.objects (bucket, name, owner_sub, version, size, content_type, cache_control, content_hash)
        values ('homes', ${`${ALICE}/forged.txt`}, ${BOB}, ${version}, 0, 'text/plain', 'no-cache', 'x')`;
    });
    const [row] = await t.owner`select owner_sub from storage.objects where name = ${`${ALICE}/forged.txt`}`;
    assert.equal(row!.owner_sub, ALICE);
    await t.owner`delete from storage.objects where name = ${`${ALICE}/forged.txt`}`;
    // A row cannot point at bytes nobody staged (e.g. another object's version).
    const [other] = await t.owner`select version from storage.objects limit 1`;
    await assert.rejects(
      sql.begin(async (tx) => {
        await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: ALICE, role: 'authenticated' })}, true)`;
        await tx`insert into storage.objects (bucket, name, version, size, content_type, cache_control, content_hash)
          values ('homes', ${`${ALICE}/alias.txt`}, ${other!.version}, 0, 'text/plain', 'no-cache', 'x')`;
      }),
      /not staged/,
    );
    assert.ok(alice);
  });

  test('auth.jwt() claims in policies', async () => {
    await t.owner.unsafe(`
      create policy "vip read" on storage.objects for select to authenticated
        using (bucket = 'vip' and auth.jwt() -> 'app_metadata' ->> 'plan' = 'gold');`);
    await t.service.storage.from('vip').upload('lounge.txt', Buffer.from('welcome'));
    const gold = await t.as(ALICE, { app_metadata: { plan: 'gold' } });
    const free = await t.as(BOB, { app_metadata: { plan: 'free' } });
    assert.equal(await (await gold.storage.from('vip').download('lounge.txt')).data!.text(), 'welcome');
    const refused = await free.storage.from('vip').download('lounge.txt');
    assert.equal(status(refused), 403, 'the read policy of vip can admit no object of it to the free plan');
    assert.equal(refused.error!.message, 'new row violates row-level security policy');
    assert.equal(
      status(await free.storage.from('vip').download('never-stored.txt')),
      403,
      'the same for a missing name: no answer tells whether an object exists',
    );
    assert.deepEqual(
      (await gold.storage.from('vip').list()).data!.map((e) => e.name),
      ['lounge.txt'],
    );
    assert.deepEqual((await free.storage.from('vip').list()).data, []);
  });
  test("Supabase's column names work in policies: bucket_id, owner, owner_id, path_tokens", async () => {
    // Policies as Supabase's storage guides write them, unchanged.
    await t.owner.unsafe(`
      create policy "avatar insert" on storage.objects for insert to authenticated
        with check (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid()::text));
      create policy "avatar read" on storage.objects for select to authenticated
        using (bucket_id = 'avatars' and owner_id = (select auth.uid()::text));
      create policy "avatar update" on storage.objects for update to authenticated
        using (bucket_id = 'avatars' and (select auth.uid()) = owner);
      create policy "avatar delete" on storage.objects for delete to authenticated
        using (bucket_id = 'avatars' and path_tokens[1] = (select auth.uid()::text));`);
    const alice = await t.as(ALICE);
    const bob = await t.as(BOB);
    const mine = `${ALICE}/me.png`;
    assert.equal((await alice.storage.from('avatars').upload(mine, Buffer.from('v1'))).error, null);
    assert.equal(status(await alice.storage.from('avatars').upload(`${BOB}/me.png`, Buffer.from('x'))), 403);
    const [row] = await t.owner`select bucket_id, owner, owner_id, path_tokens from storage.objects
      where bucket = 'avatars' and name = ${mine}`;
    assert.deepEqual(
      { ...row },
      { bucket_id: 'avatars', owner: ALICE, owner_id: ALICE, path_tokens: [ALICE, 'me.png'] },
    );
    assert.equal(await (await alice.storage.from('avatars').download(mine)).data!.text(), 'v1');
    assert.equal(
      status(await bob.storage.from('avatars').download(mine)),
      404,
      'a read policy applies to Bob: not his',
    );
    assert.equal((await alice.storage.from('avatars').upload(mine, Buffer.from('v2'), { upsert: true })).error, null);
    assert.equal(await (await alice.storage.from('avatars').download(mine)).data!.text(), 'v2');
    assert.equal((await alice.storage.from('avatars').remove([mine])).data!.length, 1);
    // They follow the columns they mirror and cannot be written.
    await t.service.storage.from('avatars').upload('by-service.txt', Buffer.from('s'));
    const [service] = await t.owner`select owner, owner_id from storage.objects where name = 'by-service.txt'`;
    assert.deepEqual({ ...service }, { owner: null, owner_id: null });
    await assert.rejects(
      t.owner`update storage.objects set bucket_id = 'homes' where name = 'by-service.txt'`,
      /can only be updated to DEFAULT/,
    );
  });
});

describe('reads refused by RLS (SPEC 7)', () => {
  const refused = async (res: Response, what: string) => {
    assert.equal(res.status, 403, what);
    if (!what.startsWith('HEAD')) {
      const body = await res.json();
      assert.equal(body.error.code, 'row_level_security', what);
      assert.equal(body.message, 'new row violates row-level security policy', what);
    }
  };
  const routes = (bucket: string, name: string): [string, string, unknown?][] => [
    ['GET', `/object/${bucket}/${name}`],
    ['HEAD', `/object/${bucket}/${name}`],
    ['GET', `/object/authenticated/${bucket}/${name}`],
    ['GET', `/object/info/${bucket}/${name}`],
    ['GET', `/object/info/authenticated/${bucket}/${name}`],
    ['POST', `/object/sign/${bucket}/${name}`, { expiresIn: 60 }],
  ];

  test("in a private bucket where no read policy applies to the caller's role (anon here): download, info and sign are 403, for a stored name and a missing one alike", async () => {
    await t.service.storage.createBucket('closed');
    assert.equal((await t.service.storage.from('closed').upload('kept.txt', Buffer.from('kept'))).error, null);
    for (const name of ['kept.txt', 'never-stored.txt']) {
      for (const [what, r] of [
        ['download', await t.anon.storage.from('closed').download(name)],
        ['info', await t.anon.storage.from('closed').info(name)],
        ['createSignedUrl', await t.anon.storage.from('closed').createSignedUrl(name, 60)],
      ] as const) {
        assert.equal(status(r), 403, `${what} ${name}`);
        assert.equal(r.data, null);
      }
      await assert.rejects(t.anon.storage.from('closed').exists(name), { status: 403 }, `exists ${name}`);
      for (const [method, path, json] of routes('closed', name)) {
        await refused(await t.raw(method, path, { token: t.h.info.PUBLISHABLE_KEY, json }), `${method} ${path}`);
      }
    }
  });

  test("where a read policy applies to the caller's role, a missing object is 404 even before they can read any: exists() is false", async () => {
    // "avatars" has Supabase's guide policies for authenticated (each user reads their own); Carol has stored nothing yet.
    const CAROL = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
    const carol = await t.as(CAROL);
    const avatar = `${CAROL}/avatar.png`;
    assert.equal((await carol.storage.from('avatars').list(CAROL)).data!.length, 0, 'Carol sees no object');
    assert.equal((await carol.storage.from('avatars').exists(avatar)).data, false);
    assert.equal(status(await carol.storage.from('avatars').download(avatar)), 404);
    assert.equal(status(await carol.storage.from('avatars').info(avatar)), 404);
    // In "closed", no policy of hers can admit any object (hers are for other buckets): 403 (SPEC 7).
    for (const name of ['kept.txt', 'never-stored.txt']) {
      const refused = await carol.storage.from('closed').download(name);
      assert.equal(status(refused), 403, name);
      assert.equal(refused.error!.message, 'new row violates row-level security policy', name);
    }
    assert.equal((await carol.storage.from('avatars').upload(avatar, Buffer.from('me'))).error, null);
    assert.equal((await carol.storage.from('avatars').exists(avatar)).data, true);
  });

  test('where the caller may read some objects of the bucket, one they cannot see is 404 not_found, as a missing one is', async () => {
    // "homes": Bob reads his own folder only (the policies of the test above).
    const bob = await t.as(BOB);
    assert.equal((await bob.storage.from('homes').upload(`${BOB}/mine.txt`, Buffer.from('mine'))).error, null);
    assert.equal((await t.service.storage.from('homes').upload(`${ALICE}/hers.txt`, Buffer.from('hers'))).error, null);
    const token = await t.token(BOB);
    for (const name of [`${ALICE}/hers.txt`, `${ALICE}/never-stored.txt`]) {
      assert.equal(status(await bob.storage.from('homes').download(name)), 404, name);
      assert.equal(status(await bob.storage.from('homes').info(name)), 404, name);
      assert.equal(status(await bob.storage.from('homes').createSignedUrl(name, 60)), 404, name);
      for (const [method, path, json] of routes('homes', name)) {
        const res = await t.raw(method, path, { token, json, headers: { apikey: t.h.info.PUBLISHABLE_KEY } });
        assert.equal(res.status, 404, `${method} ${path}`);
        if (method !== 'HEAD') assert.equal((await res.json()).error.code, 'not_found', `${method} ${path}`);
      }
    }
  });

  test('the secret key (bypasses RLS) and public buckets keep 404 for a missing object', async () => {
    await t.service.storage.createBucket('empty-private');
    assert.equal(status(await t.service.storage.from('empty-private').download('nothing.txt')), 404);
    assert.equal((await t.raw('GET', '/object/info/empty-private/nothing.txt')).status, 404);
    await t.service.storage.createBucket('open', { public: true });
    const alice = await t.as(ALICE);
    assert.equal(status(await alice.storage.from('open').download('nothing.txt')), 404);
    assert.equal(status(await alice.storage.from('open').createSignedUrl('nothing.txt', 60)), 404);
  });
});

describe('signed URLs', () => {
  test('signed download URLs: minted under RLS, bound to one object, expire, refuse tampering', async () => {
    const gold = await t.as(ALICE, { app_metadata: { plan: 'gold' } });
    await t.service.storage.from('vip').upload('other.txt', Buffer.from('other'));
    const signed = await gold.storage.from('vip').createSignedUrl('lounge.txt', 60);
    assert.equal(signed.error, null);
    const ok = await fetch(signed.data!.signedUrl);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'welcome');
    const dl = await fetch(`${signed.data!.signedUrl}&download=`);
    assert.match(dl.headers.get('content-disposition')!, /^attachment/);

    const other = signed.data!.signedUrl.replace('lounge.txt', 'other.txt');
    const rebound = await fetch(other);
    assert.equal(rebound.status, 400);
    assert.equal((await rebound.json()).error.code, 'invalid_signature');
    const token = new URL(signed.data!.signedUrl).searchParams.get('token')!;
    const [h, p, sig] = token.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, url: 'vip/other.txt' })).toString('base64url')}.${sig}`;
    const tampered = await t.raw('GET', `/object/sign/vip/other.txt?token=${forged}`, { token: null });
    assert.equal(tampered.status, 400);
    assert.equal((await tampered.json()).error.code, 'invalid_signature');
    const noToken = await t.raw('GET', '/object/sign/vip/lounge.txt', { token: null });
    assert.equal(noToken.status, 400);
    assert.equal((await noToken.json()).error.code, 'missing_token');
    // An access token is not a signed-URL token.
    const access = await t.raw('GET', `/object/sign/vip/lounge.txt?token=${await t.token(ALICE)}`, { token: null });
    assert.equal(access.status, 400);

    t.h.clock.advance(61_000);
    const expired = await fetch(signed.data!.signedUrl);
    assert.equal(expired.status, 400);
    assert.equal((await expired.json()).error.code, 'signed_url_expired');

    const free = await t.as(BOB, { app_metadata: { plan: 'free' } });
    assert.equal(status(await free.storage.from('vip').createSignedUrl('lounge.txt', 60)), 403);
    const bad = await t.raw('POST', '/object/sign/vip/lounge.txt', { json: { expiresIn: 0 } });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.code, 'invalid_expires_in');
    const tenYears = 10 * 365 * 24 * 3600;
    const tooLong = await t.raw('POST', '/object/sign/vip/lounge.txt', { json: { expiresIn: tenYears + 1 } });
    assert.equal(tooLong.status, 400);
    assert.match((await tooLong.json()).message, /from 1 to 315360000 \(ten years\)/);
    assert.equal((await t.raw('POST', '/object/sign/vip/lounge.txt', { json: { expiresIn: tenYears } })).status, 200);
  });

  test('several at once: only readable objects get a URL', async () => {
    const gold = await t.as(ALICE, { app_metadata: { plan: 'gold' } });
    const many = await gold.storage.from('vip').createSignedUrls(['lounge.txt', 'missing.txt'], 60);
    assert.equal(many.error, null);
    assert.equal(many.data![0]!.error, null);
    assert.equal(await (await fetch(many.data![0]!.signedUrl!)).text(), 'welcome');
    assert.equal(many.data![1]!.signedUrl, null);
    assert.match(many.data![1]!.error!, /does not exist/);
    const bad = await t.raw('POST', '/object/sign/vip', { json: { expiresIn: 60, paths: [] } });
    assert.equal(bad.status, 400);
  });

  test('minting a signed upload URL for a taken name is 409 whether or not the caller can read the object', async () => {
    await t.service.storage.createBucket('dropbox');
    // Anyone signed in may drop files in; only the uploader reads them.
    await t.owner.unsafe(`
      create policy "dropbox insert" on storage.objects for insert to authenticated with check (bucket = 'dropbox');
      create policy "dropbox read own" on storage.objects for select to authenticated
        using (bucket = 'dropbox' and owner_sub = auth.uid()::text);
    `);
    const alice = await t.as(ALICE);
    const bob = await t.as(BOB);
    assert.equal((await alice.storage.from('dropbox').upload('report.pdf', Buffer.from('alice'))).error, null);
    assert.equal((await bob.storage.from('dropbox').download('report.pdf')).error !== null, true, 'bob cannot read it');
    // An upload to the name (the same bytes or not) is 409, without a word on what the object holds.
    for (const bytes of ['alice', 'bob']) {
      const { error } = await bob.storage.from('dropbox').upload('report.pdf', Buffer.from(bytes));
      assert.equal(status({ error }), 409, bytes);
      assert.equal(error!.message, 'The resource already exists', bytes);
      const raw = await t.raw('POST', '/object/dropbox/report.pdf', {
        body: bytes,
        token: await t.token(BOB),
        headers: { apikey: t.h.info.PUBLISHABLE_KEY },
      });
      const body = await raw.json();
      assert.equal(body.code, 'ResourceAlreadyExists', bytes);
      assert.match(body.error.hint, /one your policies do not let you read/, bytes);
    }
    for (const [who, sub, client] of [
      ['the owner, who can read it', ALICE, alice],
      ['bob, who cannot', BOB, bob],
    ] as const) {
      const minted = await client.storage.from('dropbox').createSignedUploadUrl('report.pdf');
      assert.equal(status(minted), 409, who);
      assert.equal(minted.error!.message, 'The resource already exists', who);
      const raw = await t.raw('POST', '/object/upload/sign/dropbox/report.pdf', {
        token: await t.token(sub),
        headers: { apikey: t.h.info.PUBLISHABLE_KEY },
      });
      assert.match((await raw.json()).error.hint, /signed upload URL cannot overwrite an object/, who);
    }
    // A free name still mints, and a caller who may not insert is refused for a taken name and a free one alike.
    assert.equal((await bob.storage.from('dropbox').createSignedUploadUrl('free.pdf')).error, null);
    for (const name of ['report.pdf', 'free.pdf']) {
      const anon = await t.raw('POST', `/object/upload/sign/dropbox/${name}`, { token: t.h.info.PUBLISHABLE_KEY });
      assert.equal(anon.status, 403, name);
    }
  });

  test('signed upload URLs: insert only, owner is the minting user, no Authorization on the PUT, 2 hours', async () => {
    const alice = await t.as(ALICE);
    const bob = await t.as(BOB);
    assert.equal(status(await bob.storage.from('homes').createSignedUploadUrl(`${ALICE}/by-bob.txt`)), 403);
    const minted = await alice.storage.from('homes').createSignedUploadUrl(`${ALICE}/upload.txt`);
    assert.equal(minted.error, null);
    const put = await fetch(minted.data!.signedUrl, {
      method: 'PUT',
      body: 'via signed url',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(put.status, 200, "Supabase's status for an upload to a signed URL");
    const [row] = await t.owner`select owner_sub from storage.objects where name = ${`${ALICE}/upload.txt`}`;
    assert.equal(row!.owner_sub, ALICE);
    // Insert only: it cannot overwrite, even the object it created.
    const again = await fetch(minted.data!.signedUrl, {
      method: 'PUT',
      body: 'different',
      headers: { 'content-type': 'text/plain', 'x-upsert': 'true' },
    });
    assert.equal(again.status, 409);
    const againBody = await again.json();
    assert.equal(againBody.error.code, 'duplicate');
    // Not the upload's advice: x-upsert and PUT cannot replace through a signed URL.
    assert.match(againBody.error.hint, /signed upload URL cannot overwrite an object/);
    // Bound to one object.
    const elsewhere = await fetch(minted.data!.signedUrl.replace('upload.txt', 'elsewhere.txt'), {
      method: 'PUT',
      body: 'x',
    });
    assert.equal(elsewhere.status, 400);
    // storage-js's own call.
    const second = await alice.storage.from('homes').createSignedUploadUrl(`${ALICE}/js.txt`);
    const viaJs = await t.anon.storage
      .from('homes')
      .uploadToSignedUrl(`${ALICE}/js.txt`, second.data!.token, Buffer.from('js'));
    assert.equal(viaJs.error, null);
    t.h.clock.advance(2 * 3600 * 1000 + 1000);
    const third = await (await t.as(ALICE)).storage.from('homes').createSignedUploadUrl(`${ALICE}/late.txt`);
    t.h.clock.advance(2 * 3600 * 1000 + 1000);
    const late = await fetch(third.data!.signedUrl, { method: 'PUT', body: 'late' });
    assert.equal(late.status, 400);
    assert.equal((await late.json()).error.code, 'signed_url_expired');
    // A client whose session expired after minting still uploads: the PUT needs no credentials
    // and ignores the stale ones storage-js sends along.
    const stale = await t.token(ALICE);
    const minter = await t.as(ALICE);
    const token = (await minter.storage.from('homes').createSignedUploadUrl(`${ALICE}/stale-session.txt`)).data!.token;
    t.h.clock.advance(3600_000 + 1000);
    assert.equal((await t.raw('GET', '/object/homes/x', { token: stale })).status, 401, 'the session has expired');
    const viaStale = await minter.storage
      .from('homes')
      .uploadToSignedUrl(`${ALICE}/stale-session.txt`, token, Buffer.from('late but valid'));
    assert.equal(viaStale.error, null);
    assert.deepEqual(viaStale.data, {
      path: `${ALICE}/stale-session.txt`,
      fullPath: `homes/${ALICE}/stale-session.txt`,
    });
    // No staged upload is left behind (the row deleted over SQL above waits for the periodic sweep).
    const [staged] = await projectSql(
      t.h,
    )`select count(*)::int as n from storage.pending_bytes where writer is not null`;
    assert.equal(staged!.n, 0);
  });
});
