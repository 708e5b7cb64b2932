/**
 * Token buckets (GCRA) stored in Postgres, shared by every Hearth process:
 * the auth area's per-address limits (src/auth/rate-limit.ts, rows in each
 * project's auth.rate_buckets) and the management sign-in throttle
 * (src/platform/login-throttle.ts, rows in the control database's
 * platform.rate_buckets).
 *
 * A bucket lets `limit` requests through at once and refills at `limit` per
 * `refillMs`: a flood is cut off after a short burst, while a client working
 * at a steady pace is never locked out for long. One row per (bucket, key)
 * holds the theoretical arrival time `tat`; a request is admitted when
 * tat - now stays within the burst, and a refused request spends nothing.
 * The row is updated under its lock, so concurrent requests each spend their
 * share and together never exceed the burst.
 */
import type postgres from 'postgres';
import { HearthError } from '../errors.ts';

/** A table of buckets: (bucket text, <key column> text, tat timestamptz), primary key (bucket, key). */
export interface BucketTable {
  name: 'auth.rate_buckets' | 'platform.rate_buckets';
  keyColumn: 'client_ip' | 'subject';
}

export interface TokenBucket {
  table: BucketTable;
  /** What is limited, e.g. signups or login_address. */
  bucket: string;
  /** Whose allowance: a client address, or an account and an address. */
  key: string;
  /** Requests admitted at once; 0 refuses every request. */
  limit: number;
  /** The whole allowance refills in this time. */
  refillMs: number;
}

/** A 429 that says when to come back; the areas' error handlers send it as Retry-After. */
export class RateLimited extends HearthError {
  constructor(
    code: 'over_request_rate_limit' | 'over_email_send_rate_limit',
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, message);
  }
}

/** Rows whose tat is this far behind are full buckets; the requests that pass sweep them. */
const SWEEP_AFTER = '1 hour';
/**
 * How far a request's `now` may trail the requests before it and still be
 * the same clock: each reads the time when it arrives, and one that then
 * waits for a connection reaches the table after later ones. Beyond this, the
 * clock has gone back.
 */
const CLOCK_SLACK = '1 minute';

/**
 * One request of a bucket as a statement fragment: the common table
 * expressions end in `rate_hit(admitted, wait_ms)`, which admits the request
 * or not. Put it in front of the statement the limit guards, which refers to
 * `(select admitted from rate_hit)`, so the check and the guarded work are one
 * round trip; then decide with both values (e.g. refuseOverLimit).
 */
export function rateHit(sql: postgres.Sql, b: TokenBucket, now: Date) {
  const table = sql(b.table.name);
  const key = sql(b.table.keyColumn);
  // Each request moves tat on by one interval; up to `limit` of them may be ahead of now.
  const interval = b.limit > 0 ? b.refillMs / b.limit : b.refillMs;
  const burst = b.limit > 0 ? b.refillMs - interval : -1;
  const step = sql`make_interval(secs => ${interval / 1000}::float8)`;
  // Where the bucket stands now. No admitted request puts tat more than refillMs ahead of its
  // own now, so a tat beyond that (and CLOCK_SLACK, for requests whose now came a little
  // earlier but whose turn came later) means the clock has gone back; the bucket then starts
  // full again. Without the slack, such a late request would reset a spent bucket.
  const start = sql`case when b.tat > ${now}::timestamptz + make_interval(secs => ${b.refillMs / 1000}::float8) + ${CLOCK_SLACK}::interval
    then ${now}::timestamptz else greatest(b.tat, ${now}::timestamptz) end`;
  // The update re-reads the locked row, so concurrent requests for one key each spend their share.
  return sql`
    rate_sweep as (
      delete from ${table}
      where tat < ${now}::timestamptz - ${SWEEP_AFTER}::interval and not (bucket = ${b.bucket} and ${key} = ${b.key})
    ),
    rate_take as (
      insert into ${table} as b (bucket, ${key}, tat)
      select ${b.bucket}, ${b.key}, ${now}::timestamptz + ${step} where ${burst}::float8 >= 0
      on conflict (bucket, ${key}) do update set tat = ${start} + ${step}
        where ${start} - ${now}::timestamptz <= make_interval(secs => ${burst / 1000}::float8)
      returning 1
    ),
    rate_hit as (
      select exists (select from rate_take) as admitted,
        coalesce(ceil(extract(epoch from (select tat from ${table} where bucket = ${b.bucket} and ${key} = ${b.key}) - ${now}::timestamptz) * 1000 - ${burst}::float8)::int, ${b.refillMs}::int) as wait_ms
    )`;
}

/** Spends one request of the bucket: whether it was admitted and, if not, how long until it would be. */
export async function takeToken(
  sql: postgres.Sql,
  b: TokenBucket,
  now: Date,
): Promise<{ admitted: boolean; waitMs: number }> {
  const [row] = await sql`with ${rateHit(sql, b, now)} select admitted, wait_ms from rate_hit`;
  return { admitted: row!.admitted as boolean, waitMs: row!.wait_ms as number };
}

/**
 * Gives back one request spent earlier (e.g. a sign-in that turned out right):
 * tat moves back one interval. A tat behind now counts as now, so this can
 * never raise the allowance above a full bucket.
 */
export async function returnToken(sql: postgres.Sql, b: TokenBucket): Promise<void> {
  const interval = b.limit > 0 ? b.refillMs / b.limit : b.refillMs;
  await sql`update ${sql(b.table.name)} set tat = tat - make_interval(secs => ${interval / 1000}::float8)
    where bucket = ${b.bucket} and ${sql(b.table.keyColumn)} = ${b.key}`;
}

/** Whole seconds to wait, at least 1, for a refused request's wait. */
export const retryAfterSeconds = (waitMs: number): number => Math.max(1, Math.ceil(waitMs / 1000));

/** How a bucket's pace reads in a message: "30 at once, refilling at 30 per 10 s". */
export function paceOf(b: Pick<TokenBucket, 'limit' | 'refillMs'>): string {
  if (b.limit <= 0) return 'none allowed';
  const per = b.refillMs % 60_000 === 0 ? `${b.refillMs / 60_000} min` : `${b.refillMs / 1000} s`;
  return `${b.limit} at once, refilling at ${b.limit} per ${per}`;
}
