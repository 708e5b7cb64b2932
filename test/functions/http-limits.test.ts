// Functions through a real Hearth where a test must hold a function mid-way:
// the function waits on a "gate" request to a server of this test (so this
// file allows 127.0.0.1 outbound), which the test releases when it chooses.
// Covers response streaming, redeploy with requests in flight, and the
// wall-clock limit (a runtime with a short limit replaces the server's).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startFunctions, type FunctionsService } from '../../src/functions/index.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { leftoverChildren } from './helpers.ts';
import { defaultProject, deploy, putSecrets, until, type ProjectHandle } from './http-helpers.ts';

/** A server whose GET /gate requests wait until release(). */
class Gate {
  private waiting: http.ServerResponse[] = [];
  private arrivals: (() => void)[] = [];
  readonly server = http.createServer((_req, res) => {
    this.waiting.push(res);
    for (const notify of this.arrivals.splice(0)) notify();
  });
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/gate`;
  }
  start(): Promise<void> {
    return new Promise((r) => this.server.listen(0, '127.0.0.1', () => r()));
  }
  /** Resolves once `n` requests are waiting. */
  async waitFor(n: number): Promise<void> {
    while (this.waiting.length < n) await new Promise<void>((r) => this.arrivals.push(r));
  }
  release(): void {
    for (const res of this.waiting.splice(0)) res.end('open');
  }
  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

let h: TestHearth;
let main: ProjectHandle;
let gate: Gate;
let shortLimit: FunctionsService | null = null;

before(async () => {
  gate = new Gate();
  await gate.start();
  h = await startTestHearth({ env: { HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  main = defaultProject(h);
  await putSecrets(h, main.ref, { GATE_URL: gate.url });
});
after(async () => {
  await shortLimit?.stop();
  await h?.close();
  await gate?.close();
  assert.deepEqual(await leftoverChildren(), [], 'no workerd process outlives the server');
});

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${main.base}/functions/v1/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${main.publishable}`, ...init.headers },
  });

describe('streaming', () => {
  test('the response streams: its first part arrives while the function is still running', async () => {
    await deploy(h, main.ref, 'stream', {
      source: `Deno.serve(() => {
  const enc = new TextEncoder();
  return new Response(new ReadableStream({
    async start(c) {
      c.enqueue(enc.encode('first;'));
      await (await fetch(Deno.env.get('GATE_URL')!)).text();
      c.enqueue(enc.encode('second'));
      c.close();
    },
  }), { headers: { 'content-type': 'text/plain' } });
});`,
    });
    const res = await call('stream');
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), 'first;');
    // The function is now parked on the gate; the rest comes only after release.
    await gate.waitFor(1);
    gate.release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    assert.equal(rest, 'second');
  });
});

describe('uploads stream in', () => {
  test('a slow upload reaches the function piece by piece: each piece is answered before the next is sent', async () => {
    await deploy(h, main.ref, 'pieces', {
      source: `Deno.serve(async (req) => {
  const reader = req.body!.getReader();
  const enc = new TextEncoder();
  return new Response(new ReadableStream({
    async pull(c) {
      const { value, done } = await reader.read();
      if (done) return c.close();
      c.enqueue(enc.encode('got ' + value.length + ';'));
    },
  }));
});`,
    });
    const url = new URL(`${main.base}/functions/v1/pieces`);
    const req = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${main.publishable}`, 'content-type': 'application/octet-stream' },
    });
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      req.on('response', resolve).on('error', reject);
      req.flushHeaders();
      req.write('a'.repeat(1000));
    });
    assert.equal(res.statusCode, 200);
    let seen = '';
    const next = () =>
      new Promise<string>((resolve, reject) => {
        res.once('data', (d) => resolve(String(d))).once('error', reject);
      });
    seen += await next(); // only possible if the first piece went on before the upload ended
    req.write('b'.repeat(500));
    seen += await next();
    req.end();
    for await (const d of res) seen += String(d);
    assert.equal(seen, 'got 1000;got 500;');
  });
});

describe('redeploy', () => {
  test('requests in flight finish on the old version, new ones get the new version, none fails', async () => {
    await deploy(h, main.ref, 'rolling', {
      source:
        "Deno.serve(async () => { await (await fetch(Deno.env.get('GATE_URL')!)).text(); return Response.json({ version: 1 }); });",
    });
    const inFlight = Array.from({ length: 10 }, () => call('rolling', { method: 'POST', body: '{}' }));
    await gate.waitFor(10);

    const v2 = await deploy(h, main.ref, 'rolling', { source: 'Deno.serve(() => Response.json({ version: 2 }));' });
    assert.equal(v2.version, 2);
    const after = await Promise.all(Array.from({ length: 10 }, () => call('rolling', { method: 'POST', body: '{}' })));
    gate.release();
    const before = await Promise.all(inFlight);

    for (const res of [...before, ...after]) assert.equal(res.status, 200);
    assert.deepEqual(await Promise.all(before.map((r) => r.json())), Array(10).fill({ version: 1 }));
    assert.deepEqual(await Promise.all(after.map((r) => r.json())), Array(10).fill({ version: 2 }));
  });
});

describe('logs of a deleted function', () => {
  test('an invocation that ends after its function was deleted leaves no log lines, not even under a function redeployed with the name', async () => {
    await deploy(h, main.ref, 'gone', {
      source:
        "Deno.serve(async () => { console.log('old line'); await (await fetch(Deno.env.get('GATE_URL')!)).text(); return new Response('old'); });",
    });
    const inFlight = call('gone', { method: 'POST', body: '{}' });
    await gate.waitFor(1);
    assert.equal((await h.api('DELETE', `/v1/projects/${main.ref}/functions/gone`)).status, 200);
    gate.release();
    await (await inFlight).text();
    const fresh = await deploy(h, main.ref, 'gone', {
      source: "Deno.serve(() => { console.log('new line'); return new Response('new'); });",
    });
    assert.equal(await (await call('gone')).text(), 'new');
    const logs = await until(
      async () =>
        (await h.api('GET', `/v1/projects/${main.ref}/functions/gone/logs`)).body as {
          version: number;
          message: string;
        }[],
      (l) => l.some((e) => e.message === 'new line'),
    );
    assert.deepEqual([...new Set(logs.map((e) => e.version))], [fresh.version], JSON.stringify(logs));
  });
});

describe('wall-clock limit', () => {
  test('a function past its limit answers 504 function_timeout, and the log records it', async () => {
    // A runtime with a short limit takes over this process's functions (the routes look it up per request).
    shortLimit = await startFunctions(h.hearth.p, h.hearth.registry, { timeoutMs: 1000 });
    await deploy(h, main.ref, 'slow', {
      source:
        "Deno.serve(async () => { await (await fetch(Deno.env.get('GATE_URL')!)).text(); return new Response('late'); });",
    });
    await deploy(h, main.ref, 'spin', { source: 'Deno.serve(() => { while (true) {} });' });
    for (const name of ['slow', 'spin']) {
      const res = await call(name, { method: 'POST', body: 'x' });
      assert.equal(res.status, 504, name);
      const body = await res.json();
      assert.equal(body.error.code, 'function_timeout');
      assert.match(body.error.message, /1000 ms/);
    }
    gate.release();
    const logs = await until(
      async () =>
        (await h.api('GET', `/v1/projects/${main.ref}/functions/spin/logs`)).body as {
          status?: number;
          error_code?: string;
        }[],
      (l) => l.some((e) => e.status === 504),
    );
    assert.ok(logs.some((e) => e.status === 504 && e.error_code === 'function_timeout'));
    // The next request gets a fresh instance and the same answer, never a hang.
    assert.equal((await call('spin')).status, 504);
  });
});
