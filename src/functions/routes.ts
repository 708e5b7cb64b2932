/**
 * The functions data plane: `{base_url}/functions/v1/{name}` and
 * `/functions/v1/{name}/*`, any method, request and response bodies streamed
 * through (this plugin never reads a body: its content-type parser leaves it
 * on the socket for the function). The function sees the path
 * `/{name}/{suffix}?query` and every header, Authorization included;
 * X-Forwarded-For and X-Real-IP are replaced by the client's address as
 * Hearth determines it (request.ip, which trusts only HEARTH_TRUSTED_PROXIES).
 *
 * verify_jwt (default true): the caller needs the project's key or a valid
 * user token of the project, else 401; without verify_jwt anyone may call,
 * with any Authorization header (a webhook's, another issuer's token), which
 * the function checks itself. CORS preflights (OPTIONS) reach an existing
 * function, as on Supabase, since browsers send them without credentials.
 */
import http from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail, HearthError } from '../errors.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { REF_SYMBOL } from '../http/data-plane.ts';
import { sendError } from '../http/envelopes.ts';
import { functionEnv, functionsRuntime } from './index.ts';
import type { FunctionsRuntime, Invocation, Invoked } from './runtime.ts';
import { isFunctionName } from './validate.ts';

const PREFIX = '/functions/v1';
/** Refusals of the data plane's credential check (src/http/credentials.ts). */
const CREDENTIAL_ERRORS = new Set(['invalid_api_key', 'bad_jwt', 'bad_authorization']);
const NO_BODY = new Set(['GET', 'HEAD']);
/** Paths and hosts the URL parser would leave as they are (no escaping, no case change): sent on without parsing. */
const PLAIN_PATH = /^\/[!$-&(-;=?-[\]^_a-z|~]*$/;
const PLAIN_HOST = /^[a-z0-9.:[\]-]+$/;
/**
 * Every method Node parses except CONNECT (a tunnel, not a request) is passed
 * to the function, as Supabase's gateway does; these few workerd does not
 * know (it would answer 501 without a code), so they are refused here.
 */
const UNCARRIED = ['BIND', 'LINK', 'M-SEARCH', 'MKCALENDAR', 'REBIND', 'SOURCE', 'UNBIND', 'UNLINK'];
const CARRIED = http.METHODS.filter((m) => m !== 'CONNECT' && !UNCARRIED.includes(m));
/** The response each request is streaming, so a body that fails before its first byte gets its platform error. */
const streaming = new WeakMap<FastifyRequest, Invoked>();

type Route = { Params: { name: string; '*'?: string } };

const missing = (name: string) =>
  fail('function_not_found', `No function named "${name}" is deployed in this project.`);

function hasBody(request: FastifyRequest): boolean {
  if (NO_BODY.has(request.method)) return false;
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The request the function sees: its own name as the first path segment, every header, the body as a stream. */
function functionRequest(request: FastifyRequest): Invocation {
  const raw = request.raw;
  const body = hasBody(request);
  let path = request.url.slice(PREFIX.length);
  let host = request.headers.host ?? 'localhost';
  if (!PLAIN_PATH.test(path) || !PLAIN_HOST.test(host)) {
    // Bytes a request line may carry but an outgoing one may not: escaped by the URL parser, as a web Request would.
    let url: URL;
    try {
      url = new URL(path, `http://${host}`);
    } catch {
      url = new URL(path, 'http://localhost');
    }
    path = url.pathname + url.search;
    host = url.host;
  }
  return {
    method: request.method,
    path,
    host,
    headers: raw.rawHeaders,
    body: body ? raw : null,
    // The upload stopped before its end: the caller is gone.
    callerGone: () => body && !raw.complete && raw.destroyed,
    // Empty when the caller's socket closed before its address was read: never what the caller sent.
    clientIp: request.ip ?? '',
  };
}

async function invoke(p: Platform, runtime: FunctionsRuntime, request: FastifyRequest<Route>, reply: FastifyReply) {
  if (UNCARRIED.includes(request.method)) {
    reply.header('allow', CARRIED.join(', '));
    throw fail(
      'method_not_allowed',
      `The functions runtime cannot carry ${request.method} requests; a function may be called with ${CARRIED.join(', ')}.`,
    );
  }
  const { project, auth } = request.hearth;
  const { name } = request.params;
  const fn = isFunctionName(name) ? await runtime.store.get(project.ref, name) : null;
  // Without credentials a missing function is a 401 too, whatever the method, so it
  // answers as one that needs credentials does. Preflights (OPTIONS) of an existing
  // function reach it: browsers send them without credentials.
  if (!auth && (!fn || (fn.verifyJwt && request.method !== 'OPTIONS'))) {
    throw fail(
      'no_api_key',
      "This function needs the project's API key or a user access token: send Authorization: Bearer <key or token>.",
    );
  }
  if (!fn) throw missing(name);
  const response = await runtime.invoke(project.ref, name, functionRequest(request), {
    record: fn,
    env: functionEnv(p, project),
  });
  reply.code(response.status).headers(response.headers);
  if (!response.body) return reply.send();
  if (Buffer.isBuffer(response.body)) return reply.send(request.method === 'HEAD' ? null : response.body);
  if (request.method === 'HEAD') {
    response.body.destroy();
    return reply.send();
  }
  streaming.set(request, response);
  return reply.send(response.body);
}

/**
 * A refusal before the function ran leaves the upload unread: sendError reads
 * and drops it (up to a bound), so the answer reaches the client.
 *
 * Platform errors (401, 404, 5xx) carry `Access-Control-Allow-Origin: *`: the
 * function answers CORS for its own responses, but these never reach it, and
 * without the header a browser sees a network failure instead of the error
 * (supabase/supabase#9373).
 */
function refuse(request: FastifyRequest, reply: FastifyReply, err: unknown) {
  if (request.headers.origin && !reply.raw.headersSent) reply.header('access-control-allow-origin', '*');
  return sendError(request, reply, err);
}

export async function functionRoutes(app: FastifyInstance, opts: { p: Platform; registry: ProjectRegistry }) {
  const { p, registry } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  // The data plane refuses bad credentials before any route runs; a function
  // without verify_jwt still gets the call, since its Authorization header
  // may be meant for the function alone.
  app.setErrorHandler(async (err, request: FastifyRequest<Route>, reply) => {
    const invoked = streaming.get(request);
    if (invoked && !(err instanceof HearthError)) return refuse(request, reply, await invoked.failure(err));
    if (request.hearth || !(err instanceof HearthError) || err.status !== 401 || !CREDENTIAL_ERRORS.has(err.code))
      return refuse(request, reply, err);
    const ref = (request.raw as unknown as Record<symbol, string | undefined>)[REF_SYMBOL];
    const project = await (ref ? registry.byReference(ref) : registry.defaultProject()).catch(() => null);
    const runtime = functionsRuntime(p);
    const fn =
      project && isFunctionName(request.params.name)
        ? await runtime.getFunction(project.ref, request.params.name).catch(() => null)
        : null;
    if (!project || !fn || fn.verifyJwt) return refuse(request, reply, err);
    request.hearth = { project, auth: null };
    return invoke(p, runtime, request, reply).catch((e) => refuse(request, reply, e));
  });

  // Fastify routes only the common methods unless told of others. The
  // instance-wide set is extended (routes of other areas still list their own
  // methods), so WebDAV-style methods reach functions as on Supabase.
  for (const method of [...CARRIED, ...UNCARRIED]) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  const handler = (request: FastifyRequest<Route>, reply: FastifyReply) =>
    invoke(p, functionsRuntime(p), request, reply);
  for (const url of [`${PREFIX}/:name`, `${PREFIX}/:name/*`]) {
    app.route<Route>({
      method: [...CARRIED, ...UNCARRIED],
      url,
      config: { public: true },
      exposeHeadRoute: false,
      handler,
    });
  }
}
