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
    const w = Math.floor(now / 1000);
    if (w !== this.window) {
      this.window = w;
      this.counts.clear();
    }
    const n = this.counts.get(projectId) ?? 0;
    if (n >= limit) return false;
    this.counts.set(projectId, n + 1);
    return true;
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
