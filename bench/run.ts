/**
 * `npm run bench`: every benchmark, each printing Hearth beside a bare
 * reference run in the same process tree, with the ratio. Needs DATABASE_URL
 * (or starts the embedded PostgreSQL like `npm test`). `npm run bench -- foundation`
 * runs one.
 */
import { ensureDatabaseUrl } from '../scripts/scratch-db.ts';

type BenchResult = string[] | string | { text: string };
const benches: Record<string, () => Promise<{ [k: string]: (...a: never[]) => Promise<BenchResult> }>> = {
  foundation: () => import('./foundation.ts'),
  rest: () => import('./rest.ts'),
  auth: () => import('./auth.ts'),
  storage: () => import('./storage.ts'),
  'storage-small': () => import('./storage-small.ts'),
  functions: () => import('./functions.ts'),
  workflows: () => import('./workflows.ts'),
  queues: () => import('./queues.ts'),
  realtime: () => import('./realtime.ts'),
  cli: () => import('./cli.ts'),
  process: () => import('./process.ts'),
  studio: () => import('./studio.ts'),
};

/**
 * What each bench's reference does, printed under its heading so a reader can
 * tell a strict floor (the same work a correct server cannot skip) from a
 * lenient one (less work than Hearth must do, so a ratio below 1 is expected).
 * ../shared/perf measures REST from outside against a stricter floor.
 */
const REFERENCES: Record<string, string> = {
  foundation:
    'lenient: in-process node:http + postgres.js, same transaction and settings (sql.begin: one round trip per statement), no key or token check',
  rest: 'lenient: in-process node:http + postgres.js, equivalent SQL in sql.begin with the same role settings; no key or token check, no URL parsing or planning',
  auth: 'lenient: node:http + postgres.js + argon2 + jose doing the minimal work; no API keys, rate limits or audit rows',
  storage:
    'strict for the bytes: node:http streaming the same bytes to/from files (no fsync on either side); no auth, no rows, no hashing',
  'storage-small':
    'strict floor for the work: the same role settings and statement in a transaction (an upload also stages its version there, which the schema requires of a row), jose token check, readFile/writeFile; no staging committed ahead, no hashing',
  functions:
    "strict: the very workerd process Hearth runs, called directly on its unix socket (Hearth / workerd directly: everything Hearth adds, its second hop included); lenient: a bare node:http proxy to that workerd that checks nothing (Hearth / bare proxy: Hearth's own overhead)",
  workflows: 'a different engine: graphile-worker running equivalent jobs on the same server',
  queues:
    'a different engine: graphile-worker (enqueue + claim + complete) on the same database; ../shared/perf compares with pg-boss',
  realtime: 'lenient: a ws server with no keys, no RLS and no limits, every row sent to everyone',
  cli: 'the same SQL over one direct connection, and `hearth --help` for start-up',
  studio: 'the same page on a 10-row table (what the row count costs)',
  process:
    "strict floor: a bare `node` idling (RSS), `node -e 0` plus the embedded PostgreSQL's own start (restart time), and a bare node:http server streaming the same 10 MiB from a file (downloads)",
};

const only = process.argv.slice(2);
const stopEmbedded = await ensureDatabaseUrl();
try {
  for (const [name, loadModule] of Object.entries(benches)) {
    if (only.length && !only.includes(name)) continue;
    const mod = await loadModule();
    const fn = Object.values(mod).find((v) => typeof v === 'function')!;
    console.log(`\n## ${name}`);
    console.log(`reference: ${REFERENCES[name]}`);
    const out = await fn();
    const text = typeof out === 'object' && !Array.isArray(out) ? out.text : out;
    for (const line of Array.isArray(text) ? text : [text]) console.log(line);
  }
} finally {
  await stopEmbedded();
}
