/** Postgres errors of storage statements as HearthErrors with storage codes. */
import { fail } from '../errors.ts';

export function storageError(err: unknown): unknown {
  const code = (err as { code?: string })?.code;
  switch (code) {
    case '42501':
      // Word for word what Supabase Storage says (SPEC 7 names this message); the code says the rest.
      return fail('row_level_security');
    case 'HS001':
      return fail('quota_exceeded');
    case 'HS002':
      return fail('upload_interrupted');
    case '23505':
      return fail('duplicate', undefined, { hint: 'An object of that name is already in the bucket.' });
    case '23503':
      return fail('bucket_not_found');
    // Postgres text and jsonb cannot hold U+0000, so no bucket, object or metadata can contain it.
    case '22021':
    case '22P05':
      return fail(
        'invalid_request',
        'The request contains a NUL character (U+0000), which no bucket name, object name or metadata can hold.',
      );
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
