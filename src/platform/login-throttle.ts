/**
 * The sign-in throttle of POST /v1/login: two token buckets (the same GCRA
 * code as the auth area's limits, src/db/rate-limit.ts), both spent by
 * every attempt before the password is checked, so concurrent guesses cannot
 * exceed them either:
 * - per client address (an IPv6 client's /64): LOGIN_PER_ADDRESS attempts at
 *   once for any accounts, refilling at that many per REFILL_MS;
 * - per account and client address: LOGIN_PER_ACCOUNT attempts at once at
 *   one e-mail address (lower-cased, known or not, so the throttle tells
 *   nothing about which accounts exist), refilling at that many per REFILL_MS.
 * A right password gives both tokens back: people who sign in are never
 * throttled by their own sign-ins. The account bucket is keyed by address
 * too, so someone hammering an account from elsewhere never locks its owner
 * out (docs/management-api.md says why).
 */
import ipaddr from 'ipaddr.js';
import type { Platform } from '../context.ts';
import { sha256 } from '../secrets.ts';
import {
  paceOf,
  RateLimited,
  retryAfterSeconds,
  returnToken,
  takeToken,
  type BucketTable,
  type TokenBucket,
} from '../db/rate-limit.ts';

export const LOGIN_PER_ADDRESS = 20;
export const LOGIN_PER_ACCOUNT = 5;
export const REFILL_MS = 5 * 60_000;

const TABLE: BucketTable = { name: 'platform.rate_buckets', keyColumn: 'subject' };

/**
 * The client as the throttle counts it: an IPv4 address (an IPv4-mapped IPv6
 * one too), or an IPv6 address's /64, the block one subscriber is usually
 * given, so hopping between its 2^64 addresses buys no more attempts.
 */
export function clientKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

function buckets(email: string, ip: string): TokenBucket[] {
  const clientIp = clientKey(ip);
  // The e-mail as a hash: a fixed size whatever was sent, and nothing a text column refuses.
  return [
    { table: TABLE, bucket: 'login_address', key: clientIp, limit: LOGIN_PER_ADDRESS, refillMs: REFILL_MS },
    {
      table: TABLE,
      bucket: 'login_account',
      key: `${sha256(email.trim().toLowerCase()).toString('hex')} ${clientIp}`,
      limit: LOGIN_PER_ACCOUNT,
      refillMs: REFILL_MS,
    },
  ];
}

/**
 * Runs one sign-in attempt under the throttle: 429 over_request_rate_limit
 * with Retry-After before `attempt` runs when either bucket is spent; the
 * tokens come back when it succeeds.
 */
export async function throttledLogin<T>(
  p: Platform,
  email: string,
  clientIp: string,
  attempt: () => Promise<T>,
): Promise<T> {
  const sql = p.dbs.control;
  const spent: TokenBucket[] = [];
  for (const b of buckets(email, clientIp)) {
    const { admitted, waitMs } = await takeToken(sql, b, p.clock.now());
    // The address first: an attempt it refuses spends nothing of the account's allowance.
    if (!admitted) {
      const retry = retryAfterSeconds(waitMs);
      const what = b.bucket === 'login_account' ? 'for this account from your address' : 'from your address';
      throw new RateLimited(
        'over_request_rate_limit',
        `Too many sign-in attempts ${what} (${paceOf(b)}); try again in ${retry} s.`,
        retry,
      );
    }
    spent.push(b);
  }
  const result = await attempt();
  for (const b of spent) await returnToken(sql, b);
  return result;
}
