/**
 * Foundation benchmark: the JWKS route, and an authenticated no-op query
 * through withRole, each against a bare node:http + postgres.js server doing
 * the same work (a transaction with the same settings and query, written
 * the plain postgres.js way: sql.begin). Both servers run in this process
 * (autocannon in a child), so each line also gives the CPU per request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { signAccessToken } from '../src/auth/access-token.ts';
import { bareTransaction, compareWithCpu, load, measuredLoad, withHearth } from './lib.ts';

function bareServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    handler(req, res).catch(() => {
      res.statusCode = 500;
      res.end();
    });
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

export async function benchFoundation(): Promise<string[]> {
  return withHearth(async (h) => {
    const lines: string[] = [];
    const project = (await h.hearth.registry.defaultProject())!;

    const jwksBody = JSON.stringify(project.jwks);
    const bareJwks = await bareServer(async (_req, res) => {
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(jwksBody);
    });
    // Warm both servers (JIT) so neither pays it in its measured run, as bench/rest.ts does.
    for (const u of [`${h.url}/auth/v1/.well-known/jwks.json`, bareJwks.url]) await load(u, { seconds: 2 });
    const hearthJwks = await measuredLoad(`${h.url}/auth/v1/.well-known/jwks.json`);
    const bareJwksLoad = await measuredLoad(bareJwks.url);
    lines.push(...compareWithCpu('GET /auth/v1/.well-known/jwks.json', hearthJwks, bareJwksLoad));
    await bareJwks.close();

    // The no-op: a user token → withRole → `select 1`, via the REST RPC route when it exists.
    const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
    await owner.unsafe(`create function public.noop() returns int language sql stable as 'select 1'`);
    await owner.end();
    const token = await signAccessToken(
      project,
      { sub: '00000000-0000-4000-8000-000000000001', role: 'authenticated', aud: 'authenticated' },
      h.clock,
      'bench',
    );
    const pool = postgres(h.hearth.databaseUrl.replace(/\/[^/]*$/, `/${project.dbName}`), {
      max: 10,
      onnotice: () => {},
    });
    const bareQuery = await bareServer(async (_req, res) => {
      const claims = { sub: '00000000-0000-4000-8000-000000000001', role: 'authenticated' };
      const [row] = await bareTransaction(pool, claims, (tx) => tx`select public.noop() as noop`);
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(JSON.stringify(row!.noop));
    });
    const headers = { apikey: h.info.PUBLISHABLE_KEY, authorization: `Bearer ${token}` };
    const rest = await fetch(`${h.url}/rest/v1/rpc/noop`, { headers });
    if (rest.status === 200) {
      for (const [u, hd] of [
        [`${h.url}/rest/v1/rpc/noop`, headers],
        [bareQuery.url, undefined],
      ] as const)
        await load(u, { headers: hd, seconds: 2 });
      const hearthQuery = await measuredLoad(`${h.url}/rest/v1/rpc/noop`, { headers });
      const bareLoad = await measuredLoad(bareQuery.url);
      lines.push(...compareWithCpu('authenticated no-op query (GET /rest/v1/rpc/noop)', hearthQuery, bareLoad));
    } else {
      lines.push(`authenticated no-op query: /rest/v1/rpc is not available (${rest.status})`);
    }
    await bareQuery.close();
    await pool.end();
    return lines;
  });
}
