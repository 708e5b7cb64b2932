/**
 * Access tokens: ES256 JWTs signed with the project's key, kid in the header,
 * living one hour (SPEC 2.1, 5).
 */
import { SignJWT, type JWTPayload } from 'jose';
import type { Clock } from '../context.ts';
import type { ProjectRuntime } from '../platform/registry.ts';

export const ACCESS_TOKEN_SECONDS = 3600;

export async function signAccessToken(project: ProjectRuntime, claims: JWTPayload, clock: Clock, issuer: string): Promise<string> {
  const { kid, key } = await project.signingKey();
  const now = Math.floor(clock.now().getTime() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + ACCESS_TOKEN_SECONDS)
    .setIssuer(issuer)
    .sign(key);
}
