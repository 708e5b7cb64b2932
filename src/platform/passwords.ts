/**
 * Password hashing with argon2id at OWASP's minimum profile (m=19 MiB, t=2,
 * p=1). verifyPassword against no stored hash still spends one verification,
 * so a sign-in for an unknown e-mail takes as long as a wrong password.
 */
import argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
let dummyHash: Promise<string> | null = null;

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, OPTIONS);

export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('hearth-timing-equaliser');
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}
