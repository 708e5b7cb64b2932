/**
 * function step: invokes a deployed project function with the payload as its
 * JSON body; the function's response body is the step output, a non-2xx
 * status a failed attempt. The engine passes the process's functions
 * runtime (src/functions/index.ts functionInvoker); without one the step
 * fails with "functions are not available".
 */
import type { ActionContext, Outcome } from './action.ts';

export async function functionAction(
  ctx: ActionContext,
  name: string,
  payload: unknown,
  _timeoutMs: number,
): Promise<Outcome> {
  if (!ctx.invoker) return { ok: false, error: 'functions are not available', retryable: false };
  const res = await ctx.invoker(ctx.project.ref, name, payload ?? null);
  if (res.status >= 200 && res.status < 300) return { ok: true, output: res.body ?? null };
  const detail = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  return { ok: false, error: `Function "${name}" answered ${res.status}: ${detail}`, retryable: res.status !== 404 };
}
