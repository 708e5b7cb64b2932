/**
 * HEARTH_MAX_SOCKETS: past the cap, client sockets are closed as they arrive
 * (the open ones keep working), and the refusals are logged once per
 * interval with a count, not once per socket.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { capClientSockets } from '../../src/server/socket-cap.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

const CAP = 4;

/** A pino logger whose warnings land in `lines`. */
function collectingLog(lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return pino({ level: 'warn' }, sink);
}

const refusals = (lines: Record<string, unknown>[]) => lines.filter((l) => typeof l.refused === 'number');

let h: TestHearth;
const lines: Record<string, unknown>[] = [];
before(async () => {
  h = await startTestHearth({ env: { HEARTH_MAX_SOCKETS: String(CAP) }, log: collectingLog(lines) });
});
after(async () => {
  await h?.close();
});

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

/** Sends GET /health on the socket: the status line, or null when the socket is closed unanswered. */
function health(socket: net.Socket): Promise<string | null> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (c) => {
      text += c;
      if (text.includes('\r\n')) resolve(text.split('\r\n')[0]!);
    });
    socket.on('close', () => resolve(text ? text.split('\r\n')[0]! : null));
    socket.write('GET /health HTTP/1.1\r\nHost: cap.test\r\n\r\n', () => {});
  });
}

test(`past HEARTH_MAX_SOCKETS=${CAP} sockets are closed unanswered, held ones keep working, and 20 refusals make one log line`, async () => {
  const port = new URL(h.url).port;
  const held = await Promise.all(Array.from({ length: CAP }, () => connect(Number(port))));
  await until(
    () => new Promise<number>((r) => h.hearth.app!.server.getConnections((_e, n) => r(n))),
    (n) => n === CAP,
    5000,
  );
  const extra = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const s = await connect(Number(port)).catch(() => null);
      return s ? health(s) : null;
    }),
  );
  assert.deepEqual(extra, Array(20).fill(null));
  assert.equal(await health(held[0]!), 'HTTP/1.1 200 OK');
  // Logged once, at the first refusal; the rest are summed until the interval ends.
  const logged = refusals(lines);
  assert.equal(logged.length, 1);
  assert.equal(logged[0]!.refused, 1);
  assert.equal(logged[0]!.max, CAP);
  for (const s of held) s.destroy();
  await until(
    () => new Promise<number>((r) => h.hearth.app!.server.getConnections((_e, n) => r(n))),
    (n) => n === 0,
    5000,
  );
  assert.equal((await fetch(`${h.url}/health`)).status, 200);
});

test('refusals during an interval are logged at its end with their count; a quiet interval ends the reports', async () => {
  const own: Record<string, unknown>[] = [];
  const server = net.createServer(() => {});
  capClientSockets(server, 1, collectingLog(own), 300);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const held = await connect(port);
  const closed = (s: net.Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));
  try {
    for (let i = 0; i < 7; i++) await closed(await connect(port));
    await until(
      async () => refusals(own).length,
      (n) => n >= 2,
      5000,
    );
    assert.deepEqual(
      refusals(own).map((l) => l.refused),
      [1, 6],
    );
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(refusals(own).length, 2);
    await closed(await connect(port));
    assert.deepEqual(
      refusals(own).map((l) => l.refused),
      [1, 6, 1],
    );
  } finally {
    held.destroy();
    await new Promise((r) => server.close(r));
  }
});
