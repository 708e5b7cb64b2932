/**
 * Per-project settings stored in the control database, one JSON object per
 * area. A PATCH is validated whole before anything is written (unknown field,
 * wrong type, out of range: 400 naming the field), applied in one transaction
 * together with its audit row, and announced to every Hearth process.
 */
import { fail } from '../errors.ts';
import type postgres from 'postgres';
import type { Sql } from '../db/pools.ts';
import type { AreaSpec, CheckContext, Settings } from './settings-schema.ts';
import { announce } from './changes.ts';
import { unstorableText } from './text.ts';

/** config/limits: the daily request quota that src/platform/request-usage.ts enforces. */
const limitSettings: AreaSpec = {
  daily_request_quota: { type: 'integer', default: null, min: 1, max: 1e12 },
};

/**
 * The config areas by name. The platform owns only `limits`; each area hands
 * its own schema over when the process is assembled (src/server/config-areas.ts),
 * so the platform never imports an area.
 */
const configAreas = new Map<string, AreaSpec>([['limits', limitSettings]]);

/** Adds an area's settings schema; registering the same schema again (another Hearth in the process) is a no-op. */
export function registerConfigArea(area: string, fields: AreaSpec): void {
  const known = configAreas.get(area);
  if (known && known !== fields) throw new Error(`config area "${area}" is already registered with another schema`);
  configAreas.set(area, fields);
}

function spec(area: string): AreaSpec {
  // A Map, not an object: "constructor" or "__proto__" in the URL finds nothing.
  const s = configAreas.get(area);
  if (!s)
    throw fail(
      'not_found',
      `There is no config area "${area}"; areas are ${[...configAreas.keys()].sort().join(', ')}.`,
    );
  return s;
}

function withDefaults(area: string, stored: Settings): Settings {
  const out: Settings = {};
  for (const [name, field] of Object.entries(spec(area))) out[name] = name in stored ? stored[name] : field.default;
  return out;
}

/** Settings as the platform uses them (secrets included); inside an area's transaction too. */
export async function readSettings(
  control: Sql | postgres.TransactionSql,
  projectId: string,
  area: string,
): Promise<Settings> {
  spec(area); // an unknown area is a 404 before any query (a NUL in it could not even be sent)
  const [row] =
    await control`select settings from platform.project_config where project_id = ${projectId} and area = ${area}`;
  return withDefaults(area, (row?.settings ?? {}) as Settings);
}

/**
 * The projects whose boolean setting `area.field` is on (stored, or by its
 * default), oldest first: what a background worker that serves only those
 * projects iterates over (e.g. workflows.enabled).
 */
export async function projectsWithSettingOn(
  control: Sql,
  area: string,
  field: string,
): Promise<{ id: string; ref: string }[]> {
  const setting = spec(area)[field];
  if (setting?.type !== 'boolean') throw new Error(`config/${area}.${field} is not a boolean setting`);
  return (await control`select pr.id, pr.ref from platform.projects pr
    left join platform.project_config c on c.project_id = pr.id and c.area = ${area}
    where coalesce((c.settings->>${field})::boolean, ${setting.default}) order by pr.created_at`) as unknown as {
    id: string;
    ref: string;
  }[];
}

/** Settings as the management API shows them: secret values are never returned. */
export function redact(area: string, settings: Settings): Settings {
  const out: Settings = { ...settings };
  for (const [name, field] of Object.entries(spec(area))) {
    if (field.type === 'string' && field.secret) out[name] = settings[name] ? '********' : null;
  }
  return out;
}

export function validatePatch(area: string, patch: unknown, ctx: CheckContext): Settings {
  const fields = spec(area);
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw fail('invalid_request', 'The body must be a JSON object of settings to change.');
  }
  const out: Settings = {};
  for (const [name, value] of Object.entries(patch)) {
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!field) {
      throw fail(
        'unknown_field',
        `config/${area} has no field "${name}". Known fields: ${Object.keys(fields).join(', ')}.`,
      );
    }
    const bad = (why: string) => fail('invalid_field', `config/${area}.${name} ${why}.`);
    if (value === null) {
      out[name] = null; // back to the default
      continue;
    }
    switch (field.type) {
      case 'boolean':
        if (typeof value !== 'boolean') throw bad('must be true or false');
        break;
      case 'integer':
        if (!Number.isInteger(value)) throw bad('must be an integer');
        if ((value as number) < field.min || (value as number) > field.max)
          throw bad(`must be between ${field.min} and ${field.max}`);
        break;
      case 'string': {
        if (typeof value !== 'string') throw bad('must be a string');
        const unstorable = unstorableText(value);
        if (unstorable) throw bad(unstorable);
        if (field.maxLength !== undefined && value.length > field.maxLength)
          throw bad(`must be at most ${field.maxLength} characters`);
        const why = field.check?.(value, ctx);
        if (why) throw bad(why);
        break;
      }
    }
    out[name] = value as string | number | boolean;
  }
  return out;
}

export async function patchSettings(
  control: Sql,
  projectId: string,
  area: string,
  patch: unknown,
  accountId: string | null,
  ctx: CheckContext,
): Promise<Settings> {
  const changes = validatePatch(area, patch, ctx);
  const fields = spec(area);
  await control.begin(async (tx) => {
    const [row] = await tx`select settings from platform.project_config
      where project_id = ${projectId} and area = ${area} for update`;
    const stored: Settings = { ...((row?.settings ?? {}) as Settings) };
    const audit: Record<string, { from: unknown; to: unknown }> = {};
    for (const [name, value] of Object.entries(changes)) {
      const before = name in stored ? stored[name] : fields[name]!.default;
      if (value === null) delete stored[name];
      else stored[name] = value;
      const after = value === null ? fields[name]!.default : value;
      if (before === after) continue;
      const secret = fields[name]!.type === 'string' && (fields[name] as { secret?: boolean }).secret;
      audit[name] = secret
        ? { from: before ? '********' : null, to: after ? '********' : null }
        : { from: before, to: after };
    }
    await tx`insert into platform.project_config (project_id, area, settings, updated_at)
      values (${projectId}, ${area}, ${tx.json(stored)}, now())
      on conflict (project_id, area) do update set settings = excluded.settings, updated_at = now()`;
    if (Object.keys(audit).length) {
      await tx`insert into platform.config_audit (project_id, area, account_id, changes)
        values (${projectId}, ${area}, ${accountId}, ${tx.json(audit as never)})`;
    }
    await announce(tx, { kind: 'config', projectId, area });
  });
  return readSettings(control, projectId, area);
}

/** The schemas of a project's database (its pool), for checking config/api db_schema. */
export async function projectSchemas(project: Sql): Promise<ReadonlySet<string>> {
  return new Set((await project`select nspname from pg_namespace`).map((r) => r.nspname as string));
}

export async function configAudit(control: Sql, projectId: string, limit = 100) {
  return control`select a.id::text as id, a.area, a.changes, a.created_at, acc.email as changed_by
    from platform.config_audit a left join platform.accounts acc on acc.id = a.account_id
    where a.project_id = ${projectId} order by a.id desc limit ${limit}`;
}
