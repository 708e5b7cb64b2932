// Every request is answered when the database connections die under load:
// writers and readers run through the real HTTP server while the project's
// backends are terminated (pg_terminate_backend), then while PostgreSQL is
// stopped and started again. Each request must be answered within the
// statement timeout plus a few seconds, with 2xx or 503 database_unavailable
// (Retry-After), every acknowledged write must be in the table, and no write
// reported as failed may be there. The server is a private one the test may
// stop (test/helpers/private-postgres.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import postgres from 'postgres';
import { STATEMENT_TIMEOUT } from '../../src/db/with-role.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';

const WRITERS = 8;
const READERS = 16;
/** An answer later than this counts as unanswered: the statement timeout plus a few seconds. */
const ANSWER_WITHIN_MS = Number.parseInt(STATEMENT_TIMEOUT, 10) * 1000 + 5000;

let pg: PrivatePostgres;
let h: TestHearth;
let key: string;
let db: string;
const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-lost-'));

before(async () => {
  pg = await startPrivatePostgres();
  h = await startTestHearth({ env: { DATABASE_URL: pg.url }, dataDir, keepData: true });
  key = h.info.SECRET_KEY;
  db = decodeURIComponent(new URL(h.info.DB_URL).pathname.slice(1));
  const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
  await owner.unsafe('create table public.chaos (id text primary key, n int not null)');
  await owner.end();
});
after(async () => {
  await h?.close();
  await pg?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer {
  kind: 'write' | 'read';
  id: string;
  status: number | 'unanswered';
  ms: number;
  code?: string;
  retryAfter?: string | null;
}

/** Writers POST rows with unique ids and readers GET them until stop() is called. */
function load(tag: string) {
  const answers: Answer[] = [];
  let running = true;
  let seq = 0;
  const request = async (kind: Answer['kind']) => {
    const id = `${tag}-${kind}-${seq++}`;
    const started = Date.now();
    const url =
      kind === 'write'
        ? `${h.url}/rest/v1/chaos`
        : `${h.url}/rest/v1/chaos?select=id&id=eq.${tag}-write-${Math.max(0, seq - 20)}`;
    try {
      const res = await fetch(url, {
        method: kind === 'write' ? 'POST' : 'GET',
        headers: {
          apikey: key,
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          prefer: 'return=minimal',
        },
        body: kind === 'write' ? JSON.stringify({ id, n: 1 }) : undefined,
        signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
      });
      const text = await res.text();
      let code: string | undefined;
      if (res.status >= 400) code = (JSON.parse(text) as { code?: string }).code;
      answers.push({
        kind,
        id,
        status: res.status,
        ms: Date.now() - started,
        code,
        retryAfter: res.headers.get('retry-after'),
      });
    } catch {
      answers.push({ kind, id, status: 'unanswered', ms: Date.now() - started });
    }
  };
  const loops = [
    ...Array.from({ length: WRITERS }, () => 'write' as const),
    ...Array.from({ length: READERS }, () => 'read' as const),
  ].map(async (kind) => {
    while (running) await request(kind);
  });
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function assertAllAnswered(t: TestContext, answers: Answer[], what: string): Promise<void> {
  const byStatus: Record<string, number> = {};
  for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  t.diagnostic(
    `${what}: ${answers.length} requests, by status ${JSON.stringify(byStatus)}, slowest ${Math.max(...answers.map((a) => a.ms))} ms`,
  );
  assert.deepEqual(
    answers.filter((a) => a.status === 'unanswered'),
    [],
    `every request answered within ${ANSWER_WITHIN_MS} ms`,
  );
  const bad = answers.filter(
    (a) =>
      a.status !== 200 && a.status !== 201 && !(a.status === 503 && a.code === 'database_unavailable' && a.retryAfter),
  );
  assert.deepEqual(bad, [], 'only 2xx, or 503 database_unavailable with Retry-After');
  assert.ok(
    answers.some((a) => a.kind === 'write' && a.status === 201),
    'writes went through',
  );

  const owner = postgres(h.info.DB_URL, { max: 1, onnotice: () => {} });
  try {
    const writes = answers.filter((a) => a.kind === 'write');
    const stored = new Set(
      (await owner`select id from public.chaos where id = any(${writes.map((a) => a.id)})`).map((r) => r.id as string),
    );
    assert.deepEqual(
      writes.filter((a) => a.status === 201 && !stored.has(a.id)),
      [],
      'every acknowledged write is stored',
    );
    assert.deepEqual(
      writes.filter((a) => a.status !== 201 && stored.has(a.id)),
      [],
      'no write reported as failed was committed',
    );
  } finally {
    await owner.end();
  }
}

test(`backends terminated under load (${WRITERS} writers, ${READERS} readers): every request answered, nothing acknowledged lost`, async (t) => {
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  const l = load('kill');
  try {
    await sleep(1000);
    for (let round = 0; round < 3; round++) {
      const [row] = await admin`select count(*) filter (where pg_terminate_backend(pid))::int as n
        from pg_stat_activity where datname = ${db} and pid <> pg_backend_pid()`;
      t.diagnostic(`termination ${round + 1}: ${row!.n} backends`);
      await sleep(1000);
    }
  } finally {
    await l.stop();
    await admin.end();
  }
  await assertAllAnswered(t, l.answers, 'terminations');
});

test('PostgreSQL stopped and started again under load: every request answered, nothing acknowledged lost', async (t) => {
  const l = load('restart');
  try {
    await sleep(1000);
    await pg.stop();
    await sleep(2000);
    await pg.start();
    await sleep(2000);
  } finally {
    await l.stop();
  }
  await assertAllAnswered(t, l.answers, 'restart');
  assert.ok(
    l.answers.slice(-WRITERS * 2).some((a) => a.status === 201),
    'writes go through again after the restart',
  );
});
