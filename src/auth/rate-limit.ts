/**
 * Per-client-IP rate limits (config/auth rate_limit_signups,
 * rate_limit_anonymous_users, rate_limit_email_sent) as token buckets: a
 * client may spend the configured number at once, and the allowance refills
 * at that number per REFILL_MS. So a flood is cut off after a short burst,
 * while an app or a test suite working at a steady pace from one address is
 * never locked out for long (GoTrue's fixed windows lock it out for up to an
 * hour). Implemented as GCRA: one row per (bucket, client IP) holds the
 * theoretical arrival time `tat`; a request is admitted when tat - now stays
 * within the burst, and a refused request spends nothing.
 *
 * Rows live in the project database so every Hearth process shares them. The
 * client IP is Fastify's request.ip, which honours X-Forwarded-For only from
 * HEARTH_TRUSTED_PROXIES. A limit of 0 refuses every request of that kind.
 */
import { HearthError } from '../errors.ts';
import { now, type AuthContext } from './context.ts';

export type Bucket = 'signups' | 'anonymous_users' | 'email_sent';

/** The whole allowance refills in this time. */
export const REFILL_MS = 10_000;

const LIMIT_FIELD: Record<Bucket, string> = {
  signups: 'rate_limit_signups',
  anonymous_users: 'rate_limit_anonymous_users',
  email_sent: 'rate_limit_email_sent',
};

const CODE: Record<Bucket, string> = {
  signups: 'over_request_rate_limit',
  anonymous_users: 'over_request_rate_limit',
  email_sent: 'over_email_send_rate_limit',
};

/** A 429 that says when to come back (the auth error handler sends it as Retry-After). */
export class RateLimited extends HearthError {
  constructor(
    code: string,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, code, message);
  }
}

const limitOf = (ctx: AuthContext, bucket: Bucket): number => Number(ctx.settings[LIMIT_FIELD[bucket]]);

/**
 * One request of a bucket as a statement fragment: the common table
 * expression `rate_hit(admitted, wait_ms)` admits the request or not (a
 * refused one spends nothing). Put it in front of the statement the limit guards,
 * which refers to `(select admitted from rate_hit)`, so the check and the
 * guarded work are one round trip; then call refuseOverLimit with both values.
 */
export function rateHit(ctx: AuthContext, bucket: Bucket, clientIp: string) {
  const sql = ctx.project.sql;
  const limit = limitOf(ctx, bucket);
  const t = now(ctx);
  // Each request moves tat on by one interval; up to `limit` of them may be ahead of now.
  const interval = limit > 0 ? REFILL_MS / limit : REFILL_MS;
  const burst = limit > 0 ? REFILL_MS - interval : -1;
  const step = sql`make_interval(secs => ${interval / 1000}::float8)`;
  // Where the bucket stands now. No admitted request puts tat more than REFILL_MS ahead, so a
  // tat beyond that means the clock has gone back since; the bucket then starts full again.
  const start = sql`case when b.tat > ${t}::timestamptz + make_interval(secs => ${REFILL_MS / 1000}::float8) then ${t}::timestamptz
    else greatest(b.tat, ${t}::timestamptz) end`;
  // The update re-reads the locked row, so concurrent requests from one address each spend their share.
  return sql`
    rate_sweep as (
      delete from auth.rate_buckets
      where tat < ${t}::timestamptz - interval '1 hour' and not (bucket = ${bucket} and client_ip = ${clientIp})
    ),
    rate_take as (
      insert into auth.rate_buckets as b (bucket, client_ip, tat)
      select ${bucket}, ${clientIp}, ${t}::timestamptz + ${step} where ${burst}::float8 >= 0
      on conflict (bucket, client_ip) do update set tat = ${start} + ${step}
        where ${start} - ${t}::timestamptz <= make_interval(secs => ${burst / 1000}::float8)
      returning 1
    ),
    rate_hit as (
      select exists (select from rate_take) as admitted,
        coalesce(ceil(extract(epoch from (select tat from auth.rate_buckets where bucket = ${bucket} and client_ip = ${clientIp}) - ${t}::timestamptz) * 1000 - ${burst}::float8)::int, ${REFILL_MS}::int) as wait_ms
    )`;
}

/** 429 with Retry-After when the request was not admitted. */
export function refuseOverLimit(ctx: AuthContext, bucket: Bucket, admitted: boolean, waitMs: number): void {
  if (admitted) return;
  const limit = limitOf(ctx, bucket);
  const retry = Math.max(1, Math.ceil(waitMs / 1000));
  const pace = limit > 0 ? `${limit} at once, refilling at ${limit} per ${REFILL_MS / 1000} s` : 'none allowed';
  throw new RateLimited(CODE[bucket], `Too many requests of this kind from your address (${LIMIT_FIELD[bucket]}: ${pace}); try again in ${retry} s.`, retry);
}

export async function spendRateLimit(ctx: AuthContext, bucket: Bucket, clientIp: string): Promise<void> {
  const [row] = await ctx.project.sql`with ${rateHit(ctx, bucket, clientIp)} select admitted, wait_ms from rate_hit`;
  refuseOverLimit(ctx, bucket, row!.admitted as boolean, row!.wait_ms as number);
}
