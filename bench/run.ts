/**
 * `npm run bench`: every benchmark, each printing Hearth beside a bare
 * reference run in the same process tree, with the ratio. Needs DATABASE_URL
 * (or starts the embedded PostgreSQL like `npm test`). `npm run bench -- foundation`
 * runs one.
 */
import path from 'node:path';

type BenchResult = string[] | string | { text: string };
const benches: Record<string, () => Promise<{ [k: string]: (...a: never[]) => Promise<BenchResult> }>> = {
  foundation: () => import('./foundation.ts'),
  rest: () => import('./rest.ts'),
  auth: () => import('./auth.ts'),
  storage: () => import('./storage.ts'),
  functions: () => import('./functions.ts'),
  workflows: () => import('./workflows.ts'),
  queues: () => import('./queues.ts'),
};

const only = process.argv.slice(2);
let stopEmbedded = async () => {};
if (!process.env.DATABASE_URL) {
  const { startEmbedded } = await import('../src/db/embedded.ts');
  const cluster = await startEmbedded(path.resolve('.hearth-test'), Number(process.env.HEARTH_TEST_DB_PORT ?? 54329), console);
  process.env.DATABASE_URL = cluster.url;
  stopEmbedded = cluster.stop;
}
try {
  for (const [name, loadModule] of Object.entries(benches)) {
    if (only.length && !only.includes(name)) continue;
    const mod = await loadModule();
    const fn = Object.values(mod).find((v) => typeof v === 'function')!;
    console.log(`\n## ${name}`);
    const out = await fn();
    const text = typeof out === 'object' && !Array.isArray(out) ? out.text : out;
    for (const line of Array.isArray(text) ? text : [text]) console.log(line);
  }
} finally {
  await stopEmbedded();
}
