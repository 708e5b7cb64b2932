/**
 * function step: invokes a deployed project function with the payload as its
 * JSON body; the function's response body is the step output, a non-2xx
 * status a failed attempt. The invoker comes from the functions module when
 * it is installed; without it the step fails with "functions are not
 * available".
 */
import type { ActionContext, Outcome } from './index.ts';

export type FunctionInvoker = (projectRef: string, name: string, body: unknown) => Promise<{ status: number; body: unknown }>;

/** The functions module's invoker, or null when this build has none. */
export async function loadFunctionInvoker(): Promise<FunctionInvoker | null> {
  try {
    const path = '../../functions/index.ts';
    const mod = (await import(path)) as { invokeFunctionJson?: FunctionInvoker };
    return typeof mod.invokeFunctionJson === 'function' ? mod.invokeFunctionJson : null;
  } catch {
    return null;
  }
}

export async function functionAction(ctx: ActionContext, name: string, payload: unknown, _timeoutMs: number): Promise<Outcome> {
  if (!ctx.invoker) return { ok: false, error: 'functions are not available', retryable: false };
  const res = await ctx.invoker(ctx.project.ref, name, payload ?? null);
  if (res.status >= 200 && res.status < 300) return { ok: true, output: res.body ?? null };
  const detail = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  return { ok: false, error: `Function "${name}" answered ${res.status}: ${detail}`, retryable: res.status !== 404 };
}
