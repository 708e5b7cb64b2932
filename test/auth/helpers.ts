/**
 * Auth test helpers: a real SMTP server (smtp-server) that keeps what it
 * receives, a supabase-js client for the test Hearth, and small readers for
 * the codes and links inside mail.
 */
import type { AddressInfo } from 'node:net';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { SMTPServer } from 'smtp-server';
import WebSocket from 'ws';
import type { TestHearth } from '../helpers/hearth.ts';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface Inbox {
  port: number;
  mails: ReceivedMail[];
  /** The next mail to `to` not yet taken (waits up to 5 s). */
  next(to: string): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const qp = /quoted-printable/i.test(header('Content-Transfer-Encoding'));
  return { from, to, subject: header('Subject'), text: qp ? decodeQuotedPrintable(body) : body };
}

export async function startInbox(): Promise<Inbox> {
  const mails: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push(parse(Buffer.concat(chunks).toString('latin1'), from, to));
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    async next(to) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const m = mails.find((x) => !taken.has(x) && x.to.includes(to.toLowerCase()));
        if (m) {
          taken.add(m);
          return m;
        }
        if (Date.now() > deadline) throw new Error(`no mail to ${to} within 5 s (got ${mails.length} in all)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const codeIn = (mail: { text?: string; body?: string }): string => {
  const m = /\b(\d{6})\b/.exec(mail.text ?? mail.body ?? '');
  if (!m) throw new Error('no 6-digit code in the mail');
  return m[1]!;
};

export const linkIn = (mail: { text?: string; body?: string }): string => {
  const m = /(https?:\/\/\S+\/auth\/v1\/verify\?\S+)/.exec(mail.text ?? mail.body ?? '');
  if (!m) throw new Error('no verify link in the mail');
  return m[1]!;
};

export function client(h: TestHearth, opts: { flowType?: 'implicit' | 'pkce' } = {}): SupabaseClient {
  return createClient(h.info.BASE_URL, h.info.PUBLISHABLE_KEY, {
    realtime: { transport: WebSocket as never },
    auth: {
      persistSession: false,
      autoRefreshToken: false,
      detectSessionInUrl: false,
      flowType: opts.flowType ?? 'implicit',
    },
  });
}

/** POST/GET/PUT against /auth/v1 with the publishable key (and a user token when given). */
export async function authApi(
  h: TestHearth,
  method: string,
  path: string,
  o: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
) {
  return h.api(method, `/auth/v1${path}`, {
    body: o.body,
    token: o.token ?? h.info.PUBLISHABLE_KEY,
    headers: { apikey: h.info.PUBLISHABLE_KEY, ...o.headers },
  });
}

export async function configureAuth(h: TestHearth, settings: Record<string, unknown>): Promise<void> {
  const res = await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, { body: settings });
  if (res.status !== 200) throw new Error(`config/auth PATCH failed: ${res.status} ${JSON.stringify(res.body)}`);
}

let counter = 0;
export const uniqueEmail = (tag = 'user') => `${tag}-${Date.now().toString(36)}-${++counter}@example.test`;

/** A password that passes the length and leaked checks. */
export const goodPassword = () => `Hearth-${Math.random().toString(36).slice(2)}-pw`;
