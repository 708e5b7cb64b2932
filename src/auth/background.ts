/**
 * Work done after the response: mail delivery and the lookups behind /otp and
 * /recover, so those answers take the same time whether or not the address
 * exists. Closing the server waits for what is in flight.
 */
import type { Logger } from 'pino';

export class Background {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly log: Logger) {}

  run(name: string, fn: () => Promise<void>): void {
    const task = fn()
      .catch((err) => this.log.error({ err }, `${name} failed`))
      .finally(() => this.pending.delete(task));
    this.pending.add(task);
  }

  async drain(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
