/**
 * Runs seen from outside the engine (SPEC 2.10, 3.2, 4.6): start (from the
 * API, cron, queue and row bindings, sub-workflow steps), list, read, cancel
 * and signal. Every query is scoped by project and workflow, so another
 * project's or another workflow's run id is 404.
 */
import type postgres from 'postgres';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import { recordEvent } from './events.ts';
import { loadVersion, workflowExists } from './definitions.ts';
import { readSettings } from '../platform/project-config.ts';
import { unstorableJson } from '../platform/text.ts';
import { SIGNAL_NAME } from './validate.ts';

export const IDEMPOTENCY_KEY_MAX = 200;
export const SIGNAL_PAYLOAD_MAX = 32 * 1024;
export const RUN_LIST_MAX = 100;
export const MAX_DEPTH = 5;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ACTIVE = ['pending', 'running', 'waiting'];

export interface StartOptions {
  idempotencyKey?: string | null;
  trigger?: 'api' | 'cron' | 'queue' | 'row' | 'subworkflow';
  parent?: { runId: string; stepId: string; depth: number };
  /** Run inside this transaction of the control database (sub-workflow steps). */
  tx?: postgres.TransactionSql;
}

export interface Started {
  id: string;
  status: string;
  /** False when an existing run was returned for the idempotency key. */
  created: boolean;
}

/**
 * A JSON value as text for a `::text::jsonb` parameter: postgres.js sends
 * sql.json(null) as SQL NULL, which would lose an explicit JSON null.
 */
const jsonText = (value: unknown): string => JSON.stringify(value === undefined ? null : value);

/** An idempotency key from a request: absent (null) or a storable string of 1-200 characters. */
export function checkIdempotencyKey(key: unknown): string | null {
  if (key === undefined || key === null) return null;
  // Characters are counted as code points, so a key of 200 emoji is 200 characters, not 400.
  if (typeof key !== 'string' || key.length === 0 || [...key].length > IDEMPOTENCY_KEY_MAX) {
    throw fail('invalid_request', `idempotency_key must be a string of 1-${IDEMPOTENCY_KEY_MAX} characters.`);
  }
  const problem = unstorableJson(key, 'idempotency_key');
  if (problem) throw fail('invalid_request', `${problem}.`);
  return key;
}

/** A JSON value from a request (run input, signal payload) that the database can store. */
export function checkRequestJson(value: unknown, field: string): unknown {
  const problem = unstorableJson(value, field);
  if (problem) throw fail('invalid_request', `${problem}, which the database cannot store.`);
  return value;
}

/** Whether config/workflows.enabled is on for the project. */
export async function workflowsEnabled(
  sql: postgres.Sql | postgres.TransactionSql,
  projectId: string,
): Promise<boolean> {
  return (await readSettings(sql, projectId, 'workflows')).enabled === true;
}

/**
 * Starts a run of the highest enabled version of `workflow` (404 when none).
 * The same (workflow, idempotency key) returns the existing run. Cron calls
 * this without a key, so every fire is a new run.
 */
export async function startRun(
  p: Platform,
  project: { id: string },
  workflow: string,
  input: unknown = {},
  opts: StartOptions = {},
): Promise<Started> {
  const key = opts.idempotencyKey ?? null;
  if (key !== null && (typeof key !== 'string' || key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX * 2)) {
    throw fail('invalid_request', `idempotency_key must be a string of 1-${IDEMPOTENCY_KEY_MAX} characters.`);
  }
  const work = async (tx: postgres.TransactionSql): Promise<Started> => {
    if (!(await workflowsEnabled(tx, project.id)))
      throw fail(
        'forbidden',
        'Workflows are not enabled for this project: PATCH /v1/projects/{ref}/config/workflows {"enabled": true}.',
      );
    if (key !== null) {
      const [existing] = await tx`select id, status from platform.workflow_runs
        where project_id = ${project.id} and workflow = ${workflow} and idempotency_key = ${key}`;
      if (existing) return { id: existing.id as string, status: existing.status as string, created: false };
    }
    const [def] = await tx`select max(version) as version from platform.workflow_definitions
      where project_id = ${project.id} and name = ${workflow} and enabled`;
    if (!def?.version) throw fail('not_found', `Workflow "${workflow}" has no enabled version in this project.`);
    const version = def.version as number;
    // Through tx: a second pooled connection per start could exhaust the pool under load.
    const steps = await loadVersion(p, project.id, workflow, version, tx);
    const now = p.clock.now();
    const [run] = await tx`insert into platform.workflow_runs
        (project_id, workflow, version, status, input, idempotency_key, wake_at, depth, parent_run_id, parent_step_id, trigger, created_at, updated_at)
      values (${project.id}, ${workflow}, ${version}, 'pending', ${jsonText(input)}::text::jsonb, ${key}, ${now},
        ${opts.parent ? opts.parent.depth + 1 : 0}, ${opts.parent?.runId ?? null}, ${opts.parent?.stepId ?? null}, ${opts.trigger ?? 'api'}, ${now}, ${now})
      on conflict (project_id, workflow, idempotency_key) where idempotency_key is not null do nothing
      returning id, project_id, workflow`;
    if (!run) {
      // A concurrent start with the same key won the insert.
      const [existing] = await tx`select id, status from platform.workflow_runs
        where project_id = ${project.id} and workflow = ${workflow} and idempotency_key = ${key}`;
      return { id: existing!.id as string, status: existing!.status as string, created: false };
    }
    // Every main step gets its row up front, so a run shows its whole plan.
    const rows = (steps ?? []).map((s, i) => ({
      run_id: run.id as string,
      position: i,
      key: s.key,
      kind: s.kind,
      status: 'pending',
      max_attempts: s.max_attempts,
      created_at: now,
      updated_at: now,
    }));
    if (rows.length) await tx`insert into platform.workflow_run_steps ${tx(rows)}`;
    await recordEvent(tx, run as never, 'run.started', now);
    return { id: run.id as string, status: 'pending', created: true };
  };
  if (opts.tx) return work(opts.tx);
  return (await p.dbs.control.begin(work)) as Started;
}

function checkRunId(id: string): void {
  if (!UUID.test(id)) throw fail('not_found', `There is no run "${id}" of this workflow.`);
}

function runJson(r: postgres.Row) {
  return {
    id: r.id,
    workflow: r.workflow,
    version: r.version,
    status: r.status,
    cursor: r.cursor,
    input: r.input,
    output: r.output ?? null,
    compensation: { state: r.compensation_state },
    last_error: r.last_error ?? null,
    parent_run_id: r.parent_run_id ?? null,
    created_at: r.created_at,
    updated_at: r.updated_at,
    finished_at: r.finished_at ?? null,
  };
}

export async function listRuns(p: Platform, projectId: string, workflow: string) {
  if (!(await workflowExists(p, projectId, workflow)))
    throw fail('not_found', `There is no workflow "${workflow}" in this project.`);
  const rows = await p.dbs.control`select * from platform.workflow_runs
    where project_id = ${projectId} and workflow = ${workflow} order by created_at desc, id desc limit ${RUN_LIST_MAX}`;
  return rows.map(runJson);
}

export async function getRun(p: Platform, projectId: string, workflow: string, id: string) {
  checkRunId(id);
  const [run] = await p.dbs.control`select * from platform.workflow_runs
    where id = ${id} and project_id = ${projectId} and workflow = ${workflow}`;
  if (!run) throw fail('not_found', `There is no run "${id}" of workflow "${workflow}" in this project.`);
  const steps = await p.dbs.control`select * from platform.workflow_run_steps where run_id = ${id}
    order by position, compensating, parent_step_id nulls first, created_at, key`;
  return {
    ...runJson(run),
    steps: steps.map((s) => ({
      id: s.id,
      key: s.key,
      kind: s.kind,
      status: s.status,
      attempt: s.attempt,
      max_attempts: s.max_attempts,
      output: s.output ?? null,
      error: s.error ?? null,
      compensating: s.compensating,
      ...(s.parent_step_id ? { parent_step_id: s.parent_step_id } : {}),
      ...(s.child_run_id ? { child_run_id: s.child_run_id } : {}),
      updated_at: s.updated_at,
    })),
  };
}

/** Locks the run of this project and workflow, or 404s. */
async function lockRun(tx: postgres.TransactionSql, projectId: string, workflow: string, id: string) {
  checkRunId(id);
  const [run] = await tx`select id, project_id, workflow, status from platform.workflow_runs
    where id = ${id} and project_id = ${projectId} and workflow = ${workflow} for update`;
  if (!run) throw fail('not_found', `There is no run "${id}" of workflow "${workflow}" in this project.`);
  return run;
}

/**
 * Cancels a pending, running or waiting run and, with it, the sub-workflow
 * runs it is waiting on. Steps not finished are marked skipped. A worker in the
 * middle of a step finds the run cancelled when it writes back and drops its
 * result.
 */
export async function cancelRun(p: Platform, projectId: string, workflow: string, id: string) {
  return p.dbs.control.begin(async (tx) => {
    const run = await lockRun(tx, projectId, workflow, id);
    if (!ACTIVE.includes(run.status as string))
      throw fail(
        'run_finished',
        `The run is already ${run.status}; only pending, running or waiting runs can be cancelled.`,
      );
    await cancelTree(p, tx, [id]);
    return { id, status: 'cancelled' };
  });
}

export async function cancelTree(p: Platform, tx: postgres.TransactionSql, ids: string[]): Promise<void> {
  const now = p.clock.now();
  const runs = await tx`with recursive tree as (
      select id from platform.workflow_runs where id = any(${ids}::uuid[])
      union select r.id from platform.workflow_runs r join tree on r.parent_run_id = tree.id
    )
    update platform.workflow_runs r set status = 'cancelled', finished_at = ${now}, updated_at = ${now},
      lease_owner = null, lease_until = null, wake_at = null
    from tree where r.id = tree.id and r.status in ('pending', 'running', 'waiting')
    returning r.id, r.project_id, r.workflow, r.parent_run_id`;
  if (!runs.length) return;
  const cancelled = runs.map((r) => r.id as string);
  // Nothing of a cancelled run runs again: waits and steps between attempts end skipped too. A worker
  // mid-attempt loses its lease with the cancel, so its late result is dropped and cannot undo this.
  await tx`update platform.workflow_run_steps set status = 'skipped', next_attempt_at = null, updated_at = ${now}
    where run_id = any(${cancelled}::uuid[]) and status in ('pending', 'running') and not compensating`;
  for (const r of runs) await recordEvent(tx, r as never, 'run.cancelled', now);
  // A parent outside the cancelled tree that waits on one of these wakes up and fails its step.
  await tx`update platform.workflow_runs set wake_at = ${now}
    where id in (select parent_run_id from platform.workflow_runs where id = any(${cancelled}::uuid[]))
      and status in ('pending', 'running', 'waiting')`;
}

export async function sendSignal(p: Platform, projectId: string, workflow: string, id: string, body: unknown) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw fail('invalid_request', 'The body must be a JSON object {signal, payload?, idempotency_key?}.');
  }
  const b = body as Record<string, unknown>;
  if (typeof b.signal !== 'string' || !SIGNAL_NAME.test(b.signal)) {
    throw fail('invalid_signal');
  }
  const payload = checkRequestJson(b.payload ?? null, 'payload');
  if (Buffer.byteLength(JSON.stringify(payload)) > SIGNAL_PAYLOAD_MAX) {
    throw fail('invalid_request', 'The signal payload is over 32 KiB.');
  }
  const key = checkIdempotencyKey(b.idempotency_key);
  return p.dbs.control.begin(async (tx) => {
    const run = await lockRun(tx, projectId, workflow, id);
    if (key !== null) {
      const [seen] =
        await tx`select id, run_id, signal, created_at from platform.workflow_signals where run_id = ${id} and idempotency_key = ${key}`;
      if (seen) return { created: false, signal: { ...seen } };
    }
    if (!ACTIVE.includes(run.status as string))
      throw fail('run_finished', `The run is already ${run.status}; signals go to pending, running or waiting runs.`);
    const now = p.clock.now();
    const [signal] =
      await tx`insert into platform.workflow_signals (project_id, run_id, signal, payload, idempotency_key, created_at)
      values (${projectId}, ${id}, ${b.signal as string}, ${jsonText(payload)}::text::jsonb, ${key}, ${now})
      returning id, run_id, signal, created_at`;
    // A waiting run is looked at on the next tick instead of at its deadline.
    await tx`update platform.workflow_runs set wake_at = ${now} where id = ${id} and status = 'waiting'`;
    return { created: true, signal: { ...signal! } };
  });
}
