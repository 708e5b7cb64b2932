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

const only = process.argv.slice(2);
const stopEmbedded = await ensureDatabaseUrl();
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
