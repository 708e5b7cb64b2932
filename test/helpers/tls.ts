import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A self-signed certificate for 127.0.0.1 (and `subjectAltName` names), made by
 * openssl in `dir` as cert.pem and key.pem: for HTTPS receivers in tests.
 */
export function selfSignedCert(
  dir: string,
  subjectAltName = 'IP:127.0.0.1',
): { certPath: string; cert: Buffer; key: Buffer } {
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
      '-addext',
      `subjectAltName=${subjectAltName}`,
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ]),
    { stdio: 'ignore' },
  );
  return { certPath, cert: readFileSync(certPath), key: readFileSync(keyPath) };
}
