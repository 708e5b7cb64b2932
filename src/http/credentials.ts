/**
 * Who is calling the data plane (SPEC 5). The key may come in `apikey` or in
 * `Authorization: Bearer`; a user access token (an ES256 JWT of this project,
 * verified offline by its kid) in `Authorization` decides the role. The
 * publishable key is role anon, the secret key role service_role. A key or
 * token of another project, a bad signature, an expired token or one without
 * `exp` is 401.
 */
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { newCache, type Cache } from '../cache.ts';
import type { Clock } from '../context.ts';
import type { Caller, DbRole } from '../db/with-role.ts';
import { fail, HearthError } from '../errors.ts';
import type { ProjectRegistry, ProjectRuntime, ResolvedKey } from '../platform/registry.ts';

/**
 * GoTrue's words for a token it cannot take, which apps and supabase-js's own
 * tests compare: "invalid JWT: unable to parse or verify signature, " and
 * what is wrong (golang-jwt's phrases where GoTrue has one).
 */
const invalidJwt = (why: string) => fail('bad_jwt', `invalid JWT: unable to parse or verify signature, ${why}`);
const MALFORMED = 'token is malformed: token contains an invalid number of segments';

/** An expired access token: the data plane words it as PostgREST does ("JWT expired"), so it is told apart by its type. */
export class TokenExpired extends HearthError<'bad_jwt'> {
  constructor() {
    super('bad_jwt', 'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired');
  }
}

export interface DataPlaneAuth {
  caller: Caller;
  /** The API key that came with the request, if any. */
  keyType: 'publishable' | 'secret' | null;
  /** The verified claims of a user access token, if one came. */
  user: JWTPayload | null;
}

const ROLES: readonly DbRole[] = ['anon', 'authenticated', 'service_role'];
// A Bearer of three dot-separated parts, the signature possibly empty (alg "none"): a JWT, refused as
// bad_jwt rather than as an unknown key. Matched with the header in one pass: it is on most requests.
const BEARER_JWT = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)\s*$/i;

const API_KEY_SHAPE = /^sb_(?:publishable|secret)_/;

export const anonymousCaller = (): Caller => ({ role: 'anon', claims: { role: 'anon' } });

function bearer(header: string): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw fail('bad_authorization');
  return m[1]!;
}

/**
 * Verified tokens, per project, so a client sending the same access token on
 * every request pays the ES256 verification once (as PostgREST's JWT cache
 * does). Keyed by the signature, which is short to hash (the whole token is
 * hundreds of characters); a hit must be the same token, an entry leaves when
 * the token expires, and expiry is still checked on every use.
 */
const VERIFIED_MAX = 2000;
type Verified = Cache<string, { token: string; claims: JWTPayload }>;
const verifiedOf = (project: ProjectRuntime, clock: Clock): Verified =>
  project.cached('http:verified-tokens', () => newCache({ max: VERIFIED_MAX, clock }));

export async function verifyAccessToken(project: ProjectRuntime, token: string, clock: Clock): Promise<JWTPayload> {
  return claimsOf(project, token, clock);
}

/** The token's claims: synchronously when this token was verified before and has not expired since. */
function claimsOf(project: ProjectRuntime, token: string, clock: Clock): JWTPayload | Promise<JWTPayload> {
  const signature = token.slice(token.lastIndexOf('.') + 1);
  const verified = verifiedOf(project, clock);
  const hit = verified.get(signature);
  if (
    hit &&
    hit.token === token &&
    typeof hit.claims.exp === 'number' &&
    hit.claims.exp * 1000 > clock.now().getTime()
  ) {
    return hit.claims;
  }
  return verifySignature(project, token, clock).then((claims) => {
    verified.set(
      signature,
      { token, claims },
      { ttl: Math.max(1, (claims.exp as number) * 1000 - clock.now().getTime()) },
    );
    return claims;
  });
}

async function verifySignature(project: ProjectRuntime, token: string, clock: Clock): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(
      token,
      (header) => {
        const key = header.kid ? project.verifyKeys.get(header.kid) : undefined;
        if (!key) throw invalidJwt('token is unverifiable: it was not signed by this project (unknown kid)');
        return key;
      },
      { algorithms: ['ES256'], currentDate: clock.now(), requiredClaims: ['exp'] },
    );
    return payload;
  } catch (err) {
    if (err instanceof HearthError) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new TokenExpired();
    if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'exp') {
      // A token without exp would never expire: only tokens this project issued with a lifetime count.
      throw invalidJwt('token has invalid claims: token is missing required claim: exp claim is required');
    }
    if (err instanceof joseErrors.JOSEAlgNotAllowed)
      throw invalidJwt('token signature is invalid: signing method is invalid');
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw invalidJwt('token signature is invalid');
    throw invalidJwt('token is malformed: it could not be decoded');
  }
}

/**
 * The caller, or null when the request carries no credentials. Synchronous
 * (no promise, no microtask) when nothing needs a lookup: no credentials, or
 * only a user token verified before; API keys are resolved by the registry.
 */
export function authenticate(
  registry: ProjectRegistry,
  project: ProjectRuntime,
  headers: { apikey?: string | string[]; authorization?: string },
  clock: Clock,
): DataPlaneAuth | null | Promise<DataPlaneAuth | null> {
  const apikey = Array.isArray(headers.apikey) ? headers.apikey[0] : headers.apikey;
  const authorization = headers.authorization;
  const jwt = authorization ? (BEARER_JWT.exec(authorization)?.[1] ?? null) : null;
  // A Bearer that is not a JWT is a key too; beside another value in apikey, one that is not shaped as
  // a key is a broken access token, refused in GoTrue's words once the apikey itself is known good.
  const bearerKey = authorization && !jwt ? bearer(authorization) : null;
  if (apikey && bearerKey && bearerKey !== apikey && !API_KEY_SHAPE.test(bearerKey))
    return malformedBesideKey(registry, project, apikey);
  if (!apikey && !bearerKey) return jwt ? userAuth(project, jwt, null, clock) : null;
  // Keys seen lately are answered from the registry's cache without a promise (most requests).
  // (No closures here: this runs on every request.)
  const knownApikey = apikey ? registry.knownKey(apikey) : null;
  const knownBearer = bearerKey ? registry.knownKey(bearerKey) : null;
  if (knownApikey !== undefined && knownBearer !== undefined)
    return withKey(project, jwt, strongest(project, knownApikey, knownBearer, apikey, bearerKey), clock);
  return Promise.all([
    apikey ? registry.resolveKey(apikey) : null,
    bearerKey ? registry.resolveKey(bearerKey) : null,
  ]).then(([a, b]) => withKey(project, jwt, strongest(project, a, b, apikey, bearerKey), clock));
}

/** 401 invalid_api_key for a bad apikey (as Supabase's gateway checks it first), else the malformed token. */
function malformedBesideKey(registry: ProjectRegistry, project: ProjectRuntime, apikey: string): Promise<never> {
  const known = registry.knownKey(apikey);
  return (known !== undefined ? Promise.resolve(known) : registry.resolveKey(apikey)).then((key) => {
    checkedKey(project, key);
    throw invalidJwt(MALFORMED);
  });
}

function withKey(
  project: ProjectRuntime,
  jwt: string | null,
  keyType: 'publishable' | 'secret',
  clock: Clock,
): DataPlaneAuth | Promise<DataPlaneAuth> {
  return jwt ? userAuth(project, jwt, keyType, clock) : keyAuth(project, keyType);
}

function checkedKey(project: ProjectRuntime, key: ResolvedKey | null): ResolvedKey {
  if (!key || key.projectId !== project.id) throw fail('invalid_api_key');
  return key;
}

/** The stronger type of the keys sent (secret over publishable); each sent key must be a key of this project. */
function strongest(
  project: ProjectRuntime,
  fromApikey: ResolvedKey | null,
  fromBearer: ResolvedKey | null,
  apikey: unknown,
  bearerKey: unknown,
): 'publishable' | 'secret' {
  const a = apikey ? checkedKey(project, fromApikey).type : null;
  const b = bearerKey ? checkedKey(project, fromBearer).type : null;
  return a === 'secret' || b === 'secret' ? 'secret' : (a ?? b)!;
}

function userAuth(
  project: ProjectRuntime,
  token: string,
  keyType: DataPlaneAuth['keyType'],
  clock: Clock,
): DataPlaneAuth | Promise<DataPlaneAuth> {
  const claims = claimsOf(project, token, clock);
  return claims instanceof Promise ? claims.then((c) => userCaller(c, keyType)) : userCaller(claims, keyType);
}

function userCaller(claims: JWTPayload, keyType: DataPlaneAuth['keyType']): DataPlaneAuth {
  const role = claims.role as DbRole;
  if (!ROLES.includes(role)) throw invalidJwt('token has invalid claims: it carries an unknown role');
  return { caller: { role, claims: claims as Record<string, unknown> }, keyType, user: claims };
}

/**
 * A key's caller is the same on every request of its project: one frozen
 * object per project and key type, so its claims are serialised once
 * (with-role.ts caches the JSON by claims object) instead of per request.
 */
function keyAuth(project: ProjectRuntime, keyType: 'publishable' | 'secret'): DataPlaneAuth {
  const byType = project.cached<Partial<Record<'publishable' | 'secret', DataPlaneAuth>>>('http:key-auths', () => ({}));
  let auth = byType[keyType];
  if (!auth) {
    const role: DbRole = keyType === 'secret' ? 'service_role' : 'anon';
    const claims = Object.freeze({ role, iss: 'hearth', ref: project.ref });
    auth = byType[keyType] = Object.freeze({ caller: Object.freeze({ role, claims }), keyType, user: null });
  }
  return auth;
}
