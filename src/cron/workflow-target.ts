/**
 * Where cron meets the workflows module (SPEC 4.5): a `workflow` job starts a
 * new run of the named workflow with the job's payload as input and with no
 * idempotency key, so every fire is a distinct run.
 */
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import type { ProjectRow } from '../platform/projects.ts';
import { workflowExists } from '../workflows/definitions.ts';
import { startRun } from '../workflows/runs.ts';

/**
 * Called when a `workflow` job is created, after the name's format has been
 * checked: the workflow must have been published in this project (any
 * version, enabled or not: a disabled workflow may be enabled again, and
 * until then its fires are recorded as failed).
 */
export async function checkWorkflowTarget(p: Platform, project: ProjectRow, workflow: string): Promise<void> {
  if (!(await workflowExists(p, project.id, workflow))) {
    throw fail(
      'workflow_not_found',
      `The project has no workflow "${workflow}". Publish it first (PUT /v1/projects/{ref}/workflows/${workflow}), then create the job.`,
    );
  }
}

/**
 * Called on each fire of a `workflow` job; returns what the run history shows
 * as the result. A fire that cannot start a run (workflows turned off, no
 * enabled version) throws, and the fire is recorded failed with the reason.
 */
export async function startWorkflowRunForCron(
  p: Platform,
  project: ProjectRuntime,
  workflow: string,
  input: unknown,
): Promise<{ run_id: string }> {
  const run = await startRun(p, { id: project.id }, workflow, input, { idempotencyKey: null, trigger: 'cron' });
  return { run_id: run.id };
}
