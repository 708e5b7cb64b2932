/**
 * Password hashing with argon2id at OWASP's minimum profile (m=19 MiB, t=2,
 * p=1). verifyPassword against no stored hash still spends one verification,
 * so a sign-in for an unknown e-mail takes as long as a wrong password.
 */
import { lazy } from '../lazy.ts';

// The native addon is loaded at the first password hashed or checked, not at
// start (a restarted server that nobody signs in to never maps it).
const argon2 = lazy(async () => (await import('argon2')).default);
let dummyHash: Promise<string> | null = null;

export async function hashPassword(password: string): Promise<string> {
  const a = await argon2();
  return a.hash(password, { type: a.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  const a = await argon2();
  if (!hash) {
    dummyHash ??= hashPassword('hearth-timing-equaliser');
    await a.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return a.verify(hash, password).catch(() => false);
}
