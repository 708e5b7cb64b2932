/**
 * Shared setup of the storage tests: a real Hearth, supabase-js clients for
 * the secret key, the publishable key and signed-in users (access tokens
 * minted with the project's key), and a direct SQL connection as the project
 * owner for writing policies.
 */
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { existsSync, readdirSync, type Dirent } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import postgres from 'postgres';
import WebSocket from 'ws';
import { signAccessToken } from '../../src/auth/access-token.ts';
import { startTestHearth, type TestHearth, type TestOptions } from '../helpers/hearth.ts';

export interface StorageTest {
  h: TestHearth;
  service: SupabaseClient;
  anon: SupabaseClient;
  owner: postgres.Sql;
  token(sub: string, extra?: Record<string, unknown>): Promise<string>;
  as(sub: string, extra?: Record<string, unknown>): Promise<SupabaseClient>;
  /** Raw fetch against /storage/v1 with a key or token. */
  raw(
    method: string,
    path: string,
    opts?: {
      token?: string | null;
      body?: BodyInit | null;
      headers?: Record<string, string>;
      json?: unknown;
      signal?: AbortSignal;
    },
  ): Promise<Response>;
  close(): Promise<void>;
}

export function client(h: TestHearth, key: string, token?: string): SupabaseClient {
  return createClient(h.info.BASE_URL, key, {
    realtime: { transport: WebSocket as never },
    auth: { persistSession: false, autoRefreshToken: false },
    global: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });
}

export async function startStorageTest(opts: TestOptions = {}): Promise<StorageTest> {
  const h = await startTestHearth(opts);
  const project = (await h.hearth.registry.defaultProject())!;
  const owner = postgres(h.info.DB_URL, { max: 2, onnotice: () => {} });
  const token = (sub: string, extra: Record<string, unknown> = {}) =>
    signAccessToken(project, { sub, role: 'authenticated', aud: 'authenticated', ...extra }, h.clock, 'hearth');
  return {
    h,
    owner,
    service: client(h, h.info.SECRET_KEY),
    anon: client(h, h.info.PUBLISHABLE_KEY),
    token,
    as: async (sub, extra) => client(h, h.info.PUBLISHABLE_KEY, await token(sub, extra)),
    async raw(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      const token = o.token === undefined ? h.info.SECRET_KEY : o.token;
      if (token) headers.authorization = `Bearer ${token}`;
      let body = o.body;
      if (o.json !== undefined) {
        body = JSON.stringify(o.json);
        headers['content-type'] = 'application/json';
      }
      return fetch(`${h.info.BASE_URL}/storage/v1${path}`, {
        method,
        headers,
        body,
        duplex: 'half',
        signal: o.signal,
      } as RequestInit);
    },
    async close() {
      await owner.end({ timeout: 5 });
      await h.close();
    },
  };
}

/** Every stored byte file of the fs backend (what a leak would leave behind). */
export function storedFiles(h: TestHearth): string[] {
  const root = path.join(h.config.dataDir, 'storage');
  if (!existsSync(root)) return [];
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}

/** The platform's own pool on the default project's database (sees past RLS). */
export const projectSql = (h: TestHearth) => h.hearth.p.dbs.project(h.hearth.project.db_name);

export async function rowCount(t: { h: TestHearth }, table: 'objects' | 'pending_bytes'): Promise<number> {
  const [row] = await projectSql(t.h).unsafe(`select count(*)::int as n from storage.${table}`);
  return row!.n as number;
}

/** Polls until check() holds (background work such as byte removal after a commit). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A project of its own, made through the management API, with two objects stored in
 * a bucket of it; `remove()` deletes the project as DELETE /v1/projects/{ref} does.
 */
export async function projectWithObjects(h: TestHearth): Promise<{ ref: string; remove(): Promise<number> }> {
  const [org] = (await h.api('GET', '/v1/organizations')).body;
  const { ref } = (await h.api('POST', '/v1/projects', { body: { name: 'Doomed', organization_id: org.id } })).body;
  const keys = (await h.api('GET', `/v1/projects/${ref}/api-keys`)).body as { type: string; api_key: string }[];
  const secret = keys.find((k) => k.type === 'secret')!.api_key;
  const storage = createClient(`${h.url}/project/${ref}`, secret, {
    realtime: { transport: WebSocket as never },
    auth: { persistSession: false, autoRefreshToken: false },
  }).storage;
  if ((await storage.createBucket('doomed')).error) throw new Error('bucket not created');
  for (const name of ['a.bin', 'b/c.bin'])
    if ((await storage.from('doomed').upload(name, Buffer.alloc(100, 1))).error) throw new Error('not uploaded');
  return {
    ref,
    remove: async () => (await h.api('DELETE', `/v1/projects/${ref}`, { body: { confirm: ref } })).status,
  };
}

/**
 * Starts an upload of `declared` bytes to `objectPath` (under /storage/v1)
 * with the secret key, sends `first`, and drops the connection once the
 * server has staged it (a pending_bytes row): a client gone mid-body.
 */
export async function abandonUpload(
  t: { h: TestHearth },
  objectPath: string,
  declared: number,
  first: Buffer,
): Promise<void> {
  const url = new URL(`${t.h.info.BASE_URL}/storage/v1${objectPath}`);
  await new Promise<void>((resolve) => {
    const req = http.request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.h.info.SECRET_KEY}`,
        'content-type': 'application/octet-stream',
        'content-length': String(declared),
      },
    });
    req.on('error', () => resolve());
    req.write(first);
    void eventually(async () => (await rowCount(t, 'pending_bytes')) === 1, 'the upload was staged').then(() => {
      req.destroy();
      resolve();
    });
  });
}
