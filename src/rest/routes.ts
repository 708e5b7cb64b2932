/**
 * /rest/v1/* over Fastify: HTTP in and out only, the work is handleRest's.
 * Register it encapsulated (`app.register(restRoutes)`, not through
 * fastify-plugin): it replaces the body parsers in its own scope so bodies
 * arrive as raw text (bytes for application/octet-stream), letting handleRest
 * answer malformed JSON with PGRST102 and accept text/csv. The data plane has
 * resolved the project and the caller (request.hearth) before the handler runs.
 */
import { isUtf8 } from 'node:buffer';
import http from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProjectRuntime } from '../platform/registry.ts';
import type { Settings } from '../platform/settings-schema.ts';
import { fail, HearthError } from '../errors.ts';
import { sendError } from '../http/envelopes.ts';
import { TokenExpired } from '../http/credentials.ts';
import { handleRest } from './handle.ts';
import { createSchemaCacheStore, type SchemaCache, type SchemaCacheStore } from './schema-cache.ts';

/** The project's schema cache for its exposed schemas (config/api db_schema), built once per process and kept fresh by LISTEN. */
async function loadStore(project: ProjectRuntime, settings: Promise<Settings>): Promise<SchemaCacheStore> {
  const schemas = String((await settings).db_schema)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return project.cached(
    `rest:${schemas.join(',')}`,
    () => createSchemaCacheStore(project.sql, schemas),
    (s) => s.then((x) => x.close()),
  );
}

/**
 * The store per project, remembered with the settings promise it was read
 * from: project.settings() hands out the same promise until the settings
 * change, so the common request finds its loaded cache without an await.
 */
interface StoreEntry {
  settings: Promise<Settings>;
  store: Promise<SchemaCacheStore>;
  resolved: SchemaCacheStore | null;
  /** config/api db_plan_enabled, known once the store (read after the settings) is. */
  planEnabled: boolean;
}
const stores = new WeakMap<ProjectRuntime, StoreEntry>();

function storeEntry(project: ProjectRuntime): StoreEntry {
  const settings = project.settings('api');
  let entry = stores.get(project);
  if (!entry || entry.settings !== settings) {
    const store = loadStore(project, settings);
    const fresh: StoreEntry = { settings, store, resolved: null, planEnabled: false };
    settings.then(
      (s) => (fresh.planEnabled = s.db_plan_enabled === true),
      () => {},
    );
    store.then(
      (s) => (fresh.resolved = s),
      () => stores.get(project) === fresh && stores.delete(project),
    );
    stores.set(project, (entry = fresh));
  }
  return entry;
}

function schemaCache(entry: StoreEntry): SchemaCache | Promise<SchemaCache> {
  const ready = entry.resolved?.loaded();
  return ready ?? entry.store.then((s) => s.get());
}

// OPTIONS: a CORS preflight is answered before routing (src/server/cors.ts); any other OPTIONS is PostgREST's Allow answer.
const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS'];

/**
 * A refused access token as PostgREST 12 answers it: 401 PGRST301, "JWT
 * expired" for an expired one, and a WWW-Authenticate challenge. Clients
 * branch on that code and message to refresh the session.
 */
function asPostgrestJwtError(err: unknown): { error: unknown; challenge: string | null } {
  if (!(err instanceof HearthError) || err.code !== 'bad_jwt') return { error: err, challenge: null };
  const message = err instanceof TokenExpired ? 'JWT expired' : err.message;
  return {
    error: fail('PGRST301', message),
    challenge: `Bearer error="invalid_token", error_description=${JSON.stringify(message)}`,
  };
}

export async function restRoutes(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  // Bytes that are not UTF-8 are refused, as PostgREST does, rather than stored as U+FFFD.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) =>
    isUtf8(body as Buffer)
      ? done(null, (body as Buffer).toString('utf8'))
      : done(fail('PGRST102', 'The request body is not valid UTF-8.')),
  );
  // Bytes for a function of one unnamed bytea parameter: not decoded as text.
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  // Also sees the data plane's credential check, which runs in this scope's onRequest.
  app.setErrorHandler((err, request, reply) => {
    const { error, challenge } = asPostgrestJwtError(err);
    if (challenge) reply.header('www-authenticate', challenge);
    return sendError(request, reply, error);
  });

  /** The key may ride in the query (?apikey=, as Supabase's gateway takes it); like the gateway, it is not a filter. */
  const withoutApiKey = (query: string) =>
    query.includes('apikey=')
      ? query
          .split('&')
          .filter((p) => !p.startsWith('apikey='))
          .join('&')
      : query;

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { project, auth } = request.hearth;
    // The raw query string: Fastify's parsed query merges repeated keys, which are meaningful here.
    const url = request.raw.url ?? '';
    const q = url.indexOf('?');
    const entry = storeEntry(project);
    const cache = schemaCache(entry);
    const res = await handleRest(
      {
        sql: project.sql,
        cache: cache instanceof Promise ? await cache : cache,
        caller: auth!.caller,
        keyType: auth!.keyType,
        planEnabled: entry.planEnabled,
      },
      {
        method: request.method,
        path: (request.params as { '*'?: string })['*'] ?? '',
        query: q >= 0 ? withoutApiKey(url.slice(q + 1)) : '',
        headers: request.headers as Record<string, string | undefined>,
        body: request.body,
      },
    );
    return reply
      .code(res.status)
      .headers(res.headers)
      .send(res.body ?? undefined);
  };
  app.route({ method: METHODS, url: '/rest/v1/*', exposeHeadRoute: false, handler });
  app.route({ method: METHODS, url: '/rest/v1', exposeHeadRoute: false, handler });

  // Any other method Node parses (TRACE, PROPFIND, ...) is PostgREST's 405, not a missing route.
  const others = http.METHODS.filter((m) => m !== 'CONNECT' && !METHODS.includes(m));
  for (const method of others) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  const unsupported = async (request: FastifyRequest) => {
    throw fail('PGRST117', `Unsupported HTTP method: ${request.method}`);
  };
  for (const url of ['/rest/v1/*', '/rest/v1'])
    app.route({ method: others, url, exposeHeadRoute: false, handler: unsupported });
}
