/**
 * Background work of a process with role all or worker. Each worker
 * coordinates with other processes only through Postgres, so any number of
 * worker processes may run.
 */
import type { Platform } from '../context.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { startWorkflowWorkers } from '../workflows/worker.ts';
import { startCronScheduler } from '../cron/scheduler.ts';
import { startAuthMaintenance } from '../auth/maintenance.ts';
import { pruneFunctionLogs } from '../functions/db-store.ts';
import { pruneUsage } from '../platform/request-usage.ts';
import { startRealtimeRetention } from '../realtime/retention.ts';

export interface Worker {
  stop(): Promise<void>;
}

/** Runs fn every intervalMs (never overlapping itself) until stopped. */
export function every(p: Platform, name: string, intervalMs: number, fn: () => Promise<void>): Worker {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    running = fn()
      .catch((err) => p.log.error({ err }, `${name} failed`))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

export function startWorkers(p: Platform, registry: ProjectRegistry): Worker[] {
  return [
    startCronScheduler(p, registry),
    startWorkflowWorkers(p, registry),
    startAuthMaintenance(p),
    startRealtimeRetention(p),
    every(p, 'function log retention', 3600_000, async () => void (await pruneFunctionLogs(p))),
    every(p, 'request usage retention', 3600_000, () => pruneUsage(p)),
    every(p, 'expired management sessions cleanup', 3600_000, async () => {
      await p.dbs.control`delete from platform.sessions where expires_at < ${p.clock.now()}`;
    }),
  ];
}
