/**
 * Supabase Storage's error code for each Hearth code a /storage/v1 request
 * can fail with. storage-js reads the body's top-level `code` into
 * StorageApiError.code, and Supabase's guides branch on those names
 * (`NoSuchKey`, `ResourceAlreadyExists`, ...); Hearth's own code stays in
 * `error.code` (SPEC 2.16). A code Supabase has no name for is sent as is.
 */
import type { ErrorCode } from '../errors.ts';

const SUPABASE_STORAGE_CODES: Partial<Record<ErrorCode, string>> = {
  bucket_not_found: 'NoSuchBucket',
  not_found: 'NoSuchKey',
  duplicate: 'ResourceAlreadyExists',
  bucket_exists: 'ResourceAlreadyExists',
  entity_too_large: 'EntityTooLarge',
  payload_too_large: 'EntityTooLarge',
  invalid_mime_type: 'InvalidMimeType',
  invalid_bucket_name: 'InvalidBucketName',
  invalid_key: 'InvalidKey',
  invalid_range: 'InvalidRange',
  row_level_security: 'AccessDenied',
  forbidden: 'AccessDenied',
  invalid_signature: 'InvalidSignature',
  signed_url_expired: 'InvalidJWT',
  missing_token: 'MissingParameter',
  bad_jwt: 'InvalidJWT',
  no_api_key: 'InvalidJWT',
  invalid_api_key: 'InvalidJWT',
  bad_authorization: 'InvalidJWT',
  invalid_request: 'InvalidRequest',
  invalid_metadata: 'InvalidRequest',
  invalid_cache_control: 'InvalidRequest',
  invalid_expires_in: 'InvalidRequest',
  invalid_file_size_limit: 'InvalidRequest',
  invalid_mime_types: 'InvalidRequest',
  bucket_not_empty: 'InvalidRequest',
  storage_unavailable: 'SlowDown',
  internal_error: 'InternalError',
};

export const supabaseStorageCode = (code: ErrorCode): string => SUPABASE_STORAGE_CODES[code] ?? code;
