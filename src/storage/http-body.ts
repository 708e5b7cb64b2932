/**
 * The body of an upload, as a stream, never buffered: raw bytes with their
 * Content-Type (and storage-js's cache-control and x-metadata headers), or a
 * multipart form as storage-js sends Blobs and Files (fields cacheControl and
 * metadata, then one file part).
 */
import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { PassThrough, pipeline } from 'node:stream';
import { fail } from '../errors.ts';
import { lazy } from '../lazy.ts';
import { cacheControlOf, parseUserMetadata } from './rules.ts';

export interface UploadBody {
  body: Readable;
  contentType: string;
  length: number | null;
  cacheControl: string;
  metadata: Record<string, unknown>;
}

/** The multipart parser, loaded at the first multipart upload (the request waits, paused, meanwhile). */
const busboy = lazy(async () => (await import('busboy')).default);

const header = (request: FastifyRequest, name: string): string | undefined => {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function declaredLength(request: FastifyRequest): number | null {
  const raw = header(request, 'content-length');
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : null;
}

/** A boundary parameter with a value (RFC 2046: 1-70 characters, quoted or not). */
const BOUNDARY = /;\s*boundary\s*=\s*("[^"]+"|[^\s;"]+)/i;

export function readUploadBody(request: FastifyRequest): Promise<UploadBody> {
  const contentType = header(request, 'content-type') ?? 'application/octet-stream';
  const multipart = /^\s*multipart\/form-data\s*(;|$)/i.test(contentType);
  // Without its boundary a form cannot be read: stored as raw bytes it would be a broken object.
  if (multipart && !BOUNDARY.test(contentType)) {
    return Promise.reject(
      fail(
        'invalid_request',
        'A multipart/form-data body needs the boundary parameter in its Content-Type ("multipart/form-data; boundary=..."); to store raw bytes, send their own Content-Type.',
      ),
    );
  }
  if (!multipart) {
    return Promise.resolve({
      body: request.raw,
      contentType,
      length: declaredLength(request),
      cacheControl: cacheControlOf(header(request, 'cache-control')),
      metadata: parseUserMetadata(header(request, 'x-metadata'), true),
    });
  }
  return busboy().then((parse) => multipartBody(request, parse));
}

function multipartBody(request: FastifyRequest, parse: Awaited<ReturnType<typeof busboy>>): Promise<UploadBody> {
  return new Promise((resolve, reject) => {
    const form = parse({ headers: request.headers, limits: { files: 1, fields: 10, fieldSize: 16 * 1024 } });
    const fields: Record<string, string> = {};
    let found = false;
    form.on('field', (name, value) => {
      fields[name] = value;
    });
    form.on('file', (_name, stream, info) => {
      found = true;
      // A form cut short fails the file stream, possibly before the upload has piped it
      // anywhere (it awaits the bucket and limits first): unheard, that error would crash the
      // process. It is heard here and passed on as the client's fault, a 400.
      const body = new PassThrough();
      // The upload pipes `body` and hears its error; when the upload stopped reading early (a
      // refusal by RLS or a limit), nobody else listens, and an unheard error ends the process.
      body.on('error', () => {});
      stream.on('error', (err) =>
        body.destroy(fail('invalid_request', `The multipart body could not be read: ${err.message}.`)),
      );
      stream.pipe(body);
      try {
        resolve({
          body,
          contentType: info.mimeType || 'application/octet-stream',
          length: null,
          cacheControl: cacheControlOf(fields.cacheControl),
          metadata: parseUserMetadata(fields.metadata, false),
        });
      } catch (err) {
        body.resume();
        reject(err);
      }
    });
    form.on('close', () => {
      if (!found) reject(fail('invalid_request', 'The multipart form has no file part.'));
    });
    // pipeline destroys the form (and so the file stream) when the client goes away mid-body.
    pipeline(request.raw, form, (err) => {
      if (err && !found) reject(fail('invalid_request', `The multipart body could not be read: ${err.message}`));
    });
  });
}
