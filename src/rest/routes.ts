/**
 * /rest/v1/* over Fastify: HTTP in and out only, the work is handleRest's.
 * Register it encapsulated (`app.register(restRoutes)`, not through
 * fastify-plugin): it replaces the body parsers in its own scope so bodies
 * arrive as raw text, letting handleRest answer malformed JSON with PGRST102
 * and accept text/csv. The data plane has resolved the project and the caller
 * (request.hearth) before the handler runs.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProjectRuntime } from '../platform/registry.ts';
import { handleRest } from './handle.ts';
import { createSchemaCacheStore, type SchemaCache } from './schema-cache.ts';

/** The project's schema cache for its exposed schemas (config/api db_schema), built once per process and kept fresh by LISTEN. */
async function schemaCache(project: ProjectRuntime): Promise<SchemaCache> {
  const schemas = String((await project.settings('api')).db_schema).split(',').map((s) => s.trim()).filter(Boolean);
  const store = project.cached(`rest:${schemas.join(',')}`, () => createSchemaCacheStore(project.sql, schemas), (s) => s.then((x) => x.close()));
  return (await store).get();
}

const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT'];

export async function restRoutes(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { project, auth } = request.hearth;
    // The raw query string: Fastify's parsed query merges repeated keys, which are meaningful here.
    const url = request.raw.url ?? '';
    const q = url.indexOf('?');
    const res = await handleRest(
      { sql: project.sql, cache: await schemaCache(project), caller: auth!.caller, keyType: auth!.keyType },
      {
        method: request.method,
        path: (request.params as { '*'?: string })['*'] ?? '',
        query: new URLSearchParams(q >= 0 ? url.slice(q + 1) : ''),
        headers: request.headers as Record<string, string | undefined>,
        body: request.body,
      },
    );
    return reply.code(res.status).headers(res.headers).send(res.body ?? undefined);
  };
  app.route({ method: METHODS, url: '/rest/v1/*', exposeHeadRoute: false, handler });
  app.route({ method: METHODS, url: '/rest/v1', exposeHeadRoute: false, handler });
}
