/**
 * Who is calling the data plane (SPEC 5). The key may come in `apikey` or in
 * `Authorization: Bearer`; a user access token (an ES256 JWT of this project,
 * verified offline by its kid) in `Authorization` decides the role. The
 * publishable key is role anon, the secret key role service_role. A key or
 * token of another project, a bad signature or an expired token is 401.
 */
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../context.ts';
import type { Caller, DbRole } from '../db/with-role.ts';
import { HearthError } from '../errors.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';

export interface DataPlaneAuth {
  caller: Caller;
  /** The API key that came with the request, if any. */
  keyType: 'publishable' | 'secret' | null;
  /** The verified claims of a user access token, if one came. */
  user: JWTPayload | null;
}

const ROLES: readonly DbRole[] = ['anon', 'authenticated', 'service_role'];
// Three dot-separated parts, the signature possibly empty (alg "none"): a JWT, refused as bad_jwt rather than as an unknown key.
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export const anonymousCaller = (): Caller => ({ role: 'anon', claims: { role: 'anon' } });

function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new HearthError(401, 'bad_authorization', 'The Authorization header must be "Bearer <key or access token>".');
  return m[1]!;
}

/**
 * Verified tokens, so a client sending the same access token on every request
 * pays the ES256 verification once (as PostgREST's JWT cache does). Keyed by
 * project and token; expiry is still checked on every use.
 */
const verified = new Map<string, JWTPayload>();
const VERIFIED_MAX = 10_000;

export async function verifyAccessToken(project: ProjectRuntime, token: string, clock: Clock): Promise<JWTPayload> {
  const cacheKey = `${project.id}:${token}`;
  const hit = verified.get(cacheKey);
  if (hit && typeof hit.exp === 'number' && hit.exp * 1000 > clock.now().getTime()) return hit;
  const payload = await verifySignature(project, token, clock);
  if (verified.size >= VERIFIED_MAX) verified.clear();
  verified.set(cacheKey, payload);
  return payload;
}

async function verifySignature(project: ProjectRuntime, token: string, clock: Clock): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(
      token,
      (header) => {
        const key = header.kid ? project.verifyKeys.get(header.kid) : undefined;
        if (!key) throw new HearthError(401, 'bad_jwt', 'The access token was not signed by this project (unknown kid).');
        return key;
      },
      { algorithms: ['ES256'], currentDate: clock.now() },
    );
    return payload;
  } catch (err) {
    if (err instanceof HearthError) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new HearthError(401, 'bad_jwt', 'The access token has expired; refresh the session.');
    throw new HearthError(401, 'bad_jwt', 'The access token is invalid (bad signature or malformed).');
  }
}

export async function authenticate(
  registry: ProjectRegistry,
  project: ProjectRuntime,
  headers: { apikey?: string | string[]; authorization?: string },
  clock: Clock,
): Promise<DataPlaneAuth | null> {
  const apikey = Array.isArray(headers.apikey) ? headers.apikey[0] : headers.apikey;
  const token = bearer(headers.authorization);
  let keyType: DataPlaneAuth['keyType'] = null;

  for (const candidate of [apikey, token && !JWT_SHAPE.test(token) ? token : undefined]) {
    if (!candidate) continue;
    const key = await registry.resolveKey(candidate);
    if (!key || key.projectId !== project.id) {
      throw new HearthError(401, 'invalid_api_key', 'Invalid API key: it is not a key of this project.');
    }
    keyType = keyType === 'secret' ? 'secret' : key.type;
  }
  if (token && JWT_SHAPE.test(token)) {
    const claims = await verifyAccessToken(project, token, clock);
    const role = claims.role as DbRole;
    if (!ROLES.includes(role)) throw new HearthError(401, 'bad_jwt', 'The access token carries an unknown role.');
    return { caller: { role, claims: claims as Record<string, unknown> }, keyType, user: claims };
  }
  if (!keyType) return null;
  return keyAuth(project, keyType);
}

/**
 * A key's caller is the same on every request of its project: one frozen
 * object per project and key type, so its claims are serialised once
 * (with-role.ts caches the JSON by claims object) instead of per request.
 */
const keyAuths = new WeakMap<ProjectRuntime, Partial<Record<'publishable' | 'secret', DataPlaneAuth>>>();

function keyAuth(project: ProjectRuntime, keyType: 'publishable' | 'secret'): DataPlaneAuth {
  let byType = keyAuths.get(project);
  if (!byType) keyAuths.set(project, (byType = {}));
  let auth = byType[keyType];
  if (!auth) {
    const role: DbRole = keyType === 'secret' ? 'service_role' : 'anon';
    const claims = Object.freeze({ role, iss: 'hearth', ref: project.ref });
    auth = byType[keyType] = Object.freeze({ caller: Object.freeze({ role, claims }), keyType, user: null });
  }
  return auth;
}
