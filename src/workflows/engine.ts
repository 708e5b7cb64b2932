/**
 * The workflow engine. Each tick leases due runs with FOR UPDATE SKIP LOCKED
 * (at most 10 advancing per project, counting other workers' live leases
 * under a per-project advisory lock), advances each by one bounded pass
 * (advance.ts) and writes the pass back in a transaction that checks the
 * lease is still ours, so several worker processes never advance the same
 * run, and a worker that lost its lease (it stalled past lease_until, or the
 * run was cancelled) changes nothing. Those writes are group-committed with
 * the other runs' (writeback.ts), each still fenced by its own lease.
 *
 * A worker killed mid-step leaves its lease to expire; the next worker finds
 * the attempt `running`, counts it as failed and retries within the budget.
 *
 * A worker process runs the engine with startEngine: a tick leases and starts
 * passes and returns, without waiting for them, so a slow step (a webhook
 * that hangs for 900 s) never holds up the other runs' passes; each pass
 * finishes on its own, within its lease.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { InjectedFault, type Platform } from '../context.ts';
import { projectsWithSettingOn } from '../platform/project-config.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { every, type Worker } from '../periodic.ts';
import { planPass, STEP_CEILING, structuralFailure, type Pass } from './advance.ts';
import { isDatabaseUnavailable as disconnected } from '../db/unavailable.ts';
import type { ActionContext, FunctionInvoker } from './steps/action.ts';
import { runAction } from './steps/index.ts';
import { functionInvoker } from '../functions/index.ts';
import { RunState, type RunRow, type StepRow } from './state.ts';
import { LeaseLost, writeBegin, writeCommit } from './writeback.ts';

export const RUNS_PER_PROJECT = 10;
/** Passes one engine runs at once, over all projects: a tick leases no more than the free room. */
export const PASSES_IN_FLIGHT = 100;
/** How long a pass owns its run before another worker may take it over. */
export const LEASE_MS = 60_000;
const LEASE_MARGIN_MS = 30_000;
const ADVISORY_CLASS = 7_212_050;

const newOwner = () => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
const workerId = newOwner();

export interface TickOptions {
  /** Identifies this worker in leases (tests run several "workers" in one process). */
  owner?: string;
  /** Function invoker to use instead of the functions module (tests). */
  invoker?: FunctionInvoker | null;
  /** Step attempts a run may make (default STEP_CEILING; tests lower it). */
  stepCeiling?: number;
}

export interface TickResult {
  leased: number;
}

const ACTIVE_RUN = `(r.status in ('pending', 'running', 'waiting') or r.compensation_state = 'running')`;

const STEP_COLUMNS = `id, run_id, position, key, kind, status, attempt, max_attempts, output, error, compensating,
  parent_step_id, child_run_id, started_at, next_attempt_at`;

interface Leased {
  run: RunRow;
  rows: StepRow[];
  ref: string;
}

/**
 * Leases due runs and reads their step rows, in one statement (its own
 * transaction). Per enabled project with due runs whose lease slot no other
 * worker is filling right now (the advisory lock, held to the end of the
 * statement), up to the project's free room of the oldest due runs are taken
 * with FOR UPDATE SKIP LOCKED; at most `limit` in all, the oldest of each
 * project first. Runs in `busy` (this engine's passes still running) are
 * never taken, even once their lease has lapsed: a second pass would hold the
 * same owner and so pass the first one's fence.
 */
async function lease(p: Platform, owner: string, now: Date, limit: number, busy: string[]): Promise<Leased[]> {
  const until = new Date(now.getTime() + LEASE_MS);
  const sql = p.dbs.control;
  const enabled = await projectsWithSettingOn(sql, 'workflows', 'enabled');
  if (!enabled.length) return [];
  const refs = new Map(enabled.map((e) => [e.id, e.ref]));
  const rows = await sql`with projects as (
      select c.project_id, ${RUNS_PER_PROJECT}::int
          - (select count(*)::int from platform.workflow_runs a where a.project_id = c.project_id and a.lease_until >= ${now}) as room
      from unnest(${[...refs.keys()]}::uuid[]) as c(project_id)
      where exists (select 1 from platform.workflow_runs r where r.project_id = c.project_id and ${sql.unsafe(ACTIVE_RUN)}
          and r.wake_at <= ${now} and (r.lease_until is null or r.lease_until < ${now}) and r.id <> all(${busy}::uuid[]))
        and pg_try_advisory_xact_lock(${ADVISORY_CLASS}, hashtext(c.project_id::text))),
    due as (
      select d.id, d.project_id, d.wake_at, p.room from projects p cross join lateral (
        select r.id, r.project_id, r.wake_at from platform.workflow_runs r
        where r.project_id = p.project_id and ${sql.unsafe(ACTIVE_RUN)}
          and r.wake_at <= ${now} and (r.lease_until is null or r.lease_until < ${now}) and r.id <> all(${busy}::uuid[])
        order by r.wake_at, r.id limit ${RUNS_PER_PROJECT} for update skip locked) d
      where p.room > 0),
    -- LIMIT cannot name the lateral's project, so the room is applied here.
    picked as (
      select id from (select id, wake_at, room, row_number() over (partition by project_id order by wake_at, id) as n from due) x
      where n <= room order by n, wake_at, id limit ${limit}),
    leased as (
      update platform.workflow_runs r set lease_owner = ${owner}, lease_until = ${until}
      where r.id in (select id from picked)
      returning r.id, r.project_id, r.workflow, r.version, r.status, r.cursor, r.output, r.compensation_state, r.last_error,
        r.depth, r.parent_run_id, r.wake_at, r.finished_at)
    select l.*, coalesce((select json_agg(s order by s.position, s.created_at)
        from (select ${sql.unsafe(STEP_COLUMNS)}, created_at from platform.workflow_run_steps where run_id = l.id) s), '[]') as steps
    from leased l`;
  return rows.map(({ steps, ...run }) => ({
    run: run as unknown as RunRow,
    rows: (steps as StepJson[]).map(stepRow),
    ref: refs.get(run.project_id as string)!,
  }));
}

type StepJson = Omit<StepRow, 'started_at' | 'next_attempt_at'> & {
  started_at: string | null;
  next_attempt_at: string | null;
  created_at?: string;
};

/** A step row read as JSON: timestamps come as text. */
function stepRow({ created_at: _, ...r }: StepJson): StepRow {
  return {
    ...r,
    started_at: r.started_at === null ? null : new Date(r.started_at),
    next_attempt_at: r.next_attempt_at === null ? null : new Date(r.next_attempt_at),
  };
}

/**
 * Records the pass's attempts as started (attempt + 1) and stretches the lease
 * over their timeouts, before any side effect runs. The rows are changed in
 * memory first and written with absolute values, so the write can be repeated
 * after a lost connection without counting an attempt twice.
 */
async function beginAttempts(p: Platform, owner: string, pass: Pass): Promise<void> {
  const { st } = pass;
  const longest = Math.max(...pass.attempts.map((a) => a.timeoutSeconds)) * 1000;
  const until = new Date(st.now.getTime() + Math.max(LEASE_MS, longest + LEASE_MARGIN_MS));
  for (const a of pass.attempts)
    st.touch(a.row, { status: 'running', attempt: a.row.attempt + 1, started_at: st.now, next_attempt_at: null });
  await writeBegin(p, { owner, st, until });
  st.created.clear();
  st.dirty.clear();
}

/** Writes the pass back and releases the lease, if the lease is still ours. */
function commit(p: Platform, owner: string, st: RunState): Promise<void> {
  const run = st.run;
  const active = ['pending', 'running', 'waiting'].includes(run.status) || run.compensation_state === 'running';
  return writeCommit(p, { owner, st, wake: active ? (st.wake ?? st.now) : null });
}

interface AdvanceOptions {
  owner: string;
  invoker: FunctionInvoker | null;
  stepCeiling: number;
}

async function advance(
  p: Platform,
  registry: ProjectRegistry,
  opts: AdvanceOptions,
  { run, rows, ref }: Leased,
  now: Date,
): Promise<void> {
  const { owner } = opts;
  const st = new RunState(run, rows, now);
  try {
    const pass = await planPass(p, st, opts.stepCeiling);
    if (pass?.attempts.length) {
      p.faults.hit('workflows.attempt', { runId: run.id, steps: pass.attempts.map((a) => a.row.key) });
      await beginAttempts(p, owner, pass);
      const project = await registry.byReference(ref);
      if (!project) throw new Error('The project no longer exists.');
      const ctx: ActionContext = { p, project, invoker: opts.invoker };
      const outcomes = await Promise.all(pass.attempts.map((a) => runAction(ctx, a.action, a.timeoutSeconds)));
      pass.attempts.forEach((a, i) => {
        a.apply(outcomes[i]!);
      });
    }
    for (const settle of pass?.settle ?? []) await settle();
  } catch (err) {
    if (err instanceof LeaseLost) return;
    if (err instanceof InjectedFault) throw err;
    // The database went away (restart, terminated backend): nothing was decided, so leave the
    // run leased; the next pass after the lease expires starts over (a started attempt counts).
    if (disconnected(err)) {
      p.log.warn({ err, runId: run.id }, 'workflow pass abandoned: the database connection was lost');
      return;
    }
    // An engine bug or a broken stored definition must not wedge the run: fail it visibly.
    p.log.error({ err, runId: run.id }, 'workflow pass failed');
    structuralFailure(st, `The engine could not advance the run: ${(err as Error).message}`);
  }
  try {
    await commit(p, owner, st);
  } catch (err) {
    if (!(err instanceof LeaseLost)) throw err;
  }
}

/** Leases due runs (at most `limit`, none of `busy`) and starts a pass of each; returns the passes by run id. */
async function startPasses(
  p: Platform,
  registry: ProjectRegistry,
  now: Date,
  opts: TickOptions & { owner: string; limit: number; busy: string[] },
): Promise<Map<string, Promise<void>>> {
  // This process's functions runtime (started by startHearth), unless a test injects one.
  const invoker = opts.invoker !== undefined ? opts.invoker : functionInvoker(p);
  const runs = await lease(p, opts.owner, now, opts.limit, opts.busy);
  const opt: AdvanceOptions = { owner: opts.owner, invoker, stepCeiling: opts.stepCeiling ?? STEP_CEILING };
  return new Map(
    runs.map((leased) => [
      leased.run.id,
      advance(p, registry, opt, leased, now).catch((err) =>
        p.log.error({ err, runId: leased.run.id }, 'workflow run pass failed'),
      ),
    ]),
  );
}

/**
 * One engine tick that waits for its passes: lease due runs and advance each
 * by one pass, concurrently. Tests call it directly with the clock moved (and
 * the benchmark back to back); a worker process runs startEngine instead.
 */
export async function engineTick(
  p: Platform,
  registry: ProjectRegistry,
  now: Date = p.clock.now(),
  opts: TickOptions = {},
): Promise<TickResult> {
  const owner = opts.owner ?? workerId;
  const passes = await startPasses(p, registry, now, { ...opts, owner, limit: PASSES_IN_FLIGHT, busy: [] });
  await Promise.all(passes.values());
  return { leased: passes.size };
}

/**
 * The engine of a worker process: every intervalMs it leases due runs and
 * starts their passes without waiting for them, up to PASSES_IN_FLIGHT at
 * once; a run whose pass is still going is not leased again. stop() ends the
 * ticks and waits for the passes under way to be written back (each is
 * bounded by its steps' timeout_seconds), as a tick that waited for them did.
 */
export function startEngine(p: Platform, registry: ProjectRegistry, intervalMs: number): Worker {
  const owner = newOwner();
  const inFlight = new Map<string, Promise<void>>();
  const ticks = every(p, 'workflow engine tick', intervalMs, async () => {
    const limit = PASSES_IN_FLIGHT - inFlight.size;
    if (limit <= 0) return;
    const started = await startPasses(p, registry, p.clock.now(), { owner, limit, busy: [...inFlight.keys()] });
    for (const [runId, pass] of started) {
      inFlight.set(
        runId,
        pass.finally(() => inFlight.delete(runId)),
      );
    }
  });
  return {
    async stop() {
      await ticks.stop();
      await Promise.all(inFlight.values());
    },
  };
}

/** Removes finished runs (and, by cascade, their steps and signals) 30 days after they finished. */
export const RETENTION_MS = 30 * 86400_000;
export async function pruneRuns(p: Platform, now: Date = p.clock.now()): Promise<number> {
  const rows = await p.dbs.control`delete from platform.workflow_runs
    where finished_at < ${new Date(now.getTime() - RETENTION_MS)} and compensation_state <> 'running' returning id`;
  return rows.length;
}
