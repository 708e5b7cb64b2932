/**
 * Per-client-IP limits per fixed clock hour (config/auth rate_limit_signups,
 * rate_limit_anonymous_users, rate_limit_email_sent). Counters live in the
 * project database so every Hearth process shares them. The client IP is
 * Fastify's request.ip, which honours X-Forwarded-For only from
 * HEARTH_TRUSTED_PROXIES. A limit of 0 refuses every request of that kind.
 */
import { HearthError } from '../errors.ts';
import { now, type AuthContext } from './context.ts';

export type Bucket = 'signups' | 'anonymous_users' | 'email_sent';

const HOUR = 3600_000;

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

/**
 * One hit of a bucket as a statement fragment: the common table expression
 * `rate_hit(hits)` counts the request (and sweeps windows older than the
 * previous one). Put it in front of the statement the limit guards, which
 * then refers to `(select hits from rate_hit)`, so the count and the guarded
 * work are one round trip; check the count with refuseOverLimit.
 */
export function rateHit(ctx: AuthContext, bucket: Bucket, clientIp: string) {
  const t = now(ctx).getTime();
  const window = new Date(t - (t % HOUR));
  return ctx.project.sql`
    old_rate_windows as (
      delete from auth.rate_limits where window_start < ${new Date(window.getTime() - HOUR)}
    ),
    rate_hit as (
      insert into auth.rate_limits (bucket, client_ip, window_start, hits)
      values (${bucket}, ${clientIp}, ${window}, 1)
      on conflict (bucket, client_ip, window_start) do update set hits = auth.rate_limits.hits + 1
      returning hits
    )`;
}

export const rateLimitOf = (ctx: AuthContext, bucket: Bucket): number => Number(ctx.settings[LIMIT_FIELD[bucket]]);

/** 429 when `hits` (this request's count in the current window) is over the bucket's limit. */
export function refuseOverLimit(ctx: AuthContext, bucket: Bucket, hits: number): void {
  const limit = rateLimitOf(ctx, bucket);
  if (hits > limit) {
    const t = now(ctx).getTime();
    const retry = Math.ceil((t - (t % HOUR) + HOUR - t) / 1000);
    throw new HearthError(429, CODE[bucket], `Too many requests of this kind from your address (limit ${limit} per hour, ${LIMIT_FIELD[bucket]}); try again in ${retry} s.`);
  }
}

export async function spendRateLimit(ctx: AuthContext, bucket: Bucket, clientIp: string): Promise<void> {
  const [row] = await ctx.project.sql`with ${rateHit(ctx, bucket, clientIp)} select hits from rate_hit`;
  refuseOverLimit(ctx, bucket, row!.hits as number);
}
