/**
 * sql step: one statement in the project database as the project's owner
 * role (hearth_<ref>_owner, never a superuser), through a small pool that
 * logs in with the owner's own credentials. The extended protocol refuses a
 * second statement; the statement is its own (implicit) transaction.
 *
 * The attempt's bound is a cancel request sent when timeout_seconds pass,
 * not `set local statement_timeout` inside BEGIN: an explicit transaction
 * whose backend dies (a restart, pg_terminate_backend) makes postgres.js
 * 3.4.9 write ROLLBACK to a closed socket, which throws outside any promise
 * and takes the process down (porsager/postgres#1208).
 */
import postgres from 'postgres';
import { isBudgetExhausted } from '../../db/budget.ts';
import { projectDbUrl } from '../../platform/connection-info.ts';
import type { ActionContext, Outcome } from './action.ts';

function ownerPool(ctx: ActionContext): postgres.Sql {
  return ctx.project.cached(
    'workflows.owner-sql',
    () =>
      postgres(projectDbUrl(ctx.p, ctx.project.row), {
        ...ctx.p.dbs.connectionOptions(ctx.project.dbName),
        // Like a project's pool, at most a quarter of the connection budget.
        max: Math.min(4, ctx.p.dbs.projectPoolMax),
        idle_timeout: 30,
      }),
    (sql) => sql.end({ timeout: 5 }),
  );
}

export async function sqlAction(ctx: ActionContext, statement: string, timeoutMs: number): Promise<Outcome> {
  const query = ownerPool(ctx).unsafe(statement, [], { simple: false } as never);
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      void query.cancel();
    },
    Math.max(1, Math.floor(timeoutMs)),
  );
  try {
    const result = await query;
    return { ok: true, output: { rows_affected: result.count ?? 0 } };
  } catch (err) {
    // The statement never reached the database: runAction defers the attempt rather than spending it.
    if (isBudgetExhausted(err)) throw err;
    const e = err as { code?: string; message?: string };
    if (timedOut && e.code === '57014') {
      return {
        ok: false,
        error: `The statement did not finish within timeout_seconds (${timeoutMs / 1000} s) and was cancelled.`,
        retryable: true,
      };
    }
    // Errors in the statement itself (syntax, missing object, privileges) will not heal on retry.
    const permanent = typeof e.code === 'string' && /^(42|0A)/.test(e.code);
    return {
      ok: false,
      error: `SQL error${e.code ? ` ${e.code}` : ''}: ${e.message ?? String(err)}`,
      retryable: !permanent,
    };
  } finally {
    clearTimeout(timer);
  }
}
