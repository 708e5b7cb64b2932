/**
 * The one HTTP client for everything that leaves the platform (cron webhooks,
 * workflow webhook steps, the log drain). A URL given by a project must not
 * become a way into the platform's own network, so:
 * - every address a host name resolves to is checked inside the agent's DNS
 *   lookup, i.e. at connect time: a name that answered a public address when a
 *   job was created and answers 127.0.0.1 now (DNS rebinding) is refused, and
 *   the socket connects to exactly the address that was checked;
 * - a literal IP in the URL (which never reaches the lookup) is checked first;
 * - redirects are not followed: a 3xx is a non-delivery;
 * - connect time, total time and the response size are bounded.
 * Failures are results, never exceptions: a webhook is fire-and-forget and the
 * caller records the outcome (SPEC 6.2).
 */
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalRefusal, parseAllowList } from './address.ts';
import { signPayload } from './sign.ts';

export interface OutboundOptions {
  /** CIDRs re-opened for development and tests (config.outboundAllow). */
  allow?: string[];
  /** Whole request: connect, TLS, send, response. */
  timeoutMs?: number;
  connectTimeoutMs?: number;
  /** Response bytes kept; the rest is not read. */
  maxResponseBytes?: number;
  /** CA certificates to trust instead of the default set (tests). */
  ca?: string | Buffer | Array<string | Buffer>;
  clock?: { now(): Date };
}

export type OutboundErrorCode = 'invalid_url' | 'refused_address' | 'timeout' | 'network' | 'redirect' | 'http_status';

export interface OutboundResult {
  /** HTTP status, or 0 when no response was received. */
  status: number;
  /** Delivered: a 2xx response. */
  ok: boolean;
  body: string;
  /** The body was longer than maxResponseBytes and was cut. */
  truncated: boolean;
  /** Why it was not delivered (set exactly when ok is false). */
  error?: string;
  code?: OutboundErrorCode;
}

export interface OutboundClient {
  post(url: string, body: string | Buffer, headers?: Record<string, string>): Promise<OutboundResult>;
  /** POST signed with X-Service-Timestamp and X-Service-Signature (SPEC 6.2). */
  signedPost(
    url: string,
    body: string | Buffer,
    secret: string,
    headers?: Record<string, string>,
  ): Promise<OutboundResult>;
}

class OutboundFailure extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const failed = (code: OutboundErrorCode, error: string, status = 0, body = ''): OutboundResult => ({
  status,
  ok: false,
  body,
  truncated: false,
  error,
  code,
});

export function createOutboundClient(options: OutboundOptions = {}): OutboundClient {
  const allow = parseAllowList(options.allow ?? []);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const connectTimeoutMs = Math.min(options.connectTimeoutMs ?? 5_000, timeoutMs);
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
  const clock = options.clock ?? { now: () => new Date() };
  const lookup = guardedLookup(
    allow,
    (hostname, address, reason) =>
      new OutboundFailure(
        'refused_address',
        `${hostname} resolves to ${address}, ${reason}; outbound requests may only reach public addresses.`,
      ),
  );
  const agents: Record<string, http.Agent> = {
    'http:': new http.Agent({ lookup }),
    'https:': new https.Agent({ lookup, ca: options.ca }),
  };

  function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<OutboundResult> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve(failed('invalid_url', `"${url}" is not a URL.`));
    }
    const agent = agents[target.protocol];
    if (!agent)
      return Promise.resolve(
        failed('invalid_url', `Only http:// and https:// URLs can be called, not ${target.protocol}//.`),
      );
    // The URL parser has already turned 2130706433, 0x7f.1 and the like into dotted form.
    const { host, reason } = literalRefusal(target, allow);
    if (reason)
      return Promise.resolve(
        failed('refused_address', `${host} is ${reason}; outbound requests may only reach public addresses.`),
      );
    return send(target, agent, body, headers);
  }

  function send(
    target: URL,
    agent: http.Agent,
    body: string | Buffer,
    headers: Record<string, string>,
  ): Promise<OutboundResult> {
    return new Promise((resolve) => {
      const timers: NodeJS.Timeout[] = [];
      let settled = false;
      const settle = (result: OutboundResult) => {
        if (settled) return;
        settled = true;
        timers.forEach(clearTimeout);
        resolve(result);
      };
      const request = (target.protocol === 'https:' ? https : http).request(target, {
        method: 'POST',
        agent,
        headers: { 'user-agent': 'Hearth-Outbound/1', ...headers, 'content-length': String(Buffer.byteLength(body)) },
      });
      request.on('error', (err) => {
        const code = err instanceof OutboundFailure ? err.code : 'network';
        settle(failed(code, err.message));
      });
      // Settle before destroying, so the timeout is the reported cause rather
      // than the reset it provokes.
      const abort = (error: string) => {
        settle(failed('timeout', error));
        request.destroy();
      };
      timers.push(setTimeout(() => abort(`No complete response within ${timeoutMs} ms.`), timeoutMs));
      request.on('socket', (socket) => {
        if (!socket.connecting) return;
        const connectTimer = setTimeout(
          () => abort(`Could not connect to ${target.host} within ${connectTimeoutMs} ms.`),
          connectTimeoutMs,
        );
        timers.push(connectTimer);
        socket.once('connect', () => clearTimeout(connectTimer));
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = () => {
          const status = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status >= 200 && status < 300) return settle({ status, ok: true, body: text, truncated });
          if (status >= 300 && status < 400) {
            const location = response.headers.location ?? '(none)';
            return settle(
              failed(
                'redirect',
                `The receiver answered ${status} (Location: ${location}); redirects are not followed.`,
                status,
                text,
              ),
            );
          }
          settle(failed('http_status', `The receiver answered ${status}.`, status, text));
        };
        response.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = maxResponseBytes - size;
          chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          size += Math.min(chunk.length, room);
          if (chunk.length > room) {
            truncated = true;
            finish();
            request.destroy();
          }
        });
        response.on('end', finish);
        response.on('error', (err) => settle(failed('network', err.message, response.statusCode ?? 0)));
        response.on('close', () =>
          settle(failed('network', 'The connection closed before the response ended.', response.statusCode ?? 0)),
        );
      });
      request.end(body);
    });
  }

  return {
    post,
    signedPost(url, body, secret, headers = {}) {
      const timestamp = Math.floor(clock.now().getTime() / 1000);
      return post(url, body, {
        'content-type': 'application/json',
        ...headers,
        ...signPayload(secret, timestamp, body),
      });
    },
  };
}
