// What a function must not be able to do: read host files or the platform's
// environment, see another project's secrets, reach private addresses, run
// past its time limit or its memory limit.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { HearthError } from '../../src/errors.ts';
import { until } from '../helpers/poll.ts';
import { get, leftoverChildren, startRuntime, type Harness } from './helpers.ts';

let h: Harness;
before(() => {
  process.env.HEARTH_TEST_CANARY = 'platform-secret';
  h = startRuntime({ timeoutMs: 1500, memoryLimitMb: 64 });
});
after(async () => {
  await h.close();
  delete process.env.HEARTH_TEST_CANARY;
  assert.deepEqual(await leftoverChildren(), [], 'no workerd process outlives shutdown');
});

const rejectsWith = (p: Promise<unknown>, status: number, code: string) =>
  assert.rejects(p, (e: unknown) => e instanceof HearthError && e.status === status && e.code === code);

describe('secrets and environment', () => {
  test("two projects' functions see only their own secrets", async () => {
    const source = {
      files: {
        'index.ts':
          'Deno.serve(() => Response.json({ deno: Deno.env.toObject(), process: globalThis.process?.env ?? null }));',
      },
    };
    await h.runtime.deployFunction('tenanta', 'env', source, { SHARED_NAME: 'a-value', ONLY_A: 'a' });
    await h.runtime.deployFunction('tenantb', 'env', source, { SHARED_NAME: 'b-value' });
    const a = (await h.runtime.invokeFunctionJson('tenanta', 'env', null)).body as { deno: object; process: object };
    const b = (await h.runtime.invokeFunctionJson('tenantb', 'env', null)).body as { deno: object; process: object };
    assert.deepEqual(a.deno, { SHARED_NAME: 'a-value', ONLY_A: 'a' });
    assert.deepEqual(b.deno, { SHARED_NAME: 'b-value' });
    // Nothing of the platform (HOME, PATH, DATABASE_URL, HEARTH_*) is visible either way.
    assert.deepEqual(a.process, { SHARED_NAME: 'a-value', ONLY_A: 'a' });
    assert.ok(!JSON.stringify(b).includes('platform-secret') && !JSON.stringify(a).includes('platform-secret'));
  });
});

describe('host files', () => {
  test('a function cannot read /etc/passwd or the data dir', async () => {
    const target = `${h.config.dataDir}/functions/projects/hostfs/secrets.json`;
    await h.runtime.setSecrets('hostfs', { TOKEN: 'super-secret-token' });
    await h.runtime.deployFunction('hostfs', 'reader', {
      files: {
        'index.ts': `Deno.serve(async () => {
  const out: Record<string, string> = {};
  const attempt = async (label: string, fn: () => Promise<unknown>) => {
    try { out[label] = 'READ ' + String(await fn()).slice(0, 200); } catch (e) { out[label] = 'refused: ' + (e as Error).message; }
  };
  for (const file of ['/etc/passwd', ${JSON.stringify(target)}]) {
    await attempt('node:fs ' + file, async () => { const fs: any = await import('node:' + 'fs'); return fs.readFileSync(file, 'utf8'); });
    await attempt('Deno.readTextFile ' + file, async () => (Deno as any).readTextFile(file));
    await attempt('fetch file:// ' + file, async () => (await fetch('file://' + file)).text());
    await attempt('import ' + file, async () => JSON.stringify(await import(file)));
  }
  return Response.json(out);
});`,
      },
    });
    const { body } = await h.runtime.invokeFunctionJson('hostfs', 'reader', null);
    const results = body as Record<string, string>;
    assert.equal(Object.keys(results).length, 8);
    for (const [label, result] of Object.entries(results)) assert.match(result, /^refused: /, label);
    assert.ok(!JSON.stringify(results).includes('root:') && !JSON.stringify(results).includes('super-secret-token'));
  });

  test('a deploy cannot bundle a host file', async () => {
    for (const spec of [
      '/etc/passwd',
      '../../../../etc/passwd',
      // Provided remote modules name one package entry; nothing beside or inside it.
      'npm:@supabase/supabase-js@2/../../../../etc/passwd',
      'https://esm.sh/@supabase/supabase-js@2/dist/index.mjs',
      'npm:@supabase/supabase-js@2/cors/../package.json',
      'jsr:@supabase/supabase-js@2/package.json',
      'npm:@supabase/auth-js',
      'https://deno.land/std@0.168.0/http/../../../etc/passwd',
      `${h.config.dataDir}/functions/projects/hostfs/secrets.json`,
    ]) {
      await rejectsWith(
        h.runtime.deployFunction('hostfs', 'bundler', {
          files: { 'index.ts': `import x from ${JSON.stringify(spec)} with { type: 'json' }; console.log(x);` },
        }),
        400,
        'function_bundle_failed',
      );
    }
  });
});

describe('outbound network', () => {
  const probe = `Deno.serve(async (req) => {
  const target = new URL(req.url).searchParams.get('url')!;
  try { const r = await fetch(target, { signal: AbortSignal.timeout(3000) }); return new Response('reached ' + r.status + ' ' + await r.text()); }
  catch (e) { return new Response('refused: ' + (e as Error).message, { status: 502 }); }
});`;

  test('loopback, private, link-local, CGNAT and metadata addresses are refused, by name too', async () => {
    await h.runtime.deployFunction('netp', 'probe', { files: { 'index.ts': probe } });
    const targets = [
      'http://127.0.0.1:5432/',
      'http://169.254.169.254/latest/meta-data/',
      'http://localhost:5432/',
      'http://[::1]:5432/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://100.64.0.1/',
      'http://0.0.0.0:5432/',
      'http://[::ffff:127.0.0.1]:5432/',
      'http://[fd00::1]/',
    ];
    const references: string[] = [];
    for (const url of targets) {
      const res = await h.runtime.invokeFunction('netp', 'probe', get('probe', `?url=${encodeURIComponent(url)}`));
      assert.equal(res.status, 502, url);
      const text = await res.text();
      assert.match(text, /^refused: /, url);
      const reference = /reference = (\w+)/.exec(text)?.[1];
      if (reference) references.push(reference);
    }
    const logs = await until(
      () => h.runtime.readLogs('netp', 'probe', { limit: 100 }),
      (l) => references.every((r) => l.some((e) => e.message.includes(`reference = ${r}`))),
    );
    // What the function saw ("internal error; reference = X") leads to the reason in the logs.
    assert.ok(references.length > 0);
    for (const reference of references)
      assert.ok(
        logs.some(
          (e) => e.level === 'warn' && e.message.includes(`refused`) && e.message.includes(`reference = ${reference}`),
        ),
        reference,
      );
    assert.ok(
      logs.some((e) => e.level === 'warn' && /Outbound connection to 127\.0\.0\.1:5432 refused/.test(e.message)),
    );
    assert.ok(
      logs.some((e) => e.level === 'warn' && /Outbound connection to 169\.254\.169\.254:80 refused/.test(e.message)),
    );
  });

  test('addresses in HEARTH_OUTBOUND_ALLOW are reachable (and fetch works)', async () => {
    const server = http.createServer((_, res) => res.end('pong'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const allowed = startRuntime({}, { outboundAllow: ['127.0.0.1'] });
    try {
      await allowed.runtime.deployFunction('netok', 'probe', { files: { 'index.ts': probe } });
      const ok = await allowed.runtime.invokeFunction(
        'netok',
        'probe',
        get('probe', `?url=${encodeURIComponent(`http://127.0.0.1:${port}/`)}`),
      );
      assert.equal(await ok.text(), 'reached 200 pong');
      const still = await allowed.runtime.invokeFunction(
        'netok',
        'probe',
        get('probe', `?url=${encodeURIComponent('http://169.254.169.254/')}`),
      );
      assert.equal(still.status, 502);
    } finally {
      await allowed.close();
      server.close();
    }
  });
});

describe('limits', () => {
  test('a function past its wall-clock limit gets 504 function_timeout, and the next call works', async () => {
    await h.runtime.deployFunction('limits', 'spin', {
      files: {
        'index.ts':
          "Deno.serve((req) => { if (new URL(req.url).searchParams.has('spin')) { while (true) {} } return new Response('fine'); });",
      },
    });
    await h.runtime.deployFunction('limits', 'sleepy', {
      files: {
        'index.ts':
          "Deno.serve(async () => { await new Promise((r) => setTimeout(r, 60_000)); return new Response('late'); });",
      },
    });
    const started = performance.now();
    await rejectsWith(h.runtime.invokeFunction('limits', 'spin', get('spin', '?spin')), 504, 'function_timeout');
    await rejectsWith(h.runtime.invokeFunction('limits', 'sleepy', get('sleepy')), 504, 'function_timeout');
    assert.ok(performance.now() - started < 6000);
    // The spinning instance was replaced.
    assert.equal(await (await h.runtime.invokeFunction('limits', 'spin', get('spin'))).text(), 'fine');
    const logs = await h.runtime.readLogs('limits', 'spin');
    assert.ok(logs.some((e) => e.request?.status === 504 && e.request.code === 'function_timeout'));
  });

  test('a memory hog is stopped with 546 function_memory_limit, and the next call works', async () => {
    await h.runtime.deployFunction('limits', 'hog', {
      files: {
        'index.ts':
          "Deno.serve((req) => { if (!new URL(req.url).searchParams.has('hog')) return new Response('fine'); const keep: number[][] = []; while (true) keep.push(new Array(1e6).fill(Math.random())); });",
      },
    });
    await rejectsWith(h.runtime.invokeFunction('limits', 'hog', get('hog', '?hog')), 546, 'function_memory_limit');
    assert.equal(await (await h.runtime.invokeFunction('limits', 'hog', get('hog'))).text(), 'fine');
  });
});
