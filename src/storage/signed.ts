/**
 * Signed URL tokens (SPEC 4.2, 3.1): ES256 JWTs signed with the project's key,
 * bound to one object (`url` = bucket/name) and to one use (`typ`). They carry
 * no `role`, so the data plane never takes one for an access token, and an
 * access token (no `typ`) is never taken for one of these.
 * - download: valid expiresIn seconds;
 * - upload: valid 2 hours, insert only, records the minting user as owner.
 */
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { newCache } from '../cache.ts';
import type { Clock } from '../context.ts';
import { fail } from '../errors.ts';
import type { ProjectRuntime } from '../platform/registry.ts';

export const UPLOAD_TOKEN_SECONDS = 2 * 3600;
/** Ten years, as the invalid_expires_in message says (src/error-catalogue.ts). */
const MAX_EXPIRES_IN = 10 * 365 * 24 * 3600;

type Kind = 'storage.download' | 'storage.upload';

export interface SignedClaims {
  url: string;
  typ: Kind;
  owner?: string | null;
}

export function checkExpiresIn(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_EXPIRES_IN) {
    throw fail('invalid_expires_in');
  }
  return n as number;
}

export async function signToken(
  project: ProjectRuntime,
  clock: Clock,
  claims: SignedClaims,
  seconds: number,
): Promise<string> {
  const { kid, key } = await project.signingKey();
  const now = Math.floor(clock.now().getTime() / 1000);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + seconds)
    .sign(key);
}

const invalid = () => fail('invalid_signature');

/**
 * Verified signed-URL tokens per project runtime (a key rotation makes a new
 * one), so a URL fetched again and again pays the ES256 check once. An entry
 * leaves when its token expires, and a hit must still be unexpired now:
 * jose's rule, exp after the current second.
 */
const VERIFIED_MAX = 2000;

async function verifiedPayload(project: ProjectRuntime, clock: Clock, token: string): Promise<Record<string, unknown>> {
  const cache = project.cached('storage:signed-urls', () =>
    newCache<string, Record<string, unknown> & { exp: number }>({ max: VERIFIED_MAX, clock }),
  );
  const hit = cache.get(token);
  if (hit && hit.exp > Math.floor(clock.now().getTime() / 1000)) return hit;
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(
      token,
      (header) => {
        const key = header.kid ? project.verifyKeys.get(header.kid) : undefined;
        if (!key) throw invalid();
        return key;
      },
      { algorithms: ['ES256'], currentDate: clock.now(), requiredClaims: ['exp'] },
    ));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw fail('signed_url_expired');
    throw invalid();
  }
  const exp = (payload as { exp: number }).exp;
  cache.set(token, payload as Record<string, unknown> & { exp: number }, {
    ttl: Math.max(1, exp * 1000 - clock.now().getTime()),
  });
  return payload;
}

/** The claims of a token minted for exactly this object and use; 400 otherwise. */
export async function verifyToken(
  project: ProjectRuntime,
  clock: Clock,
  token: unknown,
  typ: Kind,
  bucket: string,
  name: string,
): Promise<SignedClaims> {
  if (typeof token !== 'string' || token === '') {
    throw fail('missing_token');
  }
  const payload = await verifiedPayload(project, clock, token);
  if (payload.typ !== typ || payload.url !== `${bucket}/${name}`) throw invalid();
  return payload as unknown as SignedClaims;
}
