// src/queues helpers over a postgres.js pool, as cron and workflows call them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import type { HearthError } from '../../src/errors.ts';
import {
  archiveMessage,
  deleteMessage,
  isValidQueueName,
  queueExists,
  readMessages,
  sendMessage,
} from '../../src/queues/index.ts';
import { createProjectDb, type ProjectDb } from '../helpers/project-db.ts';

let project: ProjectDb;
let platform: postgres.Sql; // a superuser pool, as the platform's project pool is
let owner: postgres.Sql;

before(async () => {
  project = await createProjectDb();
  platform = postgres(project.adminUrl, { max: 2, onnotice: () => {} });
  owner = postgres(project.ownerUrl, { max: 2, onnotice: () => {} });
  await owner`select pgmq.create('jobs')`;
});

after(async () => {
  await Promise.all([platform.end(), owner.end()]);
  await project.drop();
});

describe('queue helpers', () => {
  it('validates names like the schema does', () => {
    for (const ok of ['a', 'jobs', 'a1_b2', 'x'.repeat(48)]) assert.equal(isValidQueueName(ok), true, ok);
    for (const bad of ['', 'A', '1a', '_a', 'a-b', 'x'.repeat(49), null, 42])
      assert.equal(isValidQueueName(bad), false, String(bad));
  });

  it('sends, reads, deletes and archives', async () => {
    assert.equal(await queueExists(platform, 'jobs'), true);
    assert.equal(await queueExists(platform, 'nope'), false);
    assert.equal(await queueExists(platform, 'Not Valid'), false);
    const first = await sendMessage(platform, 'jobs', { task: 'one' });
    const second = await sendMessage(owner, 'jobs', { task: 'two' });
    await sendMessage(platform, 'jobs', { task: 'later' }, 3600);
    assert.match(first, /^\d+$/);
    const got = await readMessages(platform, 'jobs', 30, 10);
    assert.deepEqual(
      got.map((m) => [m.msgId, m.message, m.readCt]),
      [
        [first, { task: 'one' }, 1],
        [second, { task: 'two' }, 1],
      ],
    );
    assert.ok(got[0].enqueuedAt instanceof Date && got[0].vt > got[0].enqueuedAt);
    assert.equal(await deleteMessage(platform, 'jobs', first), true);
    assert.equal(await deleteMessage(platform, 'jobs', first), false);
    assert.equal(await archiveMessage(platform, 'jobs', BigInt(second)), true);
    const [archived] = await owner`select message from pgmq.a_jobs where msg_id = ${second}`;
    assert.deepEqual(archived.message, { task: 'two' });
  });

  it('answers 400 invalid_queue for a bad name and 404 for a missing queue', async () => {
    await assert.rejects(
      sendMessage(platform, 'Bad Name', {}),
      (e: HearthError) => e.status === 400 && e.code === 'invalid_queue',
    );
    await assert.rejects(
      readMessages(platform, 'missing', 30, 1),
      (e: HearthError) => e.status === 404 && /does not exist/.test(e.message),
    );
    await assert.rejects(sendMessage(platform, 'jobs', {}, -1), (e: HearthError) => e.status === 400);
  });

  it("runs as the queue's owner even on a superuser pool, so owner triggers never run as superuser", async () => {
    await owner.unsafe(`
      create table public.seen (who text);
      create function public.note_user() returns trigger language plpgsql as $$
        begin insert into public.seen values (current_user); return new; end $$;
      create trigger note after insert on pgmq.q_jobs for each row execute function public.note_user()`);
    await sendMessage(platform, 'jobs', { watched: true });
    assert.deepEqual([...(await owner`select who from public.seen`)], [{ who: project.owner }]);
  });
});
