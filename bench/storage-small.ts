/**
 * Small objects (4 KiB), where per-request overhead dominates rather than
 * bytes: a download with a user access token under RLS, a signed-URL download
 * and a raw upload with a user token, each against a bare node:http +
 * postgres.js + jose server doing what a developer would write by hand: the
 * same role settings and statement in a transaction (bareTransaction), the
 * token verified with jose, the bytes read from or written to a file. An
 * upload's row must claim a staged version (storage.objects_claim_bytes), so
 * the bare server stages it in the row's own transaction; without that every
 * bare upload failed (HS002) and the reference measured 500s.
 * Both servers run in this process (autocannon in a child), so each line
 * also gives the CPU this process spent per request.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jwtVerify } from 'jose';
import postgres from 'postgres';
import { signAccessToken } from '../src/auth/access-token.ts';
import type { ProjectRuntime } from '../src/platform/registry.ts';
import { bareTransaction, compareWithCpu, type Load, load, measuredLoad, withHearth } from './lib.ts';

const USER = '00000000-0000-4000-8000-000000000001';
const SIZE = 4096;
const BYTES = Buffer.alloc(SIZE, 'x');

/**
 * Uploads need a new name per request, which autocannon's URL cannot vary: this
 * client (a child process) keeps CONNECTIONS keep-alive connections posting to
 * url + n for `seconds`; argv: url seconds headers-json body.
 */
const UPLOADER = `
  const http = require('node:http');
  const [url, seconds, headers, body] = process.argv.slice(1);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
  const h = { ...JSON.parse(headers), 'content-length': Buffer.byteLength(body) };
  const end = Date.now() + seconds * 1000;
  let n = 0, errors = 0;
  const lat = [];
  const one = () => new Promise((resolve) => {
    const t = performance.now();
    const req = http.request(url + (n++), { method: 'POST', agent, headers: h }, (res) => {
      res.resume();
      res.on('end', () => { if (res.statusCode >= 300) errors++; lat.push(performance.now() - t); resolve(); });
    });
    req.on('error', () => { errors++; resolve(); });
    req.end(body);
  });
  (async () => {
    await Promise.all(Array.from({ length: 20 }, async () => { while (Date.now() < end) await one(); }));
    lat.sort((a, b) => a - b);
    const at = (q) => Math.round(lat[Math.floor(q * (lat.length - 1))] ?? 0);
    console.log(JSON.stringify({ rps: lat.length / +seconds, p50: at(0.5), p99: at(0.99), errors }));
    agent.destroy();
  })();`;

function uploads(
  url: string,
  seconds: number,
  headers: Record<string, string>,
  body: string,
): Promise<Load & { cpu: number }> {
  const before = process.cpuUsage();
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', UPLOADER, url, String(seconds), JSON.stringify(headers), body], (err, out) => {
      if (err) return reject(err);
      const r = JSON.parse(out) as Load;
      const used = process.cpuUsage(before);
      resolve({ ...r, cpu: (used.user + used.system) / Math.max(1, r.rps * seconds) });
    }),
  );
}

interface Bare {
  url: string;
  close(): Promise<void>;
}

/** GET /down, GET /sign?token=, POST /up/<name>. */
function bare(pool: postgres.Sql, dir: string, verifyKeys: ProjectRuntime['verifyKeys']): Promise<Bare> {
  const claims = { sub: USER, role: 'authenticated' };
  const fail = (res: http.ServerResponse) => () => {
    res.statusCode = 500;
    res.end();
  };
  const send = (res: http.ServerResponse, row: postgres.Row | undefined) => {
    if (!row) return fail(res)();
    return readFile(path.join(dir, row.version as string)).then((bytes) => {
      res.writeHead(200, {
        'content-type': row.content_type as string,
        'content-length': bytes.length,
        etag: `"${row.content_hash}"`,
      });
      res.end(bytes);
    });
  };
  const find = `select version, content_type, content_hash from storage.objects where bucket = $1 and name = $2`;
  const server = http.createServer((req, res) => {
    const url = req.url!;
    if (url.startsWith('/down')) {
      bareTransaction(pool, claims, (tx) => tx.unsafe(find, ['small', 'obj'], { prepare: true }))
        .then(([row]) => send(res, row))
        .catch(fail(res));
    } else if (url.startsWith('/sign')) {
      const token = new URL(url, 'http://x').searchParams.get('token')!;
      jwtVerify(token, (header) => verifyKeys.get(header.kid!)!, { algorithms: ['ES256'] })
        .then(({ payload }) => {
          if (payload.url !== 'small/obj') throw new Error('wrong object');
          return pool.unsafe(find, ['small', 'obj'], { prepare: true });
        })
        .then(([row]) => send(res, row))
        .catch(fail(res));
    } else {
      const version = randomUUID();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        writeFile(path.join(dir, version), Buffer.concat(chunks))
          .then(() =>
            // The row must claim a staged version (storage.objects_claim_bytes): the bare server
            // stages it in the row's own transaction, as the platform, before taking the role.
            pool.begin(async (tx) => {
              await tx.unsafe('insert into storage.pending_bytes (version, writer) values ($1, 0)', [version], {
                prepare: true,
              });
              await tx`select set_config('role', ${claims.role}, true), set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                set_config('statement_timeout', '10s', true)`;
              await tx.unsafe(
                `insert into storage.objects (id, bucket, name, owner_sub, version, size, content_type, cache_control, content_hash, metadata)
                 values ($1, 'small', $2, $3, $4, $5, 'application/octet-stream', 'no-cache', 'x', '{}')`,
                [randomUUID(), `bare-${version}`, USER, version, SIZE],
                { prepare: true },
              );
            }),
          )
          .then(() => {
            res.statusCode = 201;
            res.setHeader('content-type', 'application/json; charset=utf-8');
            res.end(JSON.stringify({ Key: `small/bare-${version}` }));
          })
          .catch(fail(res));
      });
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

export async function benchStorageSmall(): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hearth-bench-small-'));
  try {
    return await withHearth(async (h) => {
      const project = (await h.hearth.registry.defaultProject())!;
      const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
      await owner.unsafe(`
        insert into storage.buckets (id, name) values ('small', 'small');
        create policy "own objects" on storage.objects for select to authenticated using (bucket = 'small' and owner_sub = auth.uid()::text);
        create policy "upload own" on storage.objects for insert to authenticated with check (bucket = 'small' and owner_sub = auth.uid()::text);`);
      await owner.end();
      const token = await signAccessToken(
        project,
        { sub: USER, role: 'authenticated', aud: 'authenticated' },
        h.clock,
        'bench',
      );
      const headers = { apikey: h.info.PUBLISHABLE_KEY, authorization: `Bearer ${token}` };
      const base = `${h.url}/storage/v1`;
      const put = await fetch(`${base}/object/small/obj`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/octet-stream' },
        body: BYTES,
      });
      if (put.status !== 201) throw new Error(`upload: ${put.status} ${await put.text()}`);
      const signed = await fetch(`${base}/object/sign/small/obj`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{"expiresIn":3600}',
      });
      const signedURL = `${base}${((await signed.json()) as { signedURL: string }).signedURL}`;
      const signToken = new URL(signedURL).searchParams.get('token')!;

      // The bare server reads storage.objects on the same database and the same bytes, from its own folder.
      const pool = postgres(h.hearth.databaseUrl.replace(/\/[^/]*$/, `/${project.dbName}`), {
        max: 10,
        onnotice: () => {},
      });
      const [row] = await pool`select version from storage.objects where bucket = 'small' and name = 'obj'`;
      await writeFile(path.join(dir, row!.version as string), BYTES);
      const ref = await bare(pool, dir, project.verifyKeys);
      const lines: string[] = [`${SIZE}-byte objects, user access token under RLS (signed URL: token only)`];
      try {
        const cases: [string, string, string, Parameters<typeof load>[1]][] = [
          ['download (GET /object, RLS)', `${base}/object/small/obj`, `${ref.url}/down`, { headers }],
          ['signed-URL download (GET /object/sign)', signedURL, `${ref.url}/sign?token=${signToken}`, {}],
        ];
        for (const [name, hearthUrl, bareUrl, opts] of cases) {
          const check = await fetch(hearthUrl, { headers: opts!.headers });
          if (check.status !== 200 || (await check.arrayBuffer()).byteLength !== SIZE)
            throw new Error(`${name}: ${check.status}`);
          await load(hearthUrl, { ...opts, seconds: 2 });
          await load(bareUrl, { ...opts, seconds: 2 });
          lines.push(...compareWithCpu(name, await measuredLoad(hearthUrl, opts), await measuredLoad(bareUrl, opts)));
        }
        const upHeaders = { ...headers, 'content-type': 'application/octet-stream' };
        const body = BYTES.toString();
        await uploads(`${base}/object/small/warm-`, 2, upHeaders, body);
        await uploads(`${ref.url}/up/warm-`, 2, upHeaders, body);
        const up = await uploads(`${base}/object/small/up-`, 5, upHeaders, body);
        if (up.errors) throw new Error(`upload: ${up.errors} errors`);
        const bareUp = await uploads(`${ref.url}/up/`, 5, upHeaders, body);
        if (bareUp.errors) throw new Error(`bare upload: ${bareUp.errors} errors`);
        lines.push(...compareWithCpu('upload (POST /object, RLS)', up, bareUp));
      } finally {
        await ref.close();
        await pool.end();
      }
      return lines;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
