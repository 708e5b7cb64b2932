/**
 * Where cron meets the workflows module (SPEC 4.5: a `workflow` job starts a
 * new run of the named workflow with the job's payload as input, with no
 * idempotency key, so every fire is a distinct run).
 *
 * Until the workflows module exists, both functions refuse: creating a
 * `workflow` job answers 400 workflows_unavailable, and no such job can exist
 * to be fired. The workflows engineer replaces the two bodies: the first with
 * whatever a job creation must check, the second with a call that starts a run.
 */
import type { Platform } from '../context.ts';
import { HearthError } from '../errors.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import type { ProjectRow } from '../platform/projects.ts';

const unavailable = () =>
  new HearthError(
    400,
    'workflows_unavailable',
    'Durable workflows are not available on this server yet, so a cron job cannot target one. Use target_kind enqueue or webhook.',
  );

/** Called when a `workflow` job is created, after the name's format has been checked. */
export async function checkWorkflowTarget(_p: Platform, _project: ProjectRow, _workflow: string): Promise<void> {
  throw unavailable();
}

/** Called on each fire of a `workflow` job; returns what the run history shows as the result. */
export async function startWorkflowRunForCron(
  _p: Platform,
  _project: ProjectRuntime,
  _workflow: string,
  _input: unknown,
): Promise<{ run_id: string }> {
  throw unavailable();
}
