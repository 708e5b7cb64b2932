/**
 * handleRest: one /rest/v1 request in, one response out, no HTTP framework
 * involved (routes.ts adapts Fastify; tests call this directly). It parses the
 * query, plans ONE statement, runs it under the caller's role (withRole pipelines
 * the role settings with it) and turns the row it answers into status, headers
 * and body exactly as PostgREST would (Content-Range, 206, 416, 406 ...).
 * Reads are planned once per schema cache: the plan of a GET is kept by its
 * URL and the headers that shape it (read-cache.ts).
 */
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import { type Caller, type RequestInfo, withRole, withRoleStatement } from '../db/with-role.ts';
import { isObject, renderRestError } from './errors.ts';
import {
  type MediaType,
  appliedHeader,
  chooseSchema,
  negotiate,
  nullsStripped,
  parsePrefer,
  parseRange,
  type PlanRequest,
  planRequest,
  type Preferences,
  wantsTimezone,
} from './headers.ts';
import { ACCESSIBLE_SQL, accessibleFrom, buildOpenApi } from './openapi.ts';
import { type ParsedQuery, parseQuery } from './parse.ts';
import {
  type BodyFormat,
  type CountMode,
  type Plan,
  type RpcArgs,
  planRead,
  planRpc,
  planWrite,
  rootPage,
  rowsOf,
  withSourceText,
} from './plan.ts';
import { type Relation, type RestFunction, type SchemaCache, relationKey } from './schema-cache.ts';
import { parseCsv } from './csv.ts';
import { chooseFunction } from './choose-function.ts';
import { cachedRead, type ReadPlan, rememberRead } from './read-cache.ts';

export interface RestDeps {
  sql: postgres.Sql;
  cache: SchemaCache;
  caller: Caller;
  /** Which project key authenticated the request; only 'secret' sees database detail. */
  keyType?: 'publishable' | 'secret' | null;
  /** config/api db_plan_enabled: `Accept: application/vnd.pgrst.plan` answers the EXPLAIN output. */
  planEnabled?: boolean;
}

export interface RestRequest {
  method: string;
  /** The path after /rest/v1/: "todos", "rpc/fn" or "" (OpenAPI). */
  path: string;
  /** The query string (without "?"), or its parameters. */
  query: string | URLSearchParams;
  /** Lower-case header names. */
  headers: Record<string, string | undefined>;
  /** Parsed JSON, the raw text (JSON, CSV, form, text, XML) as it arrived, or a Buffer (application/octet-stream). */
  body: unknown;
}

export interface RestResponse {
  status: number;
  headers: Record<string, string>;
  /** Text, or (a read's JSON) the bytes PostgreSQL sent, passed on without decoding. */
  body: string | Buffer | null;
}

const CONTENT_TYPE: Record<MediaType, string> = {
  json: 'application/json; charset=utf-8',
  object: 'application/vnd.pgrst.object+json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  openapi: 'application/openapi+json; charset=utf-8',
};

export async function handleRest(deps: RestDeps, req: RestRequest): Promise<RestResponse> {
  try {
    const request = { ...req, method: req.method.toUpperCase() };
    const res = await route(deps, request);
    // As PostgREST: the schema answered from is named when the request chose
    // one or there is more than one to choose from.
    const profile = profileOf(request);
    if (profile || deps.cache.schemas.length > 1)
      res.headers['content-profile'] = chooseSchema(deps.cache.schemas, profile);
    return res;
  } catch (err) {
    const rendered = renderRestError(err, {
      anonymous: deps.caller.role === 'anon',
      detailed: deps.keyType === 'secret' || deps.caller.role === 'service_role',
      // Other than GET and HEAD, only a POST to a STABLE or IMMUTABLE function runs read-only.
      readOnly: isRead(req.method.toUpperCase())
        ? undefined
        : 'the function is declared STABLE or IMMUTABLE, so it runs read-only. Declare it VOLATILE if it writes.',
    });
    if (!rendered) throw err;
    return {
      status: rendered.status,
      headers: {
        ...rendered.headers,
        'content-type': CONTENT_TYPE.json,
        'proxy-status': `Hearth; error=${rendered.body.code}`,
      },
      body: JSON.stringify(rendered.body),
    };
  }
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** As PostgREST: Content-Profile names the schema of a POST, PATCH, PUT or DELETE, Accept-Profile that of any other request. */
const profileOf = (req: RestRequest) =>
  req.headers[WRITES.has(req.method) ? 'content-profile' : 'accept-profile'] || undefined;

/** pg_timezone_names per database pool: the server's zone list, read once, on the first timezone preference. */
const timezoneNames = new WeakMap<postgres.Sql, Promise<ReadonlySet<string>>>();

function timezonesOf(sql: postgres.Sql): Promise<ReadonlySet<string>> {
  let names = timezoneNames.get(sql);
  if (!names) {
    names = sql.unsafe('select name from pg_timezone_names').then((rows) => new Set(rows.map((r) => r.name as string)));
    names.catch(() => timezoneNames.delete(sql)); // retry on the next request
    timezoneNames.set(sql, names);
  }
  return names;
}

/** The Prefer header; a timezone preference is checked against the server's zone names. */
async function preferences(deps: RestDeps, req: RestRequest): Promise<Preferences> {
  const header = req.headers.prefer;
  return wantsTimezone(header) ? parsePrefer(header, await timezonesOf(deps.sql)) : parsePrefer(header);
}

/** The query's parameters; a key without "=" (`?flag`) is no parameter, as PostgREST reads the query string. */
const queryParams = (req: RestRequest) =>
  typeof req.query === 'string'
    ? new URLSearchParams(
        req.query
          .split('&')
          .filter((p) => p.includes('='))
          .join('&'),
      )
    : req.query;

function route(deps: RestDeps, req: RestRequest): Promise<RestResponse> {
  if (!deps.planEnabled && req.headers.accept?.includes('vnd.pgrst.plan') && planRequest(req.headers.accept)) {
    throw fail('PGRST107', undefined, {
      hint: 'An owner can enable them with the config/api setting db_plan_enabled.',
    });
  }
  if (isRead(req.method)) {
    const hit = cachedRead(deps.cache, req);
    if (hit) return runRead(deps, req, hit);
  }
  const path = req.path.replace(/^\/+|\/+$/g, '');
  const segments = path === '' ? [] : path.split('/');
  const schema = chooseSchema(deps.cache.schemas, profileOf(req));
  if (req.method === 'OPTIONS') return Promise.resolve(options(deps, schema, segments));
  if (segments.length === 0) return openApi(deps, req, schema);
  if (segments.length === 2 && segments[0] === 'rpc') return rpc(deps, req, schema, segments[1]);
  if (segments.length !== 1) throw fail('PGRST125', `Invalid path specified in request URL: /rest/v1/${path}`);
  const rel = deps.cache.relations.get(relationKey(schema, segments[0]));
  if (!rel) throw unknownRelation(schema, segments[0]);
  switch (req.method) {
    case 'GET':
    case 'HEAD':
      return read(deps, req, rel);
    case 'POST':
    case 'PATCH':
    case 'DELETE':
    case 'PUT':
      return write(deps, req, rel);
    default:
      throw fail('PGRST117', `Unsupported HTTP method: ${req.method}`);
  }
}

/**
 * OPTIONS answers what the resource can take, as PostgREST does: 200 with an
 * Allow header and no body. It reflects the relation (a view's updatability,
 * a function's volatility), not the caller's privileges, and runs no SQL.
 * (A CORS preflight never gets here: src/server/cors.ts answers it.)
 */
function options(deps: RestDeps, schema: string, segments: string[]): RestResponse {
  let allow: string[];
  if (segments.length === 0) allow = ['OPTIONS', 'GET', 'HEAD'];
  else if (segments.length === 2 && segments[0] === 'rpc') {
    const fns = (deps.cache.functions.get(relationKey(schema, segments[1])) ?? []).filter((f) => f.callable);
    if (!fns.length) {
      throw fail('PGRST202', `Could not find the function ${schema}.${segments[1]} in the schema cache`, {
        hint: 'If it was created just now, retry: the schema cache reloads on every schema change.',
      });
    }
    allow = fns.every((f) => f.volatility === 'volatile') ? ['OPTIONS', 'POST'] : ['OPTIONS', 'GET', 'HEAD', 'POST'];
  } else if (segments.length === 1) {
    const rel = deps.cache.relations.get(relationKey(schema, segments[0]));
    if (!rel) throw unknownRelation(schema, segments[0]);
    const w = rel.writable;
    allow = ['OPTIONS', 'GET', 'HEAD'];
    if (w.insert) allow.push('POST');
    if (w.insert && w.update && rel.primaryKey.length) allow.push('PUT');
    if (w.update) allow.push('PATCH');
    if (w.delete) allow.push('DELETE');
  } else {
    throw fail('PGRST125', `Invalid path specified in request URL: /rest/v1/${segments.join('/')}`);
  }
  return { status: 200, headers: { allow: allow.join(',') }, body: null };
}

const unknownRelation = (schema: string, name: string) =>
  fail('PGRST205', `Could not find the table '${schema}.${name}' in the schema cache`, {
    hint: 'If it was created just now, retry: the schema cache reloads on every schema change.',
  });

// ---------------------------------------------------------------- running

interface Outcome<Body extends string | Buffer = string> {
  total: number | null;
  pageTotal: number;
  body: Body | null;
  /** Rows a merging upsert inserted rather than updated; null for other statements. */
  inserted: number | null;
}

/** What withRole tells the statement of the request (request.method, request.path, request.headers) and how to run it. */
const requestInfo = (req: RestRequest, readOnly: boolean): RequestInfo => ({
  method: req.method,
  path: `/rest/v1/${req.path}`,
  headers: req.headers,
  readOnly,
});

/** Thrown out of withRole's callback to end the transaction in ROLLBACK (Prefer: tx=rollback) and carry the result out. */
class RolledBack<T> {
  constructor(readonly result: T) {}
}

interface RunOptions {
  readOnly: boolean;
  explain: boolean;
  /** Runs inside the transaction: throwing there rolls back. */
  check?: (o: Outcome) => void;
  rollback?: boolean;
  /** Prefer: timezone: the transaction's TimeZone, set before the statement. */
  timezone?: string | null;
}

/**
 * Runs the plan under the caller's role. Reads run in a READ ONLY
 * transaction (as PostgREST's GET does); an EXPLAIN for planned counts is
 * pipelined with the statement. With `rollback` the work is done and answered
 * but the transaction rolls back.
 */
async function run(
  deps: RestDeps,
  req: RestRequest,
  plan: Plan,
  opts: RunOptions,
): Promise<Outcome & { planned: number | null }> {
  try {
    return await runInTransaction(deps, req, plan, opts);
  } catch (err) {
    if (err instanceof RolledBack) return err.result as Outcome & { planned: number | null };
    throw err;
  }
}

function outcomeOf(rows: postgres.RowList<postgres.Row[]>): Outcome {
  const row = rows[0];
  return {
    total: row.total === null ? null : Number(row.total),
    pageTotal: Number(row.page_total),
    body: row.body,
    inserted: row.inserted == null ? null : Number(row.inserted),
  };
}

/** Nothing to decide between the statement and COMMIT (no EXPLAIN, check, rollback or time zone): all of it in one round trip. */
const isStatementAlone = (opts: RunOptions) => !opts.explain && !opts.check && !opts.rollback && !opts.timezone;

async function runInTransaction(
  deps: RestDeps,
  req: RestRequest,
  plan: Plan,
  opts: RunOptions,
): Promise<Outcome & { planned: number | null }> {
  const request = requestInfo(req, opts.readOnly);
  if (isStatementAlone(opts)) {
    const rows = await withRoleStatement(deps.sql, deps.caller, plan.statement.text, plan.statement.values, request);
    return { ...outcomeOf(rows), planned: null };
  }
  return withRole(
    deps.sql,
    deps.caller,
    async (tx) => {
      // Pipelined ahead of the statement, so timestamps are read and written in that zone.
      const zone = opts.timezone
        ? tx.unsafe(`select set_config('timezone', $1, true)`, [opts.timezone]).execute()
        : null;
      const main = tx
        .unsafe(plan.statement.text, plan.statement.values as postgres.ParameterOrJSON<never>[], { prepare: true })
        .execute();
      const explain =
        opts.explain && plan.source
          ? tx
              .unsafe(
                `EXPLAIN (FORMAT JSON) ${plan.source.text}`,
                plan.source.values as postgres.ParameterOrJSON<never>[],
              )
              .execute()
          : null;
      // One await for all: a failure in any is reported, none is left unhandled.
      const [rows, explained] = await Promise.all([main, explain, zone]);
      const outcome = outcomeOf(rows as postgres.RowList<postgres.Row[]>);
      opts.check?.(outcome);
      const planned = explained ? Number((explained as postgres.Row[])[0]['QUERY PLAN'][0].Plan['Plan Rows']) : null;
      const result = { ...outcome, planned };
      if (opts.rollback) throw new RolledBack(result);
      return result;
    },
    request,
  );
}

/**
 * `explain()`: EXPLAIN of the one statement the request would run, under the
 * caller's role (so RLS shows in the plan), as text or JSON. The transaction
 * always rolls back, so `analyze` on a write measures it without keeping it.
 */
async function explainPlan(
  deps: RestDeps,
  req: RestRequest,
  plan: Plan,
  explain: PlanRequest,
  readOnly: boolean,
): Promise<RestResponse> {
  const options = [
    `FORMAT ${explain.format === 'json' ? 'JSON' : 'TEXT'}`,
    ...explain.options.map((o) => `${o.toUpperCase()} TRUE`),
  ].join(', ');
  const request = requestInfo(req, readOnly);
  let rows: postgres.Row[];
  try {
    await withRole(
      deps.sql,
      deps.caller,
      async (tx) => {
        throw new RolledBack(
          await tx.unsafe(
            `EXPLAIN (${options}) ${plan.statement.text}`,
            plan.statement.values as postgres.ParameterOrJSON<never>[],
          ),
        );
      },
      request,
    );
    throw new Error('unreachable: the explain transaction always rolls back');
  } catch (err) {
    if (!(err instanceof RolledBack)) throw err;
    rows = err.result as postgres.Row[];
  }
  const body =
    explain.format === 'json' ? JSON.stringify(rows[0]['QUERY PLAN']) : rows.map((r) => r['QUERY PLAN']).join('\n');
  return {
    status: 200,
    headers: { 'content-type': `application/vnd.pgrst.plan+${explain.format}; for="${explain.for}"; charset=utf-8` },
    body: req.method === 'HEAD' ? null : body,
  };
}

/** Prefer: handling=strict, max-affected=N: more rows than N fails the request and rolls it back. */
function maxAffected(prefs: Preferences): number | null {
  return prefs.handling === 'strict' ? prefs['max-affected'] : null;
}

const maxAffectedError = (n: number) => fail('PGRST124', undefined, { details: `The query affects ${n} rows` });

/** Preferences every request honours when given: tx, handling, timezone, and max-affected where it applied. */
function common(prefs: Preferences, max: number | null): Partial<Preferences> {
  return { tx: prefs.tx, handling: prefs.handling, timezone: prefs.timezone, 'max-affected': max };
}

const singularError = (n: number) => fail('PGRST116', undefined, { details: `The result contains ${n} rows` });

/** The body of exactly one row, or PGRST116. json_agg renders one element as "[<element>]". */
function singleObject<Body extends string | Buffer>(o: Outcome<Body>): Body {
  if (o.pageTotal !== 1 || o.body === null) throw singularError(o.pageTotal);
  return (typeof o.body === 'string' ? o.body.slice(1, -1) : o.body.subarray(1, -1)) as Body;
}

function countMode(prefs: Preferences): CountMode {
  if (prefs.count === 'exact') return 'exact';
  if (prefs.count === 'estimated') return 'capped';
  return null;
}

/** count=estimated: the exact count while small, the planner's estimate past MAX rows. */
function resolveTotal(prefs: Preferences, o: { total: number | null; planned: number | null }): number | null {
  if (prefs.count === 'planned') return o.planned;
  if (prefs.count === 'estimated' && o.total !== null && o.total > 1000) return Math.max(o.planned ?? 0, 1001);
  return o.total;
}

function bodyFormat(media: MediaType, accept: string | undefined): BodyFormat {
  if (media === 'csv') return 'csv';
  return nullsStripped(accept) ? 'json-stripped' : 'json';
}

/** CSV header from the plan's keys; keys holding separators or quotes are quoted. */
function csvBody(keys: string[], rows: string | Buffer | null): string {
  const header = keys.map((k) => (/[",\n\r]/.test(k) ? `"${k.replace(/"/g, '""')}"` : k)).join(',');
  return rows ? `${header}\n${rows}` : header;
}

// ---------------------------------------------------------------- reads

/** Root limit/offset from the query, intersected with a Range header. */
function page(parsed: ParsedQuery, rangeHeader: string | undefined): { limit: number; offset: number } {
  const root = parsed.nodes.get('')!;
  const range = parseRange(rangeHeader);
  const { limit, offset } = rootPage(parsed);
  if (!range) return { limit, offset };
  const first = Math.max(range.first, offset);
  const ends = [range.last, root.limit !== null ? offset + root.limit - 1 : null].filter(
    (e): e is number => e !== null,
  );
  const last = ends.length ? Math.min(...ends) : first + limit - 1;
  return { offset: first, limit: Math.min(Math.max(last - first + 1, 0), 1000) };
}

function readResponse(
  req: RestRequest,
  media: MediaType,
  prefs: Preferences,
  offset: number,
  plan: Plan,
  o: Outcome<string | Buffer> & { planned: number | null },
  applied: Partial<Preferences>,
): RestResponse {
  const total = resolveTotal(prefs, o);
  if (total !== null && offset > total && offset > 0) {
    throw fail('PGRST103', undefined, {
      details: `An offset of ${offset} was requested, but there are only ${total} rows.`,
    });
  }
  const upper = offset + o.pageTotal - 1;
  const range = o.pageTotal > 0 && total !== 0 ? `${offset}-${upper}` : '*';
  const headers: Record<string, string> = {
    'content-type': CONTENT_TYPE[media],
    'content-range': `${range}/${total ?? '*'}`,
  };
  const pref = appliedHeader(applied);
  if (pref) headers['preference-applied'] = pref;
  const status = total !== null && o.pageTotal < total ? 206 : 200;
  let body: string | Buffer | null = o.body;
  if (media === 'object') body = singleObject(o);
  else if (media === 'csv') body = csvBody(plan.keys, o.body);
  return { status, headers, body: req.method === 'HEAD' ? null : body };
}

async function read(deps: RestDeps, req: RestRequest, rel: Relation): Promise<RestResponse> {
  const explain = planRequest(req.headers.accept);
  const accept = explain ? explain.for : req.headers.accept;
  const media = negotiate(accept, ['json', 'object', 'csv']);
  const prefs = await preferences(deps, req);
  const parsed = parseQuery(queryParams(req));
  const { limit, offset } = page(parsed, req.headers.range);
  const plan = planRead(deps.cache, rel, parsed, {
    count: countMode(prefs),
    format: bodyFormat(media, accept),
    limit,
    offset,
  });
  const planned: ReadPlan = { media, prefs, offset, plan, explain };
  rememberRead(deps.cache, req, planned);
  return runRead(deps, req, planned);
}

async function runRead(deps: RestDeps, req: RestRequest, r: ReadPlan): Promise<RestResponse> {
  if (r.explain) return explainPlan(deps, req, r.plan, r.explain, true);
  const { prefs } = r;
  const opts: RunOptions = {
    readOnly: true,
    explain: prefs.count === 'planned' || prefs.count === 'estimated',
    rollback: prefs.tx === 'rollback',
    timezone: prefs.timezone,
  };
  const o = isStatementAlone(opts) ? await readBytes(deps, req, r.plan) : await run(deps, req, r.plan, opts);
  return readResponse(req, r.media, prefs, r.offset, r.plan, o, { count: prefs.count, ...common(prefs, null) });
}

/**
 * A read that is its statement alone (the common case), with the body as
 * the bytes PostgreSQL sent: no string of it is made here nor re-encoded on
 * the way out (a 100-row page with embeds is some 60 KB per request).
 */
async function readBytes(deps: RestDeps, req: RestRequest, plan: Plan): Promise<Outcome<Buffer> & { planned: null }> {
  const request = requestInfo(req, true);
  const rows = await withRoleStatement(deps.sql, deps.caller, plan.statement.text, plan.statement.values, request, {
    raw: true,
  });
  const values = rows[0] as unknown as (Buffer | null)[];
  const value = (name: string): Buffer | null => {
    const i = rows.columns.findIndex((c) => c.name === name);
    return i < 0 ? null : (values[i] ?? null);
  };
  const total = value('total');
  return {
    total: total === null ? null : Number(total.toString()),
    pageTotal: Number(value('page_total')!.toString()),
    body: value('body'),
    inserted: null,
    planned: null,
  };
}

// ---------------------------------------------------------------- writes

const invalidBody = (details: string) => fail('PGRST102', undefined, { details });

/** The body's media type without parameters; none given means JSON, as in PostgREST. */
const bodyType = (req: RestRequest) =>
  (req.headers['content-type'] || 'application/json').split(';')[0].trim().toLowerCase();

function jsonBody(req: RestRequest): unknown {
  const type = bodyType(req);
  if (type === 'text/csv') {
    if (typeof req.body !== 'string')
      throw fail('PGRST102', 'Invalid CSV body', { details: 'Send the CSV text as the request body.' });
    return parseCsv(req.body);
  }
  if (type === 'application/x-www-form-urlencoded') {
    // One row (or one set of RPC arguments) of text values, as PostgREST reads forms.
    if (typeof req.body !== 'string') throw invalidBody('Send the form as the request body.');
    return Object.fromEntries(new URLSearchParams(req.body));
  }
  // PostgREST refuses any other body type rather than guessing it is JSON.
  if (type !== 'application/json') throw fail('PGRST102', `Content-Type not acceptable: ${type}`);
  if (typeof req.body !== 'string') {
    if (req.body === undefined || req.body === null) throw invalidBody('The request has no body.');
    return req.body;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(req.body);
  } catch (e) {
    throw invalidBody((e as Error).message);
  }
  // PostgreSQL reads the text itself (withSourceText), and a deep enough nesting exhausts its stack (500).
  if (nestedDeeperThan(req.body, MAX_JSON_DEPTH)) {
    throw fail(
      'PGRST102',
      `The JSON body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of arrays and objects.`,
    );
  }
  return withSourceText(parsed, req.body);
}

const MAX_JSON_DEPTH = 1000;

/** Whether valid JSON text nests arrays and objects deeper than `max` (brackets inside strings do not count). */
function nestedDeeperThan(text: string, max: number): boolean {
  if (text.length <= 2 * max) return false; // each level takes an opening and a closing bracket
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip a string: to its closing quote, past escaped characters.
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function insertRows(
  body: unknown,
  columnsParam: string[] | null,
): { rows: Record<string, unknown>[]; columns: string[] } {
  const rows = rowsOf(body);
  if (!rows.every(isObject)) throw invalidBody('Send a JSON object or an array of JSON objects.');
  if (columnsParam) return { rows, columns: columnsParam };
  const columns = rows.length ? Object.keys(rows[0]) : [];
  for (const row of rows) {
    const keys = Object.keys(row);
    if (keys.length !== columns.length || !keys.every((k) => columns.includes(k))) {
      throw fail('PGRST102', 'All object keys must match', {
        hint: 'Give every object the same keys, or name the columns with ?columns=a,b (missing keys are then null, or the default with Prefer: missing=default).',
      });
    }
  }
  return { rows, columns };
}

/**
 * PUT: one row by its whole primary key, filters `eq` on each key column and
 * nothing else (405 PGRST105), no limit/offset (400 PGRST114); the body's key
 * values must equal the filters (checked in SQL: 400 PGRST115 otherwise).
 */
function putKey(
  rel: Relation,
  parsed: ParsedQuery,
  rangeHeader: string | undefined,
): { column: string; value: string }[] {
  const root = parsed.nodes.get('')!;
  if (root.limit !== null || root.offset !== null || rangeHeader) {
    throw fail('PGRST114', undefined, { hint: 'PUT writes exactly one row: remove them.' });
  }
  const match: { column: string; value: string }[] = [];
  for (const c of root.conditions) {
    const simple =
      c.type === 'filter' &&
      !c.negate &&
      !c.field.json.length &&
      c.operation.op === 'eq' &&
      !('quantifier' in c.operation && c.operation.quantifier);
    if (!simple || match.some((m) => m.column === c.field.name)) {
      match.length = 0;
      break;
    }
    match.push({ column: c.field.name, value: (c.operation as { value: string }).value });
  }
  const pk = rel.primaryKey;
  if (!pk.length || match.length !== pk.length || !pk.every((k) => match.some((m) => m.column === k))) {
    throw fail('PGRST105', undefined, {
      details: pk.length
        ? `The primary key of '${rel.name}' is (${pk.join(', ')}).`
        : `'${rel.name}' has no primary key.`,
      hint: pk.length
        ? `Filter each key column with eq and nothing else, such as ?${pk.map((k) => `${k}=eq.<value>`).join('&')}.`
        : 'Use POST with Prefer: resolution=merge-duplicates and on_conflict instead.',
    });
  }
  return match;
}

const putMismatch = () =>
  fail('PGRST115', undefined, {
    hint: 'Send one JSON object whose primary key values equal the eq filters of the URL.',
  });

async function write(deps: RestDeps, req: RestRequest, rel: Relation): Promise<RestResponse> {
  const explain = planRequest(req.headers.accept);
  const accept = explain ? explain.for : req.headers.accept;
  const media = negotiate(accept, ['json', 'object', 'csv']);
  const prefs = await preferences(deps, req);
  const parsed = parseQuery(queryParams(req));
  const returning = prefs.return ?? 'minimal';
  // headers-only sends no body, but Location is built from the written rows: read them as JSON whatever Accept says.
  const format = returning === 'headers-only' ? bodyFormat('json', undefined) : bodyFormat(media, accept);
  // max-affected counts the rows a PATCH or DELETE touches (PostgREST).
  const max = req.method === 'PATCH' || req.method === 'DELETE' ? maxAffected(prefs) : null;
  const applied: Partial<Preferences> = {
    return: prefs.return,
    count: prefs.count === 'exact' ? 'exact' : null,
    ...common(prefs, max),
  };
  let plan: Plan;
  let expectOne = false;
  if (req.method === 'POST') {
    const { rows, columns } = insertRows(jsonBody(req), parsed.columns);
    let onConflict = null;
    if (prefs.resolution) {
      const columnsOf = parsed.onConflict ?? rel.primaryKey;
      if (!columnsOf.length) {
        throw fail('PGRST100', `Cannot upsert into '${rel.name}': it has no primary key and no on_conflict was given`, {
          hint: 'Name the unique columns that identify a row: ?on_conflict=col1,col2',
        });
      }
      onConflict = {
        columns: columnsOf,
        resolution: prefs.resolution === 'merge-duplicates' ? ('merge' as const) : ('ignore' as const),
      };
      applied.resolution = prefs.resolution;
    }
    if (prefs.missing === 'default') applied.missing = 'default';
    plan = planWrite(
      deps.cache,
      rel,
      parsed,
      { kind: 'insert', rows, columns, missingDefault: prefs.missing === 'default', onConflict },
      { returning, format },
    );
  } else if (req.method === 'PUT') {
    const match = putKey(rel, parsed, req.headers.range);
    const rows = rowsOf(jsonBody(req));
    if (!rows.every(isObject)) throw invalidBody('PUT takes one JSON object: the whole row.');
    if (rows.length !== 1 || !rel.primaryKey.every((k) => k in rows[0])) throw putMismatch();
    const columns = Object.keys(rows[0]);
    const onConflict = { columns: rel.primaryKey, resolution: 'merge' as const };
    plan = planWrite(
      deps.cache,
      rel,
      parsed,
      { kind: 'insert', rows, columns, missingDefault: false, onConflict, match },
      { returning, format },
    );
    expectOne = true;
  } else {
    if (!parsed.nodes.get('')!.conditions.length) {
      // Supabase's safeupdate answers the same code for an unfiltered write.
      throw fail('21000', `${req.method === 'PATCH' ? 'UPDATE' : 'DELETE'} requires a WHERE clause`, {
        hint: 'Add a filter, such as ?id=eq.1; to touch every row, filter on a condition every row meets.',
      });
    }
    if (req.method === 'PATCH') {
      const patch = jsonBody(req);
      if (!isObject(patch)) throw invalidBody('PATCH takes one JSON object of the columns to set.');
      // ?columns= names the columns to set, as on insert: other keys are ignored, absent ones set NULL.
      const columns = parsed.columns ?? Object.keys(patch);
      if (!columns.length) return nothingChanged(returning, media);
      plan = planWrite(deps.cache, rel, parsed, { kind: 'update', patch, columns }, { returning, format });
    } else {
      plan = planWrite(deps.cache, rel, parsed, { kind: 'delete' }, { returning, format });
    }
  }
  if (explain) return explainPlan(deps, req, plan, explain, false);
  const o = await run(deps, req, plan, {
    readOnly: false,
    explain: false,
    rollback: prefs.tx === 'rollback',
    timezone: prefs.timezone,
    // Each check fails the request and rolls the write back (PostgREST). A write
    // with nothing to check commits in the same round trip as the statement.
    check:
      expectOne || max !== null || media === 'object'
        ? (x) => {
            if (expectOne && x.pageTotal !== 1) throw putMismatch();
            if (max !== null && x.pageTotal > max) throw maxAffectedError(x.pageTotal);
            if (media === 'object' && x.pageTotal !== 1) throw singularError(x.pageTotal);
          }
        : undefined,
  });

  const headers: Record<string, string> = {};
  const count = applied.count ? o.pageTotal : null;
  headers['content-range'] =
    req.method === 'POST' ? `*/${count ?? '*'}` : `${o.pageTotal ? `0-${o.pageTotal - 1}` : '*'}/${count ?? '*'}`;
  const pref = appliedHeader(applied);
  if (pref) headers['preference-applied'] = pref;
  if (returning === 'headers-only' && req.method === 'POST' && o.body && o.pageTotal > 0) {
    const first = JSON.parse(o.body)[0] as Record<string, unknown>;
    const query = rel.primaryKey
      .map((k) => `${encodeURIComponent(k)}=eq.${encodeURIComponent(String(first[k]))}`)
      .join('&');
    headers.location = `/${encodeURIComponent(rel.name)}${query ? `?${query}` : ''}`;
  }
  // POST is 201, except an upsert that merged into existing rows only: 200, as PostgREST answers it.
  const created = req.method === 'POST' && o.inserted !== 0 ? 201 : 200;
  if (returning !== 'representation') return { status: req.method === 'POST' ? created : 204, headers, body: null };
  headers['content-type'] = CONTENT_TYPE[media];
  const body = media === 'object' ? singleObject(o) : media === 'csv' ? csvBody(plan.keys, o.body) : o.body;
  return { status: created, headers, body };
}

/** PATCH of no columns changes nothing and runs nothing. */
function nothingChanged(returning: Preferences['return'], media: MediaType): RestResponse {
  if (returning !== 'representation') return { status: 204, headers: { 'content-range': '*/*' }, body: null };
  if (media === 'object') throw singularError(0);
  return {
    status: 200,
    headers: { 'content-type': CONTENT_TYPE[media], 'content-range': '*/*' },
    body: media === 'csv' ? '' : '[]',
  };
}

// ---------------------------------------------------------------- rpc

/** Bodies that are not arguments but the one value of a function of one unnamed parameter. */
const RAW_BODY_TYPES = ['text/plain', 'text/xml', 'application/octet-stream'];

async function rpc(deps: RestDeps, req: RestRequest, schema: string, name: string): Promise<RestResponse> {
  const fns = deps.cache.functions.get(relationKey(schema, name)) ?? [];
  if (!isRead(req.method) && req.method !== 'POST') {
    throw fail('PGRST101');
  }
  const explain = planRequest(req.headers.accept);
  const accept = explain ? explain.for : req.headers.accept;
  const media = negotiate(accept, ['json', 'object', 'csv']);
  const prefs = await preferences(deps, req);
  const parsed = parseQuery(queryParams(req), isRead(req.method));
  const wholeBody = !isRead(req.method) && prefs.params === 'single-object';

  const callableNames = () =>
    [...deps.cache.functions.values()]
      .filter((o) => o[0].schema === schema && o.some((f) => f.callable))
      .map((o) => o[0].name);
  let args: RpcArgs;
  let fn: RestFunction;
  if (isRead(req.method)) {
    const given = [...parsed.args.keys()];
    const chosen = chooseFunction(fns, schema, name, { given, post: false, type: '', wholeBody: false }, callableNames);
    fn = chosen.fn;
    // As PostgREST: a VARIADIC argument is the array of every value given
    // (`?v=1&v=2`); any other repeated argument takes the last.
    const variadic = new Set(fn.args.filter((a) => a.variadic).map((a) => a.name));
    const values = Object.fromEntries([...parsed.args].map(([k, v]) => [k, variadic.has(k) ? v : v[v.length - 1]]));
    args = chosen.whole ? { kind: 'single', value: JSON.stringify(values) } : { kind: 'named', values };
  } else {
    const type = bodyType(req);
    if (RAW_BODY_TYPES.includes(type)) {
      // text, XML or bytes: a function of one unnamed parameter of that type takes them whole.
      const chosen = chooseFunction(fns, schema, name, { given: [], post: true, type, wholeBody }, callableNames);
      fn = chosen.fn;
      const raw = typeof req.body === 'string' || Buffer.isBuffer(req.body) ? req.body : '';
      args = chosen.whole ? { kind: 'single', value: raw } : { kind: 'named', values: {} };
    } else {
      const empty = req.body === undefined || req.body === '';
      const body = empty ? {} : jsonBody(req);
      const given = isObject(body) ? Object.keys(body) : [];
      const chosen = chooseFunction(fns, schema, name, { given, post: true, type, wholeBody }, callableNames);
      fn = chosen.fn;
      // A function of one unnamed parameter gets the body as sent (`{"": "x"}` included), as PostgREST passes it.
      if (chosen.whole)
        args = {
          kind: 'single',
          value:
            typeof req.body === 'string' && type === 'application/json' && !empty ? req.body : JSON.stringify(body),
        };
      else if (isObject(body)) args = { kind: 'named', values: body };
      else throw invalidBody('Send the arguments as one JSON object of named values.');
    }
  }
  // max-affected limits the rows a set-returning call answers (after limit/offset).
  const max = maxAffected(prefs);
  if (max !== null && !fn.returnsSet) {
    throw fail('PGRST128', undefined, { hint: 'Drop max-affected for this function, or make it return a set.' });
  }

  const { limit, offset } = page(parsed, req.headers.range);
  const plan = planRpc(deps.cache, fn, args, parsed, {
    count: countMode(prefs),
    format: bodyFormat(media, accept),
    limit,
    offset,
  });
  // As PostgREST: GET and HEAD of any function, and POST of a STABLE or IMMUTABLE
  // one, run READ ONLY; only a function that then writes fails (405 25006).
  const readOnly = isRead(req.method) || fn.volatility !== 'volatile';
  if (explain) return explainPlan(deps, req, plan, explain, readOnly);
  const o = await run(deps, req, plan, {
    readOnly,
    explain: prefs.count === 'planned' || prefs.count === 'estimated',
    rollback: prefs.tx === 'rollback',
    timezone: prefs.timezone,
    check:
      max === null
        ? undefined
        : (x) => {
            if (x.pageTotal > max) throw maxAffectedError(x.pageTotal);
          },
  });
  const applied: Partial<Preferences> = { params: wholeBody ? 'single-object' : null, ...common(prefs, max) };
  const pref = appliedHeader(applied);
  const extra: Record<string, string> = pref ? { 'preference-applied': pref } : {};
  if (plan.shape === 'void') return { status: 204, headers: extra, body: null };
  if (plan.shape === 'set') return readResponse(req, media, prefs, offset, plan, o, { ...applied, count: prefs.count });
  // A scalar or one composite value answers bare, not wrapped in an array.
  const body = plan.shape === 'scalar' ? (o.body ?? 'null') : o.pageTotal === 1 ? singleObject(o) : 'null';
  const contentType = media === 'object' || media === 'json' ? CONTENT_TYPE.json : CONTENT_TYPE[media];
  // One value is one row: count=exact counts it, as PostgREST does (0-0/1).
  const total = prefs.count === 'exact' ? String(o.pageTotal) : '*';
  return {
    status: 200,
    headers: { 'content-type': contentType, 'content-range': `0-0/${total}`, ...extra },
    body: req.method === 'HEAD' ? null : body,
  };
}

// ---------------------------------------------------------------- openapi

async function openApi(deps: RestDeps, req: RestRequest, schema: string): Promise<RestResponse> {
  if (!isRead(req.method)) throw fail('PGRST117', `Unsupported HTTP method: ${req.method}`);
  negotiate(req.headers.accept, ['openapi']);
  const rows = await withRole(deps.sql, deps.caller, (tx) => tx.unsafe(ACCESSIBLE_SQL, [schema]), {
    method: req.method,
    path: '/rest/v1/',
    headers: req.headers,
  });
  const doc = buildOpenApi(deps.cache, schema, accessibleFrom(rows));
  return {
    status: 200,
    headers: { 'content-type': CONTENT_TYPE.openapi },
    body: req.method === 'HEAD' ? null : JSON.stringify(doc),
  };
}
