/**
 * A body over a route's limit is answered 413, and the client still sending
 * it gets that answer: the server reads and drops the rest (up to a bound)
 * instead of closing while the client writes, which a client that writes its
 * whole body before reading (Node's http, browsers' fetch) sees as a reset.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
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
function postWhole(path: string, body: Buffer, headers: Record<string, string | number>): Promise<Outcome> {
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
      },
      (res) => {
        out.status = res.statusCode ?? null;
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
