import type { AreaSpec } from '../platform/settings-schema.ts';

const SCHEMA_LIST = /^\s*[a-z_][a-z0-9_]*(\s*,\s*[a-z_][a-z0-9_]*)*\s*$/;

/** config/api: what the REST data API exposes (Supabase's PostgREST settings). */
export const apiSettings: AreaSpec = {
  db_schema: {
    type: 'string',
    default: 'public',
    maxLength: 1024,
    check: (v) => (SCHEMA_LIST.test(v) ? null : 'must be a comma-separated list of schema names, e.g. "public,api"'),
  },
  // PostgREST's db-plan-enabled: EXPLAIN output for `Accept: application/vnd.pgrst.plan`.
  // Off by default, as on Supabase: a plan shows the shape of tables and policies.
  db_plan_enabled: { type: 'boolean', default: false },
};
