// Connections stay bounded: 100 cold projects hit at once share the process's
// connection budget (HEARTH_DB_MAX_CONNECTIONS), every request is answered
// 200, the process never holds more than the budget, and once idle the
// projects hold no connection at all (docs/architecture.md, "Connections").
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { schemaListener } from '../../src/rest/schema-cache.ts';
import { cloneProjects, type ClonedProject } from '../helpers/clone-projects.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';

const BUDGET = 30;
const PROJECTS = 100;

// 100 databases: on a server of the test's own (max_connections 300), thrown away whole afterwards.
let pg: PrivatePostgres;
let h: TestHearth;
let server: postgres.Sql;
let projects: ClonedProject[];
const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-cold-'));
before(async () => {
  schemaListener.idleMs = 1000; // rather than a minute
  pg = await startPrivatePostgres();
  // The queue bound is raised so that a slow machine (cold backends cost CPU) is not what the test sees.
  h = await startTestHearth({
    env: { DATABASE_URL: pg.url, HEARTH_DB_MAX_CONNECTIONS: String(BUDGET), HEARTH_DB_QUEUE_TIMEOUT_MS: '60000' },
    dataDir,
    keepData: true,
  });
  server = postgres(pg.url, { max: 1, onnotice: () => {} });
  projects = await cloneProjects(h, PROJECTS);
});
after(async () => {
  await server?.end();
  await h?.close();
  await pg?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

async function connectionsTo(dbs: string[]): Promise<number> {
  const [row] = await server`select count(*)::int as n from pg_stat_activity where datname = any(${dbs})`;
  return row!.n as number;
}

test(`${PROJECTS} cold projects hit at once: all answered 200 within a budget of ${BUDGET} connections, none held once idle`, async (t) => {
  const dbs = projects.map((p) => p.db);
  const hearthDbs = [...dbs, h.config.controlDb];
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await connectionsTo(hearthDbs));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  const started = Date.now();
  const answers = await Promise.all(
    projects.map(async (p) => {
      const res = await fetch(`${h.url}/project/${p.ref}/rest/v1/cold?select=id`, {
        headers: { apikey: p.key, authorization: `Bearer ${p.key}` },
      });
      return { status: res.status, body: await res.text() };
    }),
  );
  sampling = false;
  await sampler;
  t.diagnostic(`${PROJECTS} cold projects answered in ${Date.now() - started} ms, at most ${peak} connections at once`);

  const failed = answers.filter((a) => a.status !== 200);
  assert.deepEqual(failed, [], 'every cold project answered 200');
  for (const a of answers) assert.deepEqual(JSON.parse(a.body), [{ id: 1 }]);
  assert.ok(
    peak <= BUDGET,
    `at most ${BUDGET} connections to the projects and the control database at once, saw ${peak}`,
  );
  assert.ok(h.hearth.p.dbs.budget.inUse <= BUDGET);

  // Pools close idle connections after 5 s, schema listeners after idleMs.
  assert.equal(
    await until(
      () => connectionsTo(dbs),
      (n) => n === 0,
      30_000,
    ),
    0,
    'idle projects hold no connection',
  );
});
