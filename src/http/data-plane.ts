/**
 * Project resolution and credentials for the data plane (/auth/v1, /rest/v1,
 * /storage/v1, /functions/v1, /realtime/v1; its WebSocket upgrade is checked in
 * src/realtime/server.ts). The project is the default one at the server
 * root, {ref} under /project/{ref}/, or {ref}.{HEARTH_PROJECT_DOMAIN}.
 * Each route states with `config: { public: true }` that it needs no key
 * (credentials sent anyway are still checked), or with `ignoreCredentials`
 * that it does not look at them (SPEC 5's public calls: JWKS, passkey sign-in,
 * public downloads, signed URLs; and the links a browser follows: verify,
 * authorize, callback);
 * every other route needs a key or token of the addressed project.
 */
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Platform } from '../context.ts';
import { fail, HearthError } from '../errors.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';
import { RequestUsage } from '../platform/request-usage.ts';
import { authenticate, type DataPlaneAuth } from './credentials.ts';

export interface DataPlaneContext {
  project: ProjectRuntime;
  /** null only on public routes called without credentials. */
  auth: DataPlaneAuth | null;
  /** On a route with `refusedTokenAsKey`: why the Authorization token was refused (auth is then the key's caller). */
  refusedToken?: HearthError;
}

declare module 'fastify' {
  interface FastifyRequest {
    hearth: DataPlaneContext;
  }
  interface FastifyContextConfig {
    public?: boolean;
    /** Public, and whatever credentials the request carries are not even looked at. */
    ignoreCredentials?: boolean;
    /**
     * A refused user token (expired, malformed) does not refuse the request when an
     * apikey is sent: the caller is the key's, and the refusal is in `refusedToken`.
     */
    refusedTokenAsKey?: boolean;
  }
}

/** /auth/v1, /rest/v1, /storage/v1, /functions/v1 and /realtime/v1, alone or followed by / or ?. */
const DATA_PLANE = /^\/(?:auth|rest|storage|functions|realtime)\/v1(?:[/?]|$)/;

/** Refusals of the Authorization header's token (credentials.ts) that refusedTokenAsKey routes get past. */
const TOKEN_REFUSALS = new Set(['bad_jwt', 'invalid_api_key', 'bad_authorization']);

/** Set by the server's rewriteUrl on the raw request: the ref named in the path or host. */
export const REF_SYMBOL = Symbol('hearth.ref');

/** Strips /project/{ref} and records the ref; runs before routing. */
export function rewriteProjectUrl(projectDomain: string | null) {
  const hostPattern = projectDomain
    ? new RegExp(`^([a-z]{20})\\.${projectDomain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:\\d+)?$`, 'i')
    : null;
  return (req: { url?: string; headers: Record<string, unknown> }): string => {
    const url = req.url ?? '/';
    const m = url.startsWith('/project/') ? /^\/project\/([^/?#]+)(.*)$/.exec(url) : null;
    if (m) {
      (req as Record<symbol, unknown>)[REF_SYMBOL] = m[1];
      return m[2]?.startsWith('/') ? m[2] : `/${m[2] ?? ''}`;
    }
    const host = typeof req.headers.host === 'string' ? req.headers.host : '';
    const h = hostPattern?.exec(host);
    if (h) (req as Record<symbol, unknown>)[REF_SYMBOL] = h[1]!.toLowerCase();
    return url;
  };
}

/**
 * The apikey and Authorization headers; with neither, a key in the query
 * string (`?apikey=`), which Supabase's gateway also accepts (handy for a
 * link opened in a browser).
 */
function credentialsOf(request: FastifyRequest): { apikey?: string | string[]; authorization?: string } {
  const headers = request.headers as { apikey?: string | string[]; authorization?: string };
  if (headers.apikey || headers.authorization || !request.raw.url?.includes('apikey=')) return headers;
  const key = (request.query as Record<string, unknown> | undefined)?.apikey;
  return { apikey: Array.isArray(key) ? String(key[0]) : typeof key === 'string' ? key : undefined };
}

export const dataPlane = fp(async (app: FastifyInstance, opts: { p: Platform; registry: ProjectRegistry }) => {
  app.decorateRequest('hearth', null as unknown as DataPlaneContext);
  const usage = new RequestUsage(opts.p);
  app.addHook('onClose', () => usage.close());

  /** Everything past the project lookup; synchronous when the caller and the project's quota are already known. */
  function admit(
    request: FastifyRequest,
    reply: FastifyReply,
    ref: string | undefined,
    project: ProjectRuntime | null,
  ): void | Promise<void> {
    if (!project)
      throw fail(
        'project_not_found',
        ref ? `There is no project with ref "${ref}".` : 'This server has no default project yet.',
      );
    // (routeOptions is a getter that builds an object: read once.)
    const config = request.routeOptions.config;
    // A route whose permission is in its URL takes no credentials: stale ones (an expired
    // session's token that storage-js still sends with uploadToSignedUrl) cannot refuse it.
    if (config?.ignoreCredentials) return admitCaller(request, reply, config, project, null);
    const credentials = credentialsOf(request);
    if (config?.refusedTokenAsKey && credentials.apikey)
      return admitKeyOnRefusal(request, reply, config, project, credentials);
    const auth = authenticate(opts.registry, project, credentials, opts.p.clock);
    return auth instanceof Promise
      ? auth.then((caller) => admitCaller(request, reply, config, project, caller))
      : admitCaller(request, reply, config, project, auth);
  }

  /** refusedTokenAsKey: a user token the check refuses leaves the caller the apikey makes. */
  async function admitKeyOnRefusal(
    request: FastifyRequest,
    reply: FastifyReply,
    config: FastifyContextConfig,
    project: ProjectRuntime,
    credentials: ReturnType<typeof credentialsOf>,
  ): Promise<void> {
    let refused: HearthError | undefined;
    const auth = await Promise.resolve()
      .then(() => authenticate(opts.registry, project, credentials, opts.p.clock))
      .catch((err: unknown) => {
        // (Checked again below with the apikey alone, which must still be a key of this project.)
        if (!(err instanceof HearthError) || !TOKEN_REFUSALS.has(err.code)) throw err;
        refused = err;
        return authenticate(opts.registry, project, { apikey: credentials.apikey }, opts.p.clock);
      });
    await admitCaller(request, reply, config, project, auth);
    if (refused) request.hearth.refusedToken = refused;
  }

  function admitCaller(
    request: FastifyRequest,
    reply: FastifyReply,
    config: FastifyContextConfig,
    project: ProjectRuntime,
    auth: DataPlaneAuth | null,
  ): void | Promise<void> {
    if (!auth && !config?.public && !config?.ignoreCredentials) {
      throw fail('no_api_key');
    }
    // Counted once it is known to be the project's own traffic (daily request quota).
    const counted = usage.admit(project, reply);
    if (counted !== undefined) return counted.then(() => void (request.hearth = { project, auth }));
    request.hearth = { project, auth };
  }

  // Callback style, so that a request whose caller and quota are already known pays one
  // promise (the registry's project lookup) instead of one per step.
  app.addHook('onRequest', (request, reply, done) => {
    if (!DATA_PLANE.test(request.url)) return done();
    const ref = (request.raw as unknown as Record<symbol, string | undefined>)[REF_SYMBOL];
    (ref ? opts.registry.byReference(ref) : opts.registry.defaultProject()).then(
      (project) => {
        let pending: void | Promise<void>;
        try {
          pending = admit(request, reply, ref, project);
        } catch (err) {
          return done(err as Error);
        }
        if (pending !== undefined)
          pending.then(
            () => done(),
            (err) => done(err),
          );
        else done();
      },
      (err) => done(err),
    );
  });
});
