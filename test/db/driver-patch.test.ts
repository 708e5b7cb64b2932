// Start-up refuses a postgres driver without Hearth's patch (npm ci --ignore-scripts) or of another version.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { driverPatchProblem } from '../../src/db/driver-patch.ts';
import patch from '../../scripts/postgres-patch.json' with { type: 'json' };

const installed = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('postgres'))), '..');

/** A copy of the installed driver's package.json and ESM build, changed by `edit`. */
function copyOfDriver(edit: (dir: string) => void): { entry: string; done: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'hearth-driver-'));
  cpSync(path.join(installed, 'package.json'), path.join(dir, 'package.json'));
  cpSync(path.join(installed, 'src'), path.join(dir, 'src'), { recursive: true });
  edit(dir);
  return { entry: path.join(dir, 'src', 'index.js'), done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('the installed driver (npm ci ran the postinstall patch) passes the start-up check', () => {
  assert.equal(driverPatchProblem(), null);
});

test('a driver whose connection.js lacks the patch is refused in one line naming the fix', () => {
  const d = copyOfDriver((dir) => {
    const file = path.join(dir, 'src', 'connection.js');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(patch.mark, 'upstream'));
  });
  try {
    const problem = driverPatchProblem(d.entry);
    assert.ok(problem, 'refused');
    assert.doesNotMatch(problem, /\n/);
    assert.match(problem, /lacks Hearth's patch .* in connection\.js: run `npm ci`/);
  } finally {
    d.done();
  }
});

test('another postgres version is refused, naming the one Hearth needs', () => {
  const d = copyOfDriver((dir) => {
    const file = path.join(dir, 'package.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), version: '3.4.10' }));
  });
  try {
    assert.match(
      driverPatchProblem(d.entry) ?? '',
      new RegExp(
        `^postgres 3\\.4\\.10 is installed, Hearth needs exactly ${patch.version.replaceAll('.', '\\.')} patched`,
      ),
    );
  } finally {
    d.done();
  }
});
