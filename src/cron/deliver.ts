/**
 * What one fire of a job does (SPEC 4.5): enqueue the payload, POST it signed
 * to the webhook (SPEC 6.2: delivered only on 2xx, no retries), or start a
 * workflow run. Every failure becomes an outcome to record, never an exception.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Platform } from '../context.ts';
import { isBudgetExhausted } from '../db/budget.ts';
import { RETRY_AFTER_SECONDS } from '../db/unavailable.ts';
import { createOutboundClient, type OutboundClient } from '../outbound/index.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { msgIdJson, sendMessage } from '../queues/index.ts';
import type { TargetKind } from './jobs.ts';
import { startWorkflowRunForCron } from './workflow-target.ts';

export interface DeliveryDeps {
  outbound: OutboundClient;
}

export interface Outcome {
  status: 'succeeded' | 'failed';
  httpStatus: number | null;
  result: unknown;
  error: string | null;
}

export interface FireTarget {
  projectRef: string;
  kind: TargetKind;
  target: string;
  payload: unknown;
  secretSealed: string | null;
}

/** Recorded error text is cut here (SPEC 8). */
const MAX_ERROR = 2000;

/**
 * The client webhook jobs use: the platform's SSRF guard, opened only for
 * HEARTH_OUTBOUND_ALLOW. `ca` replaces the trusted CAs (tests with a
 * self-signed receiver); leave it out in production.
 */
export function cronOutboundClient(p: Platform, ca?: string | Buffer): OutboundClient {
  return createOutboundClient({ allow: p.config.outboundAllow, clock: p.clock, ca });
}

/** Times a fire is tried again after waiting for this process's connection budget in vain. */
const BUDGET_RETRIES = 3;

export async function deliver(
  p: Platform,
  registry: ProjectRegistry,
  deps: DeliveryDeps,
  fire: FireTarget,
): Promise<Outcome> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt(p, registry, deps, fire);
    } catch (err) {
      // The fire never reached the database (nothing was enqueued or started): a burst holds every
      // connection of this process, so wait for it to pass rather than lose the fire. Still at most once.
      if (!isBudgetExhausted(err) || retry === BUDGET_RETRIES) return failed((err as Error).message);
      await sleep(RETRY_AFTER_SECONDS * 1000);
    }
  }
}

const failed = (error: string, httpStatus: number | null = null): Outcome => ({
  status: 'failed',
  httpStatus,
  result: null,
  error: error.slice(0, MAX_ERROR),
});

async function attempt(p: Platform, registry: ProjectRegistry, deps: DeliveryDeps, fire: FireTarget): Promise<Outcome> {
  if (fire.kind === 'webhook') {
    const secret = p.master.decrypt(fire.secretSealed!);
    const r = await deps.outbound.signedPost(fire.target, JSON.stringify(fire.payload), secret);
    if (!r.ok) return failed(r.error ?? `The receiver answered ${r.status}.`, r.status || null);
    return { status: 'succeeded', httpStatus: r.status, result: null, error: null };
  }
  const project = await registry.byReference(fire.projectRef);
  if (!project) return failed(`Project ${fire.projectRef} no longer exists.`);
  if (fire.kind === 'enqueue') {
    const msgId = await sendMessage(project.sql, fire.target, fire.payload);
    return { status: 'succeeded', httpStatus: null, result: { msg_id: msgIdJson(msgId) }, error: null };
  }
  const run = await startWorkflowRunForCron(p, project, fire.target, fire.payload);
  return { status: 'succeeded', httpStatus: null, result: run, error: null };
}
