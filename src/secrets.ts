/**
 * Secrets at rest and tokens in flight. Tokens and keys are stored as SHA-256
 * hashes (they are long random strings, so a fast hash is enough; passwords use
 * argon2id in passwords.ts); values the platform must read back (private JWKs,
 * the owner role's password, API keys shown to owners) are encrypted with the
 * master key using AES-256-GCM.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fail } from './errors.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A random string over [a-zA-Z0-9] (or a custom alphabet) without modulo bias. */
export function randomToken(length = 40, alphabet = ALPHABET): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 256 - (256 % alphabet.length)) out += alphabet[b % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const x = Buffer.isBuffer(a) ? a : Buffer.from(a);
  const y = Buffer.isBuffer(b) ? b : Buffer.from(b);
  // Compare digests so unequal lengths take the same time as equal ones.
  return (
    timingSafeEqual(createHash('sha256').update(x).digest(), createHash('sha256').update(y).digest()) &&
    x.length === y.length
  );
}

export class MasterKey {
  private constructor(private readonly key: Buffer) {}

  /** HEARTH_MASTER_KEY (base64 of 32 bytes), else <dataDir>/master.key, created with mode 0600. */
  static load(configured: string | null, dataDir: string): MasterKey {
    if (configured) {
      const key = Buffer.from(configured, 'base64');
      if (key.length !== 32) {
        throw fail('invalid_config', 'HEARTH_MASTER_KEY must be 32 bytes encoded as base64 (openssl rand -base64 32).');
      }
      return new MasterKey(key);
    }
    const file = path.join(dataDir, 'master.key');
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    }
    chmodSync(file, 0o600);
    return MasterKey.load(readFileSync(file, 'utf8').trim(), dataDir);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unknown sealed value format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}
