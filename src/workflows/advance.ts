/**
 * One engine pass over one leased run (SPEC 3.2): at most one bounded step of
 * the main line (or of the compensation walk) plus up to 8 runnable fan-out
 * children. Decisions are made on the in-memory RunState; side-effecting
 * attempts are first recorded as started (so an attempt cut short by a crash
 * still counts), then run, then everything is written back by engine.ts in
 * one transaction fenced by the lease.
 */
import type { Platform } from '../context.ts';
import { loadVersion } from './definitions.ts';
import { RETRY_AFTER_SECONDS, isDatabaseUnavailable as disconnected } from '../db/unavailable.ts';
import { cancelTree, MAX_DEPTH, startRun } from './runs.ts';
import type { Outcome } from './steps/action.ts';
import { fanoutBefore, LIMITS, type Action, type Step } from './validate.ts';
import type { RunState, StepRow } from './state.ts';

export const FANOUT_PER_TICK = 8;
/**
 * Attempts of side-effecting steps (enqueue, sql, webhook, function; main
 * steps and fan-out children together) one run may make. A definition allows
 * at most 200 steps of up to 100 attempts, so only a pathological run of
 * flaky steps gets here; it then fails as a structural failure, without
 * compensation. Waits (at most one attempt each) and compensation walks (at
 * most 200 undos of 3 attempts) are bounded already and not counted.
 */
export const STEP_CEILING = 10_000;
export const BACKOFF_BASE_MS = 2000;
export const BACKOFF_CAP_MS = 3600_000;
const COMPENSATION_ATTEMPTS = LIMITS.defaultAttempts;

export interface Attempt {
  row: StepRow;
  action: Step | Action;
  timeoutSeconds: number;
  apply(outcome: Outcome): void;
}

export interface Pass {
  p: Platform;
  st: RunState;
  steps: Step[];
  attempts: Attempt[];
  /** Decisions that need the outcome of this pass's attempts (join, finish). */
  settle: (() => Promise<void> | void)[];
  /** Attempts this pass may still start before the run reaches its step ceiling. */
  room: number;
}

export const backoffMs = (attempt: number) => Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1), BACKOFF_CAP_MS);
const later = (now: Date, ms: number) => new Date(now.getTime() + ms);
const ACTIONS = new Set(['enqueue', 'sql', 'webhook', 'function']);
const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Definition failed to load or a ceiling was breached: failed, no compensation. */
export function structuralFailure(st: RunState, why: string): void {
  finishRun(st, 'failed', why);
}

function finishRun(st: RunState, status: 'succeeded' | 'failed', error: string | null): void {
  const run = st.run;
  run.status = status;
  run.finished_at = st.now;
  if (error !== null) run.last_error = error;
  skipUnfinished(st);
  st.emit(status === 'succeeded' ? 'run.succeeded' : 'run.failed');
  wakeParent(st);
}

/**
 * The run has ended, so no step of it will run again: steps never started,
 * and steps left mid-way (a fan-out sibling backing off between attempts, a
 * wait), become skipped rather than pending or running forever. Their attempt
 * count and last error stay. Compensation rows are the walk's own business.
 */
function skipUnfinished(st: RunState): void {
  for (const r of st.rows) {
    if (!r.compensating && (r.status === 'pending' || r.status === 'running'))
      st.touch(r, { status: 'skipped', next_attempt_at: null });
  }
}

function wakeParent(st: RunState): void {
  const parent = st.run.parent_run_id;
  if (!parent) return;
  const now = st.now;
  st.ops.push(
    (tx) => tx`update platform.workflow_runs set wake_at = ${now}
    where id = ${parent} and status in ('pending', 'running', 'waiting')`,
  );
}

/** A step (main line) failed for good: compensate what was done, or fail plainly. */
function failRun(pass: Pass, error: string): void {
  const { st } = pass;
  st.run.last_error = error;
  if (compensationTarget(pass)) {
    st.run.status = 'failed';
    st.run.compensation_state = 'running';
    skipUnfinished(st);
    st.emit('run.failed');
    wakeParent(st);
    st.wakeBy(st.now);
    return;
  }
  finishRun(st, 'failed', error);
}

/** Records a failed attempt: back off and retry, or dead-letter. Returns true when dead. */
function failAttempt(st: RunState, row: StepRow, error: string, retryable: boolean): boolean {
  if (retryable && row.attempt < row.max_attempts) {
    const at = later(st.now, backoffMs(row.attempt));
    st.touch(row, { status: 'pending', error, next_attempt_at: at });
    st.emit('step.failed', row);
    st.wakeBy(at);
    return false;
  }
  st.touch(row, { status: 'failed', error, next_attempt_at: null });
  st.emit('step.dead_lettered', row);
  return true;
}

const failedText = (row: StepRow) =>
  `step "${row.key}" failed after ${row.attempt} attempt${row.attempt === 1 ? '' : 's'}: ${row.error ?? 'unknown error'}`;

/**
 * Queues an attempt of an action row that is due. A row found `running` was
 * cut short (its worker died before recording the outcome): that attempt
 * counts as failed, and the next one starts now if the budget allows.
 */
function scheduleAttempt(
  pass: Pass,
  row: StepRow,
  action: Step | Action,
  timeoutSeconds: number,
  onDone: (ok: boolean) => void,
): void {
  const { st } = pass;
  if (row.status === 'running') {
    const dead = failAttempt(
      st,
      row,
      'The attempt was interrupted: the worker running it stopped before recording its outcome.',
      true,
    );
    if (dead) {
      onDone(false);
      return;
    }
    st.touch(row, { next_attempt_at: null });
  } else if (row.next_attempt_at && row.next_attempt_at > st.now) {
    st.wakeBy(row.next_attempt_at);
    return;
  }
  if (pass.attempts.length >= pass.room) {
    // The ceiling is reached with this pass's attempts; the next pass fails the run.
    st.wakeBy(st.now);
    return;
  }
  pass.attempts.push({
    row,
    action,
    timeoutSeconds,
    apply(outcome) {
      if (outcome.ok) {
        st.touch(row, { status: 'succeeded', output: outcome.output ?? null, error: null, next_attempt_at: null });
        return onDone(true);
      }
      if (outcome.deferred) {
        // Nothing ran: the attempt is given back and tried again once connections may be free.
        const at = later(st.now, RETRY_AFTER_SECONDS * 1000);
        st.touch(row, { status: 'pending', attempt: row.attempt - 1, error: outcome.error, next_attempt_at: at });
        st.wakeBy(at);
        return;
      }
      if (failAttempt(st, row, outcome.error, outcome.retryable)) onDone(false);
    },
  });
}

function planChildren(pass: Pass): void {
  const { st, steps } = pass;
  let budget = FANOUT_PER_TICK;
  for (const row of st.rows) {
    if (!row.parent_step_id || !['pending', 'running'].includes(row.status)) continue;
    const fanout = steps[row.position];
    const child = fanout?.children?.find((c) => c.key === row.key);
    if (!child) continue;
    if (row.status === 'pending' && row.next_attempt_at && row.next_attempt_at > st.now) {
      st.wakeBy(row.next_attempt_at);
      continue;
    }
    if (budget === 0) {
      st.wakeBy(st.now);
      continue;
    }
    budget--;
    scheduleAttempt(pass, row, child, child.timeout_seconds, () => st.wakeBy(st.now));
  }
}

/** The children of every fanout still running or waiting to run. */
const openChildren = (st: RunState) =>
  st.rows.filter((r) => r.parent_step_id && (r.status === 'pending' || r.status === 'running'));

function moveOn(pass: Pass, row: StepRow, output: unknown, producesOutput: boolean): void {
  const { st } = pass;
  st.touch(row, { status: 'succeeded', output, error: null, next_attempt_at: null });
  if (producesOutput) st.run.output = output;
  st.run.cursor += 1;
  st.run.status = 'running';
  if (st.run.cursor >= pass.steps.length) pass.settle.push(() => finishIfDone(pass));
  else st.wakeBy(st.now);
}

/** After the last step: wait for fan-out children nobody joined, then succeed (or fail). */
function finishIfDone(pass: Pass): void {
  const { st } = pass;
  const failed = st.rows.find((r) => r.parent_step_id && r.status === 'failed');
  if (failed) {
    failRun(pass, `fan-out child ${failedText(failed)}`);
    return;
  }
  if (openChildren(st).length) {
    st.run.status = 'waiting';
    return;
  }
  finishRun(st, 'succeeded', null);
}

async function planMain(pass: Pass): Promise<void> {
  const { p, st, steps } = pass;
  const run = st.run;
  if (run.cursor >= steps.length) {
    pass.settle.push(() => finishIfDone(pass));
    return;
  }
  const step = steps[run.cursor]!;
  const row = st.main(step.key);
  if (!row)
    return structuralFailure(st, `The run has no row for step "${step.key}"; the definition does not match the run.`);
  if (row.status === 'succeeded' || row.status === 'skipped') {
    run.cursor += 1;
    st.wakeBy(st.now);
    return;
  }
  if (row.status === 'failed') return failRun(pass, failedText(row));

  if (ACTIONS.has(step.kind)) {
    scheduleAttempt(pass, row, step, step.timeout_seconds, (ok) => {
      if (ok) moveOn(pass, row, row.output, row.output !== null && row.output !== undefined);
      else failRun(pass, failedText(row));
    });
    return;
  }
  const started = row.started_at ?? st.now;
  if (row.status === 'pending') st.touch(row, { status: 'running', started_at: started, attempt: 1 });
  const deadline = later(started, step.timeout_seconds * 1000);

  switch (step.kind) {
    case 'sleep': {
      const due = later(started, step.sleep_seconds! * 1000);
      if (st.now >= due) return moveOn(pass, row, null, false);
      run.status = 'waiting';
      st.wakeBy(due);
      return;
    }
    case 'wait_for_signal': {
      const [signal] = await p.dbs.control`select id, payload from platform.workflow_signals
        where run_id = ${run.id} and signal = ${step.signal!} and consumed_at is null order by created_at, id limit 1`;
      if (signal) {
        const now = st.now;
        st.ops.push(
          (tx) => tx`update platform.workflow_signals set consumed_at = ${now} where id = ${signal.id as string}`,
        );
        return moveOn(pass, row, signal.payload ?? null, true);
      }
      if (st.now >= deadline) {
        st.touch(row, {
          status: 'failed',
          error: `No "${step.signal}" signal arrived within ${step.timeout_seconds} s.`,
        });
        st.emit('step.dead_lettered', row);
        return failRun(pass, failedText(row));
      }
      run.status = 'waiting';
      st.wakeBy(deadline);
      return;
    }
    case 'subworkflow':
      return subworkflow(pass, step, row, deadline);
    case 'fanout': {
      for (const child of step.children!) {
        if (st.rows.some((r) => r.key === child.key)) continue;
        st.add({
          position: run.cursor,
          key: child.key,
          kind: child.kind,
          status: 'pending',
          max_attempts: child.max_attempts,
          compensating: false,
          parent_step_id: row.id,
        });
      }
      return moveOn(pass, row, null, false);
    }
    case 'join':
      pass.settle.push(() => join(pass, step, row));
      return;
    default:
      return structuralFailure(st, `step "${step.key}" has an unknown kind ${step.kind}.`);
  }
}

function join(pass: Pass, step: Step, row: StepRow): void {
  const { st, steps } = pass;
  const fanout = st.main(steps[fanoutBefore(steps, st.run.cursor)]?.key ?? '');
  const children = fanout ? st.children(fanout.id) : [];
  const failed = children.find((c) => c.status === 'failed');
  if (failed) {
    st.touch(row, { status: 'failed', error: `fan-out child ${failedText(failed)}` });
    failRun(pass, `step "${step.key}" failed: fan-out child ${failedText(failed)}`);
    return;
  }
  if (children.every((c) => c.status === 'succeeded')) {
    moveOn(pass, row, Object.fromEntries(children.map((c) => [c.key, c.output ?? null])), true);
    return;
  }
  st.run.status = 'waiting';
}

async function subworkflow(pass: Pass, step: Step, row: StepRow, deadline: Date): Promise<void> {
  const { p, st } = pass;
  const run = st.run;
  if (!row.child_run_id) {
    if (run.depth + 1 > MAX_DEPTH) {
      return structuralFailure(
        st,
        `step "${step.key}": sub-workflows nest at most ${MAX_DEPTH} deep; this run is at depth ${run.depth}.`,
      );
    }
    try {
      // Keyed by parent and step, so a pass that dies before committing starts the same child again.
      const child = await startRun(
        p,
        { id: run.project_id },
        step.target!,
        // SPEC 2.9: the payload is delivered verbatim to the step, so it is the child's input; a step
        // without one (null) starts the child with {}, as a run started without input.
        step.payload ?? {},
        {
          idempotencyKey: `subworkflow:${run.id}:${step.key}`,
          trigger: 'subworkflow',
          parent: { runId: run.id, stepId: row.id, depth: run.depth },
        },
      );
      st.touch(row, { child_run_id: child.id, output: { run_id: child.id } });
    } catch (err) {
      // A lost connection decides nothing: the engine abandons the pass and a later one starts the same child.
      if (disconnected(err)) throw err;
      st.touch(row, { status: 'failed', error: `Could not start sub-workflow "${step.target}": ${msg(err)}` });
      st.emit('step.dead_lettered', row);
      return failRun(pass, failedText(row));
    }
  }
  const [child] = await p.dbs
    .control`select status, last_error from platform.workflow_runs where id = ${row.child_run_id!}`;
  const status = (child?.status as string | undefined) ?? 'missing';
  if (status === 'succeeded') return moveOn(pass, row, { run_id: row.child_run_id }, true);
  if (status === 'failed' || status === 'cancelled' || status === 'missing') {
    const why =
      status === 'failed'
        ? `failed: ${child!.last_error ?? ''}`
        : status === 'cancelled'
          ? 'was cancelled'
          : 'no longer exists';
    st.touch(row, { status: 'failed', error: `Sub-workflow run ${row.child_run_id} ${why}` });
    st.emit('step.dead_lettered', row);
    return failRun(pass, failedText(row));
  }
  if (st.now >= deadline) {
    const childId = row.child_run_id!;
    st.ops.push((tx) => cancelTree(p, tx, [childId]));
    st.touch(row, {
      status: 'failed',
      error: `Sub-workflow run ${childId} did not finish within ${step.timeout_seconds} s; it was cancelled.`,
    });
    st.emit('step.dead_lettered', row);
    return failRun(pass, failedText(row));
  }
  run.status = 'waiting';
  st.wakeBy(deadline);
}

interface Undo {
  row: StepRow;
  action: Action;
}

/** The next completed step to undo, walking backwards: latest position first. */
function compensationTarget(pass: Pass): Undo | null {
  const { st, steps } = pass;
  const done = new Set(st.rows.filter((r) => r.compensating && r.status === 'succeeded').map((r) => r.key));
  const candidates: Undo[] = [];
  for (const row of st.rows) {
    if (row.compensating || row.status !== 'succeeded' || done.has(`compensate:${row.key}`)) continue;
    const step = row.parent_step_id
      ? steps[row.position]?.children?.find((c) => c.key === row.key)
      : steps[row.position];
    if (step?.compensate) candidates.push({ row, action: step.compensate });
  }
  // Children sit at their fanout's position and ran after it: undo them before the fanout's predecessors.
  candidates.sort(
    (a, b) =>
      b.row.position - a.row.position || Number(Boolean(b.row.parent_step_id)) - Number(Boolean(a.row.parent_step_id)),
  );
  return candidates[0] ?? null;
}

function planCompensation(pass: Pass): void {
  const { st } = pass;
  const target = compensationTarget(pass);
  if (!target) {
    st.run.compensation_state = 'compensated';
    st.run.finished_at = st.now;
    return;
  }
  const key = `compensate:${target.row.key}`;
  let row = st.rows.find((r) => r.key === key);
  row ??= st.add({
    position: target.row.position,
    key,
    kind: target.action.kind,
    status: 'pending',
    max_attempts: COMPENSATION_ATTEMPTS,
    compensating: true,
    parent_step_id: null,
  });
  const undo = row;
  if (undo.status === 'failed') {
    compensationIncomplete(pass, target, undo);
    return;
  }
  scheduleAttempt(pass, undo, target.action, LIMITS.defaultAttemptTimeoutSeconds, (ok) => {
    if (!ok) return compensationIncomplete(pass, target, undo);
    if (!compensationTarget(pass)) {
      st.run.compensation_state = 'compensated';
      st.run.finished_at = st.now;
    } else st.wakeBy(st.now);
  });
}

function compensationIncomplete(pass: Pass, target: Undo, undo: StepRow): void {
  const { st } = pass;
  const original = st.run.last_error ? ` (the run had failed: ${st.run.last_error})` : '';
  st.run.compensation_state = 'incomplete';
  st.run.cursor = target.row.position;
  st.run.last_error = `Compensation stopped at step "${target.row.key}": ${failedText(undo)}${original}`;
  st.run.finished_at = st.now;
}

/** Plans the pass: which attempts to make and which decisions follow them. */
export async function planPass(p: Platform, st: RunState, ceiling: number = STEP_CEILING): Promise<Pass | null> {
  const steps = await loadVersion(p, st.run.project_id, st.run.workflow, st.run.version);
  const pass: Pass = { p, st, steps: steps ?? [], attempts: [], settle: [], room: Infinity };
  if (!steps) {
    structuralFailure(st, `Version ${st.run.version} of workflow "${st.run.workflow}" could not be loaded.`);
    return pass;
  }
  if (st.run.compensation_state === 'running') {
    planCompensation(pass);
    return pass;
  }
  const used = st.rows.reduce((n, r) => n + (!r.compensating && ACTIONS.has(r.kind) ? r.attempt : 0), 0);
  if (used >= ceiling) {
    structuralFailure(
      st,
      `The run reached the ceiling of ${ceiling} step attempts (it has made ${used}); it is failed without compensation.`,
    );
    return pass;
  }
  pass.room = ceiling - used;
  if (st.run.status === 'pending') st.run.status = 'running';
  planChildren(pass);
  await planMain(pass);
  return pass;
}
