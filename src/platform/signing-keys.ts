/**
 * Project signing keys: ES256 (P-256) key pairs whose kid is the RFC 7638
 * thumbprint of the public JWK. The private JWK is stored sealed with the
 * master key.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { MasterKey } from '../secrets.ts';

export interface PublicJwk extends JWK {
  kty: 'EC';
  crv: 'P-256';
  alg: 'ES256';
  use: 'sig';
  kid: string;
  x: string;
  y: string;
}

export async function newSigningKey(
  master: MasterKey,
): Promise<{ kid: string; publicJwk: PublicJwk; privateSealed: string }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const pub = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(pub, 'sha256');
  const publicJwk = { kty: 'EC', crv: 'P-256', x: pub.x!, y: pub.y!, alg: 'ES256', use: 'sig', kid } as PublicJwk;
  const priv = { ...(await exportJWK(privateKey)), alg: 'ES256', kid };
  return { kid, publicJwk, privateSealed: master.encrypt(JSON.stringify(priv)) };
}

export async function importPrivateKey(master: MasterKey, sealed: string) {
  return importJWK(JSON.parse(master.decrypt(sealed)) as JWK, 'ES256');
}

export const importPublicKey = (jwk: PublicJwk) => importJWK(jwk, 'ES256');
