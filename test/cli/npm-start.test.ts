/**
 * `npm start`, the README's way to run Hearth: npm's shell execs node (no `sh`
 * left in the process group), with the memory settings of package.json's
 * start script (docs/architecture.md, "Memory under load"): glibc's malloc
 * keeps two arenas and its own dynamic mmap threshold, V8 an 8 MB semi-space
 * and a 1.75 heap growing factor; TurboFan stays off until the server is used
 * (src/cli/start.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import WebSocket from 'ws';
import { startSpawned, stopSpawned } from '../helpers/spawned-hearth.ts';

const procText = (pid: number, file: string) => readFileSync(`/proc/${pid}/${file}`, 'latin1').split('\0');

test('npm start runs node directly with the memory settings, and answers /health', { timeout: 120_000 }, async () => {
  const h = await startSpawned({ HEARTH_LOG_FORMAT: 'json' }, ['npm', 'start']);
  try {
    assert.equal((await fetch(`${h.url}/health`)).status, 200);
    // npm's child: the shell exec'd env, which exec'd node, so npm's child is the server itself.
    const children = readFileSync(`/proc/${h.child.pid}/task/${h.child.pid}/children`, 'utf8').trim().split(/\s+/);
    assert.equal(children.length, 1);
    const server = Number(children[0]);
    const argv = procText(server, 'cmdline');
    assert.ok(argv[0]!.endsWith('node'), `the server is node, not a shell: ${argv.join(' ')}`);
    assert.ok(argv.includes('--max-semi-space-size=8') && argv.includes('--heap-growing-percent=75'), argv.join(' '));
    assert.ok(argv.includes('--no-turbofan'), argv.join(' '));
    const env = procText(server, 'environ');
    assert.ok(env.includes('MALLOC_ARENA_MAX=2'));
    // A fixed mmap threshold made every large read buffer a mapping of its own (docs/architecture.md).
    assert.ok(!env.some((v) => v.startsWith('MALLOC_MMAP_THRESHOLD_')), env.join(' '));
  } finally {
    await stopSpawned(h.child);
  }
});

/** `hearth start` with TurboFan off and its compilations traced, as `npm start` runs it. */
async function startTraced() {
  const h = await startSpawned({ HEARTH_LOG_FORMAT: 'json' }, [
    process.execPath,
    '--no-turbofan',
    '--trace-opt',
    'bin/hearth.js',
    'start',
  ]);
  return { ...h, optimised: () => h.output().includes('(target TURBOFAN)') };
}

test('TurboFan stays off through start-up and health checks, and is back at the first real request', {
  timeout: 120_000,
}, async () => {
  const h = await startTraced();
  try {
    for (let i = 0; i < 200; i++) assert.equal((await fetch(`${h.url}/health`)).status, 200);
    assert.ok(!h.optimised(), 'TurboFan compiled something before the server was used');
    // Any route other than /health counts as use, whatever its answer.
    for (let i = 0; i < 2000 && !h.optimised(); i++) await (await fetch(`${h.url}/rest/v1/`)).arrayBuffer();
    assert.ok(h.optimised(), 'TurboFan did not come back once the server was used');
  } finally {
    await stopSpawned(h.child);
  }
});

test('a realtime socket alone (an upgrade, not a request) also brings TurboFan back', {
  timeout: 120_000,
}, async () => {
  const h = await startTraced();
  try {
    const key = /Publishable key\s+(\S+)/.exec(h.output())![1];
    const ws = new WebSocket(`${h.url.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${key}&vsn=1.0.0`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const replies = { n: 0 };
    ws.on('message', () => replies.n++);
    for (let sent = 0; sent < 20_000 && !h.optimised(); ) {
      for (let i = 0; i < 100; i++, sent++)
        ws.send(JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: String(sent) }));
      while (replies.n < sent) await new Promise((r) => setTimeout(r, 5));
    }
    ws.close();
    assert.ok(h.optimised(), 'TurboFan did not come back while the server served a realtime socket');
  } finally {
    await stopSpawned(h.child);
  }
});
