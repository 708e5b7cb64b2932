/**
 * A body refused while it is still arriving (over a route's limit, or a key
 * refused before any route read it) is answered, and the client still sending
 * it gets that answer: the server reads and drops the rest (up to a bound)
 * instead of closing while the client writes, which a client that writes its
 * whole body before reading (Node's http, browsers' fetch) sees as a reset.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
before(async () => {
  h = await startTestHearth();
});
after(async () => {
  await h?.close();
});

interface Outcome {
  status: number | null;
  body: string;
  error: string | null;
  written: boolean;
  /** The request went out on a connection an earlier request had used. */
  reused?: boolean;
}

/** POSTs `mib` MiB in 1 MiB writes, 10 ms apart, and waits for the write and the answer. */
function slowPost(path: string, mib: number, headers: Record<string, string | number>): Promise<Outcome> {
  const url = new URL(h.url + path);
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  const out: Outcome = { status: null, body: '', error: null, written: false };
  return new Promise((resolve) => {
    let pending = 2; // the write and the response
    const settle = () => --pending === 0 && resolve(out);
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers },
      (res) => {
        out.status = res.statusCode ?? null;
        res.on('data', (c) => (out.body += c));
        res.on('end', settle);
        res.on('error', (err) => {
          out.error ??= err.message;
          settle();
        });
      },
    );
    req.on('error', (err) => {
      out.error ??= (err as NodeJS.ErrnoException).code ?? err.message;
      resolve(out);
    });
    let sent = 0;
    const next = () => {
      if (sent === mib) {
        req.end(() => {
          out.written = true;
          settle();
        });
        return;
      }
      sent++;
      req.write(chunk, () => setTimeout(next, 10));
    };
    next();
  });
}

/** Writes the whole body in one req.end() before reading anything, as most clients do. */
function postWhole(
  path: string,
  body: Buffer,
  headers: Record<string, string | number>,
  agent?: http.Agent,
): Promise<Outcome> {
  const url = new URL(h.url + path);
  const out: Outcome = { status: null, body: '', error: null, written: false };
  return new Promise((resolve) => {
    let pending = 2; // the write and the response
    const settle = () => --pending === 0 && resolve(out);
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...headers, 'content-length': body.length },
        agent,
      },
      (res) => {
        out.status = res.statusCode ?? null;
        out.reused = req.reusedSocket;
        res.on('data', (c) => (out.body += c));
        res.on('end', settle);
      },
    );
    req.on('error', (err) => {
      out.error ??= (err as NodeJS.ErrnoException).code ?? err.message;
      resolve(out);
    });
    req.end(body, () => {
      out.written = true;
      settle();
    });
  });
}

test('a 12 MiB body written whole before reading gets its 413, on POST /v1/projects and on a data route', async () => {
  const body = Buffer.alloc(12 * 1024 * 1024, 'a');
  const management = await postWhole('/v1/projects', body, {
    'content-type': 'application/json',
    authorization: `Bearer ${h.info.MANAGEMENT_TOKEN}`,
  });
  assert.equal(management.error, null);
  assert.equal(management.status, 413);
  assert.equal(JSON.parse(management.body).code, 'payload_too_large');
  assert.ok(management.written, 'the client wrote its whole body');

  const data = await postWhole('/rest/v1/notes', body, {
    'content-type': 'application/json',
    apikey: h.info.PUBLISHABLE_KEY,
  });
  assert.equal(data.error, null);
  assert.equal(data.status, 413);
  assert.ok(data.written, 'the client wrote its whole body');
  assert.equal(JSON.parse(data.body).code, 'payload_too_large');
});

test('a 12 MiB body to a 1 MiB route is answered 413 payload_too_large, and the whole body is taken', async () => {
  const res = await slowPost('/v1/projects', 12, {
    'content-type': 'application/json',
    'content-length': 12 * 1024 * 1024,
    authorization: `Bearer ${h.info.MANAGEMENT_TOKEN}`,
  });
  assert.equal(res.error, null);
  assert.equal(res.status, 413);
  assert.equal(JSON.parse(res.body).code, 'payload_too_large');
  assert.ok(res.written, 'the client wrote its whole body');
});

test('the same without Content-Length (chunked)', async () => {
  const res = await slowPost('/v1/organizations', 3, {
    'content-type': 'application/json',
    authorization: `Bearer ${h.info.MANAGEMENT_TOKEN}`,
  });
  assert.equal(res.error, null);
  assert.equal(res.status, 413);
  assert.ok(res.written);
});

test('past 64 MiB of a refused body the connection is closed', async () => {
  const res = await slowPost('/v1/projects', 70, {
    'content-type': 'application/json',
    'content-length': 70 * 1024 * 1024,
    authorization: `Bearer ${h.info.MANAGEMENT_TOKEN}`,
  });
  assert.equal(res.written, false);
  assert.match(String(res.error), /EPIPE|ECONNRESET|socket hang up|aborted/);
});

test('on the auth routes too: a 12 MiB body by http.request (keep-alive agent) gets its 413, and the connection is kept', async () => {
  const body = Buffer.from(`{"email":"${'a'.repeat(12 * 1024 * 1024)}@example.com","password":"x"}`);
  const headers = { 'content-type': 'application/json', apikey: h.info.PUBLISHABLE_KEY };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (const path of ['/auth/v1/signup', '/auth/v1/token?grant_type=password', '/auth/v1/otp', '/auth/v1/recover']) {
    const res = await postWhole(path, body, headers, agent);
    assert.equal(res.error, null, path);
    assert.equal(res.status, 413, path);
    assert.equal(JSON.parse(res.body).error_code, 'payload_too_large', path);
    assert.ok(res.written, `${path}: the client wrote its whole body`);
    // The rest of the body was read, so the connection serves the next request.
    const next = await postWhole('/auth/v1/otp', Buffer.from('{}'), headers, agent);
    assert.equal(next.reused, true, `${path}: the connection was kept`);
  }
  agent.destroy();
});

interface Sent {
  answer: string;
  /** The server ended or reset the connection before the client had written its whole body. */
  cutShort: boolean;
  error: string | null;
}

/**
 * A request with `Connection: close` whose body is refused before it is read: the answer comes
 * after the headers, then the client writes its 2 MiB body, as a client that writes its whole
 * body before reading would still be doing.
 */
async function refusedThenSent(path: string, headers: Record<string, string>): Promise<Sent> {
  const url = new URL(h.url);
  // Half-open: the client keeps writing after the server's FIN, so only a reset stops it.
  const socket = net.connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
  const size = 2 * 1024 * 1024;
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${size}\r\n${lines.join('')}\r\n`,
  );
  const out: Sent = { answer: '', cutShort: false, error: null };
  let written = false;
  socket.on('end', () => {
    if (!written) out.cutShort = true;
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', (err: NodeJS.ErrnoException) => {
    out.error ??= err.code ?? err.message;
    out.cutShort ||= !written;
  });
  socket.on('data', (chunk) => (out.answer += chunk));
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  const chunk = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < size && !socket.destroyed; sent += chunk.length) {
    await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
  }
  written = !socket.destroyed;
  socket.end();
  await closed;
  return out;
}

test('a client that asks to close still gets the answer to its refused body: the connection ends only once the body is in', async () => {
  const cases: [string, Record<string, string>, number][] = [
    ['/rest/v1/notes', { 'content-type': 'application/json' }, 401],
    [
      '/storage/v1/object/b/up.bin',
      { apikey: 'sb_publishable_wrong', 'content-type': 'application/octet-stream' },
      401,
    ],
    ['/auth/v1/signup', { apikey: h.info.PUBLISHABLE_KEY, 'content-type': 'application/json' }, 413],
  ];
  for (const [path, headers, status] of cases) {
    const res = await refusedThenSent(path, headers);
    assert.match(res.answer, new RegExp(`^HTTP/1\\.1 ${status} `), path);
    assert.equal(res.error, null, path);
    assert.equal(res.cutShort, false, `${path}: the server closed before the body was in`);
  }
});
