/**
 * The engine's lease-fenced writes, group-committed. A tick advances up to
 * 10 runs per project at once; writing each run's attempt start and pass
 * result in a transaction of its own cost two control-database commits and
 * about nine statements per step, and queued the runs on the pool's 10
 * connections. Instead every write is queued here, and what is queued is
 * written as one statement while the previous one is in flight (group
 * commit): the runs leased by a tick record their attempt starts together,
 * and results that arrive together are committed together. A run never waits
 * for a slow run: a batch holds only what was queued before it started.
 *
 * The statement is its own transaction, and its first part is the fence: the
 * update of the run rows applies only where the item's owner still holds the
 * lease (re-checked under the row lock), and the step rows and events are
 * written only for those runs. The others get LeaseLost, exactly as a
 * transaction of their own would. Values are absolute, so a batch retried
 * after a lost connection (fenced) writes the same thing again. A batch that
 * fails for another reason (one run's write is refused) is written again item
 * by item, so one bad run cannot hold back the others.
 */
import type postgres from 'postgres';
import type { Platform } from '../context.ts';
import { isDatabaseUnavailable as disconnected } from '../db/unavailable.ts';
import type { RunState } from './state.ts';
import { truncate } from './steps/index.ts';

export class LeaseLost extends Error {}

/** Records a pass's attempts as started and stretches the lease to `until`. */
export interface BeginItem {
  owner: string;
  st: RunState;
  until: Date;
}

/** Writes a pass back and releases the lease; the run is next due at `wake` (null: finished). */
export interface CommitItem {
  owner: string;
  st: RunState;
  wake: Date | null;
}

/** Bounds one batch's statements (a tick leases at most 10 runs per enabled project). */
const MAX_BATCH = 200;
const RETRY_DELAYS_MS = [100, 500, 2000];

/**
 * Runs a lease-fenced write again when its connection was lost. Safe because
 * each write first checks that its worker still holds the lease and writes
 * absolute values: if a lost COMMIT of a pass had in fact gone through, the
 * retry finds the lease released and changes nothing (LeaseLost); a repeated
 * attempt start writes the same rows again.
 */
async function fenced<T>(write: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await write();
    } catch (err) {
      if (!disconnected(err) || i >= RETRY_DELAYS_MS.length) throw err;
      await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[i]));
    }
  }
}

type Write<T> = (sql: postgres.Sql, items: T[]) => Promise<Set<T>>;

class GroupWriter<T> {
  private queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private draining = false;

  constructor(
    private readonly p: Platform,
    private readonly write: Write<T>,
  ) {}

  /** Resolves once the item is committed; rejects with LeaseLost when its lease is gone. */
  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.draining) return;
      this.draining = true;
      // After the current macrotask, so the runs a tick plans together share the first batch.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) await this.flush(this.queue.splice(0, MAX_BATCH));
    this.draining = false;
  }

  private async flush(batch: GroupWriter<T>['queue']): Promise<void> {
    try {
      const held = await fenced(() =>
        this.write(
          this.p.dbs.control,
          batch.map((b) => b.item),
        ),
      );
      for (const b of batch)
        if (held.has(b.item)) b.resolve();
        else b.reject(new LeaseLost());
    } catch (err) {
      if (batch.length > 1 && !disconnected(err)) {
        for (const b of batch) await this.flush([b]);
        return;
      }
      for (const b of batch) b.reject(err);
    }
  }
}

type Sql = postgres.Sql | postgres.TransactionSql;
const json = (sql: Sql, value: unknown) => sql.json(value as postgres.JSONValue);

/**
 * The CTEs that insert the created step rows and update the changed ones of
 * every state whose run is in `fence`. The same text whatever the batch (empty
 * lists write nothing), so the statement stays prepared.
 */
function stepWrites(sql: Sql, states: RunState[]) {
  const created = states.flatMap((st) =>
    [...st.created].map((r) => ({ ...r, output: r.output ?? null, created_at: st.now, updated_at: st.now })),
  );
  const dirty = states.flatMap((st) =>
    [...st.dirty].map((r) => ({
      id: r.id,
      run_id: r.run_id,
      status: r.status,
      attempt: r.attempt,
      output: r.output ?? null,
      error: r.error,
      child_run_id: r.child_run_id,
      started_at: r.started_at,
      next_attempt_at: r.next_attempt_at,
      updated_at: st.now,
    })),
  );
  return sql`created as (
      insert into platform.workflow_run_steps (id, run_id, position, key, kind, status, attempt, max_attempts, output,
        error, compensating, parent_step_id, child_run_id, started_at, next_attempt_at, created_at, updated_at)
      select id, run_id, position, key, kind, status, attempt, max_attempts, output,
        error, compensating, parent_step_id, child_run_id, started_at, next_attempt_at, created_at, updated_at
      from jsonb_to_recordset(${json(sql, created)}) as v(id uuid, run_id uuid, position int, key text, kind text, status text,
        attempt int, max_attempts int, output jsonb, error text, compensating boolean, parent_step_id uuid, child_run_id uuid,
        started_at timestamptz, next_attempt_at timestamptz, created_at timestamptz, updated_at timestamptz)
      where v.run_id in (select id from fence)
      on conflict (id) do nothing),
    dirty as (
      update platform.workflow_run_steps s set status = v.status, attempt = v.attempt, output = v.output, error = v.error,
        child_run_id = v.child_run_id, started_at = v.started_at, next_attempt_at = v.next_attempt_at, updated_at = v.updated_at
      from jsonb_to_recordset(${json(sql, dirty)}) as v(id uuid, run_id uuid, status text, attempt int, output jsonb, error text,
        child_run_id uuid, started_at timestamptz, next_attempt_at timestamptz, updated_at timestamptz)
      where s.id = v.id and v.run_id in (select id from fence))`;
}

function heldOf<T extends { st: RunState }>(items: T[], rows: readonly { id?: unknown }[]): Set<T> {
  const ok = new Set(rows.map((r) => r.id as string));
  return new Set(items.filter((i) => ok.has(i.st.run.id)));
}

async function writeBegins(sql: postgres.Sql, items: BeginItem[]): Promise<Set<BeginItem>> {
  // A pending run shows running from its first attempt on, not only after the pass.
  const fence = items.map((i) => ({ id: i.st.run.id, owner: i.owner, until: i.until }));
  const rows = await sql`with fence as (
      update platform.workflow_runs r set lease_until = v.until,
        status = case when r.status = 'pending' then 'running' else r.status end
      from jsonb_to_recordset(${json(sql, fence)}) as v(id uuid, owner text, until timestamptz)
      where r.id = v.id and r.lease_owner = v.owner
      returning r.id),
    ${stepWrites(
      sql,
      items.map((i) => i.st),
    )}
    select id from fence`;
  return heldOf(items, rows);
}

/** The pass results of `items`: runs, step rows and events, fenced by the run update. */
async function commitStatement(sql: Sql, items: CommitItem[]): Promise<Set<CommitItem>> {
  const runs = items.map(({ st, owner, wake }) => ({
    id: st.run.id,
    owner,
    status: st.run.status,
    cursor: st.run.cursor,
    output: st.run.output ?? null,
    compensation_state: st.run.compensation_state,
    last_error: st.run.last_error === null ? null : truncate(st.run.last_error),
    finished_at: st.run.finished_at,
    wake_at: wake,
    updated_at: st.now,
  }));
  const events = items.flatMap(({ st }) =>
    st.events.map((e) => ({
      project_id: st.run.project_id,
      event: e.event,
      run_id: st.run.id,
      workflow: st.run.workflow,
      step: e.step?.key ?? null,
      attempt: e.step?.attempt ?? null,
      at: st.now,
    })),
  );
  // Events go to the outbox only while the project has a log drain (events.ts), in the order of the passes.
  const rows = await sql`with fence as (
      update platform.workflow_runs r set status = v.status, "cursor" = v."cursor", output = v.output,
        compensation_state = v.compensation_state, last_error = v.last_error, finished_at = v.finished_at,
        wake_at = v.wake_at, lease_owner = null, lease_until = null, updated_at = v.updated_at
      from jsonb_to_recordset(${json(sql, runs)}) as v(id uuid, owner text, status text, "cursor" int, output jsonb,
        compensation_state text, last_error text, finished_at timestamptz, wake_at timestamptz, updated_at timestamptz)
      where r.id = v.id and r.lease_owner = v.owner
      returning r.id),
    ${stepWrites(
      sql,
      items.map((i) => i.st),
    )},
    events as (
      insert into platform.workflow_events (project_id, event, run_id, workflow, step, attempt, at)
      select v.project_id, v.event, v.run_id, v.workflow, v.step, v.attempt, v.at
      from rows from (jsonb_to_recordset(${json(sql, events)}) as (project_id uuid, event text, run_id uuid, workflow text,
        step text, attempt int, at timestamptz)) with ordinality as v
      where v.run_id in (select id from fence)
        and exists (select 1 from platform.workflow_log_drains d where d.project_id = v.project_id)
      order by v.ordinality)
    select id from fence`;
  return heldOf(items, rows);
}

/**
 * Passes with extra writes (waking a parent, consuming a signal, cancelling a
 * sub-workflow) make them in the same transaction, after the fenced statement
 * and only for the runs it held: a parent woken by its child's last pass stays
 * woken even when its own pass is committed in the same batch.
 */
async function writeCommits(sql: postgres.Sql, items: CommitItem[]): Promise<Set<CommitItem>> {
  if (!items.some((i) => i.st.ops.length)) return commitStatement(sql, items);
  return (await sql.begin(async (tx) => {
    const held = await commitStatement(tx, items);
    for (const { st } of held) for (const op of st.ops) await op(tx);
    return held;
  })) as Set<CommitItem>;
}

const writers = new WeakMap<Platform, { begin: GroupWriter<BeginItem>; commit: GroupWriter<CommitItem> }>();

function writersOf(p: Platform) {
  let w = writers.get(p);
  if (!w) {
    w = { begin: new GroupWriter(p, writeBegins), commit: new GroupWriter(p, writeCommits) };
    writers.set(p, w);
  }
  return w;
}

export const writeBegin = (p: Platform, item: BeginItem) => writersOf(p).begin.submit(item);
export const writeCommit = (p: Platform, item: CommitItem) => writersOf(p).commit.submit(item);
