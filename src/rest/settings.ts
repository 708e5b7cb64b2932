import type { AreaSpec } from '../platform/settings-schema.ts';

const SCHEMA_LIST = /^\s*[a-z_][a-z0-9_]*(\s*,\s*[a-z_][a-z0-9_]*)*\s*$/;

/** config/api: what the REST data API exposes (Supabase's PostgREST settings). */
export const apiSettings: AreaSpec = {
  db_schema: {
    type: 'string',
    default: 'public',
    maxLength: 1024,
    check: (v, ctx) => {
      if (!SCHEMA_LIST.test(v)) return 'must be a comma-separated list of schema names, e.g. "public,api"';
      // A misspelt schema would make its tables quietly unreachable (PGRST106): refuse it at save time.
      const missing = v
        .split(',')
        .map((name) => name.trim())
        .filter((name) => !ctx.projectSchemas?.has(name));
      return ctx.projectSchemas && missing.length
        ? `names ${missing.map((m) => `"${m}"`).join(', ')}, which the project database does not have; create the schema first (create schema ${missing[0]}; grant usage on schema ${missing[0]} to anon, authenticated, service_role)`
        : null;
    },
  },
  // PostgREST's db-plan-enabled: EXPLAIN output for `Accept: application/vnd.pgrst.plan`.
  // Off by default, as on Supabase: a plan shows the shape of tables and policies.
  db_plan_enabled: { type: 'boolean', default: false },
};
