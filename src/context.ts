/**
 * What every domain receives: the typed config, the database pools, the master
 * key, the clock (injected so tests move time instead of sleeping), the logger
 * and the fault points tests arm to prove that failures leave no half state.
 */
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Databases } from './db/pools.ts';
import type { MasterKey } from './secrets.ts';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The error an armed fault point throws: recognised by its type, never by its text. */
export class InjectedFault extends Error {
  constructor(readonly point: string) {
    super(`fault injected at ${point}`);
    this.name = 'InjectedFault';
  }
}

/**
 * Named points where a test can make the next pass fail. The code passes what
 * it is working on (e.g. the project ref) so the test can check the aftermath.
 */
export class Faults {
  private readonly armed = new Map<string, (info: Record<string, unknown>) => void>();
  arm(point: string, seen: (info: Record<string, unknown>) => void = () => {}): void {
    this.armed.set(point, seen);
  }
  hit(point: string, info: Record<string, unknown> = {}): void {
    const seen = this.armed.get(point);
    if (seen) {
      this.armed.delete(point);
      seen(info);
      throw new InjectedFault(point);
    }
  }
}

export interface Platform {
  config: Config;
  dbs: Databases;
  master: MasterKey;
  clock: Clock;
  log: Logger;
  faults: Faults;
}
