/**
 * GET /rest/v1/ : a Swagger 2.0 description of one exposed schema, shaped like
 * PostgREST's (paths per table, view and function; a definition per relation).
 * Like PostgREST's default "follow-privileges" mode it lists only what the
 * caller's role may use; the caller's privileges are read under that role.
 */
import type postgres from 'postgres';
import type { Column, Relation, RestFunction, SchemaCache } from './schema-cache.ts';

/** Relations and functions of `schema` the current role has any privilege on. */
export const ACCESSIBLE_SQL = `
select 'r' as kind, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = $1 and c.relkind in ('r', 'v', 'm', 'f', 'p')
  and has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
union all
select 'f', p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
where n.nspname = $1 and has_function_privilege(p.oid, 'EXECUTE')`;

export interface Accessible {
  relations: Set<string>;
  functions: Set<string>;
}

export function accessibleFrom(rows: postgres.Row[]): Accessible {
  const out: Accessible = { relations: new Set(), functions: new Set() };
  for (const r of rows) (r.kind === 'r' ? out.relations : out.functions).add(r.name);
  return out;
}

type JsonSchema = Record<string, unknown>;

function typeSchema(pgType: string): JsonSchema {
  if (pgType.endsWith('[]')) return { type: 'array', items: typeSchema(pgType.slice(0, -2)) };
  if (/^(smallint|integer|bigint)$/.test(pgType)) return { type: 'integer', format: pgType };
  if (/^(numeric|real|double precision)/.test(pgType)) return { type: 'number', format: pgType };
  if (pgType === 'boolean') return { type: 'boolean', format: pgType };
  if (pgType === 'json' || pgType === 'jsonb') return { format: pgType };
  return { type: 'string', format: pgType };
}

function columnSchema(rel: Relation, col: Column): JsonSchema {
  const schema = typeSchema(col.type);
  if (col.default !== null) schema.default = col.default;
  if (rel.primaryKey.includes(col.name)) schema.description = 'Note:\nThis is a Primary Key.<pk/>';
  return schema;
}

function definition(rel: Relation): JsonSchema {
  return {
    type: 'object',
    ...(rel.comment ? { description: rel.comment } : {}),
    required: rel.columns.filter((c) => !c.nullable && c.default === null).map((c) => c.name),
    properties: Object.fromEntries(rel.columns.map((c) => [c.name, columnSchema(rel, c)])),
  };
}

const ref = (name: string) => ({ $ref: `#/definitions/${name}` });
const rowsResponse = (name: string) => ({
  200: { description: 'OK', schema: { type: 'array', items: ref(name) } },
  206: { description: 'Partial Content' },
});
const QUERY_PARAMETERS = ['select', 'order', 'limit', 'offset'].map((name) => ({
  name,
  in: 'query',
  required: false,
  type: 'string',
}));

function relationPaths(rel: Relation): JsonSchema {
  const tags = [rel.name];
  const filters = rel.columns.map((c) => ({
    name: c.name,
    in: 'query',
    required: false,
    type: 'string',
    format: c.type,
  }));
  const body = { name: rel.name, in: 'body', required: false, schema: ref(rel.name) };
  const paths: JsonSchema = {
    get: {
      tags,
      summary: rel.comment ?? undefined,
      parameters: [...QUERY_PARAMETERS, ...filters],
      responses: rowsResponse(rel.name),
    },
  };
  if (rel.kind !== 'materialized view') {
    paths.post = {
      tags,
      parameters: [body, { name: 'select', in: 'query', required: false, type: 'string' }],
      responses: { 201: { description: 'Created' } },
    };
    paths.patch = { tags, parameters: [body, ...filters], responses: { 204: { description: 'No Content' } } };
    paths.delete = { tags, parameters: filters, responses: { 204: { description: 'No Content' } } };
  }
  return paths;
}

function functionPaths(fns: RestFunction[]): JsonSchema {
  const fn = fns[0];
  const tags = [`(rpc) ${fn.name}`];
  const args = fns.flatMap((f) => f.args.filter((a) => a.name));
  const body = {
    name: 'args',
    in: 'body',
    required: true,
    schema: {
      type: 'object',
      required: [...new Set(fns[0].args.filter((a) => !a.hasDefault && a.name).map((a) => a.name))],
      properties: Object.fromEntries(args.map((a) => [a.name, typeSchema(a.type)])),
    },
  };
  const paths: JsonSchema = {
    post: { tags, summary: fn.comment ?? undefined, parameters: [body], responses: { 200: { description: 'OK' } } },
  };
  if (fns.every((f) => f.volatility !== 'volatile')) {
    paths.get = {
      tags,
      parameters: args.map((a) => ({
        name: a.name,
        in: 'query',
        required: !a.hasDefault,
        type: 'string',
        format: a.type,
      })),
      responses: { 200: { description: 'OK' } },
    };
  }
  return paths;
}

export function buildOpenApi(cache: SchemaCache, schema: string, accessible: Accessible): JsonSchema {
  const paths: JsonSchema = {
    '/': {
      get: {
        tags: ['Introspection'],
        summary: 'OpenAPI description (this document)',
        produces: ['application/openapi+json', 'application/json'],
        responses: { 200: { description: 'OK' } },
      },
    },
  };
  const definitions: JsonSchema = {};
  for (const rel of cache.relations.values()) {
    if (rel.schema !== schema || !accessible.relations.has(rel.name)) continue;
    paths[`/${rel.name}`] = relationPaths(rel);
    definitions[rel.name] = definition(rel);
  }
  for (const overloads of cache.functions.values()) {
    // Only what /rpc can call (schema-cache.ts: RestFunction.callable), as PostgREST lists it.
    const fns = overloads.filter((f) => f.callable);
    if (!fns.length || fns[0].schema !== schema || !accessible.functions.has(fns[0].name)) continue;
    paths[`/rpc/${fns[0].name}`] = functionPaths(fns);
  }
  return {
    swagger: '2.0',
    info: {
      title: 'Hearth REST API',
      description: `Tables, views and functions of the schema "${schema}".`,
      version: '1',
    },
    basePath: '/rest/v1',
    schemes: ['http', 'https'],
    consumes: ['application/json', 'application/vnd.pgrst.object+json', 'text/csv'],
    produces: ['application/json', 'application/vnd.pgrst.object+json', 'text/csv'],
    paths,
    definitions,
  };
}
