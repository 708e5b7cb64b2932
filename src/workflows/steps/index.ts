/**
 * The side-effecting actions a step, a fan-out child or a compensating action
 * performs: enqueue, sql, webhook, function. Each returns an outcome instead
 * of throwing; `retryable: false` spends the attempt budget at once.
 * Every action is at-least-once: a worker that dies after the side effect but
 * before recording it repeats it on the next attempt (docs/workflows.md).
 */
import { isBudgetExhausted } from '../../db/budget.ts';
import type { Action, Step } from '../validate.ts';
import { enqueueAction } from './enqueue.ts';
import type { ActionContext, Outcome } from './action.ts';
import { functionAction } from './function.ts';
import { sqlAction } from './sql.ts';
import { webhookAction } from './webhook.ts';

export const ERROR_MAX = 2000;
export const OUTPUT_MAX_BYTES = 256 * 1024;
const UNSTORABLE = /(?:^|[^\\])(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;
export const truncate = (text: string) => (text.length > ERROR_MAX ? `${text.slice(0, ERROR_MAX - 1)}…` : text);

/** Runs one attempt, bounded by timeoutSeconds of wall-clock time. */
export async function runAction(ctx: ActionContext, action: Step | Action, timeoutSeconds: number): Promise<Outcome> {
  const ms = timeoutSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          ok: false,
          error: `The attempt did not finish within timeout_seconds (${timeoutSeconds} s).`,
          retryable: true,
        }),
      ms,
    );
  });
  const work = (async (): Promise<Outcome> => {
    try {
      switch (action.kind) {
        case 'sql':
          return await sqlAction(ctx, action.target!, ms);
        case 'enqueue':
          return await enqueueAction(ctx, action.target!, action.payload);
        case 'webhook':
          return await webhookAction(ctx, action, ms);
        case 'function':
          return await functionAction(ctx, action.target!, action.payload, ms);
        default:
          return { ok: false, error: `A ${action.kind} step is not an action.`, retryable: false };
      }
    } catch (err) {
      const error = (err as Error).message || String(err);
      return { ok: false, error, retryable: true, ...(isBudgetExhausted(err) ? { deferred: true } : {}) };
    }
  })();
  try {
    const outcome = await Promise.race([work, timeout]);
    // SPEC 8 bounds a step output like a payload; a bigger one (a function's response body) fails the
    // step without retries, since the same call would most likely answer the same way again.
    if (!outcome.ok) return outcome;
    const json = JSON.stringify(outcome.output ?? null);
    if (Buffer.byteLength(json) > OUTPUT_MAX_BYTES) {
      return { ok: false, error: `The step output is over ${OUTPUT_MAX_BYTES / 1024} KiB.`, retryable: false };
    }
    // Postgres jsonb cannot hold U+0000 or an unpaired surrogate (JSON.stringify writes both as
    // \u escapes; an escaped backslash before "u" is literal text): such an output could never be
    // written back, and the run would be retried at every lease expiry. It fails the step at once.
    if (UNSTORABLE.test(json)) {
      return {
        ok: false,
        error:
          'The step output contains a NUL character (U+0000) or an unpaired surrogate, which the database cannot store.',
        retryable: false,
      };
    }
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}
