/**
 * `npm run bench`: every benchmark, each printing Hearth beside a bare
 * reference run in the same process tree, with the ratio. Needs DATABASE_URL
 * (or starts the embedded PostgreSQL like `npm test`). `npm run bench -- foundation`
 * runs one.
 */
import path from 'node:path';

const benches: Record<string, () => Promise<{ [k: string]: (...a: never[]) => Promise<string[] | string> }>> = {
  foundation: () => import('./foundation.ts'),
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
    for (const line of Array.isArray(out) ? out : [out]) console.log(line);
  }
} finally {
  await stopEmbedded();
}
