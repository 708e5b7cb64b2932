// The SSRF-guarded outbound client against real receivers: an HTTPS receiver
// with a self-signed certificate made by openssl for this run, and a plain
// HTTP "internal service" on 127.0.0.2 that nothing may reach.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { selfSignedCert } from '../helpers/tls.ts';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllowList, refusalReason, targetRefusal } from '../../src/outbound/address.ts';
import { createOutboundClient } from '../../src/outbound/index.ts';

const SECRET = 'whsec_test_secret';
const NOW = new Date('2026-01-02T03:04:05Z');
const clock = { now: () => NOW };

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

let dir: string;
let certPath: string;
let cert: Buffer;
let receiver: https.Server;
let internal: http.Server;
let base: string;
let internalUrl: string;
const received: Received[] = [];
let internalHits = 0;

function listen(server: http.Server | https.Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

// What a receiver does (docs/webhooks.md): HMAC over "<timestamp>.<raw body>",
// compared in constant time.
function verify(r: Received): boolean {
  const timestamp = String(r.headers['x-service-timestamp']);
  const expected = createHmac('sha256', SECRET).update(`${timestamp}.`).update(r.body).digest();
  const given = Buffer.from(String(r.headers['x-service-signature']), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hearth-outbound-'));
  let key: Buffer;
  ({ certPath, cert, key } = selfSignedCert(dir, 'IP:127.0.0.1,DNS:localhost'));

  internal = http.createServer((_req, res) => {
    internalHits++;
    res.end('internal secrets');
  });
  internalUrl = `http://127.0.0.2:${await listen(internal, '127.0.0.2')}/`;

  receiver = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      if (req.url === '/ok') res.end('thanks');
      else if (req.url === '/fail') res.writeHead(500).end('broken');
      else if (req.url === '/redirect') res.writeHead(302, { location: internalUrl }).end();
      else if (req.url === '/redirect-localhost')
        res.writeHead(307, { location: internalUrl.replace('127.0.0.2', 'localhost') }).end();
      else if (req.url === '/big') res.end(Buffer.alloc(1024 * 1024, 'x'));
      // /slow: never answers
    });
  });
  base = `https://127.0.0.1:${await listen(receiver, '127.0.0.1')}`;
});

after(async () => {
  receiver.closeAllConnections();
  internal.closeAllConnections();
  await Promise.all([new Promise((r) => receiver.close(r)), new Promise((r) => internal.close(r))]);
  rmSync(dir, { recursive: true, force: true });
});

describe('delivery to an allowed receiver', () => {
  const client = () => createOutboundClient({ allow: ['127.0.0.1/32'], ca: cert, clock, timeoutMs: 3000 });

  it('signs the exact raw body and counts a 2xx as delivered', async () => {
    const body = JSON.stringify({ job: 'nightly', n: 1, text: 'héllo' });
    const result = await client().signedPost(`${base}/ok`, body, SECRET);
    assert.deepEqual(result, { status: 200, ok: true, body: 'thanks', truncated: false });
    const got = received.at(-1)!;
    assert.equal(got.body.toString(), body);
    assert.equal(got.headers['x-service-timestamp'], String(NOW.getTime() / 1000));
    assert.match(String(got.headers['x-service-signature']), /^[0-9a-f]{64}$/);
    assert.ok(verify(got), 'the receiver verifies the signature');
    assert.ok(!verify({ ...got, body: Buffer.from(`${body} `) }), 'a changed body fails verification');
    assert.equal(got.headers['content-type'], 'application/json');
  });

  it('reports a non-2xx answer as not delivered, without retrying', async () => {
    const before = received.length;
    const result = await client().signedPost(`${base}/fail`, '{}', SECRET);
    assert.equal(result.ok, false);
    assert.equal(result.status, 500);
    assert.equal(result.code, 'http_status');
    assert.equal(received.length, before + 1);
  });

  it('does not follow redirects, to a private address or a name that resolves to one', async () => {
    for (const p of ['/redirect', '/redirect-localhost']) {
      const result = await client().post(`${base}${p}`, '{}');
      assert.equal(result.ok, false);
      assert.equal(result.code, 'redirect');
      assert.ok(result.status === 302 || result.status === 307);
    }
    assert.equal(internalHits, 0);
  });

  it('bounds the response size', async () => {
    const result = await createOutboundClient({ allow: ['127.0.0.1/32'], ca: cert, maxResponseBytes: 1000 }).post(
      `${base}/big`,
      '',
    );
    assert.equal(result.ok, true);
    assert.equal(result.truncated, true);
    assert.equal(result.body.length, 1000);
  });

  it('bounds the response time', async () => {
    const started = Date.now();
    const result = await createOutboundClient({ allow: ['127.0.0.1/32'], ca: cert, timeoutMs: 300 }).post(
      `${base}/slow`,
      '',
    );
    assert.equal(result.code, 'timeout');
    assert.equal(result.status, 0);
    assert.ok(Date.now() - started < 2000);
  });

  it('trusts a CA given through NODE_EXTRA_CA_CERTS (no ca option)', async () => {
    const module = new URL('../../src/outbound/index.ts', import.meta.url).href;
    const script = `import { createOutboundClient } from ${JSON.stringify(module)};
      const r = await createOutboundClient({ allow: ['127.0.0.1/32'] }).signedPost(${JSON.stringify(`${base}/ok`)}, '{"via":"child"}', ${JSON.stringify(SECRET)});
      console.log(JSON.stringify(r));`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certPath },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (out += c));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, out);
    assert.equal(JSON.parse(out).ok, true, out);
    assert.ok(verify(received.at(-1)!));
  });
});

describe('the SSRF guard', () => {
  const refused: Array<[string, string]> = [
    ['loopback', '127.0.0.1'],
    ['loopback, elsewhere in 127/8', '127.1.2.3'],
    ['loopback, decimal form', '2130706433'],
    ['loopback, hex form', '0x7f000001'],
    ['loopback, octal form', '0177.0.0.1'],
    ['private 10/8', '10.0.0.1'],
    ['private 172.16/12', '172.16.5.4'],
    ['private 192.168/16', '192.168.1.1'],
    ['link-local', '169.254.1.1'],
    ['cloud metadata', '169.254.169.254'],
    ['CGNAT', '100.64.0.1'],
    ['Alibaba metadata (CGNAT)', '100.100.100.200'],
    ['multicast', '224.0.0.1'],
    ['unspecified', '0.0.0.0'],
    ['broadcast', '255.255.255.255'],
    ['reserved 240/4', '240.0.0.1'],
    ['IETF protocol assignments (Oracle metadata)', '192.0.0.192'],
    ['documentation range', '192.0.2.1'],
    ['IPv6 loopback', '[::1]'],
    ['IPv6 unspecified', '[::]'],
    ['IPv6 link-local', '[fe80::1]'],
    ['IPv6 unique-local', '[fc00::1]'],
    ['AWS IPv6 metadata', '[fd00:ec2::254]'],
    ['IPv6 multicast', '[ff02::1]'],
    ['IPv4-mapped loopback', '[::ffff:127.0.0.1]'],
    ['IPv4-mapped metadata', '[::ffff:169.254.169.254]'],
    ['IPv4-mapped private', '[::ffff:10.0.0.1]'],
    ['IPv4-compatible loopback', '[::127.0.0.1]'],
    ['IPv4-compatible public', '[::8.8.8.8]'],
    ['NAT64 of loopback', '[64:ff9b::7f00:1]'],
    ['6to4 of loopback', '[2002:7f00:1::]'],
    ['Teredo', '[2001::1]'],
  ];
  const client = createOutboundClient({ timeoutMs: 2000 });

  for (const [name, host] of refused) {
    it(`refuses ${name} (${host})`, async () => {
      const result = await client.post(`http://${host}:9/hook`, '{}');
      assert.equal(result.ok, false);
      assert.equal(result.code, 'refused_address', result.error);
    });
  }

  it('names a refused range in words, never by the class name of the address library', () => {
    const cases: Array<[string, string]> = [
      ['100.64.0.1', 'a carrier-grade NAT address (100.64.0.0/10)'],
      ['fc00::1', 'a unique-local IPv6 address (fc00::/7)'],
      ['0.0.0.0', 'an unspecified address (0.0.0.0/8, ::)'],
      ['::', 'an unspecified address (0.0.0.0/8, ::)'],
      ['64:ff9b::7f00:1', 'a NAT64 address (64:ff9b::/96)'],
      ['169.254.1.1', 'a link-local address (169.254.0.0/16, fe80::/10)'],
      ['::ffff:10.0.0.1', 'a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)'],
      ['2002:7f00:1::', 'a 6to4 address (2002::/16)'],
      ['2001::1', 'a Teredo address (2001::/32)'],
      ['fec0::1', 'a site-local IPv6 address (fec0::/10)'],
    ];
    for (const [address, words] of cases) assert.equal(refusalReason(address, []), words, address);
    assert.equal(targetRefusal('localhost', []), 'a loopback name (it stands for 127.0.0.1)');
  });

  it('allows public unicast addresses, IPv4-mapped ones included', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(refusalReason(address, []), null, address);
    }
  });

  it('checks the addresses a host name resolves to: localhost is refused', async () => {
    const before = received.length;
    const port = new URL(base).port;
    const result = await createOutboundClient({ ca: cert }).post(`https://localhost:${port}/ok`, '{}');
    assert.equal(result.code, 'refused_address', result.error);
    assert.match(result.error!, /localhost resolves to/);
    assert.equal(received.length, before, 'the receiver was not reached');
  });

  it('lets the allow list reach a local receiver, but never a metadata address', async () => {
    const allowed = createOutboundClient({ allow: ['127.0.0.0/8', '169.254.0.0/16', '::1'], ca: cert });
    assert.equal((await allowed.post(`${base}/ok`, '{}')).ok, true);
    assert.equal((await allowed.post('http://169.254.169.254/latest/meta-data/', '')).code, 'refused_address');
    assert.equal(refusalReason('::ffff:127.0.0.1', parseAllowList(['127.0.0.1/32'])), null);
  });

  it('refuses a bad allow-list entry at creation with a clear message', () => {
    assert.throws(() => createOutboundClient({ allow: ['localhost'] }), /HEARTH_OUTBOUND_ALLOW entry "localhost"/);
  });

  it('refuses URLs it cannot or must not call', async () => {
    assert.equal((await client.post('not a url', '')).code, 'invalid_url');
    assert.equal((await client.post('ftp://example.com/x', '')).code, 'invalid_url');
    assert.equal((await client.post('file:///etc/passwd', '')).code, 'invalid_url');
  });
});
