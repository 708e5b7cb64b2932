import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { HearthError } from '../../src/errors.ts';
import { UNAVAILABLE_NODE_MODULES } from '../../src/functions/bundle.ts';
import { until } from '../helpers/poll.ts';
import { leftoverChildren, get, startRuntime, type Harness } from './helpers.ts';

let h: Harness;
before(() => {
  h = startRuntime();
});
after(async () => {
  await h.close();
  assert.deepEqual(await leftoverChildren(), [], 'no workerd process outlives shutdown');
});

const rejectsWith = (p: Promise<unknown>, status: number, code: string) =>
  assert.rejects(p, (e: unknown) => e instanceof HearthError && e.status === status && e.code === code);

describe('handler forms', () => {
  test('Supabase style Deno.serve in TypeScript', async () => {
    const deployed = await h.runtime.deployFunction('proja', 'hello', {
      files: {
        'index.ts': `import "jsr:@supabase/functions-js/edge-runtime.d.ts";
interface Body { name: string }
Deno.serve(async (req: Request): Promise<Response> => {
  const { name }: Body = await req.json();
  return new Response(JSON.stringify({ message: \`Hello \${name}!\` }), { headers: { 'Content-Type': 'application/json' } });
});`,
      },
    });
    assert.equal(deployed.version, 1);
    assert.equal(deployed.verifyJwt, true);
    const res = await h.runtime.invokeFunction(
      'proja',
      'hello',
      get('hello', '', { method: 'POST', body: JSON.stringify({ name: 'Ada' }) }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), { message: 'Hello Ada!' });
  });

  test('export default { fetch(req, env) } sees secrets in env', async () => {
    await h.runtime.deployFunction(
      'proja',
      'modern',
      {
        files: {
          'index.js':
            'export default { async fetch(req, env) { return Response.json({ key: env.API_KEY, url: new URL(req.url).pathname, method: req.method }); } };',
        },
        verifyJwt: false,
      },
      { API_KEY: 'k-123' },
    );
    const res = await h.runtime.invokeFunction('proja', 'modern', get('modern', '/a/b?x=1', { method: 'PATCH' }));
    assert.deepEqual(await res.json(), { key: 'k-123', url: '/modern/a/b', method: 'PATCH' });
    assert.equal((await h.runtime.getFunction('proja', 'modern'))?.verifyJwt, false);
  });

  test('several TypeScript files as a bundle map', async () => {
    await h.runtime.deployFunction('proja', 'multi', {
      entrypoint: 'main.ts',
      files: {
        'main.ts':
          "import { shout } from './lib/text.ts';\nimport { VERSION } from './version.js';\nDeno.serve(() => new Response(shout('hi') + VERSION));",
        'lib/text.ts': "export const shout = (s: string): string => s.toUpperCase() + '!';",
        'version.ts': 'export const VERSION: number = 7;',
      },
    });
    assert.equal(await (await h.runtime.invokeFunction('proja', 'multi', get('multi'))).text(), 'HI!7');
  });

  test('web APIs: crypto.subtle, TextEncoder, URL, timers, streams', async () => {
    await h.runtime.deployFunction('proja', 'webapis', {
      files: {
        'index.ts': `Deno.serve(async (req) => {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('abc'));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
  await new Promise((r) => setTimeout(r, 10));
  const q = new URL(req.url).searchParams.get('q');
  const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(hex + ' ' + q)); c.close(); } });
  return new Response(stream.pipeThrough(new TextDecoderStream()).pipeThrough(new TextEncoderStream()));
});`,
      },
    });
    const res = await h.runtime.invokeFunction('proja', 'webapis', get('webapis', '?q=ok'));
    assert.equal(await res.text(), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad ok');
  });

  test('no handler and a throwing handler are reported with codes', async () => {
    // A handler the deploy could not rule out, that never comes.
    await h.runtime.deployFunction('proja', 'nohandler', {
      files: { 'index.js': "if (globalThis.NEVER) Deno.serve(() => new Response('x'));" },
    });
    await rejectsWith(h.runtime.invokeFunction('proja', 'nohandler', get('nohandler')), 500, 'function_no_handler');
    await h.runtime.deployFunction('proja', 'throws', {
      files: { 'index.js': "Deno.serve(() => { throw new Error('kaput'); });" },
    });
    await rejectsWith(h.runtime.invokeFunction('proja', 'throws', get('throws')), 500, 'function_error');
    const logs = await until(
      () => h.runtime.readLogs('proja', 'throws'),
      (l) => l.some((e) => e.message.includes('kaput')),
    );
    assert.ok(logs.some((e) => e.level === 'error' && e.message.includes('Error: kaput')));
  });

  test("a response body stream that throws is the function's error, not a crash, and its reason is logged", async () => {
    await h.runtime.deployFunction('proja', 'badstream', {
      files: {
        'index.js':
          "Deno.serve(() => new Response(new ReadableStream({ pull() { throw new Error('stream broke'); } })));",
      },
    });
    // workerd may fail the response before or after its head: either way it is the function's error.
    await rejectsWith(
      (async () => (await h.runtime.invokeFunction('proja', 'badstream', get('badstream'))).text())(),
      500,
      'function_error',
    );
    const logs = await until(
      () => h.runtime.readLogs('proja', 'badstream'),
      (l) => l.some((e) => e.message.includes('stream broke')),
    );
    assert.ok(logs.some((e) => e.level === 'error' && e.message === 'Uncaught exception: Error: stream broke'));
    assert.ok(logs.some((e) => e.request?.code === 'function_error'));
  });
});

describe('code from strings', () => {
  // workerd's rule, unlike Deno's: documented under "Differences from Supabase".
  test('eval and new Function work while the module loads, and are refused while a request is handled', async () => {
    await h.runtime.deployFunction('projc', 'codegen', {
      files: {
        'index.js': `const double = new Function('n', 'return n * 2');
const atLoad = [eval('1 + 1'), double(21)];
Deno.serve(() => {
  const attempt = (fn) => { try { return fn(); } catch (e) { return e.message; } };
  return Response.json({
    atLoad,
    compiledAtLoad: double(4),
    evalInRequest: attempt(() => eval('1 + 1')),
    functionInRequest: attempt(() => new Function('return 1')()),
  });
});`,
      },
    });
    const res = await h.runtime.invokeFunction('projc', 'codegen', get('codegen'));
    assert.deepEqual(await res.json(), {
      atLoad: [2, 42],
      compiledAtLoad: 8,
      evalInRequest: 'Code generation from strings disallowed for this context',
      functionInRequest: 'Code generation from strings disallowed for this context',
    });
  });
});

describe('deploys that could never run', () => {
  test('a module that can have no handler is refused, and the version before it stays', async () => {
    await h.runtime.deployFunction('projb', 'kept', { files: { 'index.ts': "Deno.serve(() => new Response('v1'));" } });
    for (const source of ['', '  \n', '// nothing yet', 'export const x = 1;', "console.log('loaded');"]) {
      await assert.rejects(
        h.runtime.deployFunction('projb', 'kept', { files: { 'index.ts': source } }),
        (e: unknown) =>
          e instanceof HearthError &&
          e.status === 400 &&
          e.code === 'invalid_function_source' &&
          /index\.ts has no handler/.test(e.message),
        JSON.stringify(source),
      );
    }
    assert.equal((await h.runtime.getFunction('projb', 'kept'))?.version, 1);
    assert.equal(await (await h.runtime.invokeFunction('projb', 'kept', get('kept'))).text(), 'v1');
    // Either handler form passes, however it is written.
    for (const source of [
      'export default { fetch: () => new Response("") };',
      'const app = { fetch: () => new Response("") };\nexport { app as default };',
      "import { serve } from 'https://deno.land/std@0.168.0/http/server.ts';\nserve(() => new Response(''));",
    ]) {
      await h.runtime.deployFunction('projb', 'forms', { files: { 'index.ts': source } });
    }
  });

  test('a static import of a node:* module workerd lacks is refused, naming it; a dynamic one is left to the code', async () => {
    await assert.rejects(
      h.runtime.deployFunction('projb', 'nodefs', {
        files: {
          'index.ts': "import fs from 'node:fs';\nDeno.serve(() => new Response(fs.readFileSync('/etc/hostname')));",
        },
      }),
      (e: unknown) =>
        e instanceof HearthError &&
        e.status === 400 &&
        e.code === 'function_bundle_failed' &&
        e.message.includes('index.ts:1:15: Cannot import "node:fs": the functions runtime (workerd) does not provide'),
    );
    await h.runtime.deployFunction('projb', 'nodefs', {
      files: {
        'index.ts': `import { Buffer } from 'node:buffer';
Deno.serve(async () => {
  let fs;
  try { fs = await import('node:fs'); } catch (e) { fs = (e as Error).message; }
  return new Response(Buffer.from(String(fs)).toString('base64'));
});`,
      },
    });
    const res = await h.runtime.invokeFunction('projb', 'nodefs', get('nodefs'));
    assert.match(Buffer.from(await res.text(), 'base64').toString(), /No such module "node:fs"/);
  });

  test("the list of node:* modules refused is exactly those of Node's that workerd lacks", async () => {
    const candidates = [
      ...new Set([
        ...builtinModules.map((m) => (m.startsWith('node:') ? m : `node:${m}`)),
        ...UNAVAILABLE_NODE_MODULES,
      ]),
    ];
    await h.runtime.deployFunction('projb', 'modules', {
      files: {
        'index.js': `const missing = [];
for (const name of ${JSON.stringify(candidates)}) {
  try { await import(name); } catch { missing.push(name); }
}
Deno.serve(() => Response.json(missing));`,
      },
    });
    const missing = await (await h.runtime.invokeFunction('projb', 'modules', get('modules'))).json();
    assert.deepEqual(missing.sort(), [...UNAVAILABLE_NODE_MODULES].sort());
  });
});

describe('streaming', () => {
  test('request and response bodies stream', async () => {
    await h.runtime.deployFunction('proja', 'stream', {
      files: {
        'index.ts': `Deno.serve(async (req) => {
  let bytes = 0;
  for await (const chunk of req.body!) bytes += chunk.length;
  const enc = new TextEncoder();
  let i = 0;
  const body = new ReadableStream({
    async pull(c) {
      if (i === 3) return c.close();
      await new Promise((r) => setTimeout(r, i === 0 ? 0 : 150));
      c.enqueue(enc.encode(\`chunk\${i++}:\${bytes};\`));
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/plain' } });
});`,
      },
    });
    const enc = new TextEncoder();
    const upload = new ReadableStream({
      start(c) {
        c.enqueue(enc.encode('a'.repeat(1000)));
        c.enqueue(enc.encode('b'.repeat(500)));
        c.close();
      },
    });
    const started = performance.now();
    const res = await h.runtime.invokeFunction(
      'proja',
      'stream',
      get('stream', '', { method: 'POST', body: upload, duplex: 'half' } as RequestInit),
    );
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const firstAt = performance.now() - started;
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    assert.equal(first + rest, 'chunk0:1500;chunk1:1500;chunk2:1500;');
    assert.ok(firstAt < performance.now() - started - 200, 'the first chunk arrived before the last was produced');
  });
});

describe('connections to workerd', () => {
  test('more requests at once than connections to workerd are queued and all answered', async () => {
    await h.runtime.deployFunction('projconn', 'slow', {
      files: {
        'index.ts':
          'Deno.serve(async (req) => { await new Promise((r) => setTimeout(r, 100)); return new Response(new URL(req.url).search); });',
      },
    });
    // Over the 256 connections an instance opens; the rest wait for a free one.
    const answers = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const res = await h.runtime.invokeFunction('projconn', 'slow', get('slow', `?n=${i}`));
        return [res.status, await res.text()];
      }),
    );
    assert.deepEqual(
      answers,
      Array.from({ length: 300 }, (_, i) => [200, `?n=${i}`]),
    );
    // The connections are reused afterwards.
    assert.equal(await (await h.runtime.invokeFunction('projconn', 'slow', get('slow', '?again'))).text(), '?again');
  });
});

describe('versions', () => {
  test('a redeploy while requests are in flight fails no request', async () => {
    const source = (v: number) => ({
      files: {
        'index.ts': `Deno.serve(async () => { await new Promise((r) => setTimeout(r, 200)); return new Response('v${v}'); });`,
      },
    });
    await h.runtime.deployFunction('proja', 'rolling', source(1));
    const call = async () => {
      const r = await h.runtime.invokeFunction('proja', 'rolling', get('rolling'));
      return `${r.status} ${await r.text()}`;
    };
    const first = Array.from({ length: 10 }, call);
    await new Promise((r) => setTimeout(r, 50));
    const deployed = await h.runtime.deployFunction('proja', 'rolling', source(2));
    const second = Array.from({ length: 10 }, call);
    await h.runtime.deployFunction('proja', 'rolling', source(3));
    const third = Array.from({ length: 10 }, call);
    const results = await Promise.all([...first, ...second, ...third]);
    assert.equal(deployed.version, 2);
    assert.ok(
      results.every((r) => r.startsWith('200 v')),
      results.join(','),
    );
    assert.deepEqual(new Set(results.slice(0, 10)), new Set(['200 v1']));
    assert.deepEqual(new Set(results.slice(20)), new Set(['200 v3']));
    assert.equal(await call(), '200 v3');
  });

  test('remove, list and invalid deploys', async () => {
    await h.runtime.deployFunction('projlist', 'one', { files: { 'index.js': "Deno.serve(() => new Response('1'))" } });
    await h.runtime.deployFunction('projlist', 'two', { files: { 'index.js': "Deno.serve(() => new Response('2'))" } });
    assert.deepEqual(
      (await h.runtime.listFunctions('projlist')).map((f) => f.name),
      ['one', 'two'],
    );
    await h.runtime.invokeFunction('projlist', 'one', get('one'));
    await h.runtime.removeFunction('projlist', 'one');
    await rejectsWith(h.runtime.invokeFunction('projlist', 'one', get('one')), 404, 'function_not_found');
    await rejectsWith(h.runtime.removeFunction('projlist', 'one'), 404, 'function_not_found');
    assert.deepEqual(
      (await h.runtime.listFunctions('projlist')).map((f) => f.name),
      ['two'],
    );
    await rejectsWith(
      h.runtime.deployFunction('projlist', 'Bad Name', { files: { 'index.js': '' } }),
      400,
      'invalid_function_name',
    );
    await rejectsWith(h.runtime.deployFunction('projlist', 'x', { files: {} }), 400, 'invalid_function_source');
    await rejectsWith(
      h.runtime.deployFunction('projlist', 'x', { files: { 'index.ts': 'const = 1' } }),
      400,
      'function_bundle_failed',
    );
    await rejectsWith(
      h.runtime.deployFunction('projlist', 'x', { files: { 'a.ts': '' }, entrypoint: 'b.ts' }),
      400,
      'invalid_function_entrypoint',
    );
    await rejectsWith(h.runtime.setSecrets('projlist', { SUPABASE_URL: 'x' }), 400, 'reserved_secret_name');
    assert.equal(await h.runtime.getFunction('projlist', 'x'), null);
  });
});

describe('invokeFunctionJson and logs', () => {
  test('returns status and JSON body; logs are captured per invocation', async () => {
    await h.runtime.deployFunction('projlog', 'echo', {
      files: {
        'index.ts': `console.log('booting');
Deno.serve(async (req) => {
  const body = await req.json();
  console.log('got', body);
  console.warn('careful');
  return Response.json({ echoed: body }, { status: 201 });
});`,
      },
    });
    const out = await h.runtime.invokeFunctionJson('projlog', 'echo', { n: 1 });
    assert.deepEqual(out, { status: 201, body: { echoed: { n: 1 } } });
    await h.runtime.invokeFunctionJson('projlog', 'echo', { n: 2 });
    const logs = await until(
      () => h.runtime.readLogs('projlog', 'echo', { limit: 50 }),
      (l) => l.filter((e) => e.message.startsWith('got')).length === 2,
    );
    const summaries = logs.filter((e) => e.request);
    assert.equal(summaries.length, 2);
    assert.equal(summaries[0].request?.status, 201);
    assert.equal(summaries[0].request?.method, 'POST');
    const second = summaries[0].invocationId;
    const lines = logs
      .filter((e) => e.invocationId === second && !e.request)
      .map((e) => `${e.level}:${e.message}`)
      .sort();
    assert.deepEqual(lines, ['log:got { n: 2 }', 'warn:careful']);
    assert.ok(logs.some((e) => e.invocationId === null && e.message === 'booting'));
    assert.equal((await h.runtime.readLogs('projlog', 'echo', { limit: 1 })).length, 1);
  });

  test('invokeFunctionJson reads a streamed answer too, and a text one as text', async () => {
    await h.runtime.deployFunction('projlog', 'chunks', {
      files: {
        'index.ts': `Deno.serve((req) => {
  const enc = new TextEncoder();
  if (new URL(req.url).pathname !== '/chunks') return new Response('wrong path');
  const body = new ReadableStream({ async start(c) { c.enqueue(enc.encode('\\uFEFF{"a":')); await new Promise((r) => setTimeout(r, 50)); c.enqueue(enc.encode('[1,"é"]}')); c.close(); } });
  return new Response(body, { status: 202, headers: { 'content-type': 'application/json' } });
});`,
      },
    });
    assert.deepEqual(await h.runtime.invokeFunctionJson('projlog', 'chunks', { x: 1 }), {
      status: 202,
      body: { a: [1, 'é'] },
    });
    await h.runtime.deployFunction('projlog', 'texty', {
      files: { 'index.ts': "Deno.serve(async (req) => new Response('got ' + await req.text()));" },
    });
    assert.deepEqual(await h.runtime.invokeFunctionJson('projlog', 'texty', { x: 1 }), {
      status: 200,
      body: 'got {"x":1}',
    });
  });

  test('logs page with the cursor of the last entry read, in the store of a runtime used alone too', async () => {
    const all = await h.runtime.readLogs('projlog', 'echo', { limit: 1000 });
    assert.ok(all.length >= 6);
    const pages = [];
    let before: string | undefined;
    for (;;) {
      const page = await h.runtime.readLogs('projlog', 'echo', { limit: 4, before });
      if (!page.length) break;
      pages.push(...page);
      before = page.at(-1)!.cursor;
    }
    assert.deepEqual(pages, all);
    await assert.rejects(h.runtime.readLogs('projlog', 'echo', { before: 'nope' }), { code: 'invalid_request' });
  });

  test('a project holds at most 100 secrets', async () => {
    await h.runtime.setSecrets('projcap', Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`S${i}`, 'v'])));
    await assert.rejects(h.runtime.setSecrets('projcap', { ONE_MORE: 'x' }), { status: 400, code: 'too_many_secrets' });
    assert.equal((await h.runtime.listSecrets('projcap')).length, 100);
  });

  test('secrets are listed as names and digests, and changes reach the function', async () => {
    await h.runtime.deployFunction('projsec', 'env', {
      files: {
        'index.ts': "Deno.serve(() => Response.json({ a: Deno.env.get('A') ?? null, b: Deno.env.get('B') ?? null }));",
      },
    });
    await h.runtime.setSecrets('projsec', { A: '1', B: '2' });
    assert.deepEqual((await h.runtime.invokeFunctionJson('projsec', 'env', null)).body, { a: '1', b: '2' });
    await h.runtime.unsetSecrets('projsec', ['B']);
    await h.runtime.setSecrets('projsec', { A: 'changed' });
    assert.deepEqual((await h.runtime.invokeFunctionJson('projsec', 'env', null)).body, { a: 'changed', b: null });
    const listed = await h.runtime.listSecrets('projsec');
    assert.deepEqual(
      listed.map((s) => s.name),
      ['A'],
    );
    assert.match(listed[0].digest, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(listed).includes('changed'));
  });
});
