// SPEC 2.15, 4.4 and 8 for queues, over a real
// `pg` connection as the project owner: a malformed queue name is refused
// with the rule in the error message itself (clients often show no HINT),
// and the platform's own sends keep a JSON null body as JSON null.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import postgres from 'postgres';
import { sendMessage } from '../../src/queues/index.ts';
import { createProjectDb, type ProjectDb } from '../helpers/project-db.ts';

let project: ProjectDb;
let owner: pg.Client;
let platform: postgres.Sql;

before(async () => {
  project = await createProjectDb();
  owner = new pg.Client({ connectionString: project.ownerUrl });
  await owner.connect();
  platform = postgres(project.adminUrl, { max: 2, onnotice: () => {} });
});
after(async () => {
  await owner?.end();
  await platform?.end();
  await project?.drop();
});

describe('queue names', () => {
  it('a malformed name is 22023 with ^[a-z][a-z0-9_]{0,47}$ in the message, for create, send and read', async () => {
    for (const call of ['select pgmq.create($1)', "select pgmq.send($1, '{}')", 'select * from pgmq.read($1, 30, 1)']) {
      for (const name of ['Jobs', 'a'.repeat(49), 'my-jobs']) {
        const err = (await owner.query(call, [name]).then(
          () => null,
          (e: unknown) => e,
        )) as { code: string; message: string } | null;
        assert.ok(err, `${call} ${name} should fail`);
        assert.equal(err.code, '22023');
        assert.ok(err.message.includes('^[a-z][a-z0-9_]{0,47}$'), err.message);
        assert.match(err.message, /^invalid queue name '/);
      }
    }
  });
});

describe('platform sends', () => {
  it('a JSON null body is stored as JSON null, not SQL NULL', async () => {
    await owner.query(`select pgmq.create('nulls')`);
    await sendMessage(platform, 'nulls', null);
    const { rows } = await owner.query(
      `select message is null as sql_null, jsonb_typeof(message) as type from pgmq.q_nulls`,
    );
    assert.deepEqual(rows, [{ sql_null: false, type: 'null' }]);
  });
});
