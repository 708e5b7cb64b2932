// Functions through a real Hearth: deploy and secrets through the management
// API, invocation at /functions/v1/{name} with supabase-js and fetch.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createClient, FunctionsHttpError } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { signAccessToken } from '../../src/auth/access-token.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { leftoverChildren } from './helpers.ts';
import { createProject, defaultProject, deploy, putSecrets, until, type ProjectHandle } from './http-helpers.ts';

let h: TestHearth;
let main: ProjectHandle;
let other: ProjectHandle;

before(async () => {
  h = await startTestHearth();
  main = defaultProject(h);
  other = await createProject(h, 'Other');
});
after(async () => {
  await h?.close();
  assert.deepEqual(await leftoverChildren(), [], 'no workerd process outlives the server');
});

const client = (p: ProjectHandle = main) =>
  createClient(p.base, p.publishable, {
    realtime: { transport: WebSocket as never },
    auth: { persistSession: false, autoRefreshToken: false },
  });

/** fetch against a project's /functions/v1 with its publishable key unless `key` says otherwise. */
function call(p: ProjectHandle, path: string, init: RequestInit & { key?: string | null } = {}) {
  const headers = new Headers(init.headers);
  const key = init.key === undefined ? p.publishable : init.key;
  if (key && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
  return fetch(`${p.base}/functions/v1/${path}`, { ...init, headers, duplex: 'half' } as RequestInit);
}

/** A POST through node:http on `agent`, saying whether it went over a connection used before. */
function rawPost(agent: http.Agent, url: string, body: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => resolve({ status: res.statusCode!, body: text, reused: req.reusedSocket }));
      },
    );
    req.on('error', reject).end(body);
  });
}

const ECHO = `Deno.serve(async (req) => {
  const url = new URL(req.url);
  return Response.json({
    method: req.method,
    path: url.pathname,
    query: url.search,
    authorization: req.headers.get('authorization'),
    custom: req.headers.get('x-custom'),
    body: ['GET', 'HEAD'].includes(req.method) ? null : await req.text(),
  });
});`;

describe('deploy and invoke', () => {
  test('deploy through the API, invoke through supabase-js functions.invoke', async () => {
    const deployed = await deploy(h, main.ref, 'hello', {
      source: `interface Body { name: string }
Deno.serve(async (req: Request) => {
  const { name }: Body = await req.json();
  return new Response(JSON.stringify({ message: \`Hello \${name}!\` }), { headers: { 'Content-Type': 'application/json' } });
});`,
    });
    assert.equal(deployed.version, 1);
    assert.equal(deployed.verify_jwt, true);
    const { data, error } = await client().functions.invoke('hello', { body: { name: 'Functions' } });
    assert.equal(error, null);
    assert.deepEqual(data, { message: 'Hello Functions!' });

    const got = await h.api('GET', `/v1/projects/${main.ref}/functions/hello`);
    assert.equal(got.status, 200);
    assert.equal(got.body.name, 'hello');
    assert.equal(got.body.version, 1);
    assert.equal(got.body.verify_jwt, true);
    assert.ok(!Number.isNaN(Date.parse(got.body.updated_at)));
    const list = await h.api('GET', `/v1/projects/${main.ref}/functions`);
    assert.deepEqual(
      list.body.map((f: { name: string }) => f.name),
      ['hello'],
    );
  });

  test('a redeploy publishes the next version and serves it', async () => {
    await deploy(h, main.ref, 'versioned', { source: "Deno.serve(() => new Response('one'));" });
    assert.equal(await (await call(main, 'versioned')).text(), 'one');
    const second = await deploy(h, main.ref, 'versioned', {
      source: "export default { fetch: () => new Response('two') };",
      verify_jwt: false,
    });
    assert.equal(second.version, 2);
    assert.equal(second.verify_jwt, false);
    assert.equal(await (await call(main, 'versioned')).text(), 'two');
  });

  test('several files with an entrypoint', async () => {
    await deploy(h, main.ref, 'bundle', {
      entrypoint: 'main.ts',
      files: {
        'main.ts': "import { shout } from './lib/shout.ts';\nDeno.serve(() => new Response(shout('hi')));",
        'lib/shout.ts': 'export const shout = (s: string) => s.toUpperCase();',
      },
    });
    assert.equal(await (await call(main, 'bundle')).text(), 'HI');
  });

  test('any method; the function sees /{name}/{suffix}?query, the headers and the body', async () => {
    await deploy(h, main.ref, 'echo', { source: ECHO });
    const res = await call(main, 'echo/a/b%20c?x=1&y=2', {
      method: 'PATCH',
      headers: { 'x-custom': 'yes', 'content-type': 'text/plain' },
      body: 'payload',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      method: 'PATCH',
      path: '/echo/a/b%20c',
      query: '?x=1&y=2',
      authorization: `Bearer ${main.publishable}`,
      custom: 'yes',
      body: 'payload',
    });
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const r = await call(main, 'echo', { method });
      assert.equal((await r.json()).method, method);
    }
    const head = await call(main, 'echo', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });

  test("the runtime's own header never reaches the function, and a caller cannot send it; the request's headers are immutable", async () => {
    await deploy(h, main.ref, 'inner', {
      source: `Deno.serve((req) => {
  console.log('in');
  let immutable = false;
  try { req.headers.set('x-set', '1'); } catch { immutable = true; }
  return Response.json({ names: [...req.headers.keys()], cf: req.cf, immutable });
});`,
    });
    const res = await call(main, 'inner', {
      headers: { 'x-hearth-cf': '{"probe":true,"invocation":"forged"}', 'x-custom': 'yes' },
    });
    assert.equal(res.status, 200);
    const { names, cf, immutable } = (await res.json()) as {
      names: string[];
      cf: { invocation: string };
      immutable: boolean;
    };
    assert.ok(names.includes('x-custom'));
    // As in Deno.serve and Workers: the incoming request's headers cannot be changed.
    assert.equal(immutable, true);
    assert.deepEqual(
      names.filter((n) => n.startsWith('x-hearth')),
      [],
    );
    // request.cf holds the invocation id the function's log lines carry.
    assert.match(cf.invocation, /^[0-9a-f-]{36}$/);
    const logs = await until(
      async () =>
        (await h.api('GET', `/v1/projects/${main.ref}/functions/inner/logs`)).body as {
          message: string;
          invocation_id: string;
        }[],
      (l) => l.some((e) => e.message === 'in'),
    );
    assert.equal(logs.find((e) => e.message === 'in')!.invocation_id, cf.invocation);
  });

  test("the function sees the caller's address in X-Forwarded-For and X-Real-IP, never the values the caller sent", async () => {
    await deploy(h, main.ref, 'client-address', {
      source: `Deno.serve((req) => Response.json({
  forwardedFor: req.headers.get('x-forwarded-for'),
  realIp: req.headers.get('x-real-ip'),
}));`,
    });
    // No HEARTH_TRUSTED_PROXIES here: the address is the connection's, whatever the headers claim.
    const sent: Record<string, string>[] = [{}, { 'x-forwarded-for': '203.0.113.7', 'x-real-ip': '203.0.113.8' }];
    for (const headers of sent) {
      const res = await call(main, 'client-address', { headers });
      assert.deepEqual(await res.json(), { forwardedFor: '127.0.0.1', realIp: '127.0.0.1' }, JSON.stringify(headers));
    }
  });

  test('other methods (WebDAV and the like) reach the function; the few workerd cannot carry are 405 with Allow', async () => {
    await deploy(h, main.ref, 'davecho', { source: ECHO });
    const res = await call(main, 'davecho/cal?depth=1', {
      method: 'PROPFIND',
      headers: { 'content-type': 'application/xml' },
      body: '<propfind/>',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      method: 'PROPFIND',
      path: '/davecho/cal',
      query: '?depth=1',
      authorization: `Bearer ${main.publishable}`,
      custom: null,
      body: '<propfind/>',
    });
    for (const method of ['REPORT', 'MKCOL', 'LOCK'])
      assert.equal((await (await call(main, 'davecho', { method })).json()).method, method);
    // verify_jwt still applies to them.
    assert.equal((await call(main, 'davecho', { method: 'PROPFIND', key: null })).status, 401);

    const refused = await call(main, 'davecho', { method: 'MKCALENDAR', body: 'x' });
    assert.equal(refused.status, 405);
    assert.equal((await refused.json()).error.code, 'method_not_allowed');
    const allow = refused.headers.get('allow')!.split(', ');
    for (const m of ['GET', 'POST', 'PROPFIND', 'OPTIONS']) assert.ok(allow.includes(m), m);
    assert.ok(!allow.includes('MKCALENDAR'));
  });

  test('a path with characters fetch would escape, and a Host that is no host name, reach the function as a URL parser reads them', async () => {
    await deploy(h, main.ref, 'rawurl', { source: 'Deno.serve((req) => Response.json({ url: req.url }));' });
    const { hostname, port } = new URL(main.base);
    // Written by hand: fetch would escape the path and refuse the Host.
    const raw = async (target: string, host: string) => {
      const socket = net.connect(Number(port), hostname);
      await once(socket, 'connect');
      socket.write(
        `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${main.publishable}\r\nConnection: close\r\n\r\n`,
      );
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      assert.equal(text.split('\r\n')[0], 'HTTP/1.1 200 OK');
      return (JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { url: string }).url;
    };
    const host = new URL(main.base).host;
    assert.equal(
      await raw('/functions/v1/rawurl/a"b{}`<>?q=|\'', host),
      `http://${host}/rawurl/a%22b%7B%7D%60%3C%3E?q=|%27`,
    );
    assert.equal(await raw('/functions/v1/rawurl/x', 'odd host'), 'http://localhost/rawurl/x');
    assert.equal(
      await raw('/functions/v1/rawurl/x', host.toUpperCase().replace('LOCALHOST', 'LocalHost')),
      `http://${host}/rawurl/x`,
    );
  });

  test('status, headers and cookies of the response come through', async () => {
    await deploy(h, main.ref, 'headers', {
      source: `Deno.serve(() => {
  const headers = new Headers({ 'x-fn': 'yes', 'content-type': 'text/plain' });
  headers.append('set-cookie', 'a=1; Path=/');
  headers.append('set-cookie', 'b=2; Path=/');
  return new Response('created', { status: 201, headers });
});`,
    });
    const res = await call(main, 'headers', { method: 'POST' });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-fn'), 'yes');
    assert.deepEqual(res.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
    assert.equal(await res.text(), 'created');
  });

  test('bodies come through byte for byte, with the content type the function set or none', async () => {
    await deploy(h, main.ref, 'bytes', {
      source: `Deno.serve((req) => {
  const kind = new URL(req.url).searchParams.get('kind');
  if (kind === 'binary') return new Response(new Uint8Array([0, 1, 128, 255, 10]), { headers: { 'content-type': 'application/octet-stream' } });
  if (kind === 'untyped') { const res = new Response('plain'); res.headers.delete('content-type'); return res; }
  return new Response('é'.repeat(100000), { headers: { 'content-type': 'text/plain; charset=utf-8' } });
});`,
    });
    const binary = await call(main, 'bytes?kind=binary');
    assert.equal(binary.headers.get('content-type'), 'application/octet-stream');
    assert.deepEqual([...new Uint8Array(await binary.arrayBuffer())], [0, 1, 128, 255, 10]);
    const untyped = await call(main, 'bytes?kind=untyped');
    assert.equal(untyped.headers.get('content-type'), null);
    assert.equal(await untyped.text(), 'plain');
    const large = await call(main, 'bytes?kind=large');
    assert.equal(await large.text(), 'é'.repeat(100000));
    const head = await call(main, 'bytes?kind=binary', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'application/octet-stream');
    assert.equal(await head.text(), '');
  });

  test('a body the function compressed itself (Content-Encoding set) goes out as it is, compressed once, as on Deno', async () => {
    await deploy(h, main.ref, 'gz', {
      source: `Deno.serve(() => {
  const body = new Blob(['squeeze me '.repeat(1000)]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Response(body, { headers: { 'content-encoding': 'gzip', 'content-type': 'text/plain' } });
});`,
    });
    const res = await call(main, 'gz');
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    assert.equal(await res.text(), 'squeeze me '.repeat(1000), 'fetch undoes one gzip');
  });

  test('the request body streams in, past the server-wide body limit', async () => {
    await deploy(h, main.ref, 'digest', {
      source: `Deno.serve(async (req) => {
  let size = 0; const chunks: Uint8Array[] = [];
  for await (const c of req.body!) { size += c.length; chunks.push(c); }
  const all = new Uint8Array(size); let o = 0; for (const c of chunks) { all.set(c, o); o += c.length; }
  const d = await crypto.subtle.digest('SHA-256', all);
  return Response.json({ size, sha256: [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('') });
});`,
    });
    const chunk = Buffer.alloc(256 * 1024, 'x');
    const total = 20;
    const hash = createHash('sha256');
    for (let i = 0; i < total; i++) hash.update(chunk);
    let sent = 0;
    const body = new ReadableStream({
      pull(c) {
        if (sent++ < total) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await call(main, 'digest', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body,
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { size: total * chunk.length, sha256: hash.digest('hex') });
  });

  test("a function that answers without reading a large body: every concurrent call gets its answer, the caller's connection stays usable", async () => {
    await deploy(h, main.ref, 'ignores', { source: 'Deno.serve(() => Response.json({ hi: 1 }))' });
    const body = JSON.stringify({ x: 'a'.repeat(1_000_000) });
    const headers = { 'content-type': 'application/json' };
    const answers = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const res = await call(main, 'ignores', { method: 'POST', headers, body });
        return { status: res.status, body: await res.json() };
      }),
    );
    assert.deepEqual(answers, Array(8).fill({ status: 200, body: { hi: 1 } }));
    // One keep-alive connection, three calls in a row: the unread remainder of
    // each body is dropped and the connection carries the next call.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const calls = [];
      for (let i = 0; i < 3; i++)
        calls.push(
          await rawPost(agent, `${main.base}/functions/v1/ignores`, body, {
            ...headers,
            authorization: `Bearer ${main.publishable}`,
          }),
        );
      assert.deepEqual(calls, [
        { status: 200, body: '{"hi":1}', reused: false },
        { status: 200, body: '{"hi":1}', reused: true },
        { status: 200, body: '{"hi":1}', reused: true },
      ]);
    } finally {
      agent.destroy();
    }
  });

  test('functions that read or stream back large bodies get every byte under concurrency', async () => {
    await deploy(h, main.ref, 'echo-stream', { source: 'Deno.serve((req) => new Response(req.body))' });
    await deploy(h, main.ref, 'echo-text', { source: 'Deno.serve(async (req) => new Response(await req.text()))' });
    const bodies = Array.from({ length: 8 }, (_, i) => String.fromCharCode(97 + i).repeat(1_000_000) + i);
    for (const name of ['echo-stream', 'echo-text']) {
      const echoed = await Promise.all(
        bodies.map(async (body) => {
          const res = await call(main, name, { method: 'POST', body });
          return `${res.status} ${(await res.text()) === body}`;
        }),
      );
      assert.deepEqual(echoed, Array(8).fill('200 true'), name);
    }
  });

  test('a caller that goes away mid-upload is logged as client_cancelled, not as a crash', async () => {
    await deploy(h, main.ref, 'sink', {
      source:
        "Deno.serve(async (req) => { console.log('reading'); return new Response(String((await req.arrayBuffer()).byteLength)); });",
    });
    const logs = async () =>
      (await h.api('GET', `/v1/projects/${main.ref}/functions/sink/logs`)).body as {
        message: string;
        error_code?: string | null;
      }[];
    const gone = new AbortController();
    let pulls = 0;
    const body = new ReadableStream({
      async pull(c) {
        if (pulls++ < 2) return c.enqueue(new Uint8Array(128 * 1024));
        // The function is reading the upload: now the caller goes away.
        await until(logs, (l) => l.some((e) => e.message === 'reading'));
        gone.abort();
      },
    });
    await assert.rejects(call(main, 'sink', { method: 'POST', body, signal: gone.signal }));
    const seen = await until(logs, (l) => l.some((e) => e.error_code !== undefined));
    assert.deepEqual(
      seen.filter((e) => e.error_code !== undefined).map((e) => e.error_code),
      ['client_cancelled'],
    );
    // The instance is unharmed.
    assert.equal(await (await call(main, 'sink', { method: 'POST', body: 'abc' })).text(), '3');
  });

  test('delete: the function is gone from the API and the data plane', async () => {
    await deploy(h, main.ref, 'doomed', { source: "Deno.serve(() => new Response('x'));" });
    const del = await h.api('DELETE', `/v1/projects/${main.ref}/functions/doomed`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { name: 'doomed', deleted: true });
    const res = await call(main, 'doomed');
    assert.equal(res.status, 404);
    assert.equal((await res.json()).error.code, 'function_not_found');
    assert.equal(
      (await h.api('GET', `/v1/projects/${main.ref}/functions/doomed`)).body.error.code,
      'function_not_found',
    );
    assert.equal((await h.api('DELETE', `/v1/projects/${main.ref}/functions/doomed`)).status, 404);
    // A later deploy of the name continues the version sequence.
    assert.equal((await deploy(h, main.ref, 'doomed', { source: "Deno.serve(() => new Response('y'));" })).version, 2);
  });
});

describe('management refusals', () => {
  const cases: [string, string, Record<string, unknown> | undefined, number, string][] = [
    ['invalid name', 'Bad_Name', { source: 'Deno.serve(() => new Response(""))' }, 400, 'invalid_function_name'],
    ['name too long', 'a'.repeat(65), { source: 'Deno.serve(() => new Response(""))' }, 400, 'invalid_function_name'],
    ['source and files', 'x', { source: 'a', files: { 'index.ts': 'a' } }, 400, 'invalid_function_source'],
    ['neither source nor files', 'x', { verify_jwt: true }, 400, 'invalid_function_source'],
    ['source not a string', 'x', { source: 42 }, 400, 'invalid_function_source'],
    ['files not an object', 'x', { files: ['index.ts'] }, 400, 'invalid_function_source'],
    ['no files', 'x', { files: {} }, 400, 'invalid_function_source'],
    ['file path leaving the bundle', 'x', { files: { '../index.ts': 'x' } }, 400, 'invalid_function_source'],
    [
      'unknown entrypoint',
      'x',
      { files: { 'a.ts': 'x', 'b.ts': 'y' }, entrypoint: 'c.ts' },
      400,
      'invalid_function_entrypoint',
    ],
    [
      'an entrypoint that is not code',
      'x',
      { source: '{"a": 1}', entrypoint: 'data.json' },
      400,
      'invalid_function_entrypoint',
    ],
    ['verify_jwt not boolean', 'x', { source: 'x', verify_jwt: 'no' }, 400, 'invalid_request'],
    ['syntax error', 'x', { source: 'Deno.serve(() => {' }, 400, 'function_bundle_failed'],
    [
      'remote import',
      'x',
      { source: "import x from 'npm:left-pad'; Deno.serve(() => new Response(x));" },
      400,
      'function_bundle_failed',
    ],
    // Modules that could never answer: refused rather than published over a working version.
    ['empty source', 'x', { source: '' }, 400, 'invalid_function_source'],
    ['no handler', 'x', { source: 'export const answer = 42;' }, 400, 'invalid_function_source'],
    [
      'a node module workerd lacks',
      'x',
      { source: "import fs from 'node:fs'; Deno.serve(() => new Response(fs.readFileSync('/etc/hostname')));" },
      400,
      'function_bundle_failed',
    ],
    ['body not an object', 'x', undefined, 400, 'invalid_request'],
    // A misspelt verify_jwt must not silently deploy with the default.
    ['unknown field', 'x', { source: 'Deno.serve(() => new Response(""))', verifyJwt: false }, 400, 'unknown_field'],
    // PostgreSQL cannot store U+0000: refused up front rather than failing in the store.
    [
      'NUL in the source',
      'x',
      { source: 'Deno.serve(() => new Response("a\u0000b"));' },
      400,
      'invalid_function_source',
    ],
    [
      'NUL in a file path',
      'x',
      { files: { 'index.ts': 'Deno.serve(() => new Response(""));', 'a\u0000.ts': '' }, entrypoint: 'index.ts' },
      400,
      'invalid_function_source',
    ],
  ];
  for (const [label, name, body, status, code] of cases) {
    test(`deploy: ${label} → ${status} ${code}`, async () => {
      const res =
        body === undefined
          ? await h.api('PUT', `/v1/projects/${main.ref}/functions/${name}`, {
              raw: '[1]',
              headers: { 'content-type': 'application/json' },
            })
          : await h.api('PUT', `/v1/projects/${main.ref}/functions/${name}`, { body });
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(res.body.error.code, code);
    });
  }

  test('a refused deploy leaves no version behind', async () => {
    await h.api('PUT', `/v1/projects/${main.ref}/functions/neverdeployed`, { body: { source: 'Deno.serve(() => {' } });
    assert.equal((await h.api('GET', `/v1/projects/${main.ref}/functions/neverdeployed`)).status, 404);
  });

  test('sessions and roles: 401 without a session or with a project key, 403 for a developer, 404 for an unknown project', async () => {
    const paths = [`/v1/projects/${main.ref}/functions`, `/v1/projects/${main.ref}/secrets`];
    for (const path of paths) {
      assert.equal((await h.api('GET', path, { token: null })).status, 401);
      const withKey = await h.api('GET', path, { token: main.secret });
      assert.equal(withKey.status, 401);
      assert.equal(withKey.body.error.code, 'unauthorized');
    }
    const orgs = await h.api('GET', '/v1/organizations');
    await h.api('POST', `/v1/organizations/${orgs.body[0].id}/members`, {
      body: { email: 'dev@fn.test', password: 'a-long-password', role: 'developer' },
    });
    const dev = (
      await h.api('POST', '/v1/login', { body: { email: 'dev@fn.test', password: 'a-long-password' }, token: null })
    ).body.access_token;
    for (const [method, path] of [
      ['GET', paths[0]],
      ['PUT', `/v1/projects/${main.ref}/functions/x`],
      ['GET', paths[1]],
    ] as const) {
      const res = await h.api(method, path!, { token: dev, body: method === 'PUT' ? { source: 'x' } : undefined });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'forbidden');
    }
    assert.equal((await h.api('GET', '/v1/projects/nosuchprojectrefxxxx/functions')).status, 404);
  });

  test('logs: unknown function 404, bad limit 400', async () => {
    const missing = await h.api('GET', `/v1/projects/${main.ref}/functions/nothere/logs`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'function_not_found');
    await deploy(h, main.ref, 'quiet', { source: "Deno.serve(() => new Response('x'));" });
    for (const limit of ['0', '1001', 'abc', '1.5']) {
      const res = await h.api('GET', `/v1/projects/${main.ref}/functions/quiet/logs?limit=${limit}`);
      assert.equal(res.status, 400, limit);
      assert.equal(res.body.error.code, 'invalid_request');
    }
  });
});

describe('secrets', () => {
  const ENV =
    'Deno.serve(() => Response.json({ env: Deno.env.toObject(), process: globalThis.process?.env ?? null }));';

  test('set through the API: listed as names and digests, visible to functions as env', async () => {
    const listed = await putSecrets(h, main.ref, { API_KEY: 'k-123', OTHER: 'o-456' });
    assert.deepEqual(listed, [
      { name: 'API_KEY', value: createHash('sha256').update('k-123').digest('hex') },
      { name: 'OTHER', value: createHash('sha256').update('o-456').digest('hex') },
    ]);
    const got = await h.api('GET', `/v1/projects/${main.ref}/secrets`);
    assert.deepEqual(got.body, listed);
    assert.ok(!JSON.stringify(got.body).includes('k-123'));

    await deploy(h, main.ref, 'env', { source: ENV });
    const { data } = await client().functions.invoke('env', { body: {} });
    assert.equal(data.env.API_KEY, 'k-123');
    assert.equal(data.env.OTHER, 'o-456');
    assert.equal(data.process.API_KEY, 'k-123');
    // What Supabase provides: the project URL, its publishable key and its secret key, each
    // also under its older name; nothing of the platform's.
    assert.equal(data.env.SUPABASE_URL, main.base);
    assert.equal(data.env.SUPABASE_ANON_KEY, main.publishable);
    assert.equal(data.env.SUPABASE_PUBLISHABLE_KEY, main.publishable);
    assert.equal(data.env.SUPABASE_SERVICE_ROLE_KEY, main.secret);
    assert.equal(data.env.SUPABASE_SECRET_KEY, main.secret);
    // Supabase's current defaults: every key of each type by name, and the public JWKS.
    assert.deepEqual(JSON.parse(data.env.SUPABASE_PUBLISHABLE_KEYS), { default: main.publishable });
    assert.deepEqual(JSON.parse(data.env.SUPABASE_SECRET_KEYS), { default: main.secret });
    const jwks = await (await fetch(`${main.base}/auth/v1/.well-known/jwks.json`)).json();
    assert.deepEqual(JSON.parse(data.env.SUPABASE_JWKS), jwks);
    assert.ok(jwks.keys.length > 0 && jwks.keys.every((k: { d?: string }) => k.d === undefined), 'public keys only');
    // Not SUPABASE_DB_URL: a function's network could not reach the database.
    assert.deepEqual(Object.keys(data.env).sort(), [
      'API_KEY',
      'OTHER',
      'SUPABASE_ANON_KEY',
      'SUPABASE_JWKS',
      'SUPABASE_PUBLISHABLE_KEY',
      'SUPABASE_PUBLISHABLE_KEYS',
      'SUPABASE_SECRET_KEY',
      'SUPABASE_SECRET_KEYS',
      'SUPABASE_SERVICE_ROLE_KEY',
      'SUPABASE_URL',
    ]);
  });

  test('a key created, renamed or revoked is in SUPABASE_SECRET_KEYS of the next request', async () => {
    const secretKeys = async () =>
      JSON.parse((await client().functions.invoke('env', { body: {} })).data.env.SUPABASE_SECRET_KEYS);
    const created = await h.api('POST', `/v1/projects/${main.ref}/api-keys`, {
      body: { type: 'secret', name: 'billing_worker' },
    });
    assert.equal(created.status, 201);
    assert.deepEqual(await secretKeys(), { default: main.secret, billing_worker: created.body.api_key });
    const renamed = await h.api('PATCH', `/v1/projects/${main.ref}/api-keys/${created.body.id}`, {
      body: { name: 'billing' },
    });
    assert.equal(renamed.status, 200);
    assert.deepEqual(await secretKeys(), { default: main.secret, billing: created.body.api_key });
    assert.equal((await h.api('DELETE', `/v1/projects/${main.ref}/api-keys/${created.body.id}`)).status, 200);
    assert.deepEqual(await secretKeys(), { default: main.secret });
  });

  test('a changed or deleted secret is seen by the next request', async () => {
    await putSecrets(h, main.ref, { API_KEY: 'rotated' });
    let { data } = await client().functions.invoke('env', { body: {} });
    assert.equal(data.env.API_KEY, 'rotated');
    const del = await h.api('DELETE', `/v1/projects/${main.ref}/secrets`, { body: ['API_KEY', 'NEVER_SET'] });
    assert.equal(del.status, 200);
    assert.deepEqual(
      del.body.map((s: { name: string }) => s.name),
      ['OTHER'],
    );
    ({ data } = await client().functions.invoke('env', { body: {} }));
    assert.equal(data.env.API_KEY, undefined);
    assert.equal(data.env.OTHER, 'o-456');
  });

  test("two projects' functions see only their own secrets", async () => {
    await putSecrets(h, other.ref, { API_KEY: 'other-project-key', ONLY_OTHER: '1' });
    await deploy(h, other.ref, 'env', { source: ENV });
    const mine = (await client(main).functions.invoke('env', { body: {} })).data;
    const theirs = (await client(other).functions.invoke('env', { body: {} })).data;
    assert.equal(theirs.env.API_KEY, 'other-project-key');
    assert.equal(theirs.env.SUPABASE_URL, other.base);
    assert.equal(theirs.env.SUPABASE_ANON_KEY, other.publishable);
    assert.equal(theirs.env.SUPABASE_SERVICE_ROLE_KEY, other.secret);
    assert.deepEqual(JSON.parse(theirs.env.SUPABASE_SECRET_KEYS), { default: other.secret });
    assert.notEqual(theirs.env.SUPABASE_JWKS, mine.env.SUPABASE_JWKS);
    assert.ok(!JSON.stringify(theirs).includes(main.secret), "never another project's secret key");
    assert.equal(mine.env.ONLY_OTHER, undefined);
    assert.equal(theirs.env.OTHER, undefined);
    assert.ok(!JSON.stringify(mine).includes('other-project-key'));
    assert.ok(!JSON.stringify(theirs).includes('o-456'));
    // One project's key does not open another project's functions.
    const cross = await call(other, 'env', { key: main.publishable });
    assert.equal(cross.status, 401);
    assert.equal((await cross.json()).error.code, 'invalid_api_key');
  });

  test('values are sealed in the control database, never stored in the clear', async () => {
    await putSecrets(h, main.ref, { SEALED: 'plain-text-canary' });
    const rows = await h.hearth.p.dbs.control`select s.value_encrypted, s.value_sha256 from platform.function_secrets s
      join platform.projects p on p.id = s.project_id where p.ref = ${main.ref} and s.name = 'SEALED'`;
    assert.equal(rows.length, 1);
    const stored = (rows[0]!.value_encrypted as Buffer).toString('utf8');
    assert.ok(!stored.includes('plain-text-canary'));
    assert.equal(h.hearth.p.master.decrypt(stored), 'plain-text-canary');
  });

  const refusals: [string, unknown, string][] = [
    ['not an array', { name: 'A', value: 'b' }, 'invalid_request'],
    ['empty', [], 'invalid_request'],
    ['value not a string', [{ name: 'A', value: 1 }], 'invalid_request'],
    ['bad name', [{ name: '1ABC', value: 'x' }], 'invalid_secret_name'],
    ['reserved prefix', [{ name: 'SUPABASE_URL', value: 'x' }], 'reserved_secret_name'],
    [
      'duplicate',
      [
        { name: 'A', value: 'x' },
        { name: 'A', value: 'y' },
      ],
      'duplicate_secret_name',
    ],
    ['too large', [{ name: 'BIG', value: 'x'.repeat(48 * 1024 + 1) }], 'invalid_secret_value'],
    ['unknown field', [{ name: 'A', value: 'x', secret: true }], 'unknown_field'],
  ];
  for (const [label, body, code] of refusals) {
    test(`PUT secrets: ${label} → 400 ${code}, nothing written`, async () => {
      const before = (await h.api('GET', `/v1/projects/${main.ref}/secrets`)).body;
      // A valid secret first: a refused call must not write it either.
      const sent = Array.isArray(body) && body.length ? [{ name: 'PARTIAL', value: 'p' }, ...body] : body;
      const res = await h.api('PUT', `/v1/projects/${main.ref}/secrets`, { body: sent });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, code);
      assert.deepEqual((await h.api('GET', `/v1/projects/${main.ref}/secrets`)).body, before);
    });
  }

  test('a secret named like an Object property (toString) is an ordinary name, not a duplicate', async () => {
    const res = await h.api('PUT', `/v1/projects/${main.ref}/secrets`, { body: [{ name: 'toString', value: 'x' }] });
    assert.equal(res.status, 200);
    assert.equal((await h.api('DELETE', `/v1/projects/${main.ref}/secrets`, { body: ['toString'] })).status, 200);
  });

  test('a project holds at most 100 secrets of at most 48 KiB each: past that 400 too_many_secrets, nothing written', async () => {
    const capped = await createProject(h, 'Secrets cap');
    const hundred = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`S${i}`, i === 0 ? 'x'.repeat(48 * 1024) : 'v']),
    );
    assert.equal((await putSecrets(h, capped.ref, hundred)).length, 100);
    const before = (await h.api('GET', `/v1/projects/${capped.ref}/secrets`)).body;
    const over = await h.api('PUT', `/v1/projects/${capped.ref}/secrets`, {
      body: [
        { name: 'S1', value: 'changed' },
        { name: 'ONE_MORE', value: 'x' },
      ],
    });
    assert.equal(over.status, 400, JSON.stringify(over.body));
    assert.equal(over.body.error.code, 'too_many_secrets');
    assert.deepEqual((await h.api('GET', `/v1/projects/${capped.ref}/secrets`)).body, before);
    // Changing existing ones, or replacing one after a delete, stays within the cap.
    assert.equal(
      (await h.api('PUT', `/v1/projects/${capped.ref}/secrets`, { body: [{ name: 'S1', value: 'changed' }] })).status,
      200,
    );
    assert.equal((await h.api('DELETE', `/v1/projects/${capped.ref}/secrets`, { body: ['S2'] })).status, 200);
    assert.equal(
      (await h.api('PUT', `/v1/projects/${capped.ref}/secrets`, { body: [{ name: 'ONE_MORE', value: 'x' }] })).status,
      200,
    );
  });

  test('DELETE secrets needs an array of names', async () => {
    for (const body of [{}, [], [1]]) {
      const res = await h.api('DELETE', `/v1/projects/${main.ref}/secrets`, { body });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invalid_request');
    }
  });
});

describe('verify_jwt', () => {
  test('on (default): 401 without a key; the key or a user token gets through and is seen by the function', async () => {
    await deploy(h, main.ref, 'guarded', { source: ECHO });
    const none = await call(main, 'guarded', { key: null, method: 'POST', body: 'x' });
    assert.equal(none.status, 401);
    assert.equal((await none.json()).error.code, 'no_api_key');
    const bad = await call(main, 'guarded', { key: 'not-a-key' });
    assert.equal(bad.status, 401);
    assert.equal((await bad.json()).error.code, 'invalid_api_key');

    const withKey = await call(main, 'guarded');
    assert.equal((await withKey.json()).authorization, `Bearer ${main.publishable}`);

    const project = (await h.hearth.registry.defaultProject())!;
    const token = await signAccessToken(
      project,
      { sub: '00000000-0000-4000-8000-0000000000aa', role: 'authenticated', aud: 'authenticated' },
      h.clock,
      `${h.url}/auth/v1`,
    );
    const withUser = await call(main, 'guarded', { key: token });
    assert.equal(withUser.status, 200);
    assert.equal((await withUser.json()).authorization, `Bearer ${token}`);
    const forged = await call(main, 'guarded', { key: `${token.slice(0, -4)}AAAA` });
    assert.equal(forged.status, 401);
    assert.equal((await forged.json()).error.code, 'bad_jwt');
  });

  test('on: a missing function without a key is 401 too (names cannot be probed); with a key 404', async () => {
    await deploy(h, main.ref, 'needs-key', { source: ECHO });
    const answer = async (res: Response) => ({
      status: res.status,
      type: res.headers.get('content-type'),
      cors: res.headers.get('access-control-allow-origin'),
      body: await res.json(),
    });
    const origin = 'https://app.test';
    const refused = await answer(await call(main, 'needs-key', { key: null, method: 'POST', headers: { origin } }));
    assert.equal(refused.status, 401);
    // Any method, a preflight included, answers for a missing name what an existing function answers without a key.
    for (const method of ['GET', 'POST', 'OPTIONS', 'DELETE']) {
      const headers = { origin, 'access-control-request-method': 'POST' };
      assert.deepEqual(await answer(await call(main, 'no-such-fn', { key: null, method, headers })), refused, method);
    }
    const res = await call(main, 'no-such-fn');
    assert.equal(res.status, 404);
    assert.equal((await res.json()).error.code, 'function_not_found');
  });

  test('on: CORS preflights reach the function without credentials', async () => {
    await deploy(h, main.ref, 'cors', {
      source: `Deno.serve((req) => req.method === 'OPTIONS'
  ? new Response('ok', { headers: { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': 'authorization, content-type' } })
  : new Response('data'));`,
    });
    const pre = await call(main, 'cors', {
      method: 'OPTIONS',
      key: null,
      headers: { origin: 'https://app.test', 'access-control-request-method': 'POST' },
    });
    assert.equal(pre.status, 200);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.equal((await call(main, 'cors', { method: 'POST', key: null })).status, 401);
  });

  test('off: anyone may call, and any Authorization header reaches the function as sent', async () => {
    await deploy(h, main.ref, 'open', { source: ECHO, verify_jwt: false });
    const none = await call(main, 'open', { key: null, method: 'POST', body: 'hi' });
    assert.equal(none.status, 200);
    assert.deepEqual(await none.json(), {
      method: 'POST',
      path: '/open',
      query: '',
      authorization: null,
      custom: null,
      body: 'hi',
    });
    // A webhook's or another issuer's token is the function's business, not the platform's.
    for (const authorization of [
      'Bearer third-party-token',
      'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl',
      'Basic dXNlcjpwYXNz',
    ]) {
      const res = await call(main, 'open', { key: null, headers: { authorization }, method: 'POST', body: 'b' });
      assert.equal(res.status, 200, authorization);
      const seen = await res.json();
      assert.equal(seen.authorization, authorization);
      assert.equal(seen.body, 'b');
    }
    // Through the /project/{ref} address as well.
    await deploy(h, other.ref, 'open', { source: ECHO, verify_jwt: false });
    const res = await fetch(`${other.base}/functions/v1/open/x`, { headers: { authorization: 'Bearer elsewhere' } });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).path, '/open/x');
  });
});

describe('isolation through HTTP', () => {
  test('host files, the database port and the metadata address are refused', async () => {
    await deploy(h, main.ref, 'escape', {
      source: `Deno.serve(async () => {
  const out: Record<string, string> = {};
  const attempt = async (label: string, fn: () => Promise<unknown>) => {
    try { out[label] = 'REACHED ' + String(await fn()).slice(0, 200); } catch (e) { out[label] = 'refused: ' + (e as Error).message; }
  };
  await attempt('read /etc/passwd', async () => { const fs: any = await import('node:' + 'fs'); return fs.readFileSync('/etc/passwd', 'utf8'); });
  await attempt('fetch file:///etc/passwd', async () => (await fetch('file:///etc/passwd')).text());
  await attempt('postgres 127.0.0.1:5432', async () => (await fetch('http://127.0.0.1:5432/', { signal: AbortSignal.timeout(3000) })).status);
  await attempt('postgres localhost:5432', async () => (await fetch('http://localhost:5432/', { signal: AbortSignal.timeout(3000) })).status);
  await attempt('metadata 169.254.169.254', async () => (await fetch('http://169.254.169.254/latest/meta-data/', { signal: AbortSignal.timeout(3000) })).status);
  return Response.json(out);
});`,
    });
    const res = await call(main, 'escape');
    assert.equal(res.status, 200);
    const results = (await res.json()) as Record<string, string>;
    assert.equal(Object.keys(results).length, 5);
    for (const [label, result] of Object.entries(results)) assert.match(result, /^refused: /, `${label}: ${result}`);
    const logs = await until(
      async () => (await h.api('GET', `/v1/projects/${main.ref}/functions/escape/logs`)).body as { message: string }[],
      (l) => l.filter((e) => /Outbound connection to .* refused/.test(e.message)).length >= 2,
    );
    assert.ok(
      logs.some((e) => e.message.includes('127.0.0.1')),
      'the refusal is logged',
    );
  });
});

describe("the project's own API from a function", () => {
  test("fetch to SUPABASE_URL reaches this Hearth (REST under the caller's token, auth, another project's path), though loopback stays refused", async () => {
    const sql = h.hearth.p.dbs.project(h.hearth.project.db_name);
    await sql.unsafe(`create table public.fn_notes (id int primary key, owner uuid, body text);
      alter table public.fn_notes enable row level security;
      create policy "own notes" on public.fn_notes for select to authenticated using (owner = auth.uid());
      grant select on public.fn_notes to anon, authenticated;`);
    const alice = client();
    const email = `fn-own-api-${Date.now()}@example.com`;
    const signed = await alice.auth.signUp({ email, password: 'Quiet-harbour-lantern-42' });
    assert.equal(signed.error, null);
    const uid = signed.data.user!.id;
    await sql`insert into public.fn_notes values (1, ${uid}, 'mine'), (2, gen_random_uuid(), 'theirs')`;
    await sql`notify pgrst, 'reload schema'`;
    // The pattern of Supabase's guides: call the project's API with the caller's own Authorization.
    const SOURCE = `Deno.serve(async (req) => {
  const base = Deno.env.get('SUPABASE_URL');
  const headers = { apikey: Deno.env.get('SUPABASE_ANON_KEY'), authorization: req.headers.get('authorization') };
  const notes = await fetch(base + '/rest/v1/fn_notes?select=id,body', { headers });
  const user = await fetch(new Request(base + '/auth/v1/user', { headers }));
  let loopback;
  try { loopback = 'REACHED ' + (await fetch('http://127.0.0.1:5432/', { signal: AbortSignal.timeout(3000) })).status; }
  catch (e) { loopback = 'refused'; }
  return Response.json({ notes: await notes.json(), user: (await user.json()).email, loopback });
});`;
    await deploy(h, main.ref, 'own-api', { source: SOURCE });
    const got = await until(
      async () => (await alice.functions.invoke('own-api', { body: {} })).data,
      (d) => Array.isArray(d?.notes),
    );
    assert.deepEqual(got, { notes: [{ id: 1, body: 'mine' }], user: email, loopback: 'refused' });

    // Another project's base URL is a path on the same server: its functions reach it the same way.
    await deploy(h, other.ref, 'own-api', {
      source: `Deno.serve(async () => {
  const res = await fetch(Deno.env.get('SUPABASE_URL') + '/auth/v1/settings', { headers: { apikey: Deno.env.get('SUPABASE_ANON_KEY') } });
  return Response.json({ status: res.status, settings: await res.json() });
});`,
    });
    const theirs = await client(other).functions.invoke('own-api', { body: {} });
    assert.equal(theirs.error, null);
    assert.equal(theirs.data.status, 200);
    assert.equal(typeof theirs.data.settings.external, 'object');
  });

  test("Supabase's classic template deploys unchanged: std's serve and supabase-js 2 come from Hearth's own copies", async () => {
    const alice = client();
    const email = `fn-template-${Date.now()}@example.com`;
    const signed = await alice.auth.signUp({ email, password: 'Quiet-harbour-lantern-42' });
    assert.equal(signed.error, null);
    const uid = signed.data.user!.id;
    const sql = h.hearth.p.dbs.project(h.hearth.project.db_name);
    await sql`insert into public.fn_notes values (3, ${uid}, 'template')`;
    const template = (supabaseJs: string) => `import { serve } from 'https://deno.land/std@0.168.0/http/server.ts';
import { createClient } from '${supabaseJs}';

serve(async (req) => {
  const token = req.headers.get('Authorization')!.replace('Bearer ', '');
  const supabase = createClient(Deno.env.get('SUPABASE_URL')!, Deno.env.get('SUPABASE_ANON_KEY')!, {
    global: { headers: { Authorization: req.headers.get('Authorization')! } },
  });
  const { data: { user } } = await supabase.auth.getUser(token);
  const { data, error } = await supabase.from('fn_notes').select('id, body');
  return new Response(JSON.stringify({ email: user?.email ?? null, data, error }), {
    headers: { 'Content-Type': 'application/json' },
  });
});`;
    const specs = [
      'jsr:@supabase/supabase-js@2',
      'npm:@supabase/supabase-js@2.39.3',
      'https://esm.sh/@supabase/supabase-js@2',
      'https://cdn.jsdelivr.net/npm/@supabase/supabase-js@2/+esm',
    ];
    for (const spec of specs) {
      await deploy(h, main.ref, 'template', { source: template(spec) });
      const { data, error } = await alice.functions.invoke('template', { body: {} });
      assert.equal(error, null, spec);
      assert.deepEqual(data, { email, data: [{ id: 3, body: 'template' }], error: null }, spec);
    }
    // Another major version is not provided: the deploy says which one is.
    const v1 = await h.api('PUT', `/v1/projects/${main.ref}/functions/template`, {
      body: { source: template('npm:@supabase/supabase-js@1') },
    });
    assert.equal(v1.status, 400);
    assert.equal(v1.body.error.code, 'function_bundle_failed');
    assert.match(v1.body.error.message, /provides @supabase\/supabase-js 2\.\d+\.\d+ for imports of version 2/);
  });

  test("supabase-js's /cors subpath (Supabase's CORS guide) comes from Hearth's copy, however it is named", async () => {
    const { corsHeaders } = await import('@supabase/supabase-js/cors');
    const source = (spec: string) => `import { corsHeaders } from '${spec}';
Deno.serve(() => Response.json(corsHeaders, { headers: corsHeaders }));`;
    for (const spec of [
      'jsr:@supabase/supabase-js@2/cors',
      'npm:@supabase/supabase-js@2/cors',
      'https://esm.sh/@supabase/supabase-js@2/cors',
      'https://cdn.jsdelivr.net/npm/@supabase/supabase-js@2/cors/+esm',
    ]) {
      await deploy(h, main.ref, 'cors', { source: source(spec) });
      const res = await fetch(`${main.base}/functions/v1/cors`, { headers: { apikey: main.publishable } });
      assert.equal(res.status, 200, spec);
      assert.deepEqual(await res.json(), corsHeaders, spec);
    }
    // Through a deno.json that maps the package's folder, as the guide's import map does.
    await deploy(h, main.ref, 'cors', {
      files: {
        'index.ts': source('@supabase/supabase-js/cors'),
        'deno.json': JSON.stringify({ imports: { '@supabase/supabase-js/': 'npm:@supabase/supabase-js@2/' } }),
      },
    });
    const mapped = await fetch(`${main.base}/functions/v1/cors`, { headers: { apikey: main.publishable } });
    assert.deepEqual(await mapped.json(), corsHeaders);
  });

  test("a function's deno.json (or import_map.json) maps bare specifiers, as Deno reads it", async () => {
    await deploy(h, main.ref, 'mapped', {
      files: {
        'index.ts': `import { createClient } from '@supabase/supabase-js';
import { greet } from 'lib/greet.ts';
Deno.serve(() => Response.json({ greeting: greet(), client: typeof createClient }));`,
        'deno.json': JSON.stringify({
          imports: { '@supabase/supabase-js': 'jsr:@supabase/supabase-js@^2.49.1', 'lib/': './shared/' },
        }),
        'shared/greet.ts': "export const greet = () => 'hello from the map';",
      },
    });
    const { data, error } = await client().functions.invoke('mapped', { body: {} });
    assert.equal(error, null);
    assert.deepEqual(data, { greeting: 'hello from the map', client: 'function' });
    // A bare specifier the map does not name, or names as something not provided, is a bundle error naming both.
    const refused = await h.api('PUT', `/v1/projects/${main.ref}/functions/mapped`, {
      body: {
        files: {
          'index.ts': "import x from 'left-pad'; Deno.serve(() => new Response(x));",
          'deno.json': JSON.stringify({ imports: { 'left-pad': 'npm:left-pad@1' } }),
        },
      },
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'function_bundle_failed');
    assert.match(refused.body.error.message, /Cannot resolve import "left-pad" \(mapped to "npm:left-pad@1"\)/);
    const broken = await h.api('PUT', `/v1/projects/${main.ref}/functions/mapped`, {
      body: { files: { 'index.ts': 'Deno.serve(() => new Response(""));', 'deno.json': '{ "imports": ' } },
    });
    assert.equal(broken.status, 400);
    assert.match(broken.body.error.message, /deno\.json is not valid JSON/);
  });

  test('the binding behind it is not among the env a module-style function is given', async () => {
    await deploy(h, main.ref, 'env-keys', {
      source: 'export default { fetch: (req, env) => Response.json(Object.keys(env).sort()) };',
    });
    const { data } = await client().functions.invoke('env-keys', { body: {} });
    assert.ok(data.includes('SUPABASE_URL'), JSON.stringify(data));
    assert.ok(!data.some((name: string) => name.startsWith('HEARTH_')), JSON.stringify(data));
  });
});

describe('logs and errors', () => {
  test('console output and one record per invocation are readable through the API, newest first', async () => {
    await deploy(h, main.ref, 'chatty', {
      source:
        "console.log('loading');\nDeno.serve(async (req) => { console.log('got', await req.text()); console.error('oops', { n: 1 }); return new Response('ok', { status: 202 }); });",
    });
    await call(main, 'chatty', { method: 'POST', body: 'first' });
    await call(main, 'chatty', { method: 'POST', body: 'second' });
    type Log = {
      timestamp: string;
      level: string;
      message: string;
      invocation_id: string | null;
      version: number;
      status?: number;
      method?: string;
      path?: string;
      duration_ms?: number;
    };
    const logs = await until(
      async () => (await h.api('GET', `/v1/projects/${main.ref}/functions/chatty/logs`)).body as Log[],
      (l) => l.filter((e) => e.status !== undefined).length === 2,
    );
    const requests = logs.filter((e) => e.status !== undefined);
    assert.deepEqual(
      requests.map((e) => [e.method, e.path, e.status]),
      [
        ['POST', '/chatty', 202],
        ['POST', '/chatty', 202],
      ],
    );
    const got = logs.filter((e) => e.message.startsWith('got '));
    assert.deepEqual(
      got.map((e) => e.message),
      ['got second', 'got first'],
    );
    // Each console line carries the id of its invocation, shared with the invocation's record.
    for (const line of got) assert.ok(requests.some((r) => r.invocation_id === line.invocation_id));
    assert.ok(logs.some((e) => e.level === 'error' && e.message === 'oops { n: 1 }'));
    assert.ok(logs.some((e) => e.message === 'loading' && e.invocation_id === null));
    assert.ok(logs.every((e) => e.version === 1 && !Number.isNaN(Date.parse(e.timestamp))));
    const one = await h.api('GET', `/v1/projects/${main.ref}/functions/chatty/logs?limit=1`);
    assert.equal(one.body.length, 1);
  });

  test('logs page past 1,000 entries with ?before=<id of the last entry read>', async () => {
    await deploy(h, main.ref, 'verbose', {
      source:
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the function's own source, written as text.
        "Deno.serve(() => { for (let i = 0; i < 1200; i++) console.log(`line ${i}`); return new Response('ok'); });",
    });
    assert.equal(await (await call(main, 'verbose')).text(), 'ok');
    type Log = { id: string; message: string; status?: number };
    const page = async (query: string) => {
      const res = await h.api('GET', `/v1/projects/${main.ref}/functions/verbose/logs?${query}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as Log[];
    };
    // 1,200 console lines and the invocation's own entry.
    const first = await until(
      () => page('limit=1000'),
      (l) => l.length === 1000 && l.some((e) => e.status === 200),
    );
    const second = await page(`limit=1000&before=${encodeURIComponent(first.at(-1)!.id)}`);
    assert.equal(second.length, 201);
    assert.deepEqual(await page(`limit=1000&before=${encodeURIComponent(second.at(-1)!.id)}`), []);
    const all = [...first, ...second];
    assert.equal(new Set(all.map((e) => e.id)).size, 1201);
    const lines = all.filter((e) => e.status === undefined).map((e) => e.message);
    assert.deepEqual(
      lines,
      Array.from({ length: 1200 }, (_, i) => `line ${1199 - i}`),
    );
    // A smaller page size pages the same way.
    const small = await page(`limit=2&before=${encodeURIComponent(first[9]!.id)}`);
    assert.deepEqual(
      small.map((e) => e.id),
      [first[10]!.id, first[11]!.id],
    );
    for (const before of ['abc', '1', '12-x', '-1-2']) {
      const res = await h.api('GET', `/v1/projects/${main.ref}/functions/verbose/logs?before=${before}`);
      assert.equal(res.status, 400, before);
      assert.equal(res.body.error.code, 'invalid_request');
    }
  });

  test("EdgeRuntime.waitUntil: background work runs on after the response, logged under the request's invocation", async () => {
    await deploy(h, main.ref, 'background', {
      source: `Deno.serve((req) => {
  EdgeRuntime.waitUntil(new Promise((resolve) => setTimeout(() => { console.log('background done'); resolve(); }, 2500)));
  return new Response('accepted', { status: 202, headers: { 'x-invocation': req.cf.invocation } });
});`,
    });
    const res = await call(main, 'background', { method: 'POST', body: '{}' });
    assert.equal(res.status, 202);
    assert.equal(await res.text(), 'accepted');
    const invocation = res.headers.get('x-invocation');
    type Log = { message: string; invocation_id: string | null; status?: number };
    // The answer came first: its record is written, the background line not yet.
    const first = await until(
      async () => (await h.api('GET', `/v1/projects/${main.ref}/functions/background/logs`)).body as Log[],
      (l) => l.some((e) => e.status === 202),
    );
    assert.ok(!first.some((e) => e.message === 'background done'));
    const logs = await until(
      async () => (await h.api('GET', `/v1/projects/${main.ref}/functions/background/logs`)).body as Log[],
      (l) => l.some((e) => e.message === 'background done'),
    );
    assert.equal(logs.find((e) => e.message === 'background done')!.invocation_id, invocation);
  });

  test('a throwing function is 500 function_error; a module that fails to load is 503 function_boot_error', async () => {
    await deploy(h, main.ref, 'thrower', { source: "Deno.serve(() => { throw new Error('kaput'); });" });
    const res = await call(main, 'thrower');
    assert.equal(res.status, 500);
    assert.equal((await res.json()).error.code, 'function_error');
    await deploy(h, main.ref, 'noboot', {
      source:
        "const load = () => { throw new Error('bad module'); };\nload();\nDeno.serve(() => new Response('never'));",
    });
    const boot = await call(main, 'noboot');
    assert.equal(boot.status, 503);
    assert.equal((await boot.json()).error.code, 'function_boot_error');
    // The call has its closing log entry, as one that ran does.
    const logs = await until(
      async () =>
        (await h.api('GET', `/v1/projects/${main.ref}/functions/noboot/logs`)).body as {
          method?: string;
          status?: number;
          error_code?: string;
        }[],
      (l) => l.some((e) => e.status === 503),
    );
    assert.ok(logs.some((e) => e.method === 'GET' && e.status === 503 && e.error_code === 'function_boot_error'));
    const { error } = await client().functions.invoke('thrower', { body: {} });
    assert.ok(error instanceof FunctionsHttpError);
    assert.equal(error.context.status, 500);
  });

  test('platform errors carry Access-Control-Allow-Origin, so a browser can read them', async () => {
    const origin = { origin: 'https://app.test' };
    const cases: [string, { key?: string | null; method?: string }, number][] = [
      ['thrower', { key: null }, 401],
      ['thrower', { key: 'sb_publishable_not-a-key' }, 401],
      ['no-such-fn', {}, 404],
      ['thrower', { method: 'POST' }, 500],
      ['noboot', {}, 503],
    ];
    for (const [name, init, status] of cases) {
      const res = await call(main, name, { ...init, headers: origin });
      assert.equal(res.status, status, name);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', `${name} ${status}`);
      assert.ok((await res.json()).error.code);
    }
  });
});
