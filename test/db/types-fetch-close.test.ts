// postgres.js fetches the server's array types as the first query of a new connection.
// A connection that closes during that fetch must fail (or retry) the query waiting for
// it, and leave no rejection without a handler: unpatched, the fetch's own promise
// rejected with nobody listening, which crashes a process run with
// --unhandled-rejections=strict and failed test files at random under load
// (docs/architecture.md, "Driver patch").
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import postgres from 'postgres';
import { serverUrl } from '../helpers/hearth.ts';

/** A TCP proxy to the test server that drops the first connection once it asks for the array types. */
async function proxyDroppingTypesFetch(): Promise<{ port: number; dropped: () => number; close: () => void }> {
  const target = new URL(serverUrl());
  let dropped = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('data', (chunk) => {
      if (dropped === 0 && chunk.includes('typarray')) {
        dropped++;
        drop();
      } else upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.writable && client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, dropped: () => dropped, close: () => server.close() };
}

test('a connection closed during the array-types fetch settles its query and rejects nothing unhandled', async () => {
  const proxy = await proxyDroppingTypesFetch();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const url = new URL(serverUrl());
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const sql = postgres(url.toString(), { max: 1, connect_timeout: 5 });
  try {
    // A reserved connection (what Hearth's request transactions use) is the case where the
    // fetch was the connection's only query, so its failure had no handler.
    const outcome = await (async () => {
      const reserved = await sql.reserve();
      try {
        return (await reserved`select 1 as one`)[0]!.one as number;
      } finally {
        reserved.release();
      }
    })().catch((err: { code?: string }) => err.code);
    // A rejection nobody handles is reported after the current turn: give it time to show.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(proxy.dropped(), 1, 'the proxy dropped the connection during the types fetch');
    assert.ok(outcome === 1 || outcome === 'CONNECTION_CLOSED', `the query settled (${String(outcome)})`);
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await sql.end({ timeout: 1 });
    proxy.close();
  }
});
