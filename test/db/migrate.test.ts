import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { withDatabase } from '../../src/db/pools.ts';
import { migrate, migrations } from '../../src/db/migrate.ts';
import { randomToken } from '../../src/secrets.ts';
import { serverUrl } from '../helpers/hearth.ts';

const db = `hearth_t_migrate_${randomToken(8, 'abcdefghijklmnopqrstuvwxyz')}`;
const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
let sql: postgres.Sql;

before(async () => {
  await admin.unsafe(`create database "${db}"`);
  sql = postgres(withDatabase(serverUrl(), db), { max: 2, onnotice: () => {} });
});
after(async () => {
  await sql?.end();
  await admin.unsafe(`drop database if exists "${db}" with (force)`);
  await admin.end();
});

test('migrations apply once, in order, with their checksums', async () => {
  const first = await migrate(sql, 'control');
  assert.deepEqual(
    first,
    migrations('control').map((m) => m.id),
  );
  assert.deepEqual(await migrate(sql, 'control'), [], 'a second run applies nothing');
  const rows = await sql`select id, checksum from hearth.migrations order by id`;
  assert.deepEqual(
    rows.map((r) => [r.id, r.checksum]),
    migrations('control').map((m) => [m.id, m.checksum]),
  );
});

test('an applied migration whose file changed stops the run, naming the file', async () => {
  const [firstMigration] = migrations('control');
  await sql`update hearth.migrations set checksum = ${'0'.repeat(64)} where id = ${firstMigration!.id}`;
  await assert.rejects(migrate(sql, 'control'), (err: Error) => {
    assert.match(
      err.message,
      new RegExp(`^migrations/control/${firstMigration!.id}\\.sql was changed after it was applied`),
    );
    return true;
  });
});
