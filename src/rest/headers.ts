/**
 * The request headers that change a REST response: Prefer, Accept, Range,
 * Accept-Profile / Content-Profile. Unknown preferences are ignored (PostgREST's
 * lenient handling); applied ones are echoed in Preference-Applied.
 */
import { HearthError } from '../errors.ts';

export interface Preferences {
  return: 'representation' | 'minimal' | 'headers-only' | null;
  count: 'exact' | 'planned' | 'estimated' | null;
  resolution: 'merge-duplicates' | 'ignore-duplicates' | null;
  missing: 'default' | 'null' | null;
}

const ALLOWED: { [K in keyof Preferences]: readonly string[] } = {
  return: ['representation', 'minimal', 'headers-only'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
};

export function parsePrefer(header: string | undefined): Preferences {
  const prefs: Preferences = { return: null, count: null, resolution: null, missing: null };
  for (const token of (header ?? '').split(',')) {
    const [key, value] = token.trim().split('=', 2) as [keyof Preferences, string | undefined];
    // The first occurrence wins, as in PostgREST.
    if (value !== undefined && ALLOWED[key]?.includes(value) && prefs[key] === null) {
      (prefs as unknown as Record<string, string>)[key] = value;
    }
  }
  return prefs;
}

/** Preference-Applied, in PostgREST's order; only what this request honoured. */
export function appliedHeader(applied: Partial<Preferences>): string | null {
  const parts = (['resolution', 'missing', 'return', 'count'] as const).filter((k) => applied[k]).map((k) => `${k}=${applied[k]}`);
  return parts.length ? parts.join(', ') : null;
}

export type MediaType = 'json' | 'object' | 'csv' | 'openapi';

const MEDIA: Record<string, MediaType> = {
  'application/json': 'json',
  'application/*': 'json',
  '*/*': 'json',
  'application/vnd.pgrst.object+json': 'object',
  'application/vnd.pgrst.object': 'object',
  'text/csv': 'csv',
  'application/openapi+json': 'openapi',
};

/** The first acceptable media type of the Accept header (q-values are not ranked; clients send one). */
export function negotiate(accept: string | undefined, allowed: readonly MediaType[]): MediaType {
  if (!accept || accept.trim() === '') return allowed[0];
  for (const part of accept.split(',')) {
    const type = MEDIA[part.split(';')[0].trim().toLowerCase()];
    if (type && allowed.includes(type)) return type;
    if (type === 'json' && allowed.includes('openapi')) return 'openapi';
  }
  throw new HearthError(406, 'PGRST107', `None of these media types are available: ${accept}`, null, `Accept one of: ${allowed.map(mediaName).join(', ')}.`);
}

export const mediaName = (m: MediaType) =>
  ({ json: 'application/json', object: 'application/vnd.pgrst.object+json', csv: 'text/csv', openapi: 'application/openapi+json' })[m];

/** `Range: 0-9` (items). Null when absent or not an items range, as PostgREST ignores those. */
export function parseRange(header: string | undefined): { first: number; last: number | null } | null {
  const m = /^(?:items=)?\s*(\d{1,9})-(\d{1,9})?\s*$/.exec(header ?? '');
  if (!m) return null;
  const first = Number(m[1]);
  const last = m[2] === undefined ? null : Number(m[2]);
  if (last !== null && last < first) {
    throw new HearthError(416, 'PGRST103', 'Requested range not satisfiable', `The Range header asks for items ${first}-${last}: the last item comes before the first.`);
  }
  return { first, last };
}

/** The profile (schema) a request names, or the first exposed schema. */
export function chooseSchema(schemas: string[], profile: string | undefined): string {
  if (profile === undefined || profile === '') return schemas[0];
  if (!schemas.includes(profile)) {
    throw new HearthError(406, 'PGRST106', `The schema must be one of the following: ${schemas.join(', ')}`, null, null);
  }
  return profile;
}
