/** Postgres errors of storage statements as HearthErrors with storage codes. */
import { HearthError } from '../errors.ts';

export function storageError(err: unknown): unknown {
  const code = (err as { code?: string })?.code;
  switch (code) {
    case '42501':
      // Word for word what Supabase Storage says (SPEC 7 names this message); the code says the rest.
      return new HearthError(403, 'row_level_security', 'new row violates row-level security policy');
    case 'HS001':
      return new HearthError(422, 'quota_exceeded', "The upload would take the project over its storage quota (config/storage quota_bytes). Delete objects or raise the quota.");
    case 'HS002':
      return new HearthError(503, 'upload_interrupted', 'The upload was interrupted while it was being stored; send it again.');
    case '23505':
      return new HearthError(409, 'duplicate', 'The resource already exists: an object of that name is already in the bucket.');
    case '23503':
      return new HearthError(404, 'bucket_not_found', 'Bucket not found.');
    // Postgres text and jsonb cannot hold U+0000, so no bucket, object or metadata can contain it.
    case '22021':
    case '22P05':
      return new HearthError(400, 'invalid_request', 'The request contains a NUL character (U+0000), which no bucket name, object name or metadata can hold.');
    default:
      return err;
  }
}

/** Runs fn and rethrows its database errors as storage errors. */
export async function mapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw storageError(err);
  }
}
