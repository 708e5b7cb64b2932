/**
 * How an object is served: validators (ETag, Last-Modified), conditional GET
 * (304), single byte ranges (206, 416), caching and disposition. Script-capable
 * types are never rendered inline (rules.ts), and every response says nosniff
 * and carries a sandboxing CSP, so an uploaded HTML or SVG file cannot run
 * script on the platform's origin.
 */
import type { ByteRange } from './backend/index.ts';
import { etagOf, type ObjectRow } from './objects.ts';
import { rendersInline } from './rules.ts';

export interface ServeRequest {
  ifNoneMatch?: string;
  ifModifiedSince?: string;
  range?: string;
  ifRange?: string;
  /** `?download` (empty string) or `?download=<file name>`; undefined when absent. */
  download?: string;
}

export interface ServePlan {
  status: 200 | 206 | 304 | 416;
  headers: Record<string, string>;
  /** What to stream: nothing for 304 (and HEAD), else the whole object or a range; a 416 is an error. */
  range: ByteRange | null;
  body: boolean;
}

function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | null {
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim()); // range units are case-insensitive (RFC 9110 14.1)
  if (!m || (m[1] === '' && m[2] === '')) return null; // malformed or multiple ranges: serve it whole
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return null; // an invalid range (RFC 9110 14.1.1), ignored as S3 does
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

function notModified(o: ObjectRow, r: ServeRequest): boolean {
  if (r.ifNoneMatch !== undefined) {
    const tags = r.ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
    return tags.includes('*') || tags.includes(etagOf(o));
  }
  if (r.ifModifiedSince !== undefined) {
    const since = Date.parse(r.ifModifiedSince);
    return Number.isFinite(since) && Math.floor(o.updated_at.getTime() / 1000) <= Math.floor(since / 1000);
  }
  return false;
}

/**
 * If-Range (RFC 9110 13.1.5): a strong ETag must equal ours; an HTTP-date must
 * equal Last-Modified exactly. Anything else serves the whole object.
 */
function ifRangeMatches(o: ObjectRow, validator: string, lastModified: string): boolean {
  if (validator.startsWith('"')) return validator === etagOf(o);
  if (validator.startsWith('W/')) return false;
  return validator === lastModified;
}

function disposition(o: ObjectRow, download: string | undefined): string {
  const base = o.name.slice(o.name.lastIndexOf('/') + 1);
  const filename = download || base;
  const kind = download === undefined && rendersInline(o.content_type) ? 'inline' : 'attachment';
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export function planServe(o: ObjectRow, r: ServeRequest, head: boolean): ServePlan {
  const headers: Record<string, string> = {
    etag: etagOf(o),
    'last-modified': o.updated_at.toUTCString(),
    'cache-control': o.cache_control,
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
  };
  if (notModified(o, r)) return { status: 304, headers, range: null, body: false };
  const rangeApplies =
    r.range !== undefined &&
    (r.ifRange === undefined || ifRangeMatches(o, r.ifRange.trim(), headers['last-modified']!));
  const range = rangeApplies && o.size > 0 ? parseRange(r.range!, o.size) : null;
  // An error (invalid_range), not the object: its body and type are the error's (http-common.ts).
  if (range === 'unsatisfiable') {
    return { status: 416, headers: { ...headers, 'content-range': `bytes */${o.size}` }, range: null, body: false };
  }
  headers['content-type'] = o.content_type;
  headers['content-disposition'] = disposition(o, r.download);
  if (range) {
    headers['content-range'] = `bytes ${range.start}-${range.end}/${o.size}`;
    headers['content-length'] = String(range.end - range.start + 1);
    return { status: 206, headers, range, body: !head };
  }
  headers['content-length'] = String(o.size);
  return { status: 200, headers, range: null, body: !head && o.size > 0 };
}
