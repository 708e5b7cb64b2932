/**
 * `POST /v1/projects/{ref}/database/query`: SQL run as the project's owner
 * role, for the dashboard's SQL and table editors and the CLI (the route is
 * named as in Supabase's Management API).
 *
 * The statements run on a connection that logs in AS the owner role, never on
 * the platform's superuser pool with SET ROLE: a query could RESET ROLE there.
 * Several statements are sent as one simple-protocol query, so PostgreSQL runs
 * them in one implicit transaction unless they manage their own. An editor
 * needs every statement's command and row count: the query is sent with the
 * option `everyResult` of Hearth's driver patch (scripts/patch-postgres.js),
 * which gives one result per statement where postgres.js upstream keeps only
 * the statements that returned rows.
 */
import { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import postgres from 'postgres';
import type { Platform } from '../context.ts';
import { fail, HearthError } from '../errors.ts';
import { projectDbUrl } from './connection-info.ts';
import { skipProvidedExtensions } from './provided-extensions.ts';
import type { ProjectRow } from './projects.ts';

/** Default statement timeout of a query (the body may ask for less or more, up to the cap). */
export const QUERY_TIMEOUT_MS = 60_000;
export const QUERY_TIMEOUT_CAP_MS = 600_000;
/** Longest query text accepted (and kept in the audit log up to AUDIT_TEXT). */
const MAX_QUERY_BYTES = 1024 * 1024;
const AUDIT_TEXT = 4096;

export const FORMATS = ['rows', 'results', 'arrays'] as const;
export interface QueryInput {
  query: string;
  /**
   * 'rows' (default, as Supabase): the rows of the last statement; 'results': every
   * statement's result; 'arrays': the same with each row an array in the order of
   * `columns`, so a result with two columns of one name (`select 1 a, 2 a`) keeps both.
   */
  format: (typeof FORMATS)[number];
  timeoutMs: number;
}

export interface StatementResult {
  command: string | null;
  row_count: number | null;
  columns: { name: string; type_oid: number }[];
  rows: Record<string, unknown>[] | unknown[][];
}

/**
 * How values travel in JSON: as PostgreSQL prints them (text), except booleans
 * (true/false), int2, int4, oid and finite float4/float8 (numbers, which a JSON
 * number holds exactly) and json/jsonb (the JSON itself); arrays are JSON arrays
 * of their elements by the same rule. So int8 and numeric keep every digit, a
 * date is "2020-01-01" (never shifted by a time zone), a timestamptz is
 * "2026-11-26 21:16:59.347+00", bytea is "\\x0102", an interval "1 day": what
 * psql shows. postgres.js would make Date and Buffer objects of the first ones.
 */
const TEXT_VALUES: Record<string, postgres.PostgresType> = {
  number: {
    to: 0,
    from: [21, 23, 26, 700, 701],
    serialize: (x: unknown) => String(x),
    parse: (x: string) => (Number.isFinite(+x) ? +x : x),
  },
  date: { to: 1184, from: [1082, 1114, 1184], serialize: (x: unknown) => String(x), parse: (x: string) => x },
  bytea: { to: 17, from: [17], serialize: (x: unknown) => String(x), parse: (x: string) => x },
};

/** A failed statement, with what an editor needs to mark it. */
export class SqlError extends HearthError {
  constructor(
    message: string,
    readonly sql: {
      sqlstate: string;
      position: number | null;
      detail: string | null;
      hint: string | null;
      where: string | null;
    },
  ) {
    super('sql_error', message, { details: sql.detail, hint: sql.hint });
  }
}

export function checkQueryInput(body: Record<string, unknown>): QueryInput {
  for (const key of Object.keys(body)) {
    if (!['query', 'format', 'timeout_ms'].includes(key))
      throw fail('invalid_request', `Unknown field "${key}": send {query, format?, timeout_ms?}.`);
  }
  const { query, format = 'rows', timeout_ms = QUERY_TIMEOUT_MS } = body;
  if (typeof query !== 'string' || query.trim() === '')
    throw fail('invalid_request', 'query must be a non-empty string of SQL.');
  if (Buffer.byteLength(query) > MAX_QUERY_BYTES) throw fail('invalid_request', 'query is longer than 1 MiB.');
  if (query.includes('\u0000')) throw fail('invalid_request', 'query must not contain NUL characters.');
  if (!(FORMATS as readonly unknown[]).includes(format))
    throw fail('invalid_request', 'format must be "rows", "results" or "arrays".');
  if (
    typeof timeout_ms !== 'number' ||
    !Number.isInteger(timeout_ms) ||
    timeout_ms < 1 ||
    timeout_ms > QUERY_TIMEOUT_CAP_MS
  ) {
    throw fail('invalid_request', `timeout_ms must be an integer from 1 to ${QUERY_TIMEOUT_CAP_MS}.`);
  }
  return { query, format: format as QueryInput['format'], timeoutMs: timeout_ms };
}

function asSqlError(err: unknown): SqlError | null {
  if (!(err instanceof postgres.PostgresError) || typeof err.code !== 'string') return null;
  // 53300 and the like are the server's state, not the query's fault: let the
  // shared handler answer 503 database_unavailable.
  if (/^(53|57P|08)/.test(err.code)) return null;
  const position = Number(err.position);
  return new SqlError(err.message, {
    sqlstate: err.code,
    position: Number.isInteger(position) && position > 0 ? position : null,
    detail: err.detail ?? null,
    hint: err.hint ?? null,
    where: err.where ?? null,
  });
}

/** A statement's result as the patched driver gives it with `everyResult`. */
type StatementRows = unknown[][] & { command: string; count: number | null; columns: { name: string; type: number }[] };

/**
 * COPY ... FROM STDIN or TO STDOUT resolves to a stream: there is no client
 * here to send or take the data. The copy is failed (in) or drained (out) so
 * the connection ends cleanly, and the request is refused.
 */
async function refuseCopy(stream: Writable | Readable): Promise<never> {
  if (stream instanceof Writable) stream.on('error', () => {}).destroy(new Error('database/query has no data to send'));
  else await finished(stream.resume()).catch(() => {});
  throw fail(
    'invalid_request',
    'COPY from STDIN or to STDOUT needs a client that sends or takes the data: database/query cannot run it. Use INSERT or SELECT instead.',
  );
}

/** Runs the statements as the owner role; every statement's result, in order. */
export async function runOwnerQuery(
  p: Platform,
  project: ProjectRow,
  input: QueryInput,
): Promise<{ results: StatementResult[]; duration_ms: number }> {
  // max 1: the statements may open and end transactions of their own (BEGIN; ...; COMMIT).
  const sql = postgres(projectDbUrl(p, project), {
    max: 1,
    types: TEXT_VALUES,
    onnotice: () => {},
    connection: {
      application_name: 'hearth database/query',
      statement_timeout: input.timeoutMs,
      idle_in_transaction_session_timeout: input.timeoutMs,
    },
  });
  try {
    const started = performance.now();
    // values(): rows as arrays, so two columns of one name are both kept.
    const raw: unknown = await sql
      .unsafe(skipProvidedExtensions(input.query), [], { everyResult: true } as postgres.UnsafeQueryOptions)
      .values();
    const duration_ms = Math.round((performance.now() - started) * 10) / 10;
    if (raw instanceof Writable || raw instanceof Readable) await refuseCopy(raw);
    const results = (raw as StatementRows[]).map((r) => ({
      // pg's shape: the first word of the command tag ("CREATE" for CREATE TABLE), null for an empty query.
      command: r.command ? r.command.split(' ')[0]! : null,
      row_count: r.count ?? null,
      columns: r.columns.map((c) => ({ name: c.name, type_oid: c.type })),
      // As objects, a later column of a repeated name wins (as in pg and Supabase).
      rows:
        input.format === 'arrays' ? [...r] : r.map((v) => Object.fromEntries(r.columns.map((c, i) => [c.name, v[i]]))),
    }));
    return { results, duration_ms };
  } catch (err) {
    throw asSqlError(err) ?? err;
  } finally {
    await sql.end().catch(() => {});
  }
}

/** The audit row of a query: who ran what (the text capped), and whether it failed. */
export async function auditQuery(
  p: Platform,
  projectId: string,
  accountId: string,
  query: string,
  failed: string | null,
): Promise<void> {
  const text = query.length > AUDIT_TEXT ? `${query.slice(0, AUDIT_TEXT)}…` : query;
  await p.dbs.control`insert into platform.config_audit (project_id, area, account_id, changes)
    values (${projectId}, 'database/query', ${accountId}, ${p.dbs.control.json({ query: text, error: failed })})`;
}
