/**
 * Webhook signatures (SPEC 6.2): X-Service-Signature is the lower-case hex
 * HMAC-SHA256, keyed by the job's or step's secret, of `<timestamp>.<raw body>`,
 * where the timestamp is the Unix seconds sent in X-Service-Timestamp. Signing
 * the timestamp with the body lets receivers refuse replays of old deliveries.
 */
import { createHmac } from 'node:crypto';

export interface SignatureHeaders {
  'X-Service-Timestamp': string;
  'X-Service-Signature': string;
}

export function signPayload(secret: string, timestamp: number, rawBody: string | Buffer): SignatureHeaders {
  const signature = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
  return { 'X-Service-Timestamp': String(timestamp), 'X-Service-Signature': signature };
}
