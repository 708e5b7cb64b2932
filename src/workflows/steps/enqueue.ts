/** enqueue step: pgmq send of the static payload into one of the project's queues → {msg_id}. */
import { msgIdJson, sendMessage } from '../../queues/index.ts';
import type { ActionContext, Outcome } from './action.ts';

export async function enqueueAction(ctx: ActionContext, queue: string, payload: unknown): Promise<Outcome> {
  const id = await sendMessage(ctx.project.sql, queue, payload ?? null);
  return { ok: true, output: { msg_id: msgIdJson(id) } };
}
