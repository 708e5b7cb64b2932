/**
 * Per-project counters of this process: open sockets, and joins and events in
 * the current second (a fixed one-second window, as Supabase's rate counters
 * reset every second).
 */
export class PerSecond {
  private window = 0;
  private readonly counts = new Map<string, number>();

  /** Counts one; false when the project is already at its limit this second. */
  take(projectId: string, limit: number, now = Date.now()): boolean {
    return this.takeMany(projectId, 1, limit, now) === 'ok';
  }

  /**
   * Counts `n` at once (a batch of messages), all or none: 'full' when the
   * project is already at its limit this second, 'batch' when the batch
   * would take it past the limit (Supabase's BatchBroadcast tells the two
   * apart).
   */
  takeMany(projectId: string, n: number, limit: number, now = Date.now()): 'ok' | 'full' | 'batch' {
    const w = Math.floor(now / 1000);
    if (w !== this.window) {
      this.window = w;
      this.counts.clear();
    }
    const used = this.counts.get(projectId) ?? 0;
    if (used >= limit) return 'full';
    if (used + n > limit) return 'batch';
    this.counts.set(projectId, used + n);
    return 'ok';
  }
}

export class Gauge {
  private readonly counts = new Map<string, number>();
  get(projectId: string): number {
    return this.counts.get(projectId) ?? 0;
  }
  add(projectId: string, delta: number): void {
    const n = this.get(projectId) + delta;
    if (n <= 0) this.counts.delete(projectId);
    else this.counts.set(projectId, n);
  }
}
