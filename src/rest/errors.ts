/**
 * REST error rendering: the flat `{message, code, details, hint}` envelope
 * (SPEC 2.16), Postgres SQLSTATE -> HTTP status as PostgREST maps it, and the
 * SPEC 7 rule that only the secret key sees database detail: other callers get
 * the SQLSTATE with a generic message and no details or hint. Request errors
 * (PGRST codes, unknown columns) describe the request, not the database, and
 * are shown to everyone.
 */
import { HearthError } from '../errors.ts';

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
  e instanceof Error && (e as { name?: string }).name === 'PostgresError' && typeof (e as { code?: unknown }).code === 'string';

// PostgREST's table (docs "HTTP Status Codes"); anything unlisted is 400.
const BY_CODE: Record<string, number> = {
  '23503': 409,
  '23505': 409,
  '25006': 405,
  '42883': 404,
  '42P01': 404,
  '42P17': 500,
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

export function statusForSqlstate(code: string, anonymous: boolean): number {
  if (code === '42501') return anonymous ? 401 : 403;
  // RAISE ... USING ERRCODE = 'PT404' picks the status, as in PostgREST.
  if (/^PT\d{3}$/.test(code)) return Number(code.slice(2));
  return BY_CODE[code] ?? BY_CLASS[code.slice(0, 2)] ?? 400;
}

const GENERIC: Record<string, string> = {
  '23502': 'A required value is missing: a column that cannot be null was null.',
  '23503': 'The row references a row that does not exist, or is referenced by another row.',
  '23505': 'A row with the same unique value already exists.',
  '23514': 'The row does not satisfy a check constraint.',
  '23P01': 'The row conflicts with an existing row (exclusion constraint).',
  '25006': 'This request cannot write: GET and HEAD run read-only. Use POST.',
  '42501': 'Permission denied.',
  '42803': 'With aggregate functions in select, order only by the plain columns selected with them: those are grouped by.',
  '42883': 'The function or operator does not exist for these argument types.',
  '42P10': 'on_conflict must name the columns of a primary key or unique constraint.',
  '57014': 'The statement was cancelled: it ran longer than the 10 second statement timeout.',
};
const GENERIC_CLASS: Record<string, string> = {
  '22': 'A value in the request is not valid for its column type.',
  '23': 'The request violates a database constraint.',
  '40': 'The transaction could not complete because of a concurrent change; retry it.',
  '42': 'The request could not be run against the database schema.',
  '53': 'The database is out of resources; retry later.',
};

function genericMessage(e: DatabaseError): string {
  if (e.code === '42501' && /row-level security/.test(e.message)) return 'new row violates row-level security policy';
  // RAISE EXCEPTION text is the application's own message to its clients.
  if (e.code === 'P0001' || /^PT\d{3}$/.test(e.code)) return e.message;
  return GENERIC[e.code] ?? GENERIC_CLASS[e.code.slice(0, 2)] ?? 'The database could not process the request.';
}

export interface RenderedError {
  status: number;
  body: RestErrorBody;
}

/** Renders a HearthError or a database error; anything else is not ours to render. */
export function renderRestError(err: unknown, opts: { anonymous: boolean; detailed: boolean }): RenderedError | null {
  if (err instanceof HearthError) {
    return { status: err.status, body: { message: err.message, code: err.code, details: err.details, hint: err.hint } };
  }
  if (!isDatabaseError(err)) return null;
  const status = statusForSqlstate(err.code, opts.anonymous);
  if (opts.detailed) {
    return { status, body: { message: err.message, code: err.code, details: err.detail ?? null, hint: err.hint ?? null } };
  }
  return { status, body: { message: genericMessage(err), code: err.code, details: null, hint: null } };
}
