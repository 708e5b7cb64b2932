/**
 * webhook step: POST of the static payload through the SSRF-guarded client,
 * HMAC-signed with the step's secret (X-Service-Timestamp/Signature, SPEC
 * 6.2) when it has one. Only a 2xx is delivered.
 */
import { newCache } from '../../cache.ts';
import { createOutboundClient, type OutboundClient } from '../../outbound/index.ts';
import { stepSecret } from '../definitions.ts';
import type { Action, Step } from '../validate.ts';
import type { ActionContext, Outcome } from './action.ts';

/** One client per timeout (a step's own setting) and allow list: a few in practice, bounded anyway. */
const clients = newCache<string, OutboundClient>({ max: 100 });

function client(ctx: ActionContext, timeoutMs: number): OutboundClient {
  const key = `${timeoutMs}/${ctx.p.config.outboundAllow.join(',')}`;
  let c = clients.get(key);
  if (!c) {
    c = createOutboundClient({ allow: ctx.p.config.outboundAllow, timeoutMs, clock: ctx.p.clock });
    clients.set(key, c);
  }
  return c;
}

export async function webhookAction(ctx: ActionContext, action: Step | Action, timeoutMs: number): Promise<Outcome> {
  const body = JSON.stringify(action.payload ?? null);
  const secret = stepSecret(ctx.p, action);
  const c = client(ctx, timeoutMs);
  const headers = { 'content-type': 'application/json' };
  const result = secret
    ? await c.signedPost(action.target!, body, secret, headers)
    : await c.post(action.target!, body, headers);
  if (result.ok) return { ok: true, output: { delivered: true } };
  // A refused address or a malformed URL will be refused again.
  const permanent = result.code === 'refused_address' || result.code === 'invalid_url';
  return {
    ok: false,
    error: `Webhook not delivered: ${result.error ?? `status ${result.status}`}`,
    retryable: !permanent,
  };
}
