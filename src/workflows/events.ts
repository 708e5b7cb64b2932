/**
 * SPEC 6.1 workflow events. An event is written to the outbox in the same
 * transaction as the transition it reports, and only while the project has a
 * log drain (the insert selects nothing otherwise), so a crash can neither
 * lose an event nor report a transition that did not commit. ship.ts sends
 * them. Events never carry payloads.
 */
import type postgres from 'postgres';

export type WorkflowEvent =
  | 'run.started'
  | 'run.succeeded'
  | 'run.failed'
  | 'run.cancelled'
  | 'step.failed'
  | 'step.dead_lettered';

export interface EventRun {
  id: string;
  project_id: string;
  workflow: string;
}

export function recordEvent(
  tx: postgres.TransactionSql | postgres.Sql,
  run: EventRun,
  event: WorkflowEvent,
  at: Date,
  step: { key: string; attempt: number } | null = null,
) {
  return tx`insert into platform.workflow_events (project_id, event, run_id, workflow, step, attempt, at)
    select ${run.project_id}, ${event}, ${run.id}, ${run.workflow}, ${step?.key ?? null}, ${step?.attempt ?? null}, ${at}
    where exists (select 1 from platform.workflow_log_drains where project_id = ${run.project_id})`;
}
