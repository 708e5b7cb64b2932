/**
 * Per-client-IP rate limits (config/auth rate_limit_signups,
 * rate_limit_anonymous_users, rate_limit_email_sent) as token buckets
 * (src/db/rate-limit.ts): a client may spend the configured number at
 * once, and the allowance refills at that number per REFILL_MS. GoTrue's
 * fixed windows lock a steady client out for up to an hour; these do not.
 *
 * Rows live in the project database (auth.rate_buckets) so every Hearth
 * process shares them. The client IP is Fastify's request.ip, which honours
 * X-Forwarded-For only from HEARTH_TRUSTED_PROXIES. A limit of 0 refuses
 * every request of that kind.
 */
import {
  paceOf,
  RateLimited,
  rateHit as bucketHit,
  retryAfterSeconds,
  takeToken,
  type BucketTable,
  type TokenBucket,
} from '../db/rate-limit.ts';
import { now, type AuthContext } from './context.ts';

export type Bucket = 'signups' | 'anonymous_users' | 'email_sent';

/** The whole allowance refills in this time. */
export const REFILL_MS = 10_000;

const TABLE: BucketTable = { name: 'auth.rate_buckets', keyColumn: 'client_ip' };

const LIMIT_FIELD: Record<Bucket, string> = {
  signups: 'rate_limit_signups',
  anonymous_users: 'rate_limit_anonymous_users',
  email_sent: 'rate_limit_email_sent',
};

const CODE: Record<Bucket, 'over_request_rate_limit' | 'over_email_send_rate_limit'> = {
  signups: 'over_request_rate_limit',
  anonymous_users: 'over_request_rate_limit',
  email_sent: 'over_email_send_rate_limit',
};

const tokenBucket = (ctx: AuthContext, bucket: Bucket, clientIp: string): TokenBucket => ({
  table: TABLE,
  bucket,
  key: clientIp,
  limit: Number(ctx.settings[LIMIT_FIELD[bucket]]),
  refillMs: REFILL_MS,
});

/**
 * One request of a bucket as a statement fragment ending in
 * `rate_hit(admitted, wait_ms)`: put it in front of the statement the limit
 * guards, then call refuseOverLimit with both values.
 */
export function rateHit(ctx: AuthContext, bucket: Bucket, clientIp: string) {
  return bucketHit(ctx.project.sql, tokenBucket(ctx, bucket, clientIp), now(ctx));
}

/** 429 with Retry-After when the request was not admitted. */
export function refuseOverLimit(ctx: AuthContext, bucket: Bucket, admitted: boolean, waitMs: number): void {
  if (admitted) return;
  const retry = retryAfterSeconds(waitMs);
  const pace = paceOf(tokenBucket(ctx, bucket, ''));
  throw new RateLimited(
    CODE[bucket],
    `Too many requests of this kind from your address (${LIMIT_FIELD[bucket]}: ${pace}); try again in ${retry} s.`,
    retry,
  );
}

export async function spendRateLimit(ctx: AuthContext, bucket: Bucket, clientIp: string): Promise<void> {
  const { admitted, waitMs } = await takeToken(ctx.project.sql, tokenBucket(ctx, bucket, clientIp), now(ctx));
  refuseOverLimit(ctx, bucket, admitted, waitMs);
}
