/**
 * The migrations produce exactly the committed schema (migrations/schema/):
 * a schema change that is not in the snapshot fails here, so it shows in
 * review. After changing a migration: `npm run schema:dump`, review, commit.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { serverUrl } from '../helpers/hearth.ts';
import { dumpSchemas, snapshotFile, versions } from '../helpers/schema-dump.ts';

/** The major version CI's server runs, for which snapshots are always committed. */
const CI_MAJOR = 15;

test('control and project schemas match migrations/schema/', { timeout: 120_000 }, async () => {
  for (const set of ['control', 'project'] as const)
    assert.ok(existsSync(snapshotFile(set, CI_MAJOR)), `${snapshotFile(set, CI_MAJOR)} is committed`);
  const { server, pgDump } = await versions(serverUrl());
  // pg_dump's text differs between major versions, and pg_dump cannot dump a newer server: on
  // another version (the embedded PostgreSQL 18 of a plain `npm test`) the comparison is CI's.
  if (!existsSync(snapshotFile('control', server)) || pgDump === null || pgDump < server) return;
  const dumps = await dumpSchemas(serverUrl());
  for (const set of ['control', 'project'] as const) {
    const expected = readFileSync(snapshotFile(set, server), 'utf8');
    assert.ok(
      dumps[set] === expected,
      `the ${set} schema differs from ${snapshotFile(set, server)}: run \`npm run schema:dump\` and review the diff`,
    );
  }
});
