// The pgmq schema (migrations/project/040_pgmq.sql) driven over real `pg`
// connections as the project's owner role, the way a user's direct SQL
// connection would.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { migrations } from '../../src/db/migrate.ts';
import { createProjectDb, type ProjectDb, urlFor } from '../helpers/project-db.ts';

let project: ProjectDb;
let owner: pg.Client;
const clients: pg.Client[] = [];

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

async function rows<T = Record<string, unknown>>(
  client: pg.Client,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  return (await client.query(text, values)).rows as T[];
}

async function sqlError(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: string; message: string };
  }
  assert.fail('expected an SQL error');
}

before(async () => {
  project = await createProjectDb();
  owner = await connect(project.ownerUrl);
});

after(async () => {
  await Promise.all(clients.map((c) => c.end()));
  await project.drop();
});

describe('queue names', () => {
  const bad: Array<[string, string | null]> = [
    ['upper case', 'Jobs'],
    ['leading digit', '1jobs'],
    ['leading underscore', '_jobs'],
    ['empty', ''],
    ['hyphen', 'my-jobs'],
    ['quote and semicolon', 'x"; drop table pgmq.meta; --'],
    ['49 characters', 'a'.repeat(49)],
    ['null', null],
  ];
  /** Every per-message entry point (migration 044 gives them one table lookup): each overload of send, read, delete, archive. */
  const MESSAGE_CALLS = [
    "select pgmq.send($1, '{}')",
    "select pgmq.send($1, '{}', 0)",
    "select pgmq.send($1, '{}', now())",
    "select pgmq.send($1, '{}', '{}'::jsonb)",
    "select pgmq.send($1, '{}', '{}'::jsonb, 0)",
    "select pgmq.send($1, '{}', '{}'::jsonb, now())",
    'select * from pgmq.read($1, 30, 1)',
    'select pgmq.delete($1, 1::bigint)',
    'select pgmq.delete($1, array[1]::bigint[])',
    'select pgmq.archive($1, 1::bigint)',
    'select pgmq.archive($1, array[1]::bigint[])',
  ];
  for (const [what, name] of bad) {
    it(`refuses ${what} in create, send, read, delete and archive`, async () => {
      for (const call of ['select pgmq.create($1)', ...MESSAGE_CALLS]) {
        const err = await sqlError(owner.query(call, [name]));
        assert.equal(err.code, '22023', `${call}: ${err.message}`);
        assert.match(err.message, /invalid queue name/);
      }
    });
  }

  it('accepts a 48-character name (SPEC 8: ^[a-z][a-z0-9_]{0,47}$) and creates both tables', async () => {
    // create_partitioned checks the name before suggesting pgmq.create with it.
    assert.equal((await sqlError(owner.query(`select pgmq.create_partitioned('Bad-Name')`))).code, '22023');
    const name = 'q'.repeat(48);
    await owner.query('select pgmq.create($1)', [name]);
    const [{ n }] = await rows<{ n: number }>(
      owner,
      `select count(*)::int as n from pg_tables where schemaname = 'pgmq' and tablename in ($1, $2)`,
      [`q_${name}`, `a_${name}`],
    );
    assert.equal(n, 2);
    assert.deepEqual(await rows(owner, 'select pgmq.drop_queue($1) as dropped', [name]), [{ dropped: true }]);
  });

  it('names a missing queue clearly in every message call', async () => {
    for (const call of MESSAGE_CALLS) {
      const err = await sqlError(owner.query(call, ['missing']));
      assert.equal(err.code, '42P01', call);
      assert.equal(err.message, `queue 'missing' does not exist`, call);
    }
  });
});

describe('messages', () => {
  before(async () => {
    for (const q of ['basic', 'vt', 'delayed', 'arch', 'popq', 'meter'])
      await owner.query('select pgmq.create($1)', [q]);
    await owner.query(`select pgmq.create('basic')`); // creating twice is a no-op
  });

  it('sends with every overload and reads the full message record', async () => {
    await owner.query(`select pgmq.send('basic', '{"n":1}')`);
    await owner.query(`select pgmq.send('basic', '{"n":2}', 0)`);
    await owner.query(`select pgmq.send('basic', '{"n":3}', '{"trace":"t3"}'::jsonb)`);
    await owner.query(`select pgmq.send('basic', '{"n":4}', '{"trace":"t4"}'::jsonb, 0)`);
    await owner.query(`select pgmq.send('basic', '{"n":5}', clock_timestamp())`);
    await owner.query(
      `select pgmq.send_batch('basic', array['{"n":6}', '{"n":7}']::jsonb[], array['{"b":1}']::jsonb[])`,
    );
    const got = await rows(owner, `select * from pgmq.read('basic', 30, 10)`);
    assert.deepEqual(Object.keys(got[0]), ['msg_id', 'read_ct', 'enqueued_at', 'vt', 'message', 'headers']);
    assert.deepEqual(
      got.map((r) => (r.message as { n: number }).n),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.deepEqual(
      got.map((r) => r.headers),
      [null, null, { trace: 't3' }, { trace: 't4' }, null, { b: 1 }, null],
    );
    assert.ok(got.every((r) => r.read_ct === 1));
    const ids = got.map((r) => r.msg_id);
    assert.deepEqual(await rows(owner, `select pgmq.delete('basic', $1::bigint) as d`, [ids[0]]), [{ d: true }]);
    assert.deepEqual(await rows(owner, `select pgmq.delete('basic', $1::bigint) as d`, [ids[0]]), [{ d: false }]);
    const deleted = await rows(owner, `select * from pgmq.delete('basic', $1::bigint[]) as id`, [ids.slice(1)]);
    assert.equal(deleted.length, 6);
  });

  it('reads only messages matching a condition', async () => {
    await owner.query(`select pgmq.send_batch('basic', array['{"kind":"a"}', '{"kind":"b"}']::jsonb[])`);
    const got = await rows(owner, `select message from pgmq.read('basic', 30, 10, '{"kind":"b"}')`);
    assert.deepEqual(got, [{ message: { kind: 'b' } }]);
    await owner.query(`select pgmq.purge_queue('basic')`);
  });

  it('hides a read message for its visibility timeout, then hands it out again', async () => {
    const [{ id }] = await rows(owner, `select pgmq.send('vt', '{"x":1}') as id`);
    // A delayed message in the same wait: invisible first, visible after 1 s.
    await owner.query(`select pgmq.send('delayed', '{"late":true}', 1)`);
    const first = await rows(owner, `select msg_id, read_ct from pgmq.read('vt', 1, 5)`);
    assert.deepEqual(first, [{ msg_id: id, read_ct: 1 }]);
    assert.deepEqual(await rows(owner, `select * from pgmq.read('vt', 1, 5)`), []);
    assert.deepEqual(await rows(owner, `select * from pgmq.read('delayed', 30, 5)`), []);
    const [m] = await rows(owner, `select queue_length, queue_visible_length from pgmq.metrics('delayed')`);
    assert.deepEqual(m, { queue_length: '1', queue_visible_length: '0' });
    await sleep(1100);
    const again = await rows(owner, `select msg_id, read_ct from pgmq.read('vt', 30, 5)`);
    assert.deepEqual(again, [{ msg_id: id, read_ct: 2 }]);
    assert.deepEqual(await rows(owner, `select message from pgmq.read('delayed', 30, 5)`), [
      { message: { late: true } },
    ]);
  });

  it('keeps a message scheduled for a timestamp until then; set_vt moves it', async () => {
    const [{ id }] = await rows(owner, `select pgmq.send('vt', '{"at":"later"}', now() + interval '1 hour') as id`);
    assert.deepEqual(await rows(owner, `select * from pgmq.read('vt', 30, 5)`), []);
    const [moved] = await rows(owner, `select msg_id, vt <= clock_timestamp() as due from pgmq.set_vt('vt', $1, 0)`, [
      id,
    ]);
    assert.deepEqual(moved, { msg_id: id, due: true });
    assert.deepEqual(await rows(owner, `select msg_id from pgmq.read('vt', 30, 5)`), [{ msg_id: id }]);
    const refused = await sqlError(owner.query(`select pgmq.send('vt', '{}', -5)`));
    assert.equal(refused.code, '22023');
  });

  it('archives one and many messages into the archive table', async () => {
    const ids = (
      await rows<{ id: string }>(
        owner,
        `select id::text from pgmq.send_batch('arch', array['{"a":1}', '{"a":2}', '{"a":3}']::jsonb[], array['{"h":1}']::jsonb[]) as id`,
      )
    ).map((r) => r.id);
    await owner.query(`select * from pgmq.read('arch', 30, 1)`);
    assert.deepEqual(await rows(owner, `select pgmq.archive('arch', $1::bigint) as ok`, [ids[0]]), [{ ok: true }]);
    assert.deepEqual(await rows(owner, `select pgmq.archive('arch', $1::bigint) as ok`, [ids[0]]), [{ ok: false }]);
    const many = await rows(owner, `select id::text from pgmq.archive('arch', $1::bigint[]) as id order by 1`, [
      [ids[1], ids[2], '999999'],
    ]);
    assert.deepEqual(
      many.map((r) => r.id),
      [ids[1], ids[2]],
    );
    const archived = await rows(
      owner,
      `select msg_id::text, read_ct, message, headers, archived_at is not null as stamped from pgmq.a_arch order by msg_id`,
    );
    assert.deepEqual(archived, [
      { msg_id: ids[0], read_ct: 1, message: { a: 1 }, headers: { h: 1 }, stamped: true },
      { msg_id: ids[1], read_ct: 0, message: { a: 2 }, headers: null, stamped: true },
      { msg_id: ids[2], read_ct: 0, message: { a: 3 }, headers: null, stamped: true },
    ]);
    assert.deepEqual(await rows(owner, 'select * from pgmq.q_arch'), []);
  });

  it('pops the oldest visible message, deleting it', async () => {
    await owner.query(`select pgmq.send_batch('popq', array['{"p":1}', '{"p":2}']::jsonb[])`);
    assert.deepEqual(await rows(owner, `select message from pgmq.pop('popq')`), [{ message: { p: 1 } }]);
    assert.deepEqual(await rows(owner, `select message from pgmq.pop('popq')`), [{ message: { p: 2 } }]);
    assert.deepEqual(await rows(owner, `select * from pgmq.pop('popq')`), []);
    assert.deepEqual(await rows(owner, `select count(*)::int as n from pgmq.q_popq`), [{ n: 0 }]);
  });

  it('reports metrics for one queue and all queues', async () => {
    await owner.query(`select pgmq.send_batch('meter', array['{}', '{}', '{}']::jsonb[])`);
    await owner.query(`select * from pgmq.read('meter', 30, 1)`);
    const [m] = await rows(owner, `select * from pgmq.metrics('meter')`);
    assert.deepEqual(Object.keys(m), [
      'queue_name',
      'queue_length',
      'newest_msg_age_sec',
      'oldest_msg_age_sec',
      'total_messages',
      'scrape_time',
      'queue_visible_length',
    ]);
    assert.equal(m.queue_name, 'meter');
    assert.equal(m.queue_length, '3');
    assert.equal(m.queue_visible_length, '2');
    assert.equal(m.total_messages, '3');
    const all = await rows(owner, `select queue_name from pgmq.metrics_all()`);
    assert.ok(all.some((r) => r.queue_name === 'meter') && all.some((r) => r.queue_name === 'basic'));
    const listed = await rows(owner, `select * from pgmq.list_queues() where queue_name = 'meter'`);
    assert.deepEqual(Object.keys(listed[0]), ['queue_name', 'is_partitioned', 'is_unlogged', 'created_at']);
  });

  it('purges and drops queues', async () => {
    await owner.query(`select pgmq.create_unlogged('scratch')`);
    assert.deepEqual(await rows(owner, `select is_unlogged from pgmq.list_queues() where queue_name = 'scratch'`), [
      { is_unlogged: true },
    ]);
    await owner.query(`select pgmq.send_batch('scratch', array['{}', '{}']::jsonb[])`);
    assert.deepEqual(await rows(owner, `select pgmq.purge_queue('scratch') as n`), [{ n: '2' }]);
    assert.deepEqual(await rows(owner, `select pgmq.drop_queue('scratch') as ok`), [{ ok: true }]);
    assert.deepEqual(
      await rows(owner, `select to_regclass('pgmq.q_scratch') as q, to_regclass('pgmq.a_scratch') as a`),
      [{ q: null, a: null }],
    );
    assert.deepEqual(await rows(owner, `select * from pgmq.list_queues() where queue_name = 'scratch'`), []);
    assert.equal((await sqlError(owner.query(`select pgmq.drop_queue('scratch')`))).code, '42P01');
  });

  it('provides the rest of pgmq 1.5: format_table_name, detach_archive, the deprecated drop_queue, a clear refusal of partitioning', async () => {
    await owner.query(`select pgmq.create('compat')`);
    assert.deepEqual(
      await rows(
        owner,
        `select pgmq.format_table_name('compat', 'q') as q, pgmq.format_table_name('compat', 'a') as a`,
      ),
      [{ q: 'q_compat', a: 'a_compat' }],
    );
    assert.equal((await sqlError(owner.query(`select pgmq.format_table_name('x; drop', 'q')`))).code, '22023');
    // No extension owns the archive, so detaching only checks the queue.
    assert.deepEqual(await rows(owner, `select pgmq.detach_archive('compat')::text as r`), [{ r: '' }]);
    assert.equal((await sqlError(owner.query(`select pgmq.detach_archive('nowhere')`))).code, '42P01');
    const partitioned = await sqlError(owner.query(`select pgmq.create_partitioned('parts')`));
    assert.equal(partitioned.code, '0A000');
    assert.match(partitioned.message, /partitioned queues are not supported/);
    assert.deepEqual(await rows(owner, `select to_regclass('pgmq.q_parts') as q`), [{ q: null }]);
    const warnings: string[] = [];
    const onNotice = (n: { message?: string }) => warnings.push(n.message ?? '');
    owner.on('notice', onNotice);
    assert.deepEqual(await rows(owner, `select pgmq.drop_queue('compat', false) as ok`), [{ ok: true }]);
    owner.off('notice', onNotice);
    // pgmq's warning, word for word.
    assert.deepEqual(warnings, [
      'drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. Use drop_queue(queue_name) instead',
    ]);
    assert.deepEqual(await rows(owner, `select to_regclass('pgmq.q_compat') as q`), [{ q: null }]);
  });
});

describe('many workers', () => {
  it('4 workers drain 1,000 messages: each delivered once, none lost', async () => {
    await owner.query(`select pgmq.create('work')`);
    await owner.query(
      `select pgmq.send_batch('work', array(select jsonb_build_object('n', i) from generate_series(1, 1000) i))`,
    );
    const workers = await Promise.all([1, 2, 3, 4].map(() => connect(project.ownerUrl)));
    const seen: string[][] = [];
    await Promise.all(
      workers.map(async (w, i) => {
        seen[i] = [];
        for (;;) {
          const got = await rows<{ msg_id: string; read_ct: number }>(
            w,
            `select msg_id, read_ct from pgmq.read('work', 30, 7)`,
          );
          if (got.length === 0) return;
          assert.ok(
            got.every((r) => r.read_ct === 1),
            'no message is handed out twice',
          );
          seen[i].push(...got.map((r) => r.msg_id));
          await w.query(`select pgmq.delete('work', $1::bigint[])`, [got.map((r) => r.msg_id)]);
        }
      }),
    );
    const all = seen.flat();
    assert.equal(all.length, 1000);
    assert.equal(new Set(all).size, 1000);
    assert.ok(seen.filter((s) => s.length > 0).length > 1, 'the work was shared');
    assert.deepEqual(await rows(owner, `select count(*)::int as n from pgmq.q_work`), [{ n: 0 }]);
  });
});

describe('privileges', () => {
  it('gives the owner its queue tables but not the pgmq schema', async () => {
    const [{ tableowner }] = await rows<{ tableowner: string }>(
      owner,
      `select tableowner from pg_tables where schemaname = 'pgmq' and tablename = 'q_basic'`,
    );
    assert.equal(tableowner, project.owner);
    await owner.query('alter table pgmq.q_basic enable row level security');
    await owner.query('alter table pgmq.q_basic disable row level security');
    assert.equal(
      (await sqlError(owner.query('create function pgmq.x() returns int language sql as $$ select 1 $$'))).code,
      '42501',
    );
    const replace = await sqlError(
      owner.query(
        `create or replace function pgmq._table(queue_name text, kind text) returns text language sql as $$ select 'public.x' $$`,
      ),
    );
    assert.equal(replace.code, '42501');
    assert.equal((await sqlError(owner.query(`insert into pgmq.meta values ('fake', false, false)`))).code, '42501');
  });

  it('repairs a queue whose table the owner dropped when it is created again', async () => {
    await owner.query(`select pgmq.create('fragile')`);
    await owner.query('drop table pgmq.q_fragile');
    assert.equal((await sqlError(owner.query(`select pgmq.send('fragile', '{}')`))).code, '42P01');
    await owner.query(`select pgmq.create('fragile')`);
    assert.deepEqual(await rows(owner, `select pgmq.send('fragile', '{}') as id`), [{ id: '1' }]);
  });

  it('gives a queue created by the platform (a superuser) to the owner too', async () => {
    const admin = await connect(project.adminUrl);
    await admin.query(`select pgmq.create('from_platform')`);
    const [{ tableowner }] = await rows<{ tableowner: string }>(
      owner,
      `select tableowner from pg_tables where tablename = 'q_from_platform'`,
    );
    assert.equal(tableowner, project.owner);
    await owner.query(`select pgmq.drop_queue('from_platform')`);
  });

  it('keeps client roles out until the owner grants them; service_role may use pgmq_public', async () => {
    await owner.query('begin');
    try {
      await owner.query('set local role authenticated');
      assert.equal((await sqlError(owner.query(`select pgmq_public.send('basic', '{}')`))).code, '42501');
      await owner.query('rollback');
      await owner.query('begin');
      await owner.query('set local role authenticated');
      assert.equal((await sqlError(owner.query(`select pgmq.send('basic', '{}')`))).code, '42501');
      await owner.query('rollback');
      await owner.query('begin');
      await owner.query('set local role service_role');
      const [{ id }] = await rows(owner, `select pgmq_public.send('basic', '{"via":"public"}') as id`);
      const got = await rows(owner, `select msg_id, message from pgmq_public.read('basic', 30, 5)`);
      assert.deepEqual(got, [{ msg_id: id, message: { via: 'public' } }]);
      assert.deepEqual(await rows(owner, `select pgmq_public.delete('basic', $1::bigint) as ok`, [id]), [{ ok: true }]);
    } finally {
      await owner.query('rollback');
    }
  });

  it('lets a granted authenticated user through only as far as RLS allows', async () => {
    await owner.query(`select pgmq.create('inbox')`);
    await owner.query(`select pgmq.send_batch('inbox', array['{"to":"alice"}', '{"to":"bob"}']::jsonb[])`);
    await owner.query(`grant usage on schema pgmq_public to authenticated;
      grant execute on function pgmq_public.read(text, integer, integer) to authenticated;
      grant select, update on pgmq.q_inbox to authenticated;
      alter table pgmq.q_inbox enable row level security;
      create policy own_messages on pgmq.q_inbox to authenticated using (message ->> 'to' = auth.jwt() ->> 'sub')`);
    await owner.query('begin');
    try {
      await owner.query(
        `set local role authenticated; select set_config('request.jwt.claims', '{"sub":"alice"}', true)`,
      );
      assert.deepEqual(await rows(owner, `select message from pgmq_public.read('inbox', 30, 10)`), [
        { message: { to: 'alice' } },
      ]);
    } finally {
      await owner.query('rollback');
    }
  });

  it('archive needs select and delete on q_<queue>, select and insert on a_<queue> (docs/queues.md)', async () => {
    await owner.query(`select pgmq.create('outbox')`);
    const id = (await rows<{ id: string }>(owner, `select pgmq.send('outbox', '{"n": 1}') as id`))[0]!.id;
    const archiveAsUser = async () => {
      await owner.query('begin');
      try {
        await owner.query('set local role authenticated');
        return await rows(owner, 'select pgmq_public.archive($1, $2::bigint) as ok', ['outbox', id]);
      } finally {
        await owner.query('rollback');
      }
    };
    await owner.query(`grant usage on schema pgmq_public to authenticated;
      grant execute on function pgmq_public.archive(text, bigint) to authenticated;
      grant delete on pgmq.q_outbox to authenticated;
      grant insert on pgmq.a_outbox to authenticated`);
    try {
      // The archive statement finds the message by id and returns what it moved: it reads both tables.
      const refused = async (table: string) => {
        const err = await sqlError(archiveAsUser());
        assert.equal(err.code, '42501');
        assert.equal(err.message, `permission denied for table ${table}`);
      };
      await refused('a_outbox');
      await owner.query(`grant select on pgmq.a_outbox to authenticated`);
      await refused('q_outbox');
      await owner.query(`grant select on pgmq.q_outbox to authenticated`);
      assert.deepEqual(await archiveAsUser(), [{ ok: true }]);
    } finally {
      await owner.query(`revoke all on pgmq.q_outbox, pgmq.a_outbox from authenticated;
        revoke execute on function pgmq_public.archive(text, bigint) from authenticated`);
    }
  });

  it('refuses a connected role that was granted nothing', async () => {
    const stranger = `${project.owner}_stranger`;
    const admin = await connect(project.adminUrl);
    await admin.query(
      `create role "${stranger}" login password 'stranger'; grant connect on database "${project.database}" to "${stranger}"`,
    );
    try {
      const c = await connect(urlFor(project.database, stranger, 'stranger'));
      assert.equal((await sqlError(c.query(`select pgmq.send('basic', '{}')`))).code, '42501');
      assert.equal((await sqlError(c.query(`select * from pgmq.q_basic`))).code, '42501');
      assert.equal((await sqlError(c.query(`select pgmq.create('mine')`))).code, '42501');
      await c.end();
      clients.splice(clients.indexOf(c), 1);
    } finally {
      await admin.query(
        `revoke connect on database "${project.database}" from "${stranger}"; drop owned by "${stranger}"; drop role "${stranger}"`,
      );
    }
  });

  it("keeps another project's owner out of this database", async () => {
    // Every test database has the same owner (test/helpers/project-db.ts): another project's
    // owner is a login role with CONNECT on its own database only, as the platform makes them.
    const other = `${project.database}_other_owner`;
    const admin = await connect(project.adminUrl);
    await admin.query(`create role "${other}" login password 'other'`);
    try {
      const c = new pg.Client({ connectionString: urlFor(project.database, other, 'other') });
      const err = await sqlError(c.connect());
      assert.match(err.message, /permission denied for database/);
      await c.end().catch(() => {});
    } finally {
      await admin.query(`drop role "${other}"`);
    }
  });
});

describe('the pgmq migrations', () => {
  it('can run again on a database that has them, queues and messages included', async () => {
    await owner.query(`select pgmq.create('again')`);
    await owner.query(`select pgmq.send('again', '{"n": 1}')`);
    const admin = await connect(project.adminUrl);
    for (const m of migrations('project').filter((m) => /^04\d_pgmq/.test(m.id))) {
      await admin.query(`begin; ${m.text.replaceAll('{{owner}}', project.owner)}; commit`);
    }
    const [message] = await rows<{ message: unknown }>(owner, `select message from pgmq.read('again', 30, 1)`);
    assert.deepEqual(message?.message, { n: 1 });
  });
});

describe("each queue's own functions (migration 045)", () => {
  const functionsOf = async (queue: string) =>
    (
      await rows<{ f: string }>(
        owner,
        `select p.oid::regprocedure::text as f from pg_proc p
         where p.pronamespace = 'pgmq'::regnamespace and p.proname in ($1, $2, $3) order by 1`,
        [`_delete_${queue}`, `_read_${queue}`, `_send_${queue}`],
      )
    ).map((r) => r.f);
  const expected = (queue: string) => [
    `pgmq._delete_${queue}(bigint[])`,
    `pgmq._read_${queue}(integer,integer,jsonb)`,
    `pgmq._send_${queue}(timestamp with time zone,jsonb,jsonb)`,
  ];

  it('are made by create, executable by the API roles only, and dropped with the queue', async () => {
    await owner.query(`select pgmq.create('own_fns')`);
    assert.deepEqual(await functionsOf('own_fns'), expected('own_fns'));
    const [privileges] = await rows<Record<string, boolean>>(
      owner,
      `select has_function_privilege('anon', 'pgmq._send_own_fns(timestamptz, jsonb, jsonb)', 'execute') as anon,
              has_function_privilege('service_role', 'pgmq._read_own_fns(integer, integer, jsonb)', 'execute') as service,
              has_function_privilege('public', 'pgmq._delete_own_fns(bigint[])', 'execute') as public`,
    );
    assert.deepEqual(privileges, { anon: true, service: true, public: false });
    assert.deepEqual(await rows(owner, `select pgmq.drop_queue('own_fns') as dropped`), [{ dropped: true }]);
    assert.deepEqual(await functionsOf('own_fns'), []);
  });

  it('are made again by create, and by the migration for queues made before it', async () => {
    const admin = await connect(project.adminUrl);
    await owner.query(`select pgmq.create('mended')`);
    const dropFunctions = () =>
      admin.query(`drop function pgmq._send_mended(timestamptz, jsonb, jsonb),
        pgmq._read_mended(integer, integer, jsonb), pgmq._delete_mended(bigint[])`);
    await dropFunctions();
    assert.equal((await sqlError(owner.query(`select pgmq.send('mended', '{}')`))).code, '42883');
    await owner.query(`select pgmq.create('mended')`);
    assert.deepEqual(await functionsOf('mended'), expected('mended'));
    await dropFunctions();
    const m045 = migrations('project').find((m) => m.id.startsWith('045_'))!;
    await admin.query(`begin; ${m045.text.replaceAll('{{owner}}', project.owner)}; commit`);
    assert.deepEqual(await functionsOf('mended'), expected('mended'));
    const [sent] = await rows<{ id: string }>(owner, `select pgmq.send('mended', '{"n": 2}') as id`);
    const [read] = await rows<{ msg_id: string; message: unknown }>(
      owner,
      `select msg_id, message from pgmq.read('mended', 30, 1)`,
    );
    assert.deepEqual([read?.msg_id, read?.message], [sent?.id, { n: 2 }]);
    assert.deepEqual(await rows(owner, `select pgmq.delete('mended', $1::bigint) as ok`, [sent?.id]), [{ ok: true }]);
  });
});
