/**
 * /storage/v1/object JSON routes: list and list-v2, sign (one or many), mint a signed
 * upload URL, copy, move, remove, info. Everything runs under the caller's
 * role, so the project's policies on storage.objects decide.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { withRole } from '../db/with-role.ts';
import { fail } from '../errors.ts';
import { bucketNotFound, getBucket } from './buckets.ts';
import type { StorageContext } from './context.ts';
import { checkCopyBody, copyObject, moveObject } from './copy.ts';
import { authOf, isUpsert, requestInfo, type Params } from './http-common.ts';
import { listObjects, listObjectsV2, type ListOptions, type ListV2Options } from './list.ts';
import {
  deleteObjects,
  etagOf,
  fileObject,
  findInBucket,
  findObjectAs,
  objectNotFound,
  visibleNames,
  type ObjectRow,
} from './objects.ts';
import { mapped } from './pg-errors.ts';
import { unreadable } from './read-refusal.ts';
import { checkObjectName } from './rules.ts';
import { checkExpiresIn, signToken, UPLOAD_TOKEN_SECONDS } from './signed.ts';
import { discard, dryRunSignedUpload, stage } from './upload.ts';

type Bucket = { Params: { bucket: string } };

/** How long URLs signed several at once last when the request names no expiresIn (an hour). */
const MULTI_SIGN_DEFAULT_SECONDS = 3600;

function copyRequest(request: FastifyRequest) {
  const body = checkCopyBody(request.body);
  const auth = authOf(request);
  return {
    bucket: body.bucketId,
    from: body.sourceKey,
    toBucket: body.destinationBucket ?? body.bucketId,
    to: body.destinationKey,
    replace: isUpsert(request),
    caller: auth.caller,
    request: requestInfo(request),
  };
}

export async function objectRoutes(app: FastifyInstance, opts: { s: StorageContext }) {
  const { s } = opts;
  const downloadPath = (bucket: string, name: string, token: string) =>
    `/object/sign/${bucket}/${name}?token=${encodeURIComponent(token)}`;

  app.post<Bucket & { Body: ListOptions }>('/object/list/:bucket', async (request) => {
    const { project } = request.hearth;
    await getBucket(project.sql, request.params.bucket);
    return mapped(() =>
      withRole(
        project.sql,
        authOf(request).caller,
        (tx) => listObjects(tx, request.params.bucket, request.body ?? {}),
        requestInfo(request),
      ),
    );
  });

  app.post<Bucket & { Body: ListV2Options }>('/object/list-v2/:bucket', async (request) => {
    const { project } = request.hearth;
    await getBucket(project.sql, request.params.bucket);
    return mapped(() =>
      withRole(
        project.sql,
        authOf(request).caller,
        (tx) => listObjectsV2(tx, request.params.bucket, request.body ?? {}),
        requestInfo(request),
      ),
    );
  });

  app.post<{ Params: Params; Body: { expiresIn?: unknown } }>('/object/sign/:bucket/*', async (request) => {
    const { project } = request.hearth;
    const name = checkObjectName(request.params['*']);
    const expiresIn = checkExpiresIn(request.body?.expiresIn);
    const caller = authOf(request).caller;
    const o = await findObjectAs(project.sql, caller, request.params.bucket, name, requestInfo(request));
    if (!o) throw await unreadable(project.sql, caller, request.params.bucket);
    const token = await signToken(
      project,
      s.p.clock,
      { url: `${o.bucket}/${o.name}`, typ: 'storage.download' },
      expiresIn,
    );
    return { signedURL: downloadPath(o.bucket, o.name, token) };
  });

  // storage-js sends {expiresIn, paths}; SPEC 4.2 also allows the bare array of keys. Without
  // expiresIn (in the body, else ?expiresIn=) the URLs last MULTI_SIGN_DEFAULT_SECONDS.
  app.post<
    Bucket & { Body: { expiresIn?: unknown; paths?: unknown } | unknown[]; Querystring: { expiresIn?: string } }
  >('/object/sign/:bucket', async (request) => {
    const { project } = request.hearth;
    const body = Array.isArray(request.body) ? { paths: request.body } : (request.body ?? {});
    const expiresIn = checkExpiresIn(
      body.expiresIn ??
        (request.query.expiresIn !== undefined ? Number(request.query.expiresIn) : MULTI_SIGN_DEFAULT_SECONDS),
    );
    const paths = body.paths;
    if (
      !Array.isArray(paths) ||
      paths.length === 0 ||
      paths.length > 1000 ||
      !paths.every((p) => typeof p === 'string')
    ) {
      throw fail(
        'invalid_request',
        'The body must be {"expiresIn": seconds, "paths": [object names]} or an array of object names, 1 to 1000 of them.',
      );
    }
    const bucket = request.params.bucket;
    const visible = await visibleNames(
      project.sql,
      authOf(request).caller,
      bucket,
      paths as string[],
      requestInfo(request),
    );
    return Promise.all(
      (paths as string[]).map(async (path) => {
        if (!visible.has(path))
          return { error: 'Either the object does not exist or you do not have access to it', path, signedURL: null };
        const token = await signToken(
          project,
          s.p.clock,
          { url: `${bucket}/${path}`, typ: 'storage.download' },
          expiresIn,
        );
        return { error: null, path, signedURL: downloadPath(bucket, path, token) };
      }),
    );
  });

  // Minting runs an RLS dry run of the insert: only a caller who may insert the object gets a URL,
  // and a name already taken is refused now, as the upload would refuse it (SPEC 4.2).
  app.post<{ Params: Params }>('/object/upload/sign/:bucket/*', async (request) => {
    const { project } = request.hearth;
    const auth = authOf(request);
    const name = checkObjectName(request.params['*']);
    const bucket = await getBucket(project.sql, request.params.bucket);
    const ownerSub = (auth.caller.claims.sub as string | undefined) ?? null;
    const version = await stage(s, project);
    try {
      await mapped(() =>
        dryRunSignedUpload(
          project,
          { kind: 'caller', caller: auth.caller, request: requestInfo(request) },
          {
            id: randomUUID(),
            bucket: bucket.id,
            name,
            ownerSub,
            version,
            size: 0,
            contentType: 'application/octet-stream',
            cacheControl: 'no-cache',
            contentHash: '',
            metadata: {},
          },
        ),
      );
    } finally {
      await discard(s, project, version);
    }
    const token = await signToken(
      project,
      s.p.clock,
      { url: `${bucket.id}/${name}`, typ: 'storage.upload', owner: ownerSub },
      UPLOAD_TOKEN_SECONDS,
    );
    return { url: `/object/upload/sign/${bucket.id}/${name}?token=${encodeURIComponent(token)}`, token };
  });

  app.post('/object/copy', async (request) => {
    const o = await copyObject(s, request.hearth.project, copyRequest(request), false);
    return { Key: `${o.bucket}/${o.name}`, Id: o.id, id: o.id, bucket: o.bucket, name: o.name };
  });

  app.post('/object/move', async (request) => {
    await moveObject(s, request.hearth.project, copyRequest(request));
    return { message: 'Successfully moved' };
  });

  app.delete<Bucket & { Body: { prefixes?: unknown } }>('/object/:bucket', async (request) => {
    const { project } = request.hearth;
    const names = request.body?.prefixes;
    if (
      !Array.isArray(names) ||
      names.length === 0 ||
      names.length > 1000 ||
      !names.every((n) => typeof n === 'string')
    ) {
      throw fail('invalid_request', 'prefixes must be a list of 1 to 1000 exact object names.');
    }
    await getBucket(project.sql, request.params.bucket);
    const removed = await mapped(() =>
      withRole(
        project.sql,
        authOf(request).caller,
        (tx) => deleteObjects(tx, request.params.bucket, names as string[]),
        requestInfo(request),
      ),
    );
    s.drain(project);
    return removed.map(fileObject);
  });

  // Supabase's single-object delete (storage-js removes in bulk; other clients use this).
  app.delete<{ Params: Params }>('/object/:bucket/*', async (request) => {
    const { project } = request.hearth;
    const name = checkObjectName(request.params['*']);
    await getBucket(project.sql, request.params.bucket);
    const removed = await mapped(() =>
      withRole(
        project.sql,
        authOf(request).caller,
        (tx) => deleteObjects(tx, request.params.bucket, [name]),
        requestInfo(request),
      ),
    );
    if (removed.length === 0) throw objectNotFound();
    s.drain(project);
    return { message: 'Successfully deleted' };
  });

  const info = async (request: FastifyRequest<{ Params: Params }>) => {
    const { project } = request.hearth;
    const name = checkObjectName(request.params['*']);
    const caller = authOf(request).caller;
    const o = await findObjectAs(project.sql, caller, request.params.bucket, name, requestInfo(request));
    if (!o) throw await unreadable(project.sql, caller, request.params.bucket);
    return infoOf(o);
  };
  app.get('/object/info/:bucket/*', info);
  // Supabase Storage's other spellings of info (storage-js uses the first).
  app.get('/object/info/authenticated/:bucket/*', info);
  app.get<{ Params: Params }>(
    '/object/info/public/:bucket/*',
    { config: { ignoreCredentials: true } },
    async (request) => {
      const { project } = request.hearth;
      const name = checkObjectName(request.params['*']);
      // As a public download: the bucket's flag and the row in one statement on the platform's connection.
      const found = await findInBucket(project.sql, request.params.bucket, name);
      if (!found) throw bucketNotFound();
      if (!found.isPublic || !found.object) throw objectNotFound();
      return infoOf(found.object);
    },
  );
}

/** The info() answer (storage-js FileObjectV2): as Supabase Storage's, the time of the last write is `last_modified` only. */
function infoOf(o: ObjectRow) {
  return {
    id: o.id,
    version: o.version,
    name: o.name,
    bucket_id: o.bucket,
    owner: o.owner_sub,
    created_at: o.created_at,
    last_modified: o.updated_at,
    size: o.size,
    cache_control: o.cache_control,
    content_type: o.content_type,
    etag: etagOf(o),
    metadata: o.metadata,
  };
}
