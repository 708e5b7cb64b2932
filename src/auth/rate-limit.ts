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

export async function spendRateLimit(ctx: AuthContext, bucket: Bucket, clientIp: string): Promise<void> {
  const limit = Number(ctx.settings[LIMIT_FIELD[bucket]]);
  const t = now(ctx).getTime();
  const window = new Date(t - (t % HOUR));
  const [row] = await ctx.project.sql`
    with old as (
      delete from auth.rate_limits where window_start < ${new Date(window.getTime() - HOUR)}
    )
    insert into auth.rate_limits (bucket, client_ip, window_start, hits)
    values (${bucket}, ${clientIp}, ${window}, 1)
    on conflict (bucket, client_ip, window_start) do update set hits = auth.rate_limits.hits + 1
    returning hits`;
  if ((row!.hits as number) > limit) {
    const retry = Math.ceil((window.getTime() + HOUR - t) / 1000);
    throw new HearthError(429, CODE[bucket], `Too many requests of this kind from your address (limit ${limit} per hour, ${LIMIT_FIELD[bucket]}); try again in ${retry} s.`);
  }
}
