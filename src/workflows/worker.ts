/**
 * Background work of the workflows domain, started by startWorkers in every
 * process with role all or worker: the engine tick and the trigger drains
 * every HEARTH_WORKFLOW_TICK_MS (the engine's passes run beside its ticks,
 * engine.ts), the log-drain shipper, and the 30-day
 * retention of finished runs and of row changes that never started one.
 */
import type { Platform } from '../context.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { every, type Worker } from '../periodic.ts';
import { shipDrains } from './drain.ts';
import { pruneRuns, startEngine } from './engine.ts';
import { drainTriggers, pruneDeadChanges } from './triggers.ts';

export function startWorkflowWorkers(p: Platform, registry: ProjectRegistry): Worker {
  const tick = p.config.workflowTickMs;
  const workers = [
    startEngine(p, registry, tick),
    every(p, 'workflow trigger drains', tick, async () => {
      await drainTriggers(p, registry);
    }),
    every(p, 'workflow log drain', Math.min(Math.max(tick, 1000), 5000), async () => {
      await shipDrains(p);
    }),
    every(p, 'workflow run retention', 3600_000, async () => {
      await pruneRuns(p);
      await pruneDeadChanges(p, registry);
    }),
  ];
  return { stop: async () => void (await Promise.all(workers.map((w) => w.stop()))) };
}
