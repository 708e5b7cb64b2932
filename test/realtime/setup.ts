/**
 * Shared setup of the realtime tests: a real Hearth, supabase-js clients on
 * `ws` (for the secret key, the publishable key, and users whose access
 * tokens are minted with the project's key), a direct SQL connection as the
 * project owner, and a raw Phoenix socket for what supabase-js never sends.
 */
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js';
import postgres from 'postgres';
import WebSocket from 'ws';
import { ACCESS_TOKEN_SECONDS, signAccessToken } from '../../src/auth/access-token.ts';
import { startTestHearth, type TestHearth, type TestOptions } from '../helpers/hearth.ts';

export interface RealtimeTest {
  h: TestHearth;
  owner: postgres.Sql;
  /** A user's access token; expiresIn (seconds, may be negative) instead of the usual lifetime. */
  token(sub: string, opts?: { expiresIn?: number }): Promise<string>;
  /** A supabase-js client: with a user's token when `sub` is given, else the publishable (or given) key. */
  client(opts?: { sub?: string; key?: string; vsn?: '1.0.0' | '2.0.0'; base?: string }): Promise<SupabaseClient>;
  close(): Promise<void>;
}

const clients: SupabaseClient[] = [];

export async function startRealtimeTest(opts: TestOptions = {}): Promise<RealtimeTest> {
  const h = await startTestHearth(opts);
  const project = (await h.hearth.registry.defaultProject())!;
  const owner = postgres(h.info.DB_URL, { max: 2, onnotice: () => {} });
  const token = (sub: string, o: { expiresIn?: number } = {}) => {
    // The token's exp is its clock's now plus the usual lifetime: a shifted clock gives another exp.
    const shift = o.expiresIn === undefined ? 0 : (o.expiresIn - ACCESS_TOKEN_SECONDS) * 1000;
    const clock = { now: () => new Date(h.clock.now().getTime() + shift) };
    return signAccessToken(project, { sub, role: 'authenticated', aud: 'authenticated' }, clock, 'hearth');
  };
  return {
    h,
    owner,
    token,
    async client(o = {}) {
      const jwt = o.sub ? await token(o.sub) : null;
      const c = createClient(o.base ?? h.info.BASE_URL, o.key ?? h.info.PUBLISHABLE_KEY, {
        realtime: { transport: WebSocket as never, heartbeatIntervalMs: 500, ...(o.vsn ? { vsn: o.vsn } : {}) },
        auth: { persistSession: false, autoRefreshToken: false },
        ...(jwt ? { accessToken: async () => jwt } : {}),
      });
      clients.push(c);
      return c;
    },
    async close() {
      for (const c of clients.splice(0)) await c.removeAllChannels();
      await owner.end({ timeout: 5 });
      await h.close();
    },
  };
}

/** Subscribes and resolves with the status once it is SUBSCRIBED or failed (with the error's message). */
export function subscribed(ch: RealtimeChannel): Promise<{ status: string; error?: string }> {
  return new Promise((resolve) => {
    ch.subscribe((status, err) => {
      if (status === 'SUBSCRIBED' || status === 'CHANNEL_ERROR' || status === 'TIMED_OUT' || status === 'CLOSED')
        resolve({ status, error: err?.message });
    });
  });
}

/** Collects what a callback receives, with a way to wait for the n-th. */
export class Inbox<T = any> {
  readonly items: T[] = [];
  private waiters: (() => void)[] = [];
  push = (item: T) => {
    this.items.push(item);
    for (const w of this.waiters.splice(0)) w();
  };
  async atLeast(n: number, ms = 5000): Promise<T[]> {
    const deadline = Date.now() + ms;
    while (this.items.length < n) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`expected ${n} items, got ${this.items.length}: ${JSON.stringify(this.items).slice(0, 500)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.items;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw Phoenix socket (vsn 1.0.0 objects unless 2.0.0) for frames supabase-js never sends. */
export class RawSocket {
  readonly frames: any[] = [];
  readonly inbox = new Inbox<any>();
  private ref = 0;
  closed: { code: number; reason: string } | null = null;

  private constructor(
    readonly ws: WebSocket,
    readonly vsn: string,
  ) {
    ws.on('message', (data, isBinary) => {
      const f = isBinary ? { binary: data } : this.decode(String(data));
      this.frames.push(f);
      this.inbox.push(f);
    });
    ws.on('close', (code, reason) => (this.closed = { code, reason: String(reason) }));
  }

  private decode(text: string) {
    const v = JSON.parse(text);
    if (this.vsn === '2.0.0') return { join_ref: v[0], ref: v[1], topic: v[2], event: v[3], payload: v[4] };
    return v;
  }

  static open(url: string, vsn = '1.0.0'): Promise<RawSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws') + (url.includes('?') ? '&' : '?')}vsn=${vsn}`);
      const s = new RawSocket(ws, vsn);
      ws.once('open', () => resolve(s));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () =>
          reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })),
        );
      });
      ws.once('error', reject);
    });
  }

  sendRaw(data: string | Buffer): void {
    this.ws.send(data);
  }

  /** Sends a message in the socket's protocol version; returns its ref. */
  send(topic: string, event: string, payload: unknown = {}, joinRef: string | null = null): string {
    const ref = String(++this.ref);
    const msg =
      this.vsn === '2.0.0'
        ? JSON.stringify([joinRef, ref, topic, event, payload])
        : JSON.stringify({ topic, event, payload, ref, join_ref: joinRef });
    this.ws.send(msg);
    return ref;
  }

  /** Sends a message and waits for its reply. */
  async call(topic: string, event: string, payload: unknown = {}, joinRef: string | null = null): Promise<any> {
    return this.replyTo(this.send(topic, event, payload, joinRef));
  }

  async replyTo(ref: string, ms = 5000): Promise<any> {
    return (await this.frame((x) => x.event === 'phx_reply' && x.ref === ref, ms)).payload;
  }

  /** The first frame (received so far or later) that `matches`. */
  async frame(matches: (f: any) => boolean, ms = 5000): Promise<any> {
    const deadline = Date.now() + ms;
    for (;;) {
      const f = this.frames.find(matches);
      if (f) return f;
      await this.inbox.atLeast(this.frames.length + 1, Math.max(deadline - Date.now(), 1));
    }
  }

  close(): void {
    this.ws.close();
  }
}
