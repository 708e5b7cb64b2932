/**
 * Daily request quotas (SPEC 8). Every data-plane request of a project that
 * passes the credential check counts toward the project's total for the
 * current UTC day; past config/limits daily_request_quota, requests answer
 * 429 over_request_quota with Retry-After until the next UTC midnight.
 *
 * Counting must not cost a round trip per request, so each process counts in
 * memory and adds its counts to platform.request_usage about once a second;
 * the upsert returns the day's total over all processes, which is what the
 * next checks compare against. Across several API processes the quota can
 * therefore be overshot by what they admit within about a second.
 * Unauthenticated requests are refused before they count, so nobody without
 * a key can spend a project's quota.
 */
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import type { ProjectRuntime } from './registry.ts';

/** config/limits. null: no quota (the self-hosted default). */
const FLUSH_MS = 1000;
/** Days of counts kept, for GET /v1/projects/{ref}/usage. */
export const USAGE_DAYS = 90;

const DAY_MS = 86_400_000;
const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** Where a 429 puts its Retry-After (the Fastify reply). */
export interface RetryAfterTarget {
  header(name: string, value: string): unknown;
}

interface DayCount {
  day: string;
  /** The day's total over all processes, as of this process's last flush. */
  known: number;
  /** Counted here since then. */
  pending: number;
}

export class RequestUsage {
  private readonly counts = new Map<string, DayCount>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /**
   * The quota of each settings promise the project runtime handed out, once it has
   * resolved: while the runtime keeps serving the same promise, admit() reads the
   * quota without awaiting it (a changed setting is a new promise, so a miss).
   */
  private readonly quotas = new WeakMap<Promise<unknown>, number | null>();
  /** The UTC day of the last request and the [from, to) milliseconds it spans, so the name is formatted once a day, not per request. */
  private day = { name: '', from: 0, to: 0 };

  constructor(private readonly p: Platform) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /**
   * Counts one request, or throws 429 when the project has used its quota for today.
   * Synchronous once the project's limits are known; a promise only on the first
   * request after they were (re)read.
   */
  admit(project: ProjectRuntime, reply: RetryAfterTarget): void | Promise<void> {
    const settings = project.settings('limits');
    const quota = this.quotas.get(settings);
    if (quota !== undefined) return this.count(project, quota, reply);
    return settings.then((s) => {
      const read = s.daily_request_quota as number | null;
      this.quotas.set(settings, read);
      this.count(project, read, reply);
    });
  }

  private count(project: ProjectRuntime, quota: number | null, reply: RetryAfterTarget): void {
    const now = this.p.clock.now().getTime();
    const day = this.dayOf(now);
    let count = this.counts.get(project.id);
    if (!count || count.day !== day) {
      count = { day, known: 0, pending: 0 };
      this.counts.set(project.id, count);
    }
    if (quota !== null && count.known + count.pending >= quota) {
      const seconds = Math.max(1, Math.ceil((this.day.to - now) / 1000));
      reply.header('retry-after', String(seconds));
      throw fail(
        'over_request_quota',
        `This project has used its daily request quota (${quota} requests per UTC day, config/limits daily_request_quota); it resets in ${seconds} s.`,
      );
    }
    count.pending++;
  }

  /** The UTC day (YYYY-MM-DD) of a time in ms; this.day.to is then the next UTC midnight. */
  private dayOf(ms: number): string {
    if (ms < this.day.from || ms >= this.day.to) {
      const from = Math.floor(ms / DAY_MS) * DAY_MS;
      this.day = { name: utcDay(new Date(from)), from, to: from + DAY_MS };
    }
    return this.day.name;
  }

  /** Adds this process's counts to the shared totals. Never overlaps itself; a failure keeps the counts for the next try. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      for (const [projectId, count] of this.counts) {
        if (count.pending === 0) continue;
        const sending = count.pending;
        try {
          const [row] = await this.p.dbs.control`
            insert into platform.request_usage (project_id, day, requests) values (${projectId}, ${count.day}, ${sending})
            on conflict (project_id, day) do update set requests = platform.request_usage.requests + excluded.requests
            returning requests::float8 as requests`;
          count.pending -= sending;
          count.known = row!.requests as number;
        } catch (err) {
          // A project deleted meanwhile has nowhere to count; anything else is retried.
          if ((err as { code?: string }).code === '23503') this.counts.delete(projectId);
          else this.p.log.warn({ err, projectId }, 'request usage: counts kept for the next flush');
        }
        // A day that has ended is dropped once flushed; the next request starts the new one.
        if (count.pending === 0 && count.day !== this.dayOf(this.p.clock.now().getTime()))
          this.counts.delete(projectId);
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** The newest USAGE_DAYS days of counts, newest first. */
export async function usageOf(p: Platform, projectId: string): Promise<{ day: string; requests: number }[]> {
  const rows = await p.dbs
    .control`select to_char(day, 'YYYY-MM-DD') as day, requests::float8 as requests from platform.request_usage
    where project_id = ${projectId} order by day desc limit ${USAGE_DAYS}`;
  return rows.map((r) => ({ day: r.day as string, requests: r.requests as number }));
}

export async function pruneUsage(p: Platform): Promise<void> {
  const oldest = new Date(p.clock.now().getTime() - USAGE_DAYS * 86_400_000);
  await p.dbs.control`delete from platform.request_usage where day < ${utcDay(oldest)}::date`;
}
