/**
 * A throwaway PostgreSQL of a test's own, which it may stop and start again
 * (never the shared server of DATABASE_URL): the embedded cluster Hearth
 * itself runs (src/db/embedded.ts, so it also works as root, as the
 * `postgres` user) in a temporary folder on a free port, with fsync off since
 * nothing in it outlives the test.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { startEmbedded, type EmbeddedCluster } from '../../src/db/embedded.ts';

export interface PrivatePostgres {
  url: string;
  /** Fast shutdown (what a restart does to its clients: every backend is terminated). */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

const quiet = { info: () => {}, warn: () => {} };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hearth-pg-'));
  const port = await freePort();
  let cluster: EmbeddedCluster | null = await startEmbedded(dir, port, quiet);
  const url = cluster.url;
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql`alter system set fsync = off`;
  await sql`alter system set full_page_writes = off`;
  await sql`select pg_reload_conf()`;
  await sql.end();
  return {
    url,
    async stop() {
      await cluster?.stop();
      cluster = null;
    },
    async start() {
      cluster ??= await startEmbedded(dir, port, quiet);
    },
    async destroy() {
      await cluster?.stop();
      cluster = null;
      // As root the cluster lives elsewhere (/var/lib/hearth/...), linked from <dir>/pg.
      const pg = path.join(dir, 'pg');
      if (existsSync(pg)) rmSync(realpathSync(pg), { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
