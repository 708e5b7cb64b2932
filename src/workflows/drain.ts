/**
 * The log drain (SPEC 6.1): PUT/DELETE /v1/projects/{ref}/log-drain {url}.
 * While a drain is set, the engine records run and step transitions in the
 * outbox (events.ts); shipDrains posts them, oldest first, in batches through
 * the SSRF-guarded outbound client with source "workflow". Nothing is
 * shipped twice once delivered; an undelivered batch is retried on the next
 * pass and dropped after 20 failed passes, so a dead receiver cannot grow
 * the outbox forever.
 */
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import { parseAllowList, targetRefusal } from '../outbound/address.ts';
import { createOutboundClient, type OutboundClient } from '../outbound/index.ts';
import { projectRefs } from '../platform/projects.ts';
import { urlNotAsWritten } from '../platform/text.ts';

const BATCH = 500;
const MAX_SHIP_ATTEMPTS = 20;

export function checkDrainUrl(url: unknown, allowed: string[] = []): string {
  let parsed: URL | null = null;
  try {
    parsed = typeof url === 'string' && url.length <= 2048 ? new URL(url) : null;
  } catch {
    /* reported below */
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw fail('invalid_request', 'url must be an absolute http(s) URL of at most 2048 characters.');
  }
  const raw = urlNotAsWritten(url as string);
  if (raw) throw fail('invalid_request', `The log drain URL ${raw}.`);
  // The shipper's SSRF guard would refuse such a receiver at every delivery, and the events would
  // be lost without a word: say so now, with the check every saved target gets.
  const reason = targetRefusal(parsed.hostname, parseAllowList(allowed));
  if (reason) {
    throw fail(
      'invalid_request',
      `The log drain ${parsed.hostname} is ${reason}, which the platform does not connect to; a receiver on this machine needs HEARTH_OUTBOUND_ALLOW (for example 127.0.0.1/32).`,
    );
  }
  return parsed.toString();
}

export async function setLogDrain(p: Platform, projectId: string, rawUrl: unknown) {
  const url = checkDrainUrl(rawUrl, p.config.outboundAllow);
  const [row] = await p.dbs
    .control`insert into platform.workflow_log_drains (project_id, url) values (${projectId}, ${url})
    on conflict (project_id) do update set url = excluded.url returning url, created_at`;
  return { url: row!.url as string, created_at: row!.created_at as Date };
}

export async function getLogDrain(p: Platform, projectId: string) {
  const [row] = await p.dbs
    .control`select url, created_at from platform.workflow_log_drains where project_id = ${projectId}`;
  return row ? { url: row.url as string, created_at: row.created_at as Date } : { url: null };
}

export async function removeLogDrain(p: Platform, projectId: string): Promise<void> {
  await p.dbs.control.begin(async (tx) => {
    await tx`delete from platform.workflow_log_drains where project_id = ${projectId}`;
    await tx`delete from platform.workflow_events where project_id = ${projectId}`;
  });
}

let client: OutboundClient | null = null;

/** Ships pending events of every project with a drain; returns how many were delivered. */
export async function shipDrains(p: Platform): Promise<number> {
  client ??= createOutboundClient({ allow: p.config.outboundAllow, timeoutMs: 10_000, clock: p.clock });
  const drains = await p.dbs.control`select d.project_id, d.url from platform.workflow_log_drains d
    where exists (select 1 from platform.workflow_events e where e.project_id = d.project_id)`;
  const refs = await projectRefs(
    p.dbs.control,
    drains.map((d) => d.project_id as string),
  );
  let shipped = 0;
  for (const d of drains) {
    const ref = refs.get(d.project_id as string);
    if (!ref) continue; // deleted meanwhile: its drain and events went with it
    // One shipper per project at a time, across processes.
    shipped += (await p.dbs.control.begin(async (tx) => {
      const [locked] = await tx`select pg_try_advisory_xact_lock(7212051, hashtext(${d.project_id as string})) as ok`;
      if (!locked!.ok) return 0;
      const events = await tx`select id, event, run_id, workflow, step, attempt, at from platform.workflow_events
        where project_id = ${d.project_id as string} order by id limit ${BATCH}`;
      if (!events.length) return 0;
      const body = JSON.stringify(
        events.map((e) => ({
          source: 'workflow',
          event: e.event,
          project_ref: ref,
          workflow: e.workflow,
          run_id: e.run_id,
          ...(e.step ? { step: e.step, attempt: e.attempt } : {}),
          timestamp: (e.at as Date).toISOString(),
        })),
      );
      const ids = events.map((e) => e.id as string);
      const result = await client!.post(d.url as string, body, { 'content-type': 'application/json' });
      if (result.ok) {
        await tx`delete from platform.workflow_events where id = any(${ids}::bigint[])`;
        return events.length;
      }
      p.log.warn({ project: ref, error: result.error }, 'log drain delivery failed');
      await tx`update platform.workflow_events set ship_attempts = ship_attempts + 1 where id = any(${ids}::bigint[])`;
      await tx`delete from platform.workflow_events where id = any(${ids}::bigint[]) and ship_attempts >= ${MAX_SHIP_ATTEMPTS}`;
      return 0;
    })) as number;
  }
  return shipped;
}
