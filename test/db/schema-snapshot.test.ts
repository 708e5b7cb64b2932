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

const { server, pgDump } = await versions(serverUrl());
const missing = !existsSync(snapshotFile('control', server))
  ? `no snapshot for PostgreSQL ${server} (they are kept for the server CI runs on)`
  : pgDump === null || pgDump < server
    ? `needs pg_dump ${server}+ on PATH (found ${pgDump ?? 'none'})`
    : false;

test('control and project schemas match migrations/schema/', { skip: missing, timeout: 120_000 }, async () => {
  const dumps = await dumpSchemas(serverUrl());
  for (const set of ['control', 'project'] as const) {
    const expected = readFileSync(snapshotFile(set, server), 'utf8');
    assert.ok(dumps[set] === expected, `the ${set} schema differs from ${snapshotFile(set, server)}: run \`npm run schema:dump\` and review the diff`);
  }
});
