/**
 * Per-project settings stored in the control database, one JSON object per
 * area. A PATCH is validated whole before anything is written (unknown field,
 * wrong type, out of range: 400 naming the field), applied in one transaction
 * together with its audit row, and announced to every Hearth process.
 */
import { authSettings } from '../auth/settings.ts';
import { fail } from '../errors.ts';
import { apiSettings } from '../rest/settings.ts';
import { realtimeSettings } from '../realtime/settings.ts';
import { storageSettings } from '../storage/settings.ts';
import { workflowSettings } from '../workflows/settings.ts';
import type { Sql } from '../db/pools.ts';
import type { AreaSpec, CheckContext, Settings } from './settings-schema.ts';
import { announce } from './changes.ts';
import { unstorableText } from './text.ts';

/** config/limits: the daily request quota that src/platform/request-usage.ts enforces. */
const limitSettings: AreaSpec = {
  daily_request_quota: { type: 'integer', default: null, min: 1, max: 1e12 },
};

const configAreas: Record<string, AreaSpec> = {
  api: apiSettings,
  auth: authSettings,
  limits: limitSettings,
  realtime: realtimeSettings,
  storage: storageSettings,
  workflows: workflowSettings,
};

export type ConfigArea = keyof typeof configAreas;

function spec(area: string): AreaSpec {
  // Own keys only: "constructor" or "__proto__" in the URL must not find Object.prototype's members.
  const s = Object.hasOwn(configAreas, area) ? configAreas[area] : undefined;
  if (!s) throw fail('not_found', `There is no config area "${area}"; areas are ${Object.keys(configAreas).join(', ')}.`);
  return s;
}

function withDefaults(area: string, stored: Settings): Settings {
  const out: Settings = {};
  for (const [name, field] of Object.entries(spec(area))) out[name] = name in stored ? stored[name] : field.default;
  return out;
}

/** Settings as the platform uses them (secrets included). */
export async function readSettings(control: Sql, projectId: string, area: string): Promise<Settings> {
  spec(area); // an unknown area is a 404 before any query (a NUL in it could not even be sent)
  const [row] = await control`select settings from platform.project_config where project_id = ${projectId} and area = ${area}`;
  return withDefaults(area, (row?.settings ?? {}) as Settings);
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
      throw fail('unknown_field', `config/${area} has no field "${name}". Known fields: ${Object.keys(fields).join(', ')}.`);
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
        if ((value as number) < field.min || (value as number) > field.max) throw bad(`must be between ${field.min} and ${field.max}`);
        break;
      case 'string': {
        if (typeof value !== 'string') throw bad('must be a string');
        const unstorable = unstorableText(value);
        if (unstorable) throw bad(unstorable);
        if (field.maxLength !== undefined && value.length > field.maxLength) throw bad(`must be at most ${field.maxLength} characters`);
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
      audit[name] = secret ? { from: before ? '********' : null, to: after ? '********' : null } : { from: before, to: after };
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

export async function configAudit(control: Sql, projectId: string, limit = 100) {
  return control`select a.id::text as id, a.area, a.changes, a.created_at, acc.email as changed_by
    from platform.config_audit a left join platform.accounts acc on acc.id = a.account_id
    where a.project_id = ${projectId} order by a.id desc limit ${limit}`;
}
