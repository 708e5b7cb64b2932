/**
 * withRole: run data-plane work in one transaction under the caller's database
 * role, exactly as Supabase does, so RLS policies using auth.uid(), auth.jwt()
 * and auth.role() see the caller. The settings statement is pipelined with the
 * caller's first statement (postgres.js sends both before reading replies), so
 * a typical request costs BEGIN, one round trip of work, and COMMIT.
 */
import type postgres from 'postgres';

export type DbRole = 'anon' | 'authenticated' | 'service_role';

export interface Caller {
  role: DbRole;
  /** The JWT claims (for API keys: a synthetic claim set with `role`). */
  claims: Record<string, unknown>;
}

export interface RequestInfo {
  method?: string;
  path?: string;
  headers?: Record<string, unknown>;
  /** Start the transaction READ ONLY (PostgREST runs GET and HEAD this way). */
  readOnly?: boolean;
}

export const STATEMENT_TIMEOUT = '10s';

export async function withRole<T>(
  sql: postgres.Sql,
  caller: Caller,
  fn: (tx: postgres.TransactionSql) => Promise<T>,
  request: RequestInfo = {},
): Promise<T> {
  const work = async (tx: postgres.TransactionSql) => {
    const settings = tx`select set_config('role', ${caller.role}, true),
        set_config('request.jwt.claims', ${JSON.stringify(caller.claims)}, true),
        set_config('request.method', ${request.method ?? ''}, true),
        set_config('request.path', ${request.path ?? ''}, true),
        set_config('request.headers', ${JSON.stringify(request.headers ?? {})}, true),
        set_config('statement_timeout', ${STATEMENT_TIMEOUT}, true)`.execute();
    try {
      return await fn(tx);
    } finally {
      await settings;
    }
  };
  return (await (request.readOnly ? sql.begin('read only', work) : sql.begin(work))) as T;
}
