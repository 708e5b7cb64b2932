/**
 * The cron scheduler. Every process with role all or worker ticks once a
 * second; the first tick in each minute (by the injected clock) claims the
 * fires of every job whose schedule matches that minute and delivers them.
 *
 * Exactly once across processes: a fire is claimed by inserting its record
 * (job, minute) with ON CONFLICT DO NOTHING, so however many processes tick
 * at the same instant, one insert per (job, minute) goes through and only the
 * process that made it delivers.
 *
 * No catch-up: only the current minute is ever considered. A minute that
 * passed while every process was down (or stalled) is skipped for good; the
 * job next fires at its next matching minute. A job fires first in the first
 * matching minute that starts at or after its creation.
 *
 * At most once: a process that dies after claiming a fire does not deliver it,
 * and nobody retries; the run stays "running" in the history.
 */
import { newCache } from '../cache.ts';
import type { Platform } from '../context.ts';
import { projectRefs } from '../platform/projects.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { every, type Worker } from '../periodic.ts';
import { cronOutboundClient, deliver, type DeliveryDeps, type Outcome } from './deliver.ts';
import { RUN_HISTORY, type TargetKind } from './jobs.ts';
import { parseSchedule, startOfMinute, type Schedule } from './schedule.ts';

/** Tick period: a fire starts at most this long (plus one claim query) after its minute begins. */
export const CRON_TICK_MS = 1000;

export interface ClaimedFire {
  jobId: string;
  name: string;
  projectRef: string;
  kind: TargetKind;
  target: string;
  payload: unknown;
  secretSealed: string | null;
  minute: Date;
  startedAt: Date;
}

export interface FireResult extends Outcome {
  job: string;
  projectRef: string;
  minute: Date;
}

/** Parsed schedules by expression: every minute re-reads every job's. */
const schedules = newCache<string, Schedule>({ max: 10_000 });
function scheduleOf(expression: string): Schedule {
  let s = schedules.get(expression);
  if (!s) {
    s = parseSchedule(expression);
    schedules.set(expression, s);
  }
  return s;
}

/** Claims, for this process, the fires due in the minute that contains `now`. */
export async function claimDueFires(p: Platform, now: Date): Promise<ClaimedFire[]> {
  const minute = startOfMinute(now);
  const sql = p.dbs.control;
  const jobs = await sql`select id, schedule from platform.cron_jobs where created_at <= ${minute}`;
  const due = jobs.filter((j) => scheduleOf(j.schedule as string).matches(minute)).map((j) => j.id as string);
  if (!due.length) return [];
  const rows = await sql`with claimed as (
      insert into platform.cron_fires (job_id, minute, started_at)
      select id, ${minute}, ${now} from platform.cron_jobs where id = any(${due}::uuid[])
      on conflict do nothing
      returning job_id)
    select j.id, j.name, j.project_id, j.target_kind, j.target, j.payload, j.secret_sealed
    from claimed c join platform.cron_jobs j on j.id = c.job_id`;
  const refs = await projectRefs(
    sql,
    rows.map((r) => r.project_id as string),
  );
  return rows
    .filter((r) => refs.has(r.project_id as string))
    .map((r) => ({
      jobId: r.id,
      name: r.name,
      projectRef: refs.get(r.project_id as string)!,
      kind: r.target_kind,
      target: r.target,
      payload: r.payload,
      secretSealed: r.secret_sealed,
      minute,
      startedAt: now,
    }));
}

/** Delivers one claimed fire and records its outcome as the job's last status and in its history. */
export async function deliverFire(
  p: Platform,
  registry: ProjectRegistry,
  deps: DeliveryDeps,
  fire: ClaimedFire,
): Promise<FireResult> {
  const began = performance.now();
  const outcome = await deliver(p, registry, deps, fire);
  // Measured from the claim time, so records stay consistent when a test passes its own `now`.
  const finishedAt = new Date(fire.startedAt.getTime() + Math.round(performance.now() - began));
  const sql = p.dbs.control;
  const { jobId: id, minute } = fire;
  await sql`with fire as (
      update platform.cron_fires set finished_at = ${finishedAt}, status = ${outcome.status}, http_status = ${outcome.httpStatus},
        result = ${JSON.stringify(outcome.result)}::text::jsonb, error = ${outcome.error}
      where job_id = ${id} and minute = ${minute}),
    job as (
      update platform.cron_jobs set last_minute = ${minute}, last_finished_at = ${finishedAt}, last_status = ${outcome.status},
        last_http_status = ${outcome.httpStatus}, last_error = ${outcome.error}
      where id = ${id} and (last_minute is null or last_minute <= ${minute}))
    delete from platform.cron_fires where job_id = ${id} and minute < (
      select minute from platform.cron_fires where job_id = ${id} order by minute desc offset ${RUN_HISTORY - 1} limit 1)`;
  return { ...outcome, job: fire.name, projectRef: fire.projectRef, minute };
}

/** One scheduler pass at `now`: claims the due fires and waits for their deliveries. */
export async function runDueJobs(
  p: Platform,
  registry: ProjectRegistry,
  now: Date = p.clock.now(),
  deps: DeliveryDeps = { outbound: cronOutboundClient(p) },
): Promise<FireResult[]> {
  const fires = await claimDueFires(p, now);
  return Promise.all(fires.map((f) => deliverFire(p, registry, deps, f)));
}

/**
 * The background scheduler. Deliveries run beside the ticks (a slow webhook
 * must not delay the next minute's claims); stop() waits for them.
 */
export function startCronScheduler(
  p: Platform,
  registry: ProjectRegistry,
  opts: { intervalMs?: number; deps?: DeliveryDeps } = {},
): Worker {
  const deps = opts.deps ?? { outbound: cronOutboundClient(p) };
  const deliveries = new Set<Promise<unknown>>();
  let claimedMinute = -1;
  const ticker = every(p, 'cron scheduler', opts.intervalMs ?? CRON_TICK_MS, async () => {
    const now = p.clock.now();
    const minute = startOfMinute(now).getTime();
    // Jobs created during a minute first fire in a later one, so one claim per minute suffices.
    if (minute === claimedMinute) return;
    const fires = await claimDueFires(p, now);
    claimedMinute = minute;
    for (const fire of fires) {
      const delivery: Promise<unknown> = deliverFire(p, registry, deps, fire)
        .catch((err) => p.log.error({ err, job: fire.name, project: fire.projectRef }, 'recording a cron fire failed'))
        .finally(() => deliveries.delete(delivery));
      deliveries.add(delivery);
    }
  });
  return {
    async stop() {
      await ticker.stop();
      await Promise.allSettled([...deliveries]);
    },
  };
}
