/**
 * The request headers that change a REST response: Prefer, Accept, Range,
 * Accept-Profile / Content-Profile. Unknown or invalid preferences are ignored
 * (PostgREST's lenient handling) unless the request says `handling=strict`,
 * which makes them a 400 PGRST122; applied ones are echoed in Preference-Applied.
 */
import { fail } from '../errors.ts';

export interface Preferences {
  return: 'representation' | 'minimal' | 'headers-only' | null;
  count: 'exact' | 'planned' | 'estimated' | null;
  resolution: 'merge-duplicates' | 'ignore-duplicates' | null;
  missing: 'default' | 'null' | null;
  handling: 'strict' | 'lenient' | null;
  /** rollback: run the request, answer as usual, keep nothing. */
  tx: 'commit' | 'rollback' | null;
  /** RPC: the whole body is the function's one json/jsonb argument. */
  params: 'single-object' | null;
  /** With handling=strict: the most rows a PATCH, DELETE or RPC may affect. */
  'max-affected': number | null;
  /** The session TimeZone for the request: one of pg_timezone_names. */
  timezone: string | null;
}

type Key = keyof Preferences;

const ALLOWED: { [K in Exclude<Key, 'max-affected' | 'timezone'>]: readonly string[] } = {
  return: ['representation', 'minimal', 'headers-only'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
  handling: ['strict', 'lenient'],
  tx: ['commit', 'rollback'],
  params: ['single-object'],
};

const NONE: Preferences = {
  return: null,
  count: null,
  resolution: null,
  missing: null,
  handling: null,
  tx: null,
  params: null,
  'max-affected': null,
  timezone: null,
};

/** Whether the header asks for a timezone: only then are the server's zone names needed. */
export const wantsTimezone = (header: string | undefined) => !!header && /(^|,)\s*timezone=/.test(header);

/** `timezones`: the server's pg_timezone_names, when wantsTimezone(header); a zone not in it is an invalid preference. */
export function parsePrefer(header: string | undefined, timezones: ReadonlySet<string> = new Set()): Preferences {
  if (!header) return NONE;
  const prefs: Preferences = { ...NONE };
  const invalid: string[] = [];
  for (const raw of header.split(',')) {
    const token = raw.trim();
    if (token === '') continue;
    const eq = token.indexOf('=');
    const key = (eq < 0 ? token : token.slice(0, eq).trim()) as Key;
    const value = eq < 0 ? undefined : token.slice(eq + 1).trim();
    let parsed: string | number | null = null;
    if (value !== undefined && key === 'max-affected') parsed = /^\d{1,9}$/.test(value) ? Number(value) : null;
    else if (value !== undefined && key === 'timezone') parsed = timezones.has(value) ? value : null;
    else if (value !== undefined && Object.hasOwn(ALLOWED, key) && ALLOWED[key as keyof typeof ALLOWED].includes(value))
      parsed = value;
    if (parsed === null) {
      invalid.push(token);
      continue;
    }
    // The first occurrence wins, as in PostgREST.
    if (prefs[key] === null) (prefs as unknown as Record<string, string | number>)[key] = parsed;
  }
  if (prefs.handling === 'strict' && invalid.length) {
    throw fail('PGRST122', undefined, {
      details: `Invalid preferences: ${invalid.join(', ')}`,
      hint: 'Remove them, or send handling=lenient to have them ignored.',
    });
  }
  return prefs;
}

const APPLIED_ORDER: readonly Key[] = [
  'resolution',
  'missing',
  'return',
  'params',
  'count',
  'tx',
  'handling',
  'timezone',
  'max-affected',
];

/** Preference-Applied, in PostgREST's order; only what this request honoured. */
export function appliedHeader(applied: Partial<Preferences>): string | null {
  let out = '';
  for (const k of APPLIED_ORDER) {
    const v = applied[k];
    if (v !== null && v !== undefined) out += `${out ? ', ' : ''}${k}=${v}`;
  }
  return out || null;
}

export type MediaType = 'json' | 'object' | 'csv' | 'openapi';

const MEDIA: Record<string, MediaType> = {
  'application/json': 'json',
  'application/*': 'json',
  '*/*': 'json',
  'application/vnd.pgrst.object+json': 'object',
  'application/vnd.pgrst.object': 'object',
  'application/vnd.pgrst.array+json': 'json',
  'application/vnd.pgrst.array': 'json',
  'text/csv': 'csv',
  'application/openapi+json': 'openapi',
};

/**
 * The Accept header's media types, most preferred first, ranked as PostgREST
 * ranks them (wai-extra's parseHttpAccept): by q-value (1 when absent or
 * unreadable), then by specificity (parameters count for, wildcards
 * against), then in the order written.
 */
function rankAccept(accept: string): string[] {
  return accept
    .split(',')
    .map((part, index) => {
      const [type, ...params] = part.split(';').map((x) => x.trim());
      const q = params.find((x) => /^q=/i.test(x));
      const quality = q === undefined ? 1 : Number.parseFloat(q.slice(2));
      const others = params.length - (q === undefined ? 0 : 1);
      return {
        type,
        quality: Number.isNaN(quality) ? 1 : quality,
        specificity: others - (type.match(/\*/g)?.length ?? 0),
        index,
      };
    })
    .sort((a, b) => b.quality - a.quality || b.specificity - a.specificity || a.index - b.index)
    .map((m) => m.type);
}

/** The most preferred media type of the Accept header that the resource can answer. */
export function negotiate(accept: string | undefined, allowed: readonly MediaType[]): MediaType {
  if (!accept || accept.trim() === '') return allowed[0];
  // One type (what clients send) needs no ranking: skip its allocations on every request.
  const ranked = accept.includes(',') ? rankAccept(accept) : [accept.split(';')[0]!.trim()];
  for (const part of ranked) {
    const type = MEDIA[part.toLowerCase()];
    if (type && allowed.includes(type)) return type;
    if (type === 'json' && allowed.includes('openapi')) return 'openapi';
  }
  throw fail('PGRST107', `None of these media types are available: ${accept}`, {
    hint: `Accept one of: ${allowed.map(mediaName).join(', ')}.`,
  });
}

/** `explain()`: the plan of the statement a request would run, instead of its result. */
export interface PlanRequest {
  format: 'json' | 'text';
  /** The media type the plan is of (`for="..."`), negotiated as the request's Accept would be. */
  for: string;
  /** EXPLAIN options asked for; anything else in `options=` is ignored. */
  options: ('analyze' | 'verbose' | 'settings' | 'buffers' | 'wal')[];
}

const PLAN_OPTIONS = ['analyze', 'verbose', 'settings', 'buffers', 'wal'] as const;

/**
 * `Accept: application/vnd.pgrst.plan[+json|+text]; for="<media>"; options=a|b`
 * (what supabase-js explain() sends), or null for any other Accept.
 */
export function planRequest(accept: string | undefined): PlanRequest | null {
  if (!accept?.includes('vnd.pgrst.plan')) return null;
  const [type, ...params] = accept
    .split(',')[0]
    .split(';')
    .map((x) => x.trim());
  const m = /^application\/vnd\.pgrst\.plan(?:\+(json|text))?$/i.exec(type);
  if (!m) return null;
  const param = (name: string) =>
    params
      .find((p) => p.toLowerCase().startsWith(`${name}=`))
      ?.slice(name.length + 1)
      .replace(/^"|"$/g, '');
  const options = (param('options') ?? '').split('|').map((o) => o.trim().toLowerCase());
  return {
    format: (m[1]?.toLowerCase() as 'json' | 'text' | undefined) ?? 'text',
    for: param('for') || 'application/json',
    options: PLAN_OPTIONS.filter((o) => options.includes(o)),
  };
}

/** `;nulls=stripped` on a JSON media type (supabase-js stripNulls()): rows leave out null fields. */
export function nullsStripped(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    return /^application\/vnd\.pgrst\.(array|object)(\+json)?$/.test(type) && params.includes('nulls=stripped');
  });
}

export const mediaName = (m: MediaType) =>
  ({
    json: 'application/json',
    object: 'application/vnd.pgrst.object+json',
    csv: 'text/csv',
    openapi: 'application/openapi+json',
  })[m];

/** `Range: 0-9` (items). Null when absent or not an items range, as PostgREST ignores those. */
export function parseRange(header: string | undefined): { first: number; last: number | null } | null {
  const m = /^(?:items=)?\s*(\d{1,9})-(\d{1,9})?\s*$/.exec(header ?? '');
  if (!m) return null;
  const first = Number(m[1]);
  const last = m[2] === undefined ? null : Number(m[2]);
  if (last !== null && last < first) {
    throw fail('PGRST103', undefined, {
      details: `The Range header asks for items ${first}-${last}: the last item comes before the first.`,
    });
  }
  return { first, last };
}

/** The profile (schema) a request names, or the first exposed schema. */
export function chooseSchema(schemas: string[], profile: string | undefined): string {
  if (profile === undefined || profile === '') return schemas[0];
  if (!schemas.includes(profile)) {
    throw fail('PGRST106', `The schema must be one of the following: ${schemas.join(', ')}`);
  }
  return profile;
}
