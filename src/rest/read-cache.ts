/**
 * Planned reads, kept per schema cache: a GET or HEAD is parsed and planned
 * once per distinct URL and shaping headers (Accept, Prefer, Range,
 * Accept-Profile), then only executed. The plan does not depend on the caller
 * (RLS applies when it runs), and a schema reload makes a new SchemaCache, so
 * stale plans go with the old one. Only plans that succeeded are kept.
 */
import { newCache, type Cache } from '../cache.ts';
import type { MediaType, PlanRequest, Preferences } from './headers.ts';
import type { Plan } from './plan.ts';
import type { SchemaCache } from './schema-cache.ts';

export interface ReadPlan {
  media: MediaType;
  prefs: Preferences;
  /** The root offset after Range and defaults (for Content-Range). */
  offset: number;
  plan: Plan;
  /** Accept: application/vnd.pgrst.plan: answer the plan's EXPLAIN instead. */
  explain: PlanRequest | null;
}

interface ReadRequest {
  method: string;
  path: string;
  query: string | URLSearchParams;
  headers: Record<string, string | undefined>;
}

/** Bounded: a client sending ever-new URLs costs a re-plan of the least used ones, never unbounded memory. */
const MAX_ENTRIES = 2000;
const byCache = new WeakMap<SchemaCache, Cache<string, ReadPlan>>();

function key(req: ReadRequest): string {
  const h = req.headers;
  const query = typeof req.query === 'string' ? req.query : req.query.toString();
  return `${req.method}\n${req.path}\n${query}\n${h.accept ?? ''}\n${h.prefer ?? ''}\n${h.range ?? ''}\n${h['accept-profile'] ?? ''}`;
}

export function cachedRead(cache: SchemaCache, req: ReadRequest): ReadPlan | null {
  return byCache.get(cache)?.get(key(req)) ?? null;
}

export function rememberRead(cache: SchemaCache, req: ReadRequest, plan: ReadPlan): void {
  let plans = byCache.get(cache);
  if (!plans) byCache.set(cache, (plans = newCache({ max: MAX_ENTRIES })));
  plans.set(key(req), plan);
}
