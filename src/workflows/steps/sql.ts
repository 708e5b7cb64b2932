/**
 * sql step: one statement in the project database as the project's owner
 * role (hearth_<ref>_owner, never a superuser), through a small pool that
 * logs in with the owner's own credentials. The extended protocol refuses a
 * second statement, and statement_timeout bounds the attempt inside Postgres.
 */
import postgres from 'postgres';
import { projectDbUrl } from '../../platform/connection-info.ts';
import type { ActionContext, Outcome } from './index.ts';

function ownerPool(ctx: ActionContext): postgres.Sql {
  return ctx.project.cached(
    'workflows.owner-sql',
    () => postgres(projectDbUrl(ctx.p, ctx.project.row), { max: 4, idle_timeout: 30, onnotice: () => {} }),
    (sql) => sql.end({ timeout: 5 }),
  );
}

export async function sqlAction(ctx: ActionContext, statement: string, timeoutMs: number): Promise<Outcome> {
  try {
    const result = await ownerPool(ctx).begin(async (tx) => {
      await tx.unsafe(`set local statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
      return tx.unsafe(statement, [], { simple: false } as never);
    });
    return { ok: true, output: { rows_affected: result.count ?? 0 } };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    // Errors in the statement itself (syntax, missing object, privileges) will not heal on retry.
    const permanent = typeof e.code === 'string' && /^(42|0A)/.test(e.code);
    return { ok: false, error: `SQL error${e.code ? ` ${e.code}` : ''}: ${e.message ?? String(err)}`, retryable: !permanent };
  }
}
