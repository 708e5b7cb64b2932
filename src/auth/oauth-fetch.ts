/**
 * The fetch openid-client uses to reach social providers (discovery, token,
 * JWKS, userinfo). Provider URLs come from project settings, so they get the
 * same guard as every outbound request (src/outbound/address.ts): each
 * address a host name resolves to is checked inside the socket's DNS lookup,
 * i.e. at connect time, and literal IPs before connecting; loopback and
 * private ranges are refused unless HEARTH_OUTBOUND_ALLOW re-opens them.
 * Redirects are not followed and responses are capped at 1 MiB.
 */
import http from 'node:http';
import https from 'node:https';
import { fail } from '../errors.ts';
import { guardedLookup, literalRefusal, outboundAdvice, parseAllowList } from '../outbound/address.ts';

const MAX_BYTES = 1024 * 1024;
const TIMEOUT_MS = 10_000;

export type GuardedFetch = (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; signal?: AbortSignal },
) => Promise<Response>;

const refused = (message: string) => fail('provider_unreachable', message);

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new Error('unsupported request body type');
}

export function guardedFetch(allowEntries: string[]): GuardedFetch {
  const allow = parseAllowList(allowEntries);
  const lookup = guardedLookup(allow, (hostname, address, reason) =>
    refused(`${hostname} resolves to ${address}, ${reason}; ${outboundAdvice(address)}.`),
  );
  const agents = { 'http:': new http.Agent({ lookup }), 'https:': new https.Agent({ lookup }) };
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      const agent = agents[target.protocol as 'http:' | 'https:'];
      if (!agent) return reject(refused(`Only http(s) provider URLs can be called, not ${target.protocol}`));
      const { host, reason } = literalRefusal(target, allow);
      if (reason) return reject(refused(`${host} is ${reason}; ${outboundAdvice(host)}.`));
      const body = bodyOf(init.body);
      const req = (target.protocol === 'https:' ? https : http).request(target, {
        method: init.method ?? 'GET',
        agent,
        headers: {
          ...init.headers,
          ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
        },
        signal: init.signal,
        timeout: TIMEOUT_MS,
      });
      req.on('timeout', () => req.destroy(refused(`${target.host} did not answer within ${TIMEOUT_MS / 1000} s.`)));
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BYTES) req.destroy(refused(`${target.host} answered more than 1 MiB.`));
          else chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            for (const value of Array.isArray(v) ? v : v === undefined ? [] : [v]) headers.append(k, value);
          }
          const status = res.statusCode ?? 502;
          const noBody = status === 204 || status === 304 || (init.method ?? 'GET') === 'HEAD';
          resolve(
            new Response(noBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers }),
          );
        });
      });
      req.end(body);
    });
}
