/**
 * `POST /v1/projects/{ref}/database/query`: SQL run as the project's owner
 * role, for the dashboard's SQL and table editors and the CLI (the route is
 * named as in Supabase's Management API).
 *
 * The statements run on a connection that logs in AS the owner role, never on
 * the platform's superuser pool with SET ROLE: a query could RESET ROLE there.
 * Several statements are sent as one simple-protocol query, so PostgreSQL runs
 * them in one implicit transaction unless they manage their own. It uses `pg`
 * rather than the platform's `postgres` driver, which keeps only the results
 * of statements that return rows when several are sent at once (an editor
 * needs every statement's command and row count).
 */
import type pg from 'pg';
import { lazy } from '../lazy.ts';
import type { Platform } from '../context.ts';
import { fail, HearthError } from '../errors.ts';
import { projectDbUrl } from './connection-info.ts';
import type { ProjectRow } from './projects.ts';

/** Default statement timeout of a query (the body may ask for less or more, up to the cap). */
export const QUERY_TIMEOUT_MS = 60_000;
export const QUERY_TIMEOUT_CAP_MS = 600_000;
/** Longest query text accepted (and kept in the audit log up to AUDIT_TEXT). */
const MAX_QUERY_BYTES = 1024 * 1024;
const AUDIT_TEXT = 4096;

export interface QueryInput {
  query: string;
  /** 'rows' (default, as Supabase): the rows of the last statement; 'results': every statement's result. */
  format: 'rows' | 'results';
  timeoutMs: number;
}

export interface StatementResult {
  command: string | null;
  row_count: number | null;
  columns: { name: string; type_oid: number }[];
  rows: Record<string, unknown>[];
}

/** A failed statement, with what an editor needs to mark it. */
export class SqlError extends HearthError {
  constructor(
    message: string,
    readonly sql: { sqlstate: string; position: number | null; detail: string | null; hint: string | null; where: string | null },
  ) {
    super('sql_error', message, { details: sql.detail, hint: sql.hint });
  }
}

export function checkQueryInput(body: Record<string, unknown>): QueryInput {
  for (const key of Object.keys(body)) {
    if (!['query', 'format', 'timeout_ms'].includes(key)) throw fail('invalid_request', `Unknown field "${key}": send {query, format?, timeout_ms?}.`);
  }
  const { query, format = 'rows', timeout_ms = QUERY_TIMEOUT_MS } = body;
  if (typeof query !== 'string' || query.trim() === '') throw fail('invalid_request', 'query must be a non-empty string of SQL.');
  if (Buffer.byteLength(query) > MAX_QUERY_BYTES) throw fail('invalid_request', 'query is longer than 1 MiB.');
  if (query.includes('\u0000')) throw fail('invalid_request', 'query must not contain NUL characters.');
  if (format !== 'rows' && format !== 'results') throw fail('invalid_request', 'format must be "rows" or "results".');
  if (typeof timeout_ms !== 'number' || !Number.isInteger(timeout_ms) || timeout_ms < 1 || timeout_ms > QUERY_TIMEOUT_CAP_MS) {
    throw fail('invalid_request', `timeout_ms must be an integer from 1 to ${QUERY_TIMEOUT_CAP_MS}.`);
  }
  return { query, format, timeoutMs: timeout_ms };
}

const driver = lazy(async () => (await import('pg')).default);

function asSqlError(err: unknown, DatabaseError: typeof pg.DatabaseError): SqlError | null {
  if (!(err instanceof DatabaseError) || typeof err.code !== 'string') return null;
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

/** Runs the statements as the owner role; every statement's result, in order. */
export async function runOwnerQuery(p: Platform, project: ProjectRow, input: QueryInput): Promise<{ results: StatementResult[]; duration_ms: number }> {
  const { Client, DatabaseError } = await driver();
  const client = new Client({
    connectionString: projectDbUrl(p, project),
    application_name: 'hearth database/query',
    statement_timeout: input.timeoutMs,
    idle_in_transaction_session_timeout: input.timeoutMs,
  });
  client.on('error', () => {}); // a dropped connection fails the query below; nothing else to do
  try {
    await client.connect();
    const started = performance.now();
    const raw = (await client.query(input.query)) as pg.QueryResult | pg.QueryResult[];
    const duration_ms = Math.round((performance.now() - started) * 10) / 10;
    const results = (Array.isArray(raw) ? raw : [raw]).map((r) => ({
      command: r.command ?? null,
      row_count: r.rowCount,
      columns: (r.fields ?? []).map((f) => ({ name: f.name, type_oid: f.dataTypeID })),
      rows: r.rows,
    }));
    return { results, duration_ms };
  } catch (err) {
    throw asSqlError(err, DatabaseError) ?? err;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The audit row of a query: who ran what (the text capped), and whether it failed. */
export async function auditQuery(p: Platform, projectId: string, accountId: string, query: string, failed: string | null): Promise<void> {
  const text = query.length > AUDIT_TEXT ? `${query.slice(0, AUDIT_TEXT)}…` : query;
  await p.dbs.control`insert into platform.config_audit (project_id, area, account_id, changes)
    values (${projectId}, 'database/query', ${accountId}, ${p.dbs.control.json({ query: text, error: failed })})`;
}
