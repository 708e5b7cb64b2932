// A backend that dies under a held connection (what a PostgreSQL restart does)
// must not take the process down: postgres.js 3.4.9 threw an uncatchable
// TypeError from a setImmediate (porsager/postgres#1208) when a query reached
// the dead connection, fixed here by scripts/patch-postgres.js (docs/architecture.md,
// "Driver patch"). Each case runs in its own process (dead-connection-child.ts),
// because the failure is a crash: the work must be rejected with
// CONNECTION_CLOSED, pool queries queued behind it and sent after it must
// succeed on the reconnected connection, and the process must exit normally.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dead-connection-child.ts');
/** Hang guard: the child needs well under a second; a query that never settles would keep it alive. */
const DEADLINE_MS = 20_000;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runChild(scenario: string): Promise<Run> {
  const url = process.env.DATABASE_URL;
  assert.ok(url, 'DATABASE_URL must point at a PostgreSQL server (see scripts/test.ts)');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, scenario], {
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

function assertSurvived(run: Run, expected: string[]): void {
  assert.equal(run.signal, null, `the child hung and was killed after ${DEADLINE_MS} ms\n${run.stdout}${run.stderr}`);
  assert.equal(run.code, 0, `the child crashed\n${run.stdout}${run.stderr}`);
  assert.deepEqual(run.stdout.trim().split('\n'), expected);
}

test('sql.begin: backend terminated during pg_sleep; the transaction rejects CONNECTION_CLOSED, its own ROLLBACK does not crash the process, the pool reconnects', async () => {
  assertSurvived(await runChild('begin'), ['work: CONNECTION_CLOSED', 'queued: first second', 'after: 1', 'survived']);
});

test('withRole (sql.reserve): backend terminated during pg_sleep; released connection is not handed queued pool queries on a dead socket, the pool reconnects', async () => {
  assertSurvived(await runChild('with-role'), [
    'work: CONNECTION_CLOSED',
    'queued: first second',
    'after: 1',
    'survived',
  ]);
});

test('sql.reserve by hand: ROLLBACK on the dead reserved connection rejects CONNECTION_CLOSED instead of crashing, the pool reconnects', async () => {
  assertSurvived(await runChild('reserve'), [
    'rollback: CONNECTION_CLOSED',
    'work: CONNECTION_CLOSED',
    'queued: first second',
    'after: 1',
    'survived',
  ]);
});
