/**
 * The realtime bench's clients, in a child process of their own (so the
 * server measured does not share its event loop or heap with them): N raw
 * Phoenix sockets (vsn 1.0.0, what realtime-js speaks minus the library) on
 * one topic. Reads one JSON line of options from stdin, prints `ready` once
 * every socket has joined, then counts received messages: `count` prints how
 * many so far, `latency` the p50/p99 of (now - payload.sent_at) over the
 * messages that carried one, `quit` closes everything.
 */
import { createInterface } from 'node:readline';
import WebSocket from 'ws';

interface Options {
  url: string;
  sockets: number;
  topic: string;
  /** Per socket, or one for all. */
  joinPayloads: Record<string, unknown>[];
}

const lines = createInterface({ input: process.stdin });
const it = lines[Symbol.asyncIterator]();
const opts = JSON.parse((await it.next()).value as string) as Options;

let received = 0;
const latencies: number[] = [];
const sockets: WebSocket[] = [];

function open(i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${opts.url}&vsn=1.0.0`);
    sockets.push(ws);
    ws.on('error', reject);
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          topic: opts.topic,
          event: 'phx_join',
          ref: '1',
          join_ref: '1',
          payload: opts.joinPayloads[i % opts.joinPayloads.length],
        }),
      ),
    );
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.event === 'phx_reply' && m.ref === '1') {
        if (m.payload.status === 'ok') resolve();
        else reject(new Error(JSON.stringify(m.payload)));
        return;
      }
      if (m.event === 'broadcast' || m.event === 'postgres_changes') {
        received++;
        const sent = m.payload?.payload?.sent_at ?? m.payload?.data?.record?.sent_at;
        if (typeof sent === 'number') latencies.push(Date.now() - sent);
      }
    });
  });
}

// A few at a time: a burst of thousands of handshakes is not what is measured.
for (let i = 0; i < opts.sockets; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, opts.sockets - i) }, (_, k) => open(i + k)));
}
const heartbeat = setInterval(() => {
  for (const ws of sockets) ws.send(JSON.stringify({ topic: 'phoenix', event: 'heartbeat', ref: 'h', payload: {} }));
}, 20_000);
console.log('ready');

for (;;) {
  const { value, done } = await it.next();
  if (done || value === 'quit') break;
  if (value === 'count') console.log(String(received));
  if (value === 'latency') {
    const sorted = latencies.splice(0).sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
    console.log(JSON.stringify({ n: sorted.length, p50: at(0.5), p99: at(0.99) }));
  }
}
clearInterval(heartbeat);
for (const ws of sockets) ws.terminate();
process.exit(0);
