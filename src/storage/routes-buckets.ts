/** /storage/v1/bucket: bucket management, secret key only (SPEC 5). */
import type { FastifyInstance } from 'fastify';
import {
  createBucket,
  deleteBucket,
  emptyBucket,
  getBucket,
  listBuckets,
  updateBucket,
  type BucketInput,
} from './buckets.ts';
import type { StorageContext } from './context.ts';
import { fail } from '../errors.ts';
import { requireService } from './http-common.ts';

type Id = { Params: { id: string } };

/** A bucket's fields: a JSON object (an absent body is an empty one). */
function bucketBody(body: unknown): BucketInput & { id?: unknown; name?: unknown } {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw fail('invalid_request', 'The body must be a JSON object of bucket fields.');
  return body as BucketInput;
}

export async function bucketRoutes(app: FastifyInstance, opts: { s: StorageContext }) {
  const { s } = opts;

  app.get<{ Querystring: Record<string, string> }>('/bucket', async (request) => {
    requireService(request);
    return listBuckets(request.hearth.project.sql, request.query);
  });

  app.get<Id>('/bucket/:id', async (request) => {
    requireService(request);
    return getBucket(request.hearth.project.sql, request.params.id);
  });

  app.post<{ Body: BucketInput & { id?: unknown; name?: unknown } }>('/bucket', async (request) => {
    requireService(request);
    const body = bucketBody(request.body);
    // A bucket's name is its id (storage-js sends both, equal): a different name would be dropped.
    if (body.id !== undefined && body.name !== undefined && body.id !== body.name) {
      throw fail(
        'invalid_request',
        "id and name differ: a bucket's name is its id in Hearth. Send one of them, or both with the same value.",
      );
    }
    const bucket = await createBucket(request.hearth.project.sql, body.id ?? body.name, body);
    return { name: bucket.name };
  });

  app.put<Id & { Body: BucketInput }>('/bucket/:id', async (request) => {
    requireService(request);
    await updateBucket(request.hearth.project.sql, request.params.id, bucketBody(request.body));
    return { message: 'Successfully updated' };
  });

  app.post<Id>('/bucket/:id/empty', async (request) => {
    requireService(request);
    await emptyBucket(request.hearth.project.sql, request.params.id);
    s.drain(request.hearth.project);
    return { message: 'Successfully emptied' };
  });

  app.delete<Id>('/bucket/:id', async (request) => {
    requireService(request);
    await deleteBucket(request.hearth.project.sql, request.params.id);
    return { message: 'Successfully deleted' };
  });
}
