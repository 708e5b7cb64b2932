/**
 * Accounts benchmark (npm run bench): each figure beside a bare reference
 * run in the same process tree.
 * - the six calls that outside comparisons with GoTrue and PocketBase time:
 *   sign-up and sign-in with a password, refresh grant, GET /user, guest
 *   sign-in, logout. Each runs under load from a child process against
 *   Hearth and against a bare node:http + postgres.js + argon2 + jose server
 *   doing the same minimal work (what a developer writes by hand: a
 *   transaction per write, jose for tokens, no API keys, no rate limits).
 *   Reported per call: req/s, p99, this process's CPU ms per request (the
 *   steadier figure on a shared machine; it includes the argon2 threads) and
 *   SQL statements per call (begin and commit count: each is a round trip);
 * - access-token verification/s as the data plane does it vs a bare
 *   jose jwtVerify with the key in hand;
 * - argon2id hash time (the cost of a sign-in) and password-grant latency;
 * - /otp latency for a known vs an unknown address (must not differ).
 * Needs DATABASE_URL (a PostgreSQL the tests may use); takes about 90 s.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, jwtVerify } from 'jose';
import postgres from 'postgres';
import { withDatabase } from '../src/db/pools.ts';
import { hashPassword, verifyPassword } from '../src/platform/passwords.ts';
import { randomToken, sha256 } from '../src/secrets.ts';
import { verifyAccessToken } from '../src/http/credentials.ts';
import { serverUrl, startTestHearth, type TestHearth } from '../test/helpers/hearth.ts';

const CONCURRENCY = 16;
const RUN_MS = 3000;
const LOAD_SECONDS = 4;
const PASSWORD = 'Bench-password-for-hearth';

async function post(url: string, body: unknown, key: string, token = key): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey: key, authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

type Call = 'signup' | 'signin' | 'refresh' | 'user' | 'anon' | 'logout';

/**
 * The load generator, run as a child so the servers measured do not share
 * their event loop (or CPU account) with it. Reads its plan on stdin:
 * CONCURRENCY loops of one call for a few seconds; a refresh loop chains the
 * tokens it gets; logout spends one fresh session per request.
 */
const LOADGEN = `
let input = ''; for await (const c of process.stdin) input += c;
const cfg = JSON.parse(input);
const H = { 'content-type': 'application/json', apikey: cfg.key };
const tag = Date.now() + '-' + process.pid;
let n = 0, ok = 0, bad = 0, firstError = null;
const lat = [];
const started = performance.now();
const end = Date.now() + cfg.seconds * 1000;
const send = (path, body, token) => fetch(cfg.base + path, { method: body === undefined ? 'GET' : 'POST', headers: { ...H, authorization: 'Bearer ' + (token ?? cfg.key) }, body });
async function one(i, state) {
  switch (cfg.call) {
    case 'signup': return send('/auth/v1/signup', JSON.stringify({ email: 'su-' + tag + '-' + n++ + '@example.test', password: cfg.password }));
    case 'signin': return send('/auth/v1/token?grant_type=password', JSON.stringify({ email: cfg.emails[i % cfg.emails.length], password: cfg.password }));
    case 'refresh': {
      const r = await send('/auth/v1/token?grant_type=refresh_token', JSON.stringify({ refresh_token: state.token }));
      if (!r.ok) return r;
      state.token = (await r.json()).refresh_token;
      return { ok: true, text: async () => '' };
    }
    case 'user': return send('/auth/v1/user', undefined, cfg.access);
    case 'anon': return send('/auth/v1/signup', '{}');
    case 'logout': { const t = cfg.sessions.pop(); return t ? send('/auth/v1/logout', '{}', t) : null; }
  }
}
await Promise.all(Array.from({ length: cfg.concurrency }, async (_, i) => {
  const state = { token: cfg.tokens[i] };
  while (Date.now() < end) {
    const t = performance.now();
    const r = await one(i, state);
    if (!r) break;
    const text = await r.text();
    if (r.ok) ok++; else { bad++; firstError ??= r.status + ' ' + text; }
    lat.push(performance.now() - t);
  }
}));
lat.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ ok, bad, firstError, seconds: (performance.now() - started) / 1000, p99: lat[Math.floor(lat.length * 0.99)] ?? 0 }));
`;

interface LoadPlan {
  base: string;
  key: string;
  call: Call;
  emails: string[];
  tokens: string[];
  access: string;
  sessions: string[];
}

interface Measured {
  rps: number;
  p99: number;
  cpuMs: number;
  errors: number;
  firstError: string | null;
}

async function measure(plan: LoadPlan): Promise<Measured> {
  const before = process.cpuUsage();
  const r = await new Promise<{ ok: number; bad: number; firstError: string | null; seconds: number; p99: number }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', LOADGEN], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.on('exit', (code) =>
        code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exited ${code}`)),
      );
      child.stdin.end(JSON.stringify({ ...plan, seconds: LOAD_SECONDS, concurrency: CONCURRENCY, password: PASSWORD }));
    },
  );
  const cpu = process.cpuUsage(before);
  const total = r.ok + r.bad;
  return {
    rps: total / r.seconds,
    p99: r.p99,
    cpuMs: (cpu.user + cpu.system) / 1000 / Math.max(total, 1),
    errors: r.bad,
    firstError: r.firstError,
  };
}

/** Statements sent to a pool during `calls` sequential calls, per call (postgres.js's debug hook sees each one). */
async function statementsPerCall(pools: postgres.Sql[], calls: number, fn: () => Promise<unknown>): Promise<number> {
  let n = 0;
  for (const pool of pools) (pool.options as { debug: unknown }).debug = () => n++;
  try {
    for (let i = 0; i < calls; i++) await fn();
  } finally {
    for (const pool of pools) (pool.options as { debug: unknown }).debug = false;
  }
  return n / calls;
}

const readBody = (req: IncomingMessage): Promise<any> =>
  new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => resolve(text ? JSON.parse(text) : {}));
    req.on('error', reject);
  });

/**
 * The reference: node:http + postgres.js + argon2 + jose doing each call's
 * minimal work on the same tables, the way one writes it by hand.
 */
async function referenceServer(h: TestHearth, sql: postgres.Sql): Promise<{ server: Server; url: string }> {
  const project = (await h.hearth.registry.defaultProject())!;
  const { kid, key } = await project.signingKey();
  const publicKey = project.verifyKeys.get(kid)!;
  const iss = `${h.url}/auth/v1`;
  const sign = (user: postgres.Row, session: postgres.Row) => {
    const iat = Math.floor(Date.now() / 1000);
    return new SignJWT({
      sub: user.id,
      aud: 'authenticated',
      role: 'authenticated',
      email: user.email ?? '',
      app_metadata: user.raw_app_meta_data,
      user_metadata: user.raw_user_meta_data,
      session_id: session.id,
      aal: session.aal,
      amr: session.amr,
      is_anonymous: user.is_anonymous,
    })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .setIssuer(iss)
      .sign(key);
  };
  const month = () => new Date(Date.now() + 30 * 86400_000);
  const newSession = async (tx: postgres.TransactionSql, user: postgres.Row, method: string) => {
    const [session] =
      await tx`insert into auth.sessions (user_id, amr, created_at) values (${user.id}, ${tx.json([{ method, timestamp: Math.floor(Date.now() / 1000) }])}, now()) returning id, aal, amr`;
    const token = randomToken(40);
    await tx`insert into auth.refresh_tokens (token_hash, session_id, user_id, created_at, expires_at) values (${sha256(token)}, ${session!.id}, ${user.id}, now(), ${month()})`;
    return { session: session!, token };
  };
  const answer = async (user: postgres.Row, s: { session: postgres.Row; token: string }) => ({
    access_token: await sign(user, s.session),
    token_type: 'bearer',
    expires_in: 3600,
    refresh_token: s.token,
    user: {
      id: user.id,
      email: user.email,
      user_metadata: user.raw_user_meta_data,
      app_metadata: user.raw_app_meta_data,
    },
  });
  const signUp = (email: string | null, hash: string | null) =>
    sql.begin(async (tx) => {
      const provider = email ? 'email' : 'anonymous';
      const [user] =
        await tx`insert into auth.users (email, encrypted_password, email_confirmed_at, is_anonymous, raw_app_meta_data, last_sign_in_at, created_at, updated_at)
        values (${email}, ${hash}, ${email ? new Date() : null}, ${!email}, ${tx.json({ provider, providers: [provider] })}, now(), now(), now()) returning *`;
      return { user: user!, s: await newSession(tx, user!, email ? 'password' : 'anonymous') };
    });
  const claims = async (req: IncomingMessage) =>
    (await jwtVerify(req.headers.authorization!.slice(7), publicKey, { algorithms: ['ES256'] })).payload;

  const routes: Record<string, (req: IncomingMessage) => Promise<[number, unknown]>> = {
    'POST /auth/v1/signup': async (req) => {
      const { email, password } = await readBody(req);
      const r = await signUp(email ?? null, email ? await hashPassword(password) : null);
      return [201, await answer(r.user, r.s)];
    },
    'POST /auth/v1/token?grant_type=password': async (req) => {
      const { email, password } = await readBody(req);
      const [user] = await sql`select * from auth.users where email = ${email}`;
      if (!user || !(await verifyPassword(user.encrypted_password, password)))
        return [400, { error_code: 'invalid_credentials' }];
      const s = await sql.begin(async (tx) => {
        const s = await newSession(tx, user, 'password');
        await tx`update auth.users set last_sign_in_at = now() where id = ${user.id}`;
        return s;
      });
      return [200, await answer(user, s)];
    },
    'POST /auth/v1/token?grant_type=refresh_token': async (req) => {
      const { refresh_token } = await readBody(req);
      const out = await sql.begin(async (tx) => {
        const [used] = await tx`update auth.refresh_tokens set revoked = true
          where token_hash = ${sha256(refresh_token)} and not revoked and expires_at > now() returning id, session_id, user_id`;
        if (!used) return null;
        const [session] =
          await tx`update auth.sessions set refreshed_at = now() where id = ${used.session_id} returning id, aal, amr`;
        const [user] = await tx`select * from auth.users where id = ${used.user_id}`;
        const token = randomToken(40);
        await tx`insert into auth.refresh_tokens (token_hash, session_id, user_id, parent, created_at, expires_at)
          values (${sha256(token)}, ${session!.id}, ${user!.id}, ${used.id}, now(), ${month()})`;
        return { user: user!, s: { session: session!, token } };
      });
      return out ? [200, await answer(out.user, out.s)] : [401, { error_code: 'invalid_grant' }];
    },
    'GET /auth/v1/user': async (req) => {
      const { sub } = await claims(req);
      const [[user], identities, factors] = await Promise.all([
        sql`select * from auth.users where id = ${sub!}`,
        sql`select * from auth.identities where user_id = ${sub!} order by created_at`,
        sql`select id, factor_type, friendly_name, status, created_at, updated_at from auth.mfa_factors where user_id = ${sub!} order by created_at`,
      ]);
      return [
        200,
        {
          id: user!.id,
          email: user!.email,
          user_metadata: user!.raw_user_meta_data,
          app_metadata: user!.raw_app_meta_data,
          identities,
          factors,
        },
      ];
    },
    'POST /auth/v1/logout': async (req) => {
      const c = await claims(req);
      await sql`delete from auth.sessions where id = ${c.session_id as string} and user_id = ${c.sub!}`;
      return [204, null];
    },
  };
  const server = createServer((req, res) => {
    const route = routes[`${req.method} ${req.url}`];
    if (!route) return void res.writeHead(404).end();
    route(req).then(
      ([status, body]) =>
        body === null
          ? res.writeHead(status).end()
          : res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (err) => res.writeHead(500).end(JSON.stringify({ error: String(err) })),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Accounts on one server to sign in with, refresh chains, an access token, and guest sessions to log out. */
async function fixtures(base: string, key: string, call: Call): Promise<LoadPlan> {
  const plan: LoadPlan = { base, key, call, emails: [], tokens: [], access: '', sessions: [] };
  const tag = `${Date.now()}-${randomToken(6, 'abcdefghijklmnopqrstuvwxyz')}`;
  for (let i = 0; i < 4; i++) {
    plan.emails.push(`bench-${tag}-${i}@example.test`);
    await post(`${base}/auth/v1/signup`, { email: plan.emails[i], password: PASSWORD }, key);
  }
  if (call === 'refresh' || call === 'user') {
    // One chain per load loop, and one for counting statements.
    for (let i = 0; i <= CONCURRENCY; i++) {
      const s = await post(
        `${base}/auth/v1/token?grant_type=password`,
        { email: plan.emails[i % 4], password: PASSWORD },
        key,
      );
      plan.tokens.push(s.refresh_token);
      plan.access = s.access_token;
    }
  }
  if (call === 'logout') {
    // More than a run can spend: each logout ends one guest session.
    for (let i = 0; i < 100; i++) {
      const batch = await Promise.all(Array.from({ length: 16 }, () => post(`${base}/auth/v1/signup`, {}, key)));
      plan.sessions.push(...batch.map((s) => s.access_token as string));
    }
  }
  return plan;
}

/** One sequential call of each kind, to count its statements. */
function singleCall(
  plan: LoadPlan,
  call: Call,
  state: { refresh: string; sessions: string[] },
): () => Promise<unknown> {
  const { base, key } = plan;
  switch (call) {
    case 'signup':
      return () =>
        post(
          `${base}/auth/v1/signup`,
          { email: `one-${randomToken(12, 'abcdefghijklmnopqrstuvwxyz')}@example.test`, password: PASSWORD },
          key,
        );
    case 'signin':
      return () =>
        post(`${base}/auth/v1/token?grant_type=password`, { email: plan.emails[0], password: PASSWORD }, key);
    case 'refresh':
      return async () =>
        (state.refresh = (
          await post(`${base}/auth/v1/token?grant_type=refresh_token`, { refresh_token: state.refresh }, key)
        ).refresh_token);
    case 'user':
      return async () =>
        (
          await fetch(`${base}/auth/v1/user`, { headers: { apikey: key, authorization: `Bearer ${plan.access}` } })
        ).text();
    case 'anon':
      return () => post(`${base}/auth/v1/signup`, {}, key);
    case 'logout':
      return () => post(`${base}/auth/v1/logout`, {}, key, state.sessions.pop());
  }
}

const CALLS: [Call, string][] = [
  ['signup', 'sign-up with password'],
  ['signin', 'sign-in with password'],
  ['refresh', 'refresh token grant'],
  ['user', 'GET /user (same token each time)'],
  ['anon', 'anonymous sign-in'],
  ['logout', 'logout (a fresh session each)'],
];

async function compareCalls(h: TestHearth, bare: { url: string; sql: postgres.Sql }): Promise<string[]> {
  const project = (await h.hearth.registry.defaultProject())!;
  const lines = [
    `${'call'.padEnd(34)} ${'hearth req/s'.padStart(12)} ${'p99 ms'.padStart(7)} ${'cpu ms/req'.padStart(10)} ${'stmts'.padStart(5)}   |  ${'bare req/s'.padStart(10)} ${'p99 ms'.padStart(7)} ${'cpu ms/req'.padStart(10)} ${'stmts'.padStart(5)}   cpu ratio`,
  ];
  for (const [call, label] of CALLS) {
    const row: string[] = [];
    const cpu = [0, 0];
    for (const [i, [base, pool]] of (
      [
        [h.url, project.sql],
        [bare.url, bare.sql],
      ] as const
    ).entries()) {
      const plan = await fixtures(base, h.info.PUBLISHABLE_KEY, call);
      const one = singleCall(plan, call, { refresh: plan.tokens.pop() ?? '', sessions: plan.sessions.splice(0, 5) });
      const stmts = await statementsPerCall([pool], 5, one);
      const m = await measure(plan);
      if (m.errors)
        throw new Error(
          `${label} against ${i ? 'the reference' : 'hearth'}: ${m.errors} errors, first ${m.firstError}`,
        );
      cpu[i] = m.cpuMs;
      row.push(
        `${m.rps.toFixed(0).padStart(i ? 10 : 12)} ${m.p99.toFixed(0).padStart(7)} ${m.cpuMs.toFixed(2).padStart(10)} ${String(stmts).padStart(5)}`,
      );
    }
    lines.push(`${label.padEnd(34)} ${row[0]}   |  ${row[1]}   ${(cpu[0]! / cpu[1]!).toFixed(2)}`);
  }
  return lines;
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
  const project = (await h.hearth.registry.defaultProject())!;
  const sql = postgres(withDatabase(serverUrl(), project.dbName), { max: 10, onnotice: () => {} });
  const ref = await referenceServer(h, sql);
  const lines: string[] = [];
  try {
    await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, {
      body: { rate_limit_signups: 1_000_000, rate_limit_anonymous_users: 1_000_000, rate_limit_email_sent: 100000 },
    });
    const key = h.info.PUBLISHABLE_KEY;
    lines.push(...(await compareCalls(h, { url: ref.url, sql })));
    const a = await post(`${h.url}/auth/v1/signup`, {}, key);

    const kid = JSON.parse(Buffer.from(a.access_token.split('.')[0]!, 'base64url').toString()).kid as string;
    const publicKey = project.verifyKeys.get(kid)!;
    const clock = h.hearth.p.clock;
    const ours = await perSecond(() => verifyAccessToken(project, a.access_token, clock));
    const bare = await perSecond(() => jwtVerify(a.access_token, publicKey, { algorithms: ['ES256'] }));
    lines.push(
      `auth token verifications/s hearth ${ours.toFixed(0)}  bare jose jwtVerify ${bare.toFixed(0)}  ratio ${(ours / bare).toFixed(2)}`,
    );

    const argon = await meanMs(10, () => hashPassword('Bench-password-for-hearth'));
    const signIn = await meanMs(10, () =>
      post(
        `${h.url}/auth/v1/token?grant_type=password`,
        { email: `nobody-${Date.now()}@example.test`, password: 'x'.repeat(12) },
        key,
      ).catch(() => null),
    );
    lines.push(
      `auth argon2id hash ${argon.toFixed(1)} ms (m=19 MiB, t=2, p=1); password sign-in (unknown e-mail, dummy verify) ${signIn.toFixed(1)} ms`,
    );

    const known = `known-${Date.now()}@example.test`;
    await post(`${h.url}/auth/v1/otp`, { email: known }, key);
    const k: number[] = [];
    const u: number[] = [];
    for (let i = 0; i < 40; i++) {
      for (const [email, into] of [
        [known, k],
        [`ghost-${i}-${Date.now()}@example.test`, u],
      ] as const) {
        const t = performance.now();
        await post(`${h.url}/auth/v1/otp`, { email, create_user: false }, key);
        into.push(performance.now() - t);
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
    lines.push(
      `auth /otp latency median   known address ${median(k).toFixed(2)} ms  unknown address ${median(u).toFixed(2)} ms  ratio ${(median(k) / median(u)).toFixed(2)}`,
    );
  } finally {
    await new Promise((r) => ref.server.close(r));
    await sql.end();
    await h.close();
  }
  return lines;
}
