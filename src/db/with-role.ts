/**
 * withRole: run data-plane work in one transaction under the caller's database
 * role, exactly as Supabase does, so RLS policies using auth.uid(), auth.jwt()
 * and auth.role() see the caller: `role`, `request.jwt.claims`,
 * `request.method`, `request.path`, `request.headers` and a 10 s
 * statement_timeout are set with set_config(..., true) for the transaction.
 */
import type postgres from 'postgres';

export type DbRole = 'anon' | 'authenticated' | 'service_role';

export interface Caller {
  role: DbRole;
  /** The JWT claims (for API keys: a synthetic claim set with `role`). */
  claims: Record<string, unknown>;
}

export interface RequestInfo {
  method?: string;
  path?: string;
  headers?: Record<string, unknown>;
  /** Start the transaction READ ONLY (PostgREST runs GET and HEAD this way). */
  readOnly?: boolean;
}

export const STATEMENT_TIMEOUT = '10s';

async function rollback(conn: postgres.ReservedSql): Promise<void> {
  await conn.unsafe('rollback').catch(() => {}); // on a lost connection this rejects too: nothing to undo
}

/** Verified-token claims objects are reused across requests (see credentials.ts), so their JSON is too. */
const claimsJson = new WeakMap<object, string>();
function jsonOf(claims: Record<string, unknown>): string {
  let text = claimsJson.get(claims);
  if (text === undefined) {
    text = JSON.stringify(claims);
    claimsJson.set(claims, text);
  }
  return text;
}

/** The settings of withRole, as one statement of text parameters (read by auth.uid(), auth.jwt(), auth.role()). */
const SETTINGS = `select set_config('role', $1, true),
      set_config('request.jwt.claims', $2, true),
      set_config('request.method', $3, true),
      set_config('request.path', $4, true),
      set_config('request.headers', $5, true),
      set_config('statement_timeout', $6, true)`;

/** SETTINGS, also making the transaction read only: for a statement that runs without BEGIN READ ONLY (withRoleStatement). */
const READ_ONLY_SETTINGS = `${SETTINGS}, set_config('transaction_read_only', 'on', true)`;

function settingsValues(caller: Caller, request: RequestInfo): string[] {
  return [
    caller.role,
    jsonOf(caller.claims),
    request.method ?? '',
    request.path ?? '',
    JSON.stringify(request.headers ?? {}),
    STATEMENT_TIMEOUT,
  ];
}

function sendSettings(conn: postgres.ReservedSql, caller: Caller, request: RequestInfo) {
  return conn.unsafe(SETTINGS, settingsValues(caller, request), { prepare: true }).execute();
}

export interface Statement {
  text: string;
  values: unknown[];
}

type Outcome = PromiseSettledResult<postgres.RowList<postgres.Row[]>>;

/** A statement, or a query built on the connection (the caller's settings). */
type Step = Statement | ((conn: postgres.ReservedSql) => Promise<postgres.RowList<postgres.Row[]>>);

/** A promise's outcome, heard at once (a rejection while later steps are still being sent is not unhandled). */
const outcome = (p: Promise<postgres.RowList<postgres.Row[]>>): Promise<Outcome> =>
  p.then(
    (value): Outcome => ({ status: 'fulfilled', value }),
    (reason: unknown): Outcome => ({ status: 'rejected', reason }),
  );

/**
 * `begin`, the steps and `end` written to one reserved connection at once: one
 * round trip. Returns every outcome in order, `begin` and `end` included;
 * after any failure the transaction is rolled back. After a failed step the
 * later ones fail as "transaction aborted" and COMMIT only rolls back, so the
 * first rejection is the cause.
 *
 * `lockingFrom`: the index of the first step that takes row locks. Those steps
 * and `end` then go out in one write of their own, after the earlier ones were
 * written: postgres.js writes what it holds once it passes 1 KiB and the rest
 * on a later turn of the event loop, so a long settings statement could leave
 * COMMIT behind the lock-taking statement, and the server would hold those
 * locks until this process got round to that turn.
 */
export async function pipelined(
  sql: postgres.Sql,
  begin: string,
  steps: Step[],
  end: 'commit' | 'rollback',
  lockingFrom?: number,
): Promise<Outcome[]> {
  const conn = await sql.reserve();
  // BEGIN and the end prepared too: the server parses each once per connection, not per request.
  const send = (s: Step) =>
    outcome(
      typeof s === 'function'
        ? s(conn)
        : conn.unsafe(s.text, s.values as postgres.ParameterOrJSON<never>[], { prepare: true }).execute(),
    );
  try {
    const split = lockingFrom ?? steps.length;
    const sent = [outcome(conn.unsafe(begin, [], { prepare: true }).execute()), ...steps.slice(0, split).map(send)];
    // postgres.js hands a query to the connection one microtask after execute(), and queues its
    // write of what it holds (setImmediate) then: this wait ends after that write.
    if (split < steps.length) await new Promise((resolve) => queueMicrotask(() => setImmediate(resolve)));
    sent.push(...steps.slice(split).map(send), outcome(conn.unsafe(end, [], { prepare: true }).execute()));
    const results = await Promise.all(sent);
    if (results.some((r) => r.status === 'rejected')) await rollback(conn);
    return results;
  } finally {
    conn.release();
  }
}

/**
 * Statements in one transaction under the caller's role, written to the
 * connection at once with BEGIN, the settings and the end (COMMIT, or
 * ROLLBACK for a dry run): one round trip (pipelined), and any row lock the
 * statements take is held only while the server runs them, not across a
 * round trip to this process and back. Statements from `lockingFrom` on (row
 * locks: an insert that updates the usage row) go out in one write with the
 * end, as pipelined explains. Returns each statement's outcome in order (the
 * first rejection is the cause). A failure of BEGIN, the settings or the end
 * itself is thrown.
 */
export async function withRoleStatements(
  sql: postgres.Sql,
  caller: Caller,
  statements: Statement[],
  end: 'commit' | 'rollback',
  request: RequestInfo = {},
  lockingFrom?: number,
): Promise<Outcome[]> {
  const results = await pipelined(
    sql,
    request.readOnly ? 'begin read only' : 'begin',
    [(conn) => sendSettings(conn, caller, request), ...statements],
    end,
    lockingFrom === undefined ? undefined : lockingFrom + 1,
  );
  for (const r of [results[0]!, results[1]!, results[results.length - 1]!]) if (r.status === 'rejected') throw r.reason;
  return results.slice(2, -1);
}

/** The rows of a statement's outcome, or its error thrown. */
export function rowsOf(outcome: Outcome): postgres.RowList<postgres.Row[]> {
  if (outcome.status === 'rejected') throw outcome.reason;
  return outcome.value;
}

/**
 * One statement under the caller's role, committed: the settings go ahead of
 * it as the driver's `prelude` (scripts/patch-postgres.js), the two with one
 * Sync, so they run in one implicit transaction that ends with the statement.
 * That is the transaction withRoleStatements opens with BEGIN and ends with
 * COMMIT, without those two statements: one round trip, and a quarter of the
 * driver work per request. READ ONLY is `transaction_read_only` set in the
 * prelude, before the statement's snapshot; `settings` are set there too, for
 * the statement and for what runs at its commit (deferred constraint
 * triggers). `raw`: each row an array of the column values' bytes, as
 * PostgreSQL sent them.
 *
 * The statement takes a connection of its own, as a transaction holds one:
 * postgres.js would otherwise pipeline it onto a busy connection once all are
 * busy, where it waits behind whatever that connection runs (a 10 s
 * statement delays every request queued after it), while the pool's queue
 * hands it the first connection that frees up.
 */
export async function withRoleStatement(
  sql: postgres.Sql,
  caller: Caller,
  text: string,
  values: unknown[],
  request: RequestInfo = {},
  { raw = false, settings = {} }: { raw?: boolean; settings?: Record<string, string> } = {},
): Promise<postgres.RowList<postgres.Row[]>> {
  let prelude = request.readOnly ? READ_ONLY_SETTINGS : SETTINGS;
  const preludeValues = settingsValues(caller, request);
  // More transaction settings (storage's quota), names and values bound as parameters like the caller's.
  for (const [name, value] of Object.entries(settings)) {
    prelude += `, set_config($${preludeValues.length + 1}, $${preludeValues.length + 2}, true)`;
    preludeValues.push(name, value);
  }
  const conn = await sql.reserve();
  try {
    const query = conn.unsafe(
      text,
      values as postgres.ParameterOrJSON<never>[],
      {
        prepare: true,
        simple: false,
        prelude: { text: prelude, values: preludeValues },
      } as postgres.UnsafeQueryOptions,
    );
    return await (raw ? (query.raw() as unknown as Promise<postgres.RowList<postgres.Row[]>>) : query);
  } finally {
    conn.release();
  }
}

export async function withRole<T>(
  sql: postgres.Sql,
  caller: Caller,
  fn: (tx: postgres.TransactionSql) => Promise<T>,
  request: RequestInfo = {},
): Promise<T> {
  // BEGIN and the settings go out in the same write as fn's first statement
  // (a reserved connection pipelines), so a one-statement request costs two
  // round trips: the work, then COMMIT. postgres.js's sql.begin would wait
  // for BEGIN first.
  const conn = await sql.reserve();
  const begin = conn.unsafe(request.readOnly ? 'begin read only' : 'begin').execute();
  const settings = sendSettings(conn, caller, request);
  try {
    const result = await fn(conn as unknown as postgres.TransactionSql);
    await begin;
    await settings;
    await conn.unsafe('commit');
    return result;
  } catch (err) {
    await Promise.allSettled([begin, settings]);
    await rollback(conn);
    throw err;
  } finally {
    conn.release();
  }
}
