/** What every step action receives and returns (the actions are in the files beside this one). */
import type { Platform } from '../../context.ts';
import type { ProjectRuntime } from '../../platform/registry.ts';

/**
 * `deferred`: the attempt could not start, as this process had no database
 * connection to spare (isBudgetExhausted): it is given back, not spent.
 */
export type Outcome =
  | { ok: true; output: unknown }
  | { ok: false; error: string; retryable: boolean; deferred?: boolean };

/** Calls a project's function (the functions area supplies it; null where functions do not run). */
export type FunctionInvoker = (
  projectRef: string,
  name: string,
  body: unknown,
) => Promise<{ status: number; body: unknown }>;

export interface ActionContext {
  p: Platform;
  project: ProjectRuntime;
  invoker: FunctionInvoker | null;
}
