/**
 * The Fastify application: health, management API, and the data plane of
 * every project. Areas register their routes here.
 */
import { createRequire } from 'node:module';
import type { ValidatorFactory } from '@fastify/ajv-compiler';
import type { SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { answerClientError } from './client-errors.ts';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { managementRoutes } from '../management/routes.ts';
import { cors } from './cors.ts';
import { capClientSockets } from './socket-cap.ts';
import { dataPlane, rewriteProjectUrl } from '../http/data-plane.ts';
import { areaOf, envelope, sendError } from '../http/envelopes.ts';
import { safeJsonParser } from '../http/json-body.ts';
import { accessLog } from './logger.ts';
import { jwksRoutes } from '../auth/jwks.ts';
import { workflowRoutes } from '../workflows/routes.ts';
import { storageRoutes } from '../storage/routes.ts';
import { mfaRoutes } from '../auth/routes-mfa.ts';
import { socialRoutes } from '../auth/routes-social.ts';
import { functionRoutes } from '../functions/routes.ts';
import { functionManagementRoutes } from '../functions/routes-management.ts';
import { restRoutes } from '../rest/routes.ts';
import { cronRoutes } from '../cron/routes.ts';
import { authRoutes } from '../auth/routes.ts';
import { mailboxRoutes } from '../auth/mailbox-routes.ts';
import { realtimeRoutes } from '../realtime/routes.ts';
import { studioRoutes } from '../studio/serve.ts';

/** The logger, whose child() is itself (same output, no per-request child). */
function selfChildLogger(log: FastifyBaseLogger): FastifyBaseLogger {
  const self: FastifyBaseLogger = Object.create(log, { child: { value: () => self } });
  return self;
}

/**
 * Fastify's default schema compilers (ajv and fast-json-stringify, ~40
 * modules and ~1.6 MB of heap once loaded), loaded when a route first
 * declares a JSON schema. No route does: Hearth checks requests in code. By
 * default Fastify loads both whenever it starts.
 */
function onFirstSchema<F>(pkg: string): F {
  let factory: ((...args: unknown[]) => unknown) | undefined;
  return ((...args: unknown[]) => {
    factory ??= (createRequire(import.meta.resolve('fastify'))(pkg) as () => (...a: unknown[]) => unknown)();
    return factory(...args);
  }) as F;
}

export async function buildApp(p: Platform, registry: ProjectRegistry): Promise<FastifyInstance> {
  const debug = p.config.logLevel === 'debug';
  const app = Fastify({
    // Without request logging a per-request child logger (with its request id) buys nothing but
    // CPU: the logger is then its own child. (Done in the logger rather than with a
    // childLoggerFactory, which Fastify re-validates on every request.)
    loggerInstance: debug ? p.log : selfChildLogger(p.log),
    logController: new LogController({ disableRequestLogging: !debug }),
    bodyLimit: p.config.bodyLimitBytes,
    trustProxy: p.config.trustedProxies.length ? p.config.trustedProxies : false,
    rewriteUrl: rewriteProjectUrl(p.config.projectDomain),
    // Fastify's default is no limit: a client that stops sending its body would hold its socket for good.
    // Node checks the deadlines every connectionsCheckingInterval (30 s by default).
    requestTimeout: p.config.requestTimeoutMs,
    http: { requestTimeout: p.config.requestTimeoutMs, connectionsCheckingInterval: 5000 },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // A malformed URL (bad percent-encoding) is answered in the area's envelope too,
    // and so is a request Node's parser refuses.
    frameworkErrors: (err, request, reply) => sendError(request, reply, err),
    clientErrorHandler: answerClientError,
    schemaController: {
      compilersFactory: {
        buildValidator: onFirstSchema<ValidatorFactory>('@fastify/ajv-compiler'),
        buildSerializer: onFirstSchema<SerializerFactory>('@fastify/fast-json-stringify-compiler'),
      },
    },
  });

  capClientSockets(app.server, p.config.maxSockets, p.log);

  // A bodyless POST or DELETE that still says `Content-Type: application/json`
  // (generic HTTP helpers do this, e.g. for a run cancel) has no body, like one
  // without the header, rather than being 400 "empty JSON". Areas may override.
  const json = safeJsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') done(null, undefined);
    // biome-ignore lint/nursery/noFloatingPromises: Fastify's parser answers through `done`; its type also allows a promise.
    else json(request, body as string, done);
  });

  if (p.config.accessLog) accessLog(app, p.log);
  app.decorateRequest('account', null);
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err));
  app.setNotFoundHandler((request, reply) => {
    const e = fail('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`);
    return reply.code(404).send(envelope(areaOf(request.url), e));
  });

  app.get('/health', async (_request, reply) => {
    try {
      await Promise.race([
        p.dbs.control`select 1`.execute(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
      ]);
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'unavailable', message: 'The control database is not reachable.' });
    }
  });

  // Each area is registered on a turn of its own: the routes are built while PostgreSQL starts
  // and the first connections are made (runtime.ts), whose replies would otherwise wait for all
  // of it (~100 ms of work chained through promises, which never lets I/O in).
  for (const register of [
    () => app.register(managementRoutes, { p, registry }),
    // Before the data plane's credential check: preflights carry no key.
    () => app.register(cors),
    () => app.register(dataPlane, { p, registry }),
    () => app.register(jwksRoutes),
    () => app.register(workflowRoutes, { p, registry }),
    () => app.register(storageRoutes, { p }),
    () => app.register(mfaRoutes, { p }),
    () => app.register(socialRoutes, { p }),
    () => app.register(functionRoutes, { p, registry }),
    () => app.register(functionManagementRoutes, { p }),
    () => app.register(restRoutes),
    () => app.register(cronRoutes, { p }),
    () => app.register(authRoutes, { p }),
    () => app.register(mailboxRoutes, { p, registry }),
    () => app.register(realtimeRoutes, { p, registry }),
    () => app.register(studioRoutes, { p }),
  ]) {
    await register();
    await new Promise(setImmediate);
  }
  return app as unknown as FastifyInstance;
}
