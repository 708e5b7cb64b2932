/**
 * Background work of a process with role all or worker. Each worker
 * coordinates with other processes only through Postgres, so any number of
 * worker processes may run.
 */
import type { Platform } from '../context.ts';
import { every, type Worker } from '../periodic.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { startWorkflowWorkers } from '../workflows/worker.ts';
import { startCronScheduler } from '../cron/scheduler.ts';
import { startAuthMaintenance } from '../auth/maintenance.ts';
import { pruneFunctionLogs } from '../functions/db-store.ts';
import { pruneSessions } from '../platform/accounts.ts';
import { pruneUsage } from '../platform/request-usage.ts';
import { startRealtimeRetention } from '../realtime/retention.ts';

export function startWorkers(p: Platform, registry: ProjectRegistry): Worker[] {
  return [
    startCronScheduler(p, registry),
    startWorkflowWorkers(p, registry),
    startAuthMaintenance(p),
    startRealtimeRetention(p),
    every(p, 'function log retention', 3600_000, async () => void (await pruneFunctionLogs(p))),
    every(p, 'request usage retention', 3600_000, () => pruneUsage(p)),
    every(p, 'expired management sessions cleanup', 3600_000, () => pruneSessions(p)),
  ];
}
