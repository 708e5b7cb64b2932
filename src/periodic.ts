/**
 * Background work that repeats: the cron scheduler, workflow workers, auth
 * and usage maintenance. Every area may start one; the server starts and
 * stops them (src/server/workers.ts).
 */
import type { Platform } from './context.ts';

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
