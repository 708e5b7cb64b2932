/**
 * REST error rendering: the flat `{message, code, details, hint}` envelope
 * (SPEC 2.16), Postgres SQLSTATE -> HTTP status as PostgREST maps it, and the
 * SPEC 7 rule that only the secret key sees database detail: other callers get
 * the SQLSTATE with a generic message and no details or hint. Request errors
 * (PGRST codes, unknown columns) describe the request, not the database, and
 * are shown to everyone.
 */
import { DatabaseUnavailable, isDatabaseUnavailable } from '../db/unavailable.ts';
import { fail, HearthError } from '../errors.ts';

export interface RestErrorBody {
  message: string;
  code: string;
  details: string | null;
  hint: string | null;
}

/** postgres.js's PostgresError, duck-typed so a driver change cannot break mapping. */
interface DatabaseError {
  code: string;
  message: string;
  detail?: string;
  hint?: string;
}

export const isDatabaseError = (e: unknown): e is DatabaseError =>
  e instanceof Error &&
  (e as { name?: string }).name === 'PostgresError' &&
  typeof (e as { code?: unknown }).code === 'string';

// PostgREST's table (docs "HTTP Status Codes"); anything unlisted is 400.
const BY_CODE: Record<string, number> = {
  '23503': 409,
  '23505': 409,
  '25006': 405,
  '42883': 404,
  '42P01': 404,
  '42P17': 500,
  '53400': 500,
  '57P01': 503,
  P0001: 400,
};
const BY_CLASS: Record<string, number> = {
  '08': 503,
  '09': 500,
  '0L': 403,
  '0P': 403,
  '25': 500,
  '28': 403,
  '2D': 500,
  '38': 500,
  '39': 500,
  '3B': 500,
  '40': 500,
  '53': 503,
  '54': 500,
  '55': 500,
  '57': 500,
  '58': 500,
  F0: 500,
  HV: 500,
  P0: 500,
  XX: 500,
};

export function statusForSqlstate(code: string, anonymous: boolean, message = ''): number {
  if (code === '42501') return anonymous ? 401 : 403;
  // RAISE ... USING ERRCODE = 'PT404' picks the status, as in PostgREST; a PT code that is not a status is 500.
  if (code.startsWith('PT')) return /^PT[1-5]\d\d$/.test(code) ? Number(code.slice(2)) : 500;
  // 21000 is a client error as pg-safeupdate's refusal and as an upsert body naming one row
  // twice; otherwise (a subquery returning more than one row in a view or function) it is
  // the server's. (PostgREST answers the upsert's 500.)
  if (code === '21000') return message.endsWith('requires a WHERE clause') || UPSERT_TWICE.test(message) ? 400 : 500;
  // Departures from PostgREST's 500 where the request alone is at fault: a write to a view
  // PostgreSQL cannot write through (the method is not allowed on it, as OPTIONS says) and
  // a select list past PostgreSQL's 1664 columns.
  if (code === '55000' && VIEW_NOT_WRITABLE.test(message)) return 405;
  if (code === '54011') return 400;
  return BY_CODE[code] ?? BY_CLASS[code.slice(0, 2)] ?? 400;
}

const UPSERT_TWICE = /^ON CONFLICT DO UPDATE command cannot affect row a second time/;
const VIEW_NOT_WRITABLE = /^cannot (insert into|update|delete from) view /;

const GENERIC: Record<string, string> = {
  '23502': 'A required value is missing: a column that cannot be null was null.',
  '23503': 'The row references a row that does not exist, or is referenced by another row.',
  '23505': 'A row with the same unique value already exists.',
  '23514': 'The row does not satisfy a check constraint.',
  '23P01': 'The row conflicts with an existing row (exclusion constraint).',
  '42501': 'Permission denied.',
  '42803':
    'With aggregate functions in select, order only by the plain columns selected with them: those are grouped by.',
  '42883': 'The function or operator does not exist for these argument types.',
  '42P10': 'on_conflict must name the columns of a primary key or unique constraint.',
  '57014': 'The statement was cancelled: it ran longer than the 10 second statement timeout.',
  '54011': 'The request selects more columns than PostgreSQL allows (1664).',
};
const GENERIC_CLASS: Record<string, string> = {
  '22': 'A value in the request is not valid for its column type.',
  '23': 'The request violates a database constraint.',
  '40': 'The transaction could not complete because of a concurrent change; retry it.',
  '42': 'The request could not be run against the database schema.',
  '53': 'The database is out of resources; retry later.',
};

function genericMessage(e: DatabaseError, readOnly: string): string {
  if (e.code === '25006') return `This request cannot write: ${readOnly}`;
  if (e.code === '21000' && UPSERT_TWICE.test(e.message))
    return 'The body names one row twice: each row of an upsert needs a conflict key of its own.';
  if (e.code === '55000' && VIEW_NOT_WRITABLE.test(e.message))
    return 'This view cannot be written through: PostgreSQL can write only through a view of one table.';
  if (e.code === '42501' && /row-level security/.test(e.message)) return 'new row violates row-level security policy';
  // RAISE EXCEPTION text is the application's own message to its clients.
  if (e.code === 'P0001' || e.code.startsWith('PT')) return e.message;
  return GENERIC[e.code] ?? GENERIC_CLASS[e.code.slice(0, 2)] ?? 'The database could not process the request.';
}

export interface RenderedError {
  status: number;
  body: RestErrorBody;
  /** Extra response headers: a RAISE SQLSTATE 'PGRST' function's own, WWW-Authenticate on a 401. */
  headers: Record<string, string>;
}

/** A JSON object (not an array, not null): the shape request bodies and RAISE payloads must have. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// Headers the HTTP layer owns; a function cannot set them.
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'content-type']);

const raiseParseError = (part: 'MESSAGE' | 'DETAIL', text: string | undefined) =>
  fail('PGRST121', undefined, {
    details:
      part === 'DETAIL' && text === undefined
        ? 'DETAIL is missing in the RAISE statement'
        : `Invalid JSON value for ${part}: '${text ?? ''}'`,
    hint:
      part === 'MESSAGE'
        ? "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'."
        : "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'.",
  });

function parseJsonObject(text: string | undefined): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text ?? '');
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

const optionalString = (v: unknown) => v === undefined || v === null || typeof v === 'string';

/**
 * PostgREST's RAISE SQLSTATE 'PGRST': MESSAGE is the JSON body
 * ({code, message, details?, hint?}, all strings) and DETAIL the JSON response
 * shape ({status, headers, status_text?}). The function wrote both for its
 * clients, so every caller sees them as written. Anything else is 500 PGRST121,
 * worded as PostgREST words it.
 */
function raisedResponse(e: DatabaseError): RenderedError {
  const body = parseJsonObject(e.message);
  if (
    !body ||
    typeof body.code !== 'string' ||
    typeof body.message !== 'string' ||
    !optionalString(body.details) ||
    !optionalString(body.hint)
  ) {
    throw raiseParseError('MESSAGE', e.message);
  }
  const shape = parseJsonObject(e.detail);
  const status = shape?.status;
  const headers = shape?.headers;
  const validHeaders = isObject(headers) && Object.values(headers).every((v) => typeof v === 'string');
  if (
    !shape ||
    typeof status !== 'number' ||
    !Number.isInteger(status) ||
    status < 100 ||
    status > 599 ||
    !validHeaders ||
    !optionalString(shape.status_text)
  ) {
    throw raiseParseError('DETAIL', e.detail);
  }
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers as Record<string, string>)) {
    if (!RESERVED_HEADERS.has(k.toLowerCase()) && /^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(k) && !/[\r\n]/.test(v))
      own[k.toLowerCase()] = v;
  }
  return {
    status,
    headers: own,
    body: {
      message: body.message,
      code: body.code,
      details: (body.details as string | null) ?? null,
      hint: (body.hint as string | null) ?? null,
    },
  };
}

export interface RenderOptions {
  anonymous: boolean;
  /** The secret key: database detail is shown. */
  detailed: boolean;
  /** Why the request ran READ ONLY: what a 25006 (a write there) says, or its hint when the database's text is shown. */
  readOnly?: string;
}

const READ_ONLY = 'GET and HEAD run read-only. Use POST.';

/** Renders a HearthError or a database error; anything else is not ours to render. */
export function renderRestError(err: unknown, opts: RenderOptions): RenderedError | null {
  // A lost connection or a database that refuses connections: every area's 503 (db/unavailable.ts).
  if (isDatabaseUnavailable(err)) err = new DatabaseUnavailable();
  if (err instanceof HearthError) {
    const headers: Record<string, string> =
      err instanceof DatabaseUnavailable ? { 'retry-after': String(err.retryAfterSeconds) } : {};
    return {
      status: err.status,
      headers,
      body: { message: err.message, code: err.code, details: err.details, hint: err.hint },
    };
  }
  if (!isDatabaseError(err)) return null;
  if (err.code === 'PGRST') {
    try {
      return raisedResponse(err);
    } catch (parseError) {
      return renderRestError(parseError, opts);
    }
  }
  const status = statusForSqlstate(err.code, opts.anonymous, err.message);
  // As PostgREST: a 401 from the database (42501 for anon, PT401) challenges for a token.
  const headers: Record<string, string> = status === 401 ? { 'www-authenticate': 'Bearer' } : {};
  const readOnly = opts.readOnly ?? READ_ONLY;
  if (opts.detailed) {
    const hint = err.hint ?? (err.code === '25006' ? readOnly : null);
    return { status, headers, body: { message: err.message, code: err.code, details: err.detail ?? null, hint } };
  }
  return {
    status,
    headers,
    body: { message: genericMessage(err, readOnly), code: err.code, details: null, hint: null },
  };
}
