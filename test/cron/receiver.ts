/**
 * A webhook receiver for cron tests: HTTPS with a self-signed certificate made
 * by openssl for this run. It records every request; /ok answers 200, /fail
 * answers 500.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { selfSignedCert } from '../helpers/tls.ts';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface Receiver {
  /** https://127.0.0.1:<port> */
  base: string;
  /** The self-signed certificate, to trust as the only CA. */
  cert: Buffer;
  received: Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hearth-cron-'));
  const { cert, key } = selfSignedCert(dir);
  rmSync(dir, { recursive: true, force: true });

  const received: Received[] = [];
  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      if (req.url === '/ok') res.end('thanks');
      else res.writeHead(500).end('broken');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cert,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
