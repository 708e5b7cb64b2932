/**
 * REST benchmark: GET of one row by primary key under RLS, and GET of 100
 * rows with a two-level embed, each against a bare node:http + postgres.js
 * server running equivalent SQL in the same kind of transaction (plain
 * postgres.js sql.begin); then RSS
 * while 1000-row pages are read repeatedly. Both servers run in this process
 * (autocannon in a child), so each comparison also reports the CPU this
 * process spent per completed request: steadier than req/s on a shared machine.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { signAccessToken } from '../src/auth/access-token.ts';
import { bareTransaction, compare, load, type Load, withHearth } from './lib.ts';

const USER = '00000000-0000-4000-8000-000000000001';

const SCHEMA = `
  create table public.authors (id int primary key, name text not null);
  create table public.posts (id int primary key, author_id int not null references public.authors(id), title text not null, owner uuid not null);
  create table public.comments (id int primary key, post_id int not null references public.posts(id), body text not null);
  alter table public.posts enable row level security;
  create policy read_own on public.posts for select using (owner = auth.uid());
  insert into public.authors select i, 'author ' || i from generate_series(1, 100) i;
  insert into public.posts select i, 1 + i % 100, 'post ' || i, '${USER}' from generate_series(1, 5000) i;
  insert into public.comments select i, 1 + i % 5000, 'comment ' || i from generate_series(1, 20000) i;
  create index on public.comments (post_id);
  analyze;`;

const ONE_ROW = `select to_json(p)::text as body from public.posts p where p.id = $1`;
const EMBED = `select coalesce(json_agg(x), '[]')::text as body from (
  select p.id, p.title,
    (select to_json(a) from (select a.name from public.authors a where a.id = p.author_id) a) as authors,
    (select coalesce(json_agg(c), '[]') from (select c.body from public.comments c where c.post_id = p.id) c) as comments
  from public.posts p order by p.id limit 100) x`;

function bare(pool: postgres.Sql): Promise<{ url: string; close(): Promise<void> }> {
  const claims = { sub: USER, role: 'authenticated' };
  const server = http.createServer((req, res) => {
    const embed = req.url!.startsWith('/embed');
    bareTransaction(pool, claims, (tx) => tx.unsafe(embed ? EMBED : ONE_ROW, embed ? [] : [42], { prepare: true }))
      .then(([row]) => {
        res.setHeader('content-type', 'application/json; charset=utf-8');
        res.end(row!.body);
      })
      .catch(() => {
        res.statusCode = 500;
        res.end();
      });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) })),
  );
}

/** A load run with this process's CPU time (user + system) per completed request, in microseconds. */
async function measured(url: string, headers?: Record<string, string>): Promise<Load & { cpu: number }> {
  const seconds = 5;
  const before = process.cpuUsage();
  const r = await load(url, { headers, seconds });
  const used = process.cpuUsage(before);
  return { ...r, cpu: (used.user + used.system) / Math.max(1, r.rps * seconds) };
}

function compareCpu(name: string, hearth: Load & { cpu: number }, bare: Load & { cpu: number }): string[] {
  const cpu = `${''.padEnd(44)} CPU per request: hearth ${hearth.cpu.toFixed(0)} us, bare ${bare.cpu.toFixed(0)} us, ratio ${(bare.cpu / hearth.cpu).toFixed(2)}`;
  return [compare(name, hearth, bare), cpu];
}

export async function benchRest(): Promise<string[]> {
  return withHearth(async (h) => {
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    await owner.unsafe(SCHEMA);
    await owner.end();
    const project = (await h.hearth.registry.defaultProject())!;
    const token = await signAccessToken(project, { sub: USER, role: 'authenticated', aud: 'authenticated' }, h.clock, 'bench');
    const headers = { apikey: h.info.PUBLISHABLE_KEY, authorization: `Bearer ${token}` };
    const pool = postgres(h.hearth.databaseUrl.replace(/\/[^/]*$/, `/${project.dbName}`), { max: 10, onnotice: () => {} });
    const ref = await bare(pool);
    const lines: string[] = [];
    try {
      const one = `${h.url}/rest/v1/posts?id=eq.42`;
      const embed = `${h.url}/rest/v1/posts?select=id,title,authors(name),comments(body)&order=id&limit=100`;
      for (const u of [one, embed]) {
        const r = await fetch(u, { headers });
        if (r.status !== 200) throw new Error(`${u} answered ${r.status}: ${await r.text()}`);
      }
      // Warm both servers (JIT, prepared statements, pools) so neither pays it in its measured run.
      for (const [u, h] of [[one, headers], [`${ref.url}/one`, undefined], [embed, headers], [`${ref.url}/embed`, undefined]] as const) {
        await load(u, { headers: h, seconds: 2 });
      }
      lines.push(...compareCpu('GET one row by primary key (RLS on)', await measured(one, headers), await measured(`${ref.url}/one`)));
      lines.push(...compareCpu('GET 100 rows with a two-level embed', await measured(embed, headers), await measured(`${ref.url}/embed`)));

      const page = `${h.url}/rest/v1/comments?select=*&limit=1000`;
      const rss = () => process.memoryUsage().rss / 1024 / 1024;
      const before = rss();
      let peak = before;
      for (let i = 0; i < 300; i++) {
        await (await fetch(page, { headers: { apikey: h.info.SECRET_KEY } })).arrayBuffer();
        peak = Math.max(peak, rss());
      }
      lines.push(`RSS while reading 300 pages of 1000 rows: ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB, after ${rss().toFixed(0)} MiB`);
    } finally {
      await ref.close();
      await pool.end();
    }
    return lines;
  });
}
