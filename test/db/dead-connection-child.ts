/**
 * Child process for dead-connection.test.ts. Runs one unit of work that holds
 * a connection — `sql.begin` (argument `begin`), `withRole`, which reserves one
 * (argument `with-role`), or `sql.reserve` used by hand with BEGIN and a
 * ROLLBACK on failure (argument `reserve`) — terminates its backend from a
 * second pool while `pg_sleep` is in flight, then uses the same one-connection
 * pool again. Prints the code the work was rejected with, the answers of two
 * pool queries queued behind the work and of one sent afterwards, then
 * "survived". A driver exception thrown from a timer ends the process with a
 * non-zero code.
 */
import postgres from 'postgres';
import { withRole } from '../../src/db/with-role.ts';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is not set');
const scenario = process.argv[2];

// max 1: the pool's later queries must reuse (reconnect) the connection whose backend died.
const sql = postgres(url, { max: 1, onnotice: () => {} });
const killer = postgres(url, { max: 1, onnotice: () => {} });

let pid = 0;
async function work(tx: postgres.TransactionSql): Promise<void> {
  const [row] = await tx`select pg_backend_pid() as pid`;
  pid = row!.pid as number;
  await tx`select pg_sleep(60)`;
}

const codeOf = (err: { code?: string; message?: string }) => err.code ?? err.message ?? String(err);

/** What an application does by hand with sql.reserve(): ROLLBACK on failure, then release. */
async function reserved(): Promise<void> {
  const conn = await sql.reserve();
  try {
    await conn`begin`;
    await work(conn as unknown as postgres.TransactionSql);
  } catch (err) {
    const rollback = await conn`rollback`.then(() => 'ok', codeOf);
    process.stdout.write(`rollback: ${rollback}\n`);
    throw err;
  } finally {
    conn.release();
  }
}

const running =
  scenario === 'begin'
    ? sql.begin(work)
    : scenario === 'with-role'
      ? withRole(sql, { role: 'service_role', claims: { role: 'service_role' } }, work)
      : scenario === 'reserve'
        ? reserved()
        : Promise.reject(new Error(`unknown scenario ${scenario}`));
const outcome = running.then(() => 'completed', codeOf);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
for (;;) {
  if (pid) {
    const [busy] = await killer`select count(*)::int as n from pg_stat_activity
      where pid = ${pid} and state = 'active' and query like '%pg_sleep%'`;
    if (busy!.n === 1) break;
  }
  await sleep(10);
}

// Queued in the pool while its only connection is held: they get it next
// (the first reconnects it; the second is handed over when the work lets go).
const queued = ['first', 'second'].map((name) =>
  sql`select ${name}::text as answer`.then(
    (rows) => rows[0]!.answer as string,
    (err: { code?: string; message?: string }) => `failed ${codeOf(err)}`,
  ),
);
await killer`select pg_terminate_backend(${pid})`;

process.stdout.write(`work: ${await outcome}\n`);
process.stdout.write(`queued: ${(await Promise.all(queued)).join(' ')}\n`);
const [after] = await sql`select 1 as one`;
process.stdout.write(`after: ${after!.one}\n`);
await Promise.all([sql.end(), killer.end()]);
process.stdout.write('survived\n');
