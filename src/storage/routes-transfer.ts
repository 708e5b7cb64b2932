/**
 * /storage/v1/object bytes in and out. This plugin owns its content-type
 * handling: every body is left unread for the upload to stream (no buffering,
 * no global body limit; the Meter enforces the object limit).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../http/envelopes.ts';
import { closeAfterAnswer } from '../http/refused-body.ts';
import { bucketNotFound } from './buckets.ts';
import type { StorageContext } from './context.ts';
import { readUploadBody } from './http-body.ts';
import { authOf, isUpsert, requestInfo, sendObject, type Params } from './http-common.ts';
import { findInBucket, findObject, findObjectAs, objectNotFound, type ObjectRow } from './objects.ts';
import { unreadable } from './read-refusal.ts';
import { checkObjectName } from './rules.ts';
import { verifyToken } from './signed.ts';
import { upload, type Uploaded, type Uploader } from './upload.ts';

type Route = { Params: Params; Querystring: { token?: string; download?: string } };

/**
 * POST answers 201 (SPEC 4.2); the PUT routes answer 200, as Supabase's update
 * and signed-upload routes do; a replay is 200 with `replayed: true` on either.
 */
function uploadResponse(request: FastifyRequest, reply: FastifyReply, { object: o, replayed }: Uploaded) {
  const body = {
    Key: `${o.bucket}/${o.name}`,
    Id: o.id,
    bucket: o.bucket,
    name: o.name,
    id: o.id,
    size: o.size,
    content_type: o.content_type,
  };
  if (replayed) return reply.code(200).send({ ...body, replayed: true });
  return reply.code(request.method === 'POST' ? 201 : 200).send(body);
}

/** Runs an upload; if it fails before the body was read to the end, the connection is closed after the answer. */
async function receive(
  s: StorageContext,
  request: FastifyRequest<Route>,
  reply: FastifyReply,
  by: (r: FastifyRequest<Route>) => Promise<Uploader>,
  replace: boolean,
) {
  try {
    const uploader = await by(request);
    const body = await readUploadBody(request);
    const done = await upload(s, request.hearth.project, {
      bucket: request.params.bucket,
      name: request.params['*'],
      ...body,
      replace,
      by: uploader,
    });
    return uploadResponse(request, reply, done);
  } catch (err) {
    closeAfterAnswer(request, reply);
    return sendError(request, reply, err);
  }
}

export async function transferRoutes(app: FastifyInstance, opts: { s: StorageContext }) {
  const { s } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  const asCaller = async (request: FastifyRequest<Route>): Promise<Uploader> => ({
    kind: 'caller',
    caller: authOf(request).caller,
    request: requestInfo(request),
  });

  app.post<Route>('/object/:bucket/*', (request, reply) => receive(s, request, reply, asCaller, isUpsert(request)));
  app.put<Route>('/object/:bucket/*', (request, reply) => receive(s, request, reply, asCaller, true));

  // The permission of these public routes is the URL (SPEC 5): credentials sent along are ignored.
  app.put<Route>('/object/upload/sign/:bucket/*', { config: { ignoreCredentials: true } }, (request, reply) =>
    receive(
      s,
      request,
      reply,
      async (r) => {
        const claims = await verifyToken(
          r.hearth.project,
          s.p.clock,
          r.query.token,
          'storage.upload',
          r.params.bucket,
          r.params['*'],
        );
        return { kind: 'signed', ownerSub: claims.owner ?? null };
      },
      false,
    ),
  );

  const authenticated = async (request: FastifyRequest<Route>, reply: FastifyReply) => {
    const { project } = request.hearth;
    const name = checkObjectName(request.params['*']);
    const caller = authOf(request).caller;
    const o = await findObjectAs(project.sql, caller, request.params.bucket, name, requestInfo(request));
    if (!o) throw await unreadable(project.sql, caller, request.params.bucket);
    return sendObject(s, request, reply, project, o);
  };
  // HEAD is routed explicitly: Fastify's automatic HEAD would reset Content-Length to 0.
  const download = (
    path: string,
    handler: (request: FastifyRequest<Route>, reply: FastifyReply) => Promise<unknown>,
    isPublic = false,
  ) => {
    app.route<Route>({
      method: ['GET', 'HEAD'],
      url: path,
      exposeHeadRoute: false,
      config: { ignoreCredentials: isPublic },
      handler,
    });
  };
  download('/object/:bucket/*', authenticated);
  download('/object/authenticated/:bucket/*', authenticated);

  /** Read as the platform: the bucket's public flag or the signature is the permission. */
  const asPlatform = async (request: FastifyRequest<Route>): Promise<ObjectRow> => {
    const { project } = request.hearth;
    // The platform's own connection sees every row, as service_role would: no transaction or role needed.
    const o = await findObject(project.sql, request.params.bucket, request.params['*']);
    if (!o) throw objectNotFound();
    return o;
  };

  const publicObject = async (request: FastifyRequest<Route>, reply: FastifyReply) => {
    // Bucket and object are read in one statement; the bucket's answer comes first.
    const found = await findInBucket(request.hearth.project.sql, request.params.bucket, request.params['*']);
    if (!found) throw bucketNotFound();
    if (!found.isPublic || !found.object) throw objectNotFound();
    return sendObject(s, request, reply, request.hearth.project, found.object);
  };
  download('/object/public/:bucket/*', publicObject, true);

  // storage-js sends download() and getPublicUrl() with a `transform` option here. Hearth has no
  // image transformation: the original is served, under the same rules, so such apps still work.
  download('/render/image/authenticated/:bucket/*', authenticated);
  download('/render/image/public/:bucket/*', publicObject, true);

  download(
    '/object/sign/:bucket/*',
    async (request, reply) => {
      await verifyToken(
        request.hearth.project,
        s.p.clock,
        request.query.token,
        'storage.download',
        request.params.bucket,
        request.params['*'],
      );
      return sendObject(s, request, reply, request.hearth.project, await asPlatform(request));
    },
    true,
  );
}
