/**
 * Functions management for owner and admin sessions: deploy, list, get,
 * delete, logs (`/v1/projects/{ref}/functions...`) and the project's function
 * secrets (`/v1/projects/{ref}/secrets`, shaped like Supabase's management
 * API: PUT `[{name, value}]`, DELETE `["NAME", ...]`, GET names with the
 * SHA-256 digest of each value, never the value).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import { managementAccess, objectBody, refuseNonJsonBodies, requireSession } from '../http/management-access.ts';
import { refuseUnknownFields, unstorableText } from '../platform/text.ts';
import { functionsRuntime } from './index.ts';
import type { FunctionInfo } from './runtime.ts';
import { parseLogCursor, type FunctionLogEntry } from './store.ts';
import type { FunctionSource } from './validate.ts';

const ADMINS = ['owner', 'admin'] as const;
/** Sources may be up to 10 MiB (validate.ts); JSON escaping adds some. */
const DEPLOY_BODY_LIMIT = 16 * 1024 * 1024;
const MAX_SECRETS_PER_CALL = 100;

type Ref = { Params: { ref: string } };
type RefName = { Params: { ref: string; name: string }; Querystring: { limit?: string; before?: string } };

const functionJson = (f: FunctionInfo) => ({
  name: f.name,
  slug: f.name,
  version: f.version,
  status: 'ACTIVE',
  entrypoint: f.entrypoint,
  verify_jwt: f.verifyJwt,
  // The deploy time of the current version.
  updated_at: f.createdAt,
});

const logJson = (e: FunctionLogEntry) => ({
  // Opaque; `?before=<id>` pages on from this entry.
  id: e.cursor,
  timestamp: e.at,
  version: e.version,
  invocation_id: e.invocationId,
  level: e.level,
  message: e.message,
  ...(e.request && {
    method: e.request.method,
    path: e.request.path,
    status: e.request.status,
    error_code: e.request.code,
    duration_ms: e.request.durationMs,
  }),
});

const missing = (name: string) =>
  fail('function_not_found', `No function named "${name}" is deployed in this project.`);

const DEPLOY_FIELDS = ['source', 'files', 'entrypoint', 'verify_jwt'];
const SECRET_FIELDS = ['name', 'value'];

/** `{source}` (one module) or `{files, entrypoint?}` (a bundle), plus `verify_jwt?`. */
function deployBody(request: FastifyRequest): FunctionSource {
  const body = objectBody(request);
  refuseUnknownFields(body, DEPLOY_FIELDS, 'A deploy');
  const { source, files, entrypoint, verify_jwt: verifyJwt } = body;
  if (verifyJwt !== undefined && typeof verifyJwt !== 'boolean')
    throw fail('invalid_request', 'verify_jwt must be true or false.');
  if (entrypoint !== undefined && typeof entrypoint !== 'string')
    throw fail('invalid_request', 'entrypoint must be the path of one of the deployed files.');
  if ((source === undefined) === (files === undefined)) {
    throw fail(
      'invalid_function_source',
      'Send either {"source": "<module text>"} or {"files": {"index.ts": "...", ...}, "entrypoint"?: "index.ts"}.',
    );
  }
  if (source !== undefined) {
    if (typeof source !== 'string')
      throw fail('invalid_function_source', 'source must be the module text as a string.');
    const file = entrypoint ?? 'index.ts';
    return { files: { [file]: source }, entrypoint: file, verifyJwt };
  }
  if (typeof files !== 'object' || files === null || Array.isArray(files))
    throw fail('invalid_function_source', 'files must be an object of path → source text.');
  return { files: files as Record<string, string>, entrypoint, verifyJwt };
}

function secretsBody(request: FastifyRequest): Record<string, string> {
  const body = request.body;
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_SECRETS_PER_CALL) {
    throw fail(
      'invalid_request',
      `The body must be an array of 1-${MAX_SECRETS_PER_CALL} secrets: [{"name": "API_KEY", "value": "..."}].`,
    );
  }
  const secrets: Record<string, string> = {};
  for (const item of body as unknown[]) {
    const { name, value } = (item ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name !== 'string' || typeof value !== 'string')
      throw fail('invalid_request', 'Each secret must be {"name": string, "value": string}.');
    refuseUnknownFields(item as object, SECRET_FIELDS, 'A secret');
    // A lone surrogate would be stored as U+FFFD: the function would see another value than was sent.
    const unstorable = unstorableText(value);
    if (unstorable) throw fail('invalid_request', `The value of secret "${name}" ${unstorable}.`);
    if (Object.hasOwn(secrets, name))
      throw fail('duplicate_secret_name', `Secret "${name}" appears more than once in the request.`);
    secrets[name] = value;
  }
  return secrets;
}

function secretNames(request: FastifyRequest): string[] {
  const body = request.body;
  if (
    !Array.isArray(body) ||
    body.length === 0 ||
    body.length > MAX_SECRETS_PER_CALL ||
    !body.every((n) => typeof n === 'string')
  ) {
    throw fail(
      'invalid_request',
      `The body must be an array of 1-${MAX_SECRETS_PER_CALL} secret names: ["API_KEY", ...].`,
    );
  }
  return body as string[];
}

function logLimit(raw: string | undefined): number {
  if (raw === undefined) return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw fail('invalid_request', 'limit must be an integer from 1 to 1000.');
  return n;
}

export async function functionManagementRoutes(app: FastifyInstance, opts: { p: Platform }) {
  const { p } = opts;
  const access = managementAccess(p);
  const runtime = () => functionsRuntime(p);

  refuseNonJsonBodies(app);
  app.addHook('onRequest', requireSession(p));

  app.get<Ref>('/v1/projects/:ref/functions', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    return (await runtime().listFunctions(project.ref)).map(functionJson);
  });

  app.put<RefName>('/v1/projects/:ref/functions/:name', { bodyLimit: DEPLOY_BODY_LIMIT }, async (request, reply) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const deployed = await runtime().deployFunction(project.ref, request.params.name, deployBody(request));
    return reply.code(201).send(functionJson(deployed));
  });

  app.get<RefName>('/v1/projects/:ref/functions/:name', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const fn = await runtime().getFunction(project.ref, request.params.name);
    if (!fn) throw missing(request.params.name);
    return functionJson(fn);
  });

  app.delete<RefName>('/v1/projects/:ref/functions/:name', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    await runtime().removeFunction(project.ref, request.params.name);
    return { name: request.params.name, deleted: true };
  });

  app.get<RefName>('/v1/projects/:ref/functions/:name/logs', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const limit = logLimit(request.query.limit);
    const { before } = request.query;
    if (before !== undefined) parseLogCursor(before);
    if (!(await runtime().getFunction(project.ref, request.params.name))) throw missing(request.params.name);
    return (await runtime().readLogs(project.ref, request.params.name, { limit, before })).map(logJson);
  });

  const secretList = async (ref: string) =>
    (await runtime().listSecrets(ref)).map((s) => ({ name: s.name, value: s.digest }));

  app.get<Ref>('/v1/projects/:ref/secrets', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    return secretList(project.ref);
  });

  app.put<Ref>('/v1/projects/:ref/secrets', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    await runtime().setSecrets(project.ref, secretsBody(request));
    return secretList(project.ref);
  });

  app.delete<Ref>('/v1/projects/:ref/secrets', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    await runtime().unsetSecrets(project.ref, secretNames(request));
    return secretList(project.ref);
  });
}
