/**
 * Workflow definitions: each PUT publishes version max+1 (immutable), PATCH
 * flips `enabled` on every version, there is no delete (SPEC 2.8, 4.6, 9).
 * Step secrets are sealed with the master key before they are stored and are
 * shown back only as `secret_set: true`.
 */
import { newCache } from '../cache.ts';
import type postgres from 'postgres';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import type { MasterKey } from '../secrets.ts';
import { parseAllowList } from '../outbound/address.ts';
import { FIELDS, validateDefinition, WORKFLOW_NAME, type Action, type Step } from './validate.ts';

export function checkWorkflowName(name: unknown, code: 'invalid_name' | 'invalid_workflow' = 'invalid_name'): string {
  if (typeof name !== 'string' || !WORKFLOW_NAME.test(name)) {
    throw fail(code, `Workflow names match ^[a-z0-9][a-z0-9_-]{0,63}$ (got ${JSON.stringify(name)}).`);
  }
  return name;
}

/** Sealed secrets of a stored version's webhooks, by step key (`compensate:<key>` for compensations). */
function sealedSecrets(steps: Step[], into = new Map<string, string>()): Map<string, string> {
  for (const s of steps) {
    if (s.secret_sealed) into.set(s.key, s.secret_sealed);
    if (s.compensate?.secret_sealed) into.set(`compensate:${s.key}`, s.compensate.secret_sealed);
    if (s.children) sealedSecrets(s.children, into);
  }
  return into;
}

/**
 * The stored form of a validated step: a new secret is sealed; a webhook that
 * names no secret keeps the one its key had in the previous version ("re-send
 * it on PUT to change it", SPEC 2.9), unless it asked to be unsigned.
 */
function seal<T extends Step | Action>(master: MasterKey, s: T, key: string, previous: Map<string, string>): T {
  const out = { ...s } as T & { children?: Step[]; compensate?: Action };
  if (out.secret) out.secret_sealed = master.encrypt(out.secret);
  else if (out.kind === 'webhook' && !out.unsigned && previous.has(key)) out.secret_sealed = previous.get(key)!;
  delete out.secret;
  delete out.unsigned;
  if ('children' in out && out.children) out.children = out.children.map((c) => seal(master, c, c.key, previous));
  if ('compensate' in out && out.compensate)
    out.compensate = seal(master, out.compensate, `compensate:${key}`, previous);
  return out;
}

/**
 * The stored form as users see it: the fields the step's kind takes, with
 * defaults filled in and secrets replaced by secret_set, so a definition read
 * back can be PUT again as it is.
 */
function redactStep(s: Step | Action): Record<string, unknown> {
  const allowed = 'key' in s ? FIELDS[s.kind] : ['kind', 'target', 'payload'];
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(s)) if (allowed.includes(field) && field !== 'secret') out[field] = value;
  if (s.kind === 'webhook') out.secret_set = Boolean(s.secret_sealed);
  if ('children' in s && s.children) out.children = s.children.map(redactStep);
  if ('compensate' in s && s.compensate) out.compensate = redactStep(s.compensate);
  return out;
}

export async function publishDefinition(p: Platform, projectId: string, name: string, body: unknown) {
  checkWorkflowName(name);
  const def = validateDefinition(body, parseAllowList(p.config.outboundAllow));
  return p.dbs.control.begin(async (tx) => {
    // Serialise concurrent PUTs of one name so versions stay max+1 without gaps or clashes.
    await tx`select pg_advisory_xact_lock(hashtext(${`wf-def:${projectId}:${name}`}))`;
    const [newest] = await tx`select steps from platform.workflow_definitions
      where project_id = ${projectId} and name = ${name} order by version desc limit 1`;
    const previous = sealedSecrets(Array.isArray(newest?.steps) ? (newest!.steps as Step[]) : []);
    const steps = def.steps.map((s) => seal(p.master, s, s.key, previous));
    const [row] = await tx`insert into platform.workflow_definitions (project_id, name, version, enabled, steps)
      select ${projectId}, ${name}, coalesce(max(version), 0) + 1, ${def.enabled}, ${tx.json(steps as never)}
      from platform.workflow_definitions where project_id = ${projectId} and name = ${name}
      returning name, version, enabled`;
    return { name: row!.name as string, version: row!.version as number, enabled: row!.enabled as boolean };
  });
}

export async function listDefinitions(p: Platform, projectId: string) {
  const rows = await p.dbs
    .control`select distinct on (name) name, version, enabled, jsonb_array_length(steps) as step_count, created_at
    from platform.workflow_definitions where project_id = ${projectId} order by name, version desc`;
  return rows.map((r) => ({
    name: r.name,
    version: r.version,
    enabled: r.enabled,
    step_count: r.step_count,
    updated_at: r.created_at,
  }));
}

export async function getDefinition(p: Platform, projectId: string, name: string) {
  const [row] = await p.dbs.control`select name, version, enabled, steps, created_at from platform.workflow_definitions
    where project_id = ${projectId} and name = ${name} order by version desc limit 1`;
  if (!row) throw fail('not_found', `There is no workflow "${name}" in this project.`);
  return {
    name: row.name,
    version: row.version,
    enabled: row.enabled,
    steps: (row.steps as Step[]).map(redactStep),
    created_at: row.created_at,
  };
}

export async function setEnabled(p: Platform, projectId: string, name: string, body: unknown): Promise<void> {
  const enabled = (body as { enabled?: unknown } | null)?.enabled;
  if (typeof body !== 'object' || body === null || typeof enabled !== 'boolean') {
    throw fail('invalid_request', 'PATCH takes {"enabled": true|false}; enabled is required.');
  }
  const rows = await p.dbs.control`update platform.workflow_definitions set enabled = ${enabled}
    where project_id = ${projectId} and name = ${name} returning version`;
  if (!rows.length) throw fail('not_found', `There is no workflow "${name}" in this project.`);
}

/** Whether any version of the workflow was ever published in the project. */
export async function workflowExists(p: Platform, projectId: string, name: string): Promise<boolean> {
  const [row] = await p.dbs
    .control`select 1 from platform.workflow_definitions where project_id = ${projectId} and name = ${name} limit 1`;
  return Boolean(row);
}

/** Definitions are immutable, so a loaded version needs no lifetime: only the least used leave. */
const loaded = newCache<string, Step[]>({ max: 5000 });

export async function loadVersion(
  p: Platform,
  projectId: string,
  name: string,
  version: number,
  sql: postgres.Sql | postgres.TransactionSql = p.dbs.control,
): Promise<Step[] | null> {
  const key = `${projectId}/${name}/${version}`;
  const hit = loaded.get(key);
  if (hit) return hit;
  const [row] = await sql`select steps from platform.workflow_definitions
    where project_id = ${projectId} and name = ${name} and version = ${version}`;
  // A stored definition that is not a step list cannot be run: the engine fails the run (structural failure).
  if (!row || !Array.isArray(row.steps)) return null;
  const steps = row.steps as Step[];
  loaded.set(key, steps);
  return steps;
}

/** The plain secret of a stored step or action (null when unsigned). */
export function stepSecret(p: Platform, s: Step | Action): string | null {
  return s.secret_sealed ? p.master.decrypt(s.secret_sealed) : null;
}
