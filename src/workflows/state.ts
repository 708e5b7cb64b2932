/**
 * The in-memory picture of one run during one engine pass: the run row, its
 * step rows, and what the pass changed. advance.ts mutates it; engine.ts
 * writes it back in one fenced transaction.
 */
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import type { WorkflowEvent } from './events.ts';
import { truncate } from './steps/index.ts';

export interface RunRow {
  id: string;
  project_id: string;
  workflow: string;
  version: number;
  status: string;
  cursor: number;
  output: unknown;
  compensation_state: string;
  last_error: string | null;
  depth: number;
  parent_run_id: string | null;
  wake_at: Date | null;
  finished_at: Date | null;
}

export interface StepRow {
  id: string;
  run_id: string;
  position: number;
  key: string;
  kind: string;
  status: string;
  attempt: number;
  max_attempts: number;
  output: unknown;
  error: string | null;
  compensating: boolean;
  parent_step_id: string | null;
  child_run_id: string | null;
  started_at: Date | null;
  next_attempt_at: Date | null;
}

export type Op = (tx: postgres.TransactionSql) => Promise<unknown>;

export class RunState {
  readonly dirty = new Set<StepRow>();
  readonly created = new Set<StepRow>();
  readonly events: { event: WorkflowEvent; step: { key: string; attempt: number } | null }[] = [];
  readonly ops: Op[] = [];

  constructor(
    readonly run: RunRow,
    readonly rows: StepRow[],
    readonly now: Date,
  ) {}

  main(key: string): StepRow | undefined {
    return this.rows.find((r) => r.key === key && !r.parent_step_id && !r.compensating);
  }

  children(parentId: string): StepRow[] {
    return this.rows.filter((r) => r.parent_step_id === parentId);
  }

  add(
    row: Omit<
      StepRow,
      'id' | 'run_id' | 'attempt' | 'output' | 'error' | 'child_run_id' | 'started_at' | 'next_attempt_at'
    >,
  ): StepRow {
    const full: StepRow = {
      ...row,
      id: randomUUID(),
      run_id: this.run.id,
      attempt: 0,
      output: null,
      error: null,
      child_run_id: null,
      started_at: null,
      next_attempt_at: null,
    };
    this.rows.push(full);
    this.created.add(full);
    return full;
  }

  touch(row: StepRow, patch: Partial<StepRow>): void {
    Object.assign(row, patch);
    if (patch.error) row.error = truncate(patch.error);
    if (!this.created.has(row)) this.dirty.add(row);
  }

  emit(event: WorkflowEvent, step: StepRow | null = null): void {
    this.events.push({ event, step: step ? { key: step.key, attempt: step.attempt } : null });
  }

  /** When the run should next be looked at; the pass starts with none and the earliest request wins. */
  wake: Date | null = null;

  wakeBy(at: Date): void {
    if (!this.wake || at < this.wake) this.wake = at;
  }
}
