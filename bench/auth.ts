/**
 * Accounts benchmark (npm run bench): each figure beside a bare reference
 * run in the same process tree.
 * - refresh-token grants/s through Hearth's HTTP API vs a bare node:http
 *   server running the same rotation SQL and the same ES256 signing;
 * - access-token verification/s as the data plane does it vs a bare
 *   jose jwtVerify with the key in hand;
 * - argon2id hash time (the cost of a sign-in) and password-grant latency;
 * - /otp latency for a known vs an unknown address (must not differ).
 * Needs DATABASE_URL (a PostgreSQL the tests may use); takes about 30 s.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, jwtVerify } from 'jose';
import { hashPassword } from '../src/platform/passwords.ts';
import { randomToken, sha256 } from '../src/platform/secrets.ts';
import { verifyAccessToken } from '../src/server/credentials.ts';
import { startTestHearth, type TestHearth } from '../test/helpers/hearth.ts';

const CONCURRENCY = 16;
const RUN_MS = 3000;

async function post(url: string, body: unknown, key: string): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', apikey: key, authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Runs CONCURRENCY chains of refresh grants for RUN_MS; each chain uses the token the previous grant returned. */
async function refreshRate(url: string, key: string, tokens: string[]): Promise<number> {
  let count = 0;
  const end = Date.now() + RUN_MS;
  await Promise.all(tokens.map(async (t) => {
    let token = t;
    while (Date.now() < end) {
      token = (await post(url, { refresh_token: token }, key)).refresh_token;
      count++;
    }
  }));
  return count / (RUN_MS / 1000);
}

/** The reference: node:http + postgres.js doing the same rotation statements and ES256 signing, nothing else. */
async function referenceServer(h: TestHearth): Promise<{ server: Server; url: string }> {
  const project = (await h.hearth.registry.defaultProject())!;
  const { kid, key } = await project.signingKey();
  const sql = project.sql;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const { refresh_token } = JSON.parse(Buffer.concat(chunks).toString());
        const now = new Date();
        const out = await sql.begin(async (tx) => {
          const [used] = await tx`update auth.refresh_tokens set revoked = true
            where token_hash = ${sha256(refresh_token)} and not revoked and expires_at > ${now} returning id::text as id, session_id, user_id`;
          const [session] = await tx`update auth.sessions set refreshed_at = ${now} where id = ${used!.session_id} returning id, aal, amr`;
          const [user] = await tx`select * from auth.users where id = ${used!.user_id}`;
          const token = randomToken(40);
          await tx`insert into auth.refresh_tokens (token_hash, session_id, user_id, parent, created_at, expires_at)
            values (${sha256(token)}, ${session!.id}, ${user!.id}, ${used!.id}, ${now}, ${new Date(now.getTime() + 30 * 86400_000)})`;
          return { session: session!, user: user!, token };
        });
        const iat = Math.floor(Date.now() / 1000);
        const access = await new SignJWT({ sub: out.user.id, role: 'authenticated', aud: 'authenticated', session_id: out.session.id, aal: out.session.aal, amr: out.session.amr })
          .setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt(iat).setExpirationTime(iat + 3600).sign(key);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: access, refresh_token: out.token }));
      } catch (err) {
        res.writeHead(500).end(JSON.stringify({ error: String(err) }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token` };
}

async function sessions(h: TestHearth, n: number): Promise<{ refresh: string[]; access: string }> {
  const email = `bench-${Date.now()}@example.test`;
  const password = 'Bench-password-for-hearth';
  await post(`${h.url}/auth/v1/signup`, { email, password }, h.info.PUBLISHABLE_KEY);
  const refresh: string[] = [];
  let access = '';
  for (let i = 0; i < n; i++) {
    const s = await post(`${h.url}/auth/v1/token?grant_type=password`, { email, password }, h.info.PUBLISHABLE_KEY);
    refresh.push(s.refresh_token);
    access = s.access_token;
  }
  return { refresh, access };
}

function perSecond(fn: () => Promise<unknown>): Promise<number> {
  return (async () => {
    let n = 0;
    const end = performance.now() + RUN_MS / 2;
    while (performance.now() < end) {
      await fn();
      n++;
    }
    return n / (RUN_MS / 2000);
  })();
}

async function meanMs(n: number, fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - start) / n;
}

export async function benchAuth(): Promise<string[]> {
  const h = await startTestHearth();
  const ref = await referenceServer(h);
  const lines: string[] = [];
  try {
    await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, { body: { rate_limit_signups: 100000, rate_limit_email_sent: 100000 } });
    const key = h.info.PUBLISHABLE_KEY;
    const a = await sessions(h, CONCURRENCY);
    const b = await sessions(h, CONCURRENCY);
    const hearthRate = await refreshRate(`${h.url}/auth/v1/token?grant_type=refresh_token`, key, a.refresh);
    const refRate = await refreshRate(ref.url, key, b.refresh);
    lines.push(`auth refresh grants/s      hearth ${hearthRate.toFixed(0)}  bare node:http+same SQL ${refRate.toFixed(0)}  ratio ${(hearthRate / refRate).toFixed(2)}`);

    const project = (await h.hearth.registry.defaultProject())!;
    const kid = JSON.parse(Buffer.from(a.access.split('.')[0]!, 'base64url').toString()).kid as string;
    const publicKey = project.verifyKeys.get(kid)!;
    const clock = h.hearth.p.clock;
    const ours = await perSecond(() => verifyAccessToken(project, a.access, clock));
    const bare = await perSecond(() => jwtVerify(a.access, publicKey, { algorithms: ['ES256'] }));
    lines.push(`auth token verifications/s hearth ${ours.toFixed(0)}  bare jose jwtVerify ${bare.toFixed(0)}  ratio ${(ours / bare).toFixed(2)}`);

    const argon = await meanMs(10, () => hashPassword('Bench-password-for-hearth'));
    const signIn = await meanMs(10, () => post(`${h.url}/auth/v1/token?grant_type=password`, { email: `nobody-${Date.now()}@example.test`, password: 'x'.repeat(12) }, key).catch(() => null));
    lines.push(`auth argon2id hash ${argon.toFixed(1)} ms (m=19 MiB, t=2, p=1); password sign-in (unknown e-mail, dummy verify) ${signIn.toFixed(1)} ms`);

    const known = `known-${Date.now()}@example.test`;
    await post(`${h.url}/auth/v1/otp`, { email: known }, key);
    const k: number[] = [];
    const u: number[] = [];
    for (let i = 0; i < 40; i++) {
      for (const [email, into] of [[known, k], [`ghost-${i}-${Date.now()}@example.test`, u]] as const) {
        const t = performance.now();
        await post(`${h.url}/auth/v1/otp`, { email, create_user: false }, key);
        into.push(performance.now() - t);
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
    lines.push(`auth /otp latency median   known address ${median(k).toFixed(2)} ms  unknown address ${median(u).toFixed(2)} ms  ratio ${(median(k) / median(u)).toFixed(2)}`);
  } finally {
    await new Promise((r) => ref.server.close(r));
    await h.close();
  }
  return lines;
}
