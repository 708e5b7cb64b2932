/**
 * Realtime: Hearth beside a bare reference — a `ws` server doing the least a
 * developer would write by hand (a join is answered, a broadcast goes to the
 * topic's other sockets, a row NOTIFYed by a trigger goes to every socket: no
 * keys, no RLS, no limits, one process) — with the clients in a child
 * process (realtime-clients.ts). Figures:
 * - insert-to-client latency, 100 subscribers each a different user under an
 *   RLS policy (each row reaches its owner only; the bare server sends every
 *   row to everyone, unchecked);
 * - database changes delivered per second to 1,000 subscribers (no RLS);
 * - broadcast messages delivered per second fanned out to 1,000 sockets;
 * - memory per idle connection (JS heap + buffers held by the server process,
 *   after GC, / sockets) at 2,000, and
 *   10,000 idle sockets on one Hearth process.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import postgres from 'postgres';
import { WebSocketServer } from 'ws';
import { signAccessToken } from '../src/auth/access-token.ts';
import { withDatabase } from '../src/db/pools.ts';
import type { TestHearth } from '../test/helpers/hearth.ts';
import { withHearth } from './lib.ts';

class Clients {
  private readonly lines: AsyncIterator<string>;
  private constructor(private readonly child: ChildProcessByStdio<Writable, Readable, null>) {
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }
  static async start(opts: {
    url: string;
    sockets: number;
    topic: string;
    joinPayloads: Record<string, unknown>[];
  }): Promise<Clients> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('bench/realtime-clients.ts')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const c = new Clients(child);
    child.stdin.write(`${JSON.stringify(opts)}\n`);
    const first = await c.lines.next();
    if (first.value !== 'ready') throw new Error(`clients did not start: ${first.value}`);
    return c;
  }
  async ask(what: string): Promise<string> {
    this.child.stdin.write(`${what}\n`);
    return (await this.lines.next()).value as string;
  }
  async count(): Promise<number> {
    return Number(await this.ask('count'));
  }
  async waitFor(n: number, ms = 30_000): Promise<number> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = await this.count();
      if (got >= n || Date.now() > deadline) return got;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  async quit(): Promise<void> {
    this.child.stdin.write('quit\n');
    await new Promise((r) => this.child.once('exit', r));
  }
}

/** The bare reference server on the same database. */
async function bareServer(databaseUrl: string) {
  const server = http.createServer();
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  const topics = new Map<string, Set<import('ws').WebSocket>>();
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.event === 'phx_join') {
        let set = topics.get(m.topic);
        if (!set) topics.set(m.topic, (set = new Set()));
        set.add(ws);
        ws.send(
          JSON.stringify({
            topic: m.topic,
            event: 'phx_reply',
            ref: m.ref,
            join_ref: m.join_ref,
            payload: { status: 'ok', response: {} },
          }),
        );
      } else if (m.event === 'broadcast') {
        const frame = JSON.stringify({ topic: m.topic, event: 'broadcast', ref: null, payload: m.payload });
        for (const other of topics.get(m.topic) ?? []) if (other !== ws) other.send(frame);
      }
    });
    ws.on('close', () => {
      for (const set of topics.values()) set.delete(ws);
    });
  });
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  await sql.listen('bare_changes', (payload) => {
    const frame = `{"topic":"realtime:changes","event":"postgres_changes","ref":null,"payload":{"data":{"record":${payload}}}}`;
    for (const ws of topics.get('realtime:changes') ?? []) ws.send(frame);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/?x=1`,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise((r) => server.close(r));
      await sql.end();
    },
  };
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** What the process holds for JavaScript: heap in use plus buffers outside it (socket buffers). */
const held = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};
const rss = () => process.memoryUsage().rss;
const settle = async () => {
  await new Promise((r) => setTimeout(r, 300));
  gc();
};

async function deliveredPerSecond(
  clients: Clients,
  expected: number,
  act: () => Promise<unknown>,
): Promise<{ perSec: number; got: number }> {
  const before = await clients.count();
  const start = performance.now();
  await act();
  const got = (await clients.waitFor(before + expected)) - before;
  return { perSec: got / ((performance.now() - start) / 1000), got };
}

export async function benchRealtime(): Promise<string[]> {
  return withHearth(async (h: TestHearth) => {
    const out: string[] = [];
    await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/realtime`, {
      body: {
        max_concurrent_users: 20_000,
        max_joins_per_second: 1_000_000,
        max_events_per_second: 1_000_000,
        max_channels_per_client: 10,
      },
    });
    const owner = postgres(h.info.DB_URL, { max: 4, onnotice: () => {} });
    await owner.unsafe(`
      create table rt_private (id bigserial primary key, owner_id uuid not null, sent_at bigint not null);
      alter table rt_private enable row level security;
      create policy own on rt_private for select to authenticated using (owner_id = auth.uid());
      create table rt_public (id bigserial primary key, sent_at bigint not null, body text);
      alter publication supabase_realtime add table rt_private, rt_public;
      create function bare_notify() returns trigger language plpgsql as $$
        begin perform pg_notify('bare_changes', to_jsonb(n.*)::text) from new_rows n; return null; end $$;
      create table bare_rows (id bigserial primary key, sent_at bigint not null, body text);
      create trigger bare_notify after insert on bare_rows referencing new table as new_rows for each statement execute function bare_notify();`);
    const bare = await bareServer(withDatabase(h.hearth.databaseUrl, h.hearth.project.db_name));
    const hearthUrl = `${h.info.BASE_URL.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${h.info.PUBLISHABLE_KEY}`;
    const project = (await h.hearth.registry.defaultProject())!;
    try {
      // 1. Latency under RLS: 100 users, each subscribed to the table; rows for random users.
      const users = Array.from({ length: 100 }, () => randomUUID());
      const tokens = await Promise.all(
        users.map((sub) => signAccessToken(project, { sub, role: 'authenticated' }, h.clock, 'hearth')),
      );
      const rlsClients = await Clients.start({
        url: hearthUrl,
        sockets: 100,
        topic: 'realtime:rls',
        joinPayloads: tokens.map((t) => ({
          access_token: t,
          config: { postgres_changes: [{ event: 'INSERT', schema: 'public', table: 'rt_private' }] },
        })),
      });
      const bareRls = await Clients.start({
        url: bare.url,
        sockets: 100,
        topic: 'realtime:changes',
        joinPayloads: [{}],
      });
      // 20 rows a second each: every Hearth row costs one RLS check per distinct subscriber (~0.25 ms each).
      const ROWS = 100;
      for (let i = 0; i < ROWS; i++) {
        await owner`insert into rt_private (owner_id, sent_at) values (${users[i % users.length]!}, ${Date.now()})`;
        await owner`insert into bare_rows (sent_at) values (${Date.now()})`;
        await new Promise((r) => setTimeout(r, 50));
      }
      await rlsClients.waitFor(ROWS);
      await bareRls.waitFor(ROWS * 100);
      const lat = JSON.parse(await rlsClients.ask('latency'));
      const bareLat = JSON.parse(await bareRls.ask('latency'));
      out.push(
        `insert-to-client, 100 RLS subscribers        hearth p50 ${lat.p50} ms p99 ${lat.p99} ms (${lat.n}/${ROWS} rows, each to its owner only)   bare p50 ${bareLat.p50} ms p99 ${bareLat.p99} ms (no RLS, to all 100)`,
      );
      await rlsClients.quit();
      await bareRls.quit();

      // 2. Changes delivered per second to 1,000 subscribers (no RLS), 100 rows in one statement.
      const N = 1000;
      const changeClients = await Clients.start({
        url: hearthUrl,
        sockets: N,
        topic: 'realtime:pub',
        joinPayloads: [{ config: { postgres_changes: [{ event: 'INSERT', schema: 'public', table: 'rt_public' }] } }],
      });
      const bareChanges = await Clients.start({
        url: bare.url,
        sockets: N,
        topic: 'realtime:changes',
        joinPayloads: [{}],
      });
      const BATCH = 100;
      const hc = await deliveredPerSecond(
        changeClients,
        BATCH * N,
        () =>
          owner`insert into rt_public (sent_at, body) select ${Date.now()}, 'row ' || g from generate_series(1, ${BATCH}) g`,
      );
      const bc = await deliveredPerSecond(
        bareChanges,
        BATCH * N,
        () =>
          owner`insert into bare_rows (sent_at, body) select ${Date.now()}, 'row ' || g from generate_series(1, ${BATCH}) g`,
      );
      out.push(
        `db changes delivered/s, 1,000 subscribers    hearth ${hc.perSec.toFixed(0).padStart(7)} (${hc.got}/${BATCH * N})   bare ${bc.perSec.toFixed(0).padStart(7)} (${bc.got})   ratio ${(hc.perSec / bc.perSec).toFixed(2)}`,
      );
      await changeClients.quit();
      await bareChanges.quit();

      // 3. Broadcast fan-out: one sender, 1,000 receivers on one topic.
      const MSGS = 100;
      const fan = async (url: string) => {
        const receivers = await Clients.start({ url, sockets: N, topic: 'realtime:fan', joinPayloads: [{}] });
        const { default: WebSocket } = await import('ws');
        const ws = new WebSocket(`${url}&vsn=1.0.0`);
        await new Promise((r) => ws.once('open', r));
        ws.send(JSON.stringify({ topic: 'realtime:fan', event: 'phx_join', ref: '1', join_ref: '1', payload: {} }));
        await new Promise((r) => ws.once('message', r));
        const r = await deliveredPerSecond(receivers, MSGS * N, async () => {
          for (let i = 0; i < MSGS; i++)
            ws.send(
              JSON.stringify({
                topic: 'realtime:fan',
                event: 'broadcast',
                ref: null,
                join_ref: '1',
                payload: { type: 'broadcast', event: 'm', payload: { i, sent_at: Date.now() } },
              }),
            );
        });
        const l = JSON.parse(await receivers.ask('latency'));
        ws.close();
        await receivers.quit();
        return { ...r, p99: l.p99 };
      };
      const hf = await fan(hearthUrl);
      const bf = await fan(bare.url);
      out.push(
        `broadcast delivered/s, 1,000 on one topic     hearth ${hf.perSec.toFixed(0).padStart(7)} (p99 ${hf.p99} ms)   bare ${bf.perSec.toFixed(0).padStart(7)} (p99 ${bf.p99} ms)   ratio ${(hf.perSec / bf.perSec).toFixed(2)}`,
      );

      // 4. Memory per idle connection (each joined to one channel), then 10,000 idle sockets.
      const idle = async (url: string, n: number) => {
        await settle();
        const before = held();
        const c = await Clients.start({ url, sockets: n, topic: 'realtime:idle', joinPayloads: [{}] });
        await settle();
        const per = (held() - before) / n;
        return { c, per };
      };
      const hi = await idle(hearthUrl, 2000);
      await hi.c.quit();
      const bi = await idle(bare.url, 2000);
      await bi.c.quit();
      out.push(
        `memory per idle connection (2,000)          hearth ${(hi.per / 1024).toFixed(1)} KiB   bare ${(bi.per / 1024).toFixed(1)} KiB   ratio ${(bi.per / hi.per).toFixed(2)}`,
      );
      const started = performance.now();
      const ten = await idle(hearthUrl, 10_000);
      out.push(
        `10,000 idle sockets on one process          hearth connected and joined in ${((performance.now() - started) / 1000).toFixed(1)} s, ${(ten.per / 1024).toFixed(1)} KiB each, process RSS ${(rss() / 1048576).toFixed(0)} MiB`,
      );
      await ten.c.quit();
    } finally {
      await bare.close();
      await owner.end();
    }
    return out;
  });
}
