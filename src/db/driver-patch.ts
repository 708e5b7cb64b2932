/**
 * Hearth runs on postgres.js exactly as scripts/patch-postgres.js leaves it
 * (docs/architecture.md, "Driver patch"): without the patch, a terminated
 * backend leaves requests unanswered for good. `npm ci --ignore-scripts`, an
 * install that skipped the postinstall script or another driver version would
 * start a server that hangs under the first PostgreSQL restart, so start-up
 * refuses it in one line instead.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../errors.ts';
import patch from '../../scripts/postgres-patch.json' with { type: 'json' };

/**
 * The refusal, or null when the driver carries every part of the patch.
 * `entry` is the driver's ESM entry, <driver>/src/index.js: by default the one Node loads.
 */
export function driverPatchProblem(entry = fileURLToPath(import.meta.resolve('postgres'))): string | null {
  const root = path.resolve(path.dirname(entry), '..');
  const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const fix =
    'run `npm ci` (or `node scripts/patch-postgres.js`) without --ignore-scripts; see docs/architecture.md, "Driver patch"';
  if (version !== patch.version)
    return `postgres ${version} is installed, Hearth needs exactly ${patch.version} patched by scripts/patch-postgres.js: ${fix}.`;
  const unpatched = ['index.js', 'connection.js', 'queue.js', 'types.js'].filter(
    (f) => !readFileSync(path.join(path.dirname(entry), f), 'utf8').includes(patch.mark),
  );
  if (unpatched.length)
    return `the postgres driver in ${root} lacks Hearth's patch (${patch.mark}) in ${unpatched.join(', ')}: ${fix}.`;
  return null;
}

let checked = false;

/** Throws the one-line refusal (the CLI prints it and exits 1); checks once per process. */
export function assertDriverPatched(): void {
  if (checked) return;
  const problem = driverPatchProblem();
  if (problem) throw fail('driver_unpatched', problem);
  checked = true;
}
