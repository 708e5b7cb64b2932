/**
 * Per-client-IP rate limits as token buckets (src/db/rate-limit.ts): a
 * client may spend the configured number at once, and the allowance refills
 * at that number per refill period. GoTrue's fixed windows lock a steady
 * client out for up to an hour; these do not.
 *
 * - config/auth rate_limit_signups, rate_limit_anonymous_users,
 *   rate_limit_email_sent and rate_limit_passkey (passkey sign-in options:
 *   public, and each stores a challenge) refill every 10 s;
 * - rate_limit_mfa (POST /factors/{id}/challenge and /verify, each its own
 *   bucket) refills every minute, GoTrue's MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY
 *   pace, since each verify is a guess at a 6-digit code. Verify is also
 *   limited per factor, so an attacker holding a stolen aal1 session gains
 *   nothing by spreading guesses over many addresses.
 *
 * Rows live in the project database (auth.rate_buckets) so every Hearth
 * process shares them; the key column (client_ip) holds the factor id for
 * the per-factor bucket. The client IP is Fastify's request.ip, which
 * honours X-Forwarded-For only from HEARTH_TRUSTED_PROXIES. A limit of 0
 * refuses every request of that kind.
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

export type Bucket =
  | 'signups'
  | 'anonymous_users'
  | 'email_sent'
  | 'passkey_sign_in'
  | 'mfa_challenge'
  | 'mfa_verify'
  | 'mfa_factor_verify';

/** The refill period of the sign-up, guest and mail limits. */
export const REFILL_MS = 10_000;
/** The refill period of the MFA limits: GoTrue's limit is per minute. */
const MFA_REFILL_MS = 60_000;

const TABLE: BucketTable = { name: 'auth.rate_buckets', keyColumn: 'client_ip' };

interface BucketRule {
  /** The config/auth field holding the limit. */
  field: string;
  /** The whole allowance refills in this time. */
  refillMs: number;
  code: 'over_request_rate_limit' | 'over_email_send_rate_limit';
  /** Whose allowance ran out, for the message. */
  whose: string;
}

const ADDRESS = 'from your address';
const RULES: Record<Bucket, BucketRule> = {
  signups: { field: 'rate_limit_signups', refillMs: REFILL_MS, code: 'over_request_rate_limit', whose: ADDRESS },
  anonymous_users: {
    field: 'rate_limit_anonymous_users',
    refillMs: REFILL_MS,
    code: 'over_request_rate_limit',
    whose: ADDRESS,
  },
  email_sent: {
    field: 'rate_limit_email_sent',
    refillMs: REFILL_MS,
    code: 'over_email_send_rate_limit',
    whose: ADDRESS,
  },
  passkey_sign_in: {
    field: 'rate_limit_passkey',
    refillMs: REFILL_MS,
    code: 'over_request_rate_limit',
    whose: ADDRESS,
  },
  mfa_challenge: { field: 'rate_limit_mfa', refillMs: MFA_REFILL_MS, code: 'over_request_rate_limit', whose: ADDRESS },
  mfa_verify: { field: 'rate_limit_mfa', refillMs: MFA_REFILL_MS, code: 'over_request_rate_limit', whose: ADDRESS },
  mfa_factor_verify: {
    field: 'rate_limit_mfa',
    refillMs: MFA_REFILL_MS,
    code: 'over_request_rate_limit',
    whose: 'for this factor',
  },
};

const tokenBucket = (ctx: AuthContext, bucket: Bucket, key: string): TokenBucket => ({
  table: TABLE,
  bucket,
  key,
  limit: Number(ctx.settings[RULES[bucket].field]),
  refillMs: RULES[bucket].refillMs,
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
  const rule = RULES[bucket];
  const pace = paceOf(tokenBucket(ctx, bucket, ''));
  throw new RateLimited(
    rule.code,
    `Too many requests of this kind ${rule.whose} (${rule.field}: ${pace}); try again in ${retry} s.`,
    retry,
  );
}

/** Spends one request of the bucket for `key` (the client IP, or the factor id of mfa_factor_verify); 429 over the limit. */
export async function spendRateLimit(ctx: AuthContext, bucket: Bucket, key: string): Promise<void> {
  const { admitted, waitMs } = await takeToken(ctx.project.sql, tokenBucket(ctx, bucket, key), now(ctx));
  refuseOverLimit(ctx, bucket, admitted, waitMs);
}
