/**
 * Queue helpers for the rest of the platform (cron `enqueue` jobs, workflow
 * queue triggers and steps), over the pgmq schema of migrations/project/
 * 040_pgmq.sql. Each takes a postgres.js pool of the project database.
 *
 * The platform's project pool may log in as a superuser, while a queue's tables
 * belong to the project owner, who may put triggers and RLS policies on them.
 * Running the owner's code with superuser rights would hand the owner the
 * server, so every operation first switches (for its transaction only) to the
 * role that owns the queue's table. The switch is pipelined with the call, so
 * it costs no extra round trip beyond BEGIN and COMMIT.
 */
import type postgres from 'postgres';
import { fail } from '../errors.ts';

const QUEUE_NAME = /^[a-z][a-z0-9_]{0,47}$/;

export interface QueueMessage {
  /** bigint, as a string so no id is ever rounded. */
  msgId: string;
  readCt: number;
  enqueuedAt: Date;
  vt: Date;
  message: unknown;
  headers: unknown;
  /**
   * The OID of the queue's table, as a string: it names this incarnation of the queue. A queue
   * that is dropped and created again (or whose table the owner re-created) numbers its
   * messages from 1 again, so a msg id alone does not name a message for good.
   */
  generation: string;
}

export function isValidQueueName(name: unknown): name is string {
  return typeof name === 'string' && QUEUE_NAME.test(name);
}

function checkName(queue: string): void {
  if (!isValidQueueName(queue)) {
    throw fail(
      'invalid_queue',
      `Invalid queue name ${JSON.stringify(queue)}: use a lower-case letter followed by up to 47 lower-case letters, digits or underscores.`,
    );
  }
}

/** Runs fn in one transaction as the owner of the queue's table. */
async function asQueueOwner<T>(
  sql: postgres.Sql,
  queue: string,
  fn: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  checkName(queue);
  try {
    return (await sql.begin(async (tx) => {
      // No such table: the pgmq call below reports the missing queue.
      const become = tx`select set_config('role', coalesce(
          (select tableowner::text from pg_catalog.pg_tables where schemaname = 'pgmq' and tablename = ${`q_${queue}`}),
          current_user), true)`.execute();
      try {
        return await fn(tx);
      } finally {
        await become;
      }
    })) as T;
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') {
      throw fail('not_found', `Queue "${queue}" does not exist. Create it with select pgmq.create('${queue}');`);
    }
    throw err;
  }
}

/** Enqueues one message, visible after delaySeconds; returns its id. */
export async function sendMessage(sql: postgres.Sql, queue: string, msg: unknown, delaySeconds = 0): Promise<string> {
  if (!Number.isInteger(delaySeconds) || delaySeconds < 0) {
    throw fail('invalid_request', `Queue delay must be a whole number of seconds, zero or more; got ${delaySeconds}.`);
  }
  const [row] = await asQueueOwner(
    sql,
    queue,
    // As text: postgres.js sends sql.json(null) as SQL NULL, and a JSON null body must stay JSON null.
    (tx) =>
      tx`select id::text from pgmq.send(${queue}::text, ${JSON.stringify(msg === undefined ? null : msg)}::text::jsonb, ${delaySeconds}::integer) as id`,
  );
  return row.id as string;
}

/**
 * A msg id as a JSON output (`{msg_id}` of a workflow enqueue step and of a cron enqueue run): a number,
 * as pgmq.send returns it; only an id beyond 2^53, which a number would round, stays a string.
 */
export function msgIdJson(id: string): number | string {
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : id;
}

export async function queueExists(sql: postgres.Sql, queue: string): Promise<boolean> {
  if (!isValidQueueName(queue)) return false;
  const [row] = await sql`select exists (select 1 from pgmq.meta where queue_name = ${queue}) as found`;
  return row.found as boolean;
}

/** Claims up to qty visible messages, hidden from other readers for vtSeconds. */
export async function readMessages(
  sql: postgres.Sql,
  queue: string,
  vtSeconds: number,
  qty: number,
): Promise<QueueMessage[]> {
  const [rows, [table]] = await asQueueOwner(sql, queue, (tx) =>
    // Pipelined, in this order: the read's lock on the queue table lasts until COMMIT, so the
    // name still names the table just read when the second statement looks it up (no drop
    // and re-create can slip in between).
    Promise.all([
      tx`select msg_id::text, read_ct, enqueued_at, vt, message, headers
        from pgmq.read(${queue}::text, ${vtSeconds}::integer, ${qty}::integer)`,
      tx`select to_regclass(${`pgmq.q_${queue}`})::oid::text as oid`,
    ]),
  );
  return rows.map((r) => ({
    msgId: r.msg_id as string,
    readCt: r.read_ct as number,
    enqueuedAt: r.enqueued_at as Date,
    vt: r.vt as Date,
    message: r.message,
    headers: r.headers,
    generation: table!.oid as string,
  }));
}

export async function deleteMessage(
  sql: postgres.Sql,
  queue: string,
  msgId: string | number | bigint,
): Promise<boolean> {
  const [row] = await asQueueOwner(
    sql,
    queue,
    (tx) => tx`select pgmq.delete(${queue}::text, ${String(msgId)}::bigint) as done`,
  );
  return row.done as boolean;
}

export async function archiveMessage(
  sql: postgres.Sql,
  queue: string,
  msgId: string | number | bigint,
): Promise<boolean> {
  const [row] = await asQueueOwner(
    sql,
    queue,
    (tx) => tx`select pgmq.archive(${queue}::text, ${String(msgId)}::bigint) as done`,
  );
  return row.done as boolean;
}
