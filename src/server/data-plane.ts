/**
 * Project resolution and credentials for the data plane (/auth/v1, /rest/v1,
 * /storage/v1, /functions/v1). The project is the default one at the server
 * root, {ref} under /project/{ref}/, or {ref}.{HEARTH_PROJECT_DOMAIN}.
 * Each route states with `config: { public: true }` that it needs no key
 * (JWKS, public downloads, signed URLs); every other route needs a key or
 * token of the addressed project.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Platform } from '../context.ts';
import { HearthError } from '../errors.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';
import { RequestUsage } from '../platform/request-usage.ts';
import { authenticate, type DataPlaneAuth } from './credentials.ts';

export interface DataPlaneContext {
  project: ProjectRuntime;
  /** null only on public routes called without credentials. */
  auth: DataPlaneAuth | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    hearth: DataPlaneContext;
  }
  interface FastifyContextConfig {
    public?: boolean;
    /** Public, and whatever credentials the request carries are not even looked at. */
    ignoreCredentials?: boolean;
  }
}

const PREFIXES = ['/auth/v1', '/rest/v1', '/storage/v1', '/functions/v1'];

/** Set by the server's rewriteUrl on the raw request: the ref named in the path or host. */
export const REF_SYMBOL = Symbol('hearth.ref');

/** Strips /project/{ref} and records the ref; runs before routing. */
export function rewriteProjectUrl(projectDomain: string | null) {
  const hostPattern = projectDomain ? new RegExp(`^([a-z]{20})\\.${projectDomain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:\\d+)?$`, 'i') : null;
  return (req: { url?: string; headers: Record<string, unknown> }): string => {
    const url = req.url ?? '/';
    const m = /^\/project\/([^/?#]+)(.*)$/.exec(url);
    if (m) {
      (req as Record<symbol, unknown>)[REF_SYMBOL] = m[1];
      return m[2] && m[2].startsWith('/') ? m[2] : '/' + (m[2] ?? '');
    }
    const host = typeof req.headers.host === 'string' ? req.headers.host : '';
    const h = hostPattern?.exec(host);
    if (h) (req as Record<symbol, unknown>)[REF_SYMBOL] = h[1]!.toLowerCase();
    return url;
  };
}

async function resolveProject(registry: ProjectRegistry, request: FastifyRequest): Promise<ProjectRuntime> {
  const ref = (request.raw as unknown as Record<symbol, string | undefined>)[REF_SYMBOL];
  const project = ref ? await registry.byReference(ref) : await registry.defaultProject();
  if (!project) throw new HearthError(404, 'project_not_found', ref ? `There is no project with ref "${ref}".` : 'This server has no default project yet.');
  return project;
}

export const dataPlane = fp(async (app: FastifyInstance, opts: { p: Platform; registry: ProjectRegistry }) => {
  app.decorateRequest('hearth', null as unknown as DataPlaneContext);
  const usage = new RequestUsage(opts.p);
  app.addHook('onClose', () => usage.close());
  app.addHook('onRequest', async (request, reply) => {
    if (!PREFIXES.some((prefix) => request.url === prefix || request.url.startsWith(prefix + '/') || request.url.startsWith(prefix + '?'))) return;
    const project = await resolveProject(opts.registry, request);
    const config = request.routeOptions.config;
    // A route whose permission is in its URL takes no credentials: stale ones (an expired
    // session's token that storage-js still sends with uploadToSignedUrl) cannot refuse it.
    const auth = config?.ignoreCredentials
      ? null
      : await authenticate(opts.registry, project, request.headers as { apikey?: string; authorization?: string }, opts.p.clock);
    if (!auth && !config?.public && !config?.ignoreCredentials) {
      throw new HearthError(401, 'no_api_key', 'No API key found in the request: send the project key in the apikey header or as Authorization: Bearer.');
    }
    // Counted once it is known to be the project's own traffic (daily request quota).
    await usage.admit(project, (seconds) => reply.header('retry-after', String(seconds)));
    request.hearth = { project, auth };
  });
});
