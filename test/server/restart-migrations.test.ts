/**
 * A restart checks a project database's migrations only when the control
 * database has no record of it being up to date (platform.projects.migrated:
 * its OID and the digest of the project migration files): each first
 * connection right after PostgreSQL starts costs tens of milliseconds, and a
 * restart with many projects would pay one per project. A project database
 * that refuses connections shows whether a start connected to it.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import postgres from 'postgres';
import { migrationsDigest } from '../../src/db/migrate.ts';
import { withDatabase } from '../../src/db/pools.ts';
import { dropEverything, serverUrl, startTestHearth } from '../helpers/hearth.ts';

const first = await startTestHearth({ keepData: true });
const { controlDb, dataDir } = first.config;
const { db_name: projectDb, owner_role: ownerRole } = first.hearth.project;
await first.close();
const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
const control = postgres(withDatabase(serverUrl(), controlDb), { max: 1, onnotice: () => {} });
const restart = () => startTestHearth({ controlDb, dataDir });

after(async () => {
  await admin.unsafe(`alter database "${projectDb}" allow_connections true`).catch(() => {});
  await control.end();
  await admin.end();
  await dropEverything(controlDb, [{ db: projectDb, role: ownerRole }]);
});

const recorded = async () =>
  (await control`select migrated from platform.projects where db_name = ${projectDb}`)[0]!.migrated as string | null;
const oid = async () => (await admin`select oid::text from pg_database where datname = ${projectDb}`)[0]!.oid as string;

test('a start records each project database it found up to date: its OID and the migrations digest', async () => {
  assert.equal(await recorded(), `${await oid()}:${migrationsDigest('project')}`);
});

test('a restart does not connect to a project database recorded as up to date', async () => {
  await admin.unsafe(`alter database "${projectDb}" allow_connections false`);
  try {
    const again = await restart();
    const health = await fetch(`${again.url}/health`);
    assert.equal(health.status, 200);
    await again.close();
  } finally {
    await admin.unsafe(`alter database "${projectDb}" allow_connections true`);
  }
});

test('without a record, or when the files changed, a restart checks the database (and fails when it cannot)', async () => {
  for (const record of [null, `${await oid()}:${'0'.repeat(64)}`]) {
    await control`update platform.projects set migrated = ${record} where db_name = ${projectDb}`;
    await admin.unsafe(`alter database "${projectDb}" allow_connections false`);
    try {
      await assert.rejects(restart(), /not currently accepting connections/);
    } finally {
      await admin.unsafe(`alter database "${projectDb}" allow_connections true`);
    }
    assert.equal(await recorded(), record, 'nothing recorded for a check that failed');
  }
  const again = await restart();
  await again.close();
  assert.equal(await recorded(), `${await oid()}:${migrationsDigest('project')}`, 'recorded once checked');
});

test('a database created again under the same name (another OID) is checked', async () => {
  const before = await recorded();
  // The same name, as a restore into a new database leaves it; refusing connections shows the check.
  await admin.unsafe(`alter database "${projectDb}" rename to "${projectDb}_old"`);
  await admin.unsafe(`create database "${projectDb}" with allow_connections false`);
  try {
    await assert.rejects(restart(), /not currently accepting connections/);
  } finally {
    await admin.unsafe(`drop database "${projectDb}"`);
    await admin.unsafe(`alter database "${projectDb}_old" rename to "${projectDb}"`);
  }
  assert.equal(await recorded(), before);
  const again = await restart();
  await again.close();
});
