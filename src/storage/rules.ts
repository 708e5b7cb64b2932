/**
 * Input rules of the storage area: bucket names (SPEC 2.6), object keys,
 * size limits (SPEC 8), MIME types, Cache-Control, and which types a browser
 * may render inline on the platform's origin.
 */
import { fail } from '../errors.ts';
import { unstorableJson, unstorableText } from '../platform/text.ts';

export const MAX_OBJECT_BYTES = 50 * 1024 * 1024;

/** Path words the routes use after /object/; a bucket of that name could not be addressed. */
const RESERVED_BUCKETS = new Set([
  'public',
  'sign',
  'list',
  'list-v2',
  'copy',
  'move',
  'upload',
  'authenticated',
  'info',
  'render',
]);

export function checkBucketName(name: unknown): string {
  if (typeof name !== 'string' || !/^[a-z0-9._-]{2,63}$/.test(name)) {
    throw fail('invalid_bucket_name');
  }
  if (RESERVED_BUCKETS.has(name)) {
    throw fail('invalid_bucket_name', `"${name}" is a reserved word of the storage API; choose another bucket name.`);
  }
  // ".." is a dot segment: clients (fetch, URL) resolve it away, so no route could ever name this bucket.
  if (name === '..')
    throw fail('invalid_bucket_name', 'A bucket cannot be named "..": URLs resolve it to the parent path.');
  return name;
}

export function checkObjectName(name: unknown): string {
  const bad = (why: string) => fail('invalid_key', `Invalid object name: ${why}.`);
  if (typeof name !== 'string' || name.length === 0) throw bad('it is empty');
  if (Buffer.byteLength(name) > 1024) throw bad('it is longer than 1024 bytes');
  // eslint-disable-next-line no-control-regex
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  if (/[\u0000-\u001f\u007f]/.test(name)) throw bad('it contains control characters');
  // Postgres would store a lone UTF-16 surrogate as U+FFFD: the name answered would not be the one kept.
  if (unstorableText(name)) throw bad('it contains an unpaired UTF-16 surrogate');
  for (const segment of name.split('/')) {
    if (segment === '') throw bad('it has an empty path segment (leading, trailing or double slash)');
    if (segment === '.' || segment === '..') throw bad('"." and ".." segments are not allowed');
  }
  return name;
}

/** Decimal places each unit can absorb: "1.5KB" is 1500 bytes, "1.5" or "1.0005KB" no whole number of bytes. */
const UNIT_PLACES = { b: 0, kb: 3, mb: 6, gb: 9 };

/**
 * `1024`, `"1024"`, `"10MB"`, `"1.5 GB"` → bytes; null clears the limit.
 * Units are decimal (1KB = 1000, 1MB = 10^6), as Supabase Storage reads them,
 * so a limit written for Supabase admits exactly the same uploads here. A
 * value that is no whole number of bytes is refused, never rounded. The digits
 * are shifted as text, so no float rounding decides that.
 */
export function parseSizeLimit(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const m = /^\s*(\d+)(?:\.(\d+))?\s*(b|kb|mb|gb)?\s*$/i.exec(String(value));
  const places = UNIT_PLACES[(m?.[3] ?? 'b').toLowerCase() as 'b'];
  const fraction = (m?.[2] ?? '').replace(/0+$/, '');
  const bytes = m && fraction.length <= places ? Number(m[1] + fraction.padEnd(places, '0')) : NaN;
  if (!Number.isFinite(bytes) || bytes < 1 || bytes > MAX_OBJECT_BYTES) {
    throw fail(
      'invalid_file_size_limit',
      `file_size_limit must be a whole number of bytes between 1 and 50 MiB (52428800; e.g. 1000000 or "5MB"), got ${JSON.stringify(value)}.`,
    );
  }
  return bytes;
}

const MIME = /^[a-z0-9!#$&^_.+-]+\/(\*|[a-z0-9!#$&^_.+-]+)$/i;

export function checkMimeList(value: unknown): string[] | null {
  if (value === null || value === undefined) return null;
  if (!Array.isArray(value) || value.length > 100 || !value.every((v) => typeof v === 'string' && MIME.test(v))) {
    throw fail('invalid_mime_types');
  }
  return value.map((v: string) => v.toLowerCase());
}

/** The media type without parameters, lower case. */
export const essence = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

export function checkContentType(contentType: string, allowed: string[] | null): void {
  const type = essence(contentType);
  if (!MIME.test(type) || type.endsWith('/*')) {
    throw fail('invalid_mime_type', `"${contentType}" is not a valid Content-Type.`, { status: 400 });
  }
  // An empty list restricts nothing, as in Supabase Storage.
  if (allowed?.length && !allowed.some((a) => a === type || (a.endsWith('/*') && type.startsWith(a.slice(0, -1))))) {
    throw fail('invalid_mime_type', `mime type ${type} is not supported`, {
      hint: `This bucket accepts ${allowed.join(', ')}.`,
    });
  }
}

/** storage-js sends `max-age=3600`; a form field sends `3600`. Anything else becomes the default. */
export function cacheControlOf(value: string | undefined): string {
  if (!value) return 'no-cache';
  if (/^\d{1,10}$/.test(value)) return `max-age=${value}`;
  if (/^[a-z0-9=, -]{1,200}$/i.test(value)) return value;
  throw fail('invalid_cache_control');
}

/** SPEC 4.2: images, text, JSON, PDF, audio and video render inline. */
const INLINE = /^(image|text|audio|video)\/[a-z0-9.+-]+$|^application\/(json|pdf|[a-z0-9.-]+\+json)$/;
/** The types of those families a browser runs as a document (HTML, SVG, XML, XSLT). */
const ACTIVE = /^(text\/(html|xml|xsl|xslt)|image\/svg\+xml|[a-z]+\/[a-z0-9.-]+\+xml)$/;

/**
 * Whether a browser may render this type in place. Anything that can run
 * script (HTML, SVG, XML) is never inline: served from the platform's origin
 * it would act with the platform's cookies and storage. Other text (CSS,
 * JavaScript, ...) a browser only displays.
 */
export const rendersInline = (contentType: string) => {
  const type = essence(contentType);
  return INLINE.test(type) && !ACTIVE.test(type);
};

/** x-metadata: base64 of a JSON object, at most 8 KiB. */
export function parseUserMetadata(value: string | undefined, encoded: boolean): Record<string, unknown> {
  if (!value) return {};
  const bad = () => fail('invalid_metadata');
  let parsed: unknown;
  try {
    parsed = JSON.parse(encoded ? Buffer.from(value, 'base64').toString('utf8') : value);
  } catch {
    throw bad();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || JSON.stringify(parsed).length > 8192)
    throw bad();
  const unstorable = unstorableJson(parsed, 'metadata');
  if (unstorable) throw fail('invalid_metadata', `Metadata cannot be stored: ${unstorable}.`);
  return parsed as Record<string, unknown>;
}
