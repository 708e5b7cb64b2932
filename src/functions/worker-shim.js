// Runs inside workerd as the module evaluated before the function's own code
// (the host prepends `const LOG_PREFIX = "<random>";` and the name of its
// own-API binding, OWN_API_BINDING). It gives Supabase-style
// functions the Deno APIs they use (Deno.serve, Deno.env), tags console output
// with the invocation it belongs to, and turns both handler forms into the one
// fetch handler workerd calls. Plain JavaScript: workerd runs it as is.
import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import { env as bindings } from 'cloudflare:workers';

const MAX_MESSAGE = 8192;
/** The request being handled: `{ id, ctx }` (its invocation id, workerd's execution context). */
const invocation = new AsyncLocalStorage();
const write = console.log.bind(console);

// The prefix is a per-instance secret kept in this module's scope, so output a
// function forges cannot pass for a log record of another invocation.
function emit(level, args) {
  let message = format(...args);
  if (message.length > MAX_MESSAGE) message = `${message.slice(0, MAX_MESSAGE)}… (truncated)`;
  write(LOG_PREFIX + JSON.stringify({ i: invocation.getStore()?.id ?? null, l: level, m: message }));
}
for (const level of ['log', 'info', 'debug', 'warn', 'error']) console[level] = (...args) => emit(level, args);
addEventListener('unhandledrejection', (event) => {
  emit('error', ['Unhandled promise rejection:', event.reason]);
  event.preventDefault();
});

const vars = new Map(Object.entries(bindings).filter(([, v]) => typeof v === 'string'));
let served = null;

// A request to the project's own SUPABASE_URL goes to the Hearth process
// through its service binding (the host names it in the config): the
// network a function may use refuses loopback, where a local Hearth listens.
const ownApi = bindings[OWN_API_BINDING];
const ownOrigin = ownApi && vars.has('SUPABASE_URL') ? new URL(vars.get('SUPABASE_URL')).origin : null;
if (ownOrigin) {
  const publicFetch = globalThis.fetch;
  globalThis.fetch = function fetch(input, init) {
    const request = new Request(input, init);
    return new URL(request.url).origin === ownOrigin ? ownApi.fetch(request) : publicFetch(request);
  };
}
/** What `export default { fetch(req, env) }` sees as env: the bindings, without the host's own. */
let userEnv = null;
const envOf = (env) => {
  if (!userEnv) {
    userEnv = { ...env };
    delete userEnv[OWN_API_BINDING];
  }
  return userEnv;
};

globalThis.Deno = {
  env: {
    get: (name) => vars.get(name),
    has: (name) => vars.has(name),
    set: (name, value) => void vars.set(name, String(value)),
    delete: (name) => void vars.delete(name),
    toObject: () => Object.fromEntries(vars),
  },
  serve(a, b) {
    served = typeof a === 'function' ? a : typeof b === 'function' ? b : a?.handler;
    if (typeof served !== 'function')
      throw new TypeError('Deno.serve needs a handler: Deno.serve((req) => new Response(...)).');
    return {
      finished: new Promise(() => {}),
      shutdown: async () => {},
      ref() {},
      unref() {},
      addr: { transport: 'tcp', hostname: '0.0.0.0', port: 8000 },
    };
  },
};

// Supabase's global for background work: the promise may outlive the
// response, and workerd keeps the instance on it (ctx.waitUntil).
globalThis.EdgeRuntime = {
  waitUntil(promise) {
    const current = invocation.getStore();
    if (!current) throw new TypeError('EdgeRuntime.waitUntil() is for use while a request is being handled.');
    current.ctx.waitUntil(Promise.resolve(promise));
  },
};

function failure(code) {
  return new Response(null, { status: 500, headers: { 'x-hearth-error': code } });
}

/**
 * Called by the entry module for every request the host forwards. The host
 * sends its own values in the cf blob header (see workerd-config.ts), which
 * workerd takes off the request and hands over as `request.cf`, so the
 * function's request goes on as it came, without a copy. Callers cannot send
 * that header: the host strips x-hearth-* from their requests.
 */
export function handle(user, request, env, ctx) {
  const cf = request.cf;
  // The host's readiness check.
  if (cf?.probe) return new Response(null, { status: 204 });
  const untouched = request.body === null ? () => false : watchBody(request);
  return invocation.run({ id: cf?.invocation ?? null, ctx }, async () => {
    const response = await respond(user, request, env, ctx);
    if (untouched() && !request.bodyUsed) await discard(bodyOf(request));
    return response;
  });
}

/**
 * workerd closes the connection after an answer that leaves more than 64 KiB
 * of the upload unread, and the host, still sending it, may then lose the
 * answer to the failed write. So a body the function never looked at is read
 * to its end (and dropped) before the answer goes out. One the function did
 * take (`req.body`, handed to a Response, a fetch or a reader) is left alone,
 * even if unread yet: an echo streams it back after the handler returned.
 */
const bodyOf = (() => {
  for (let p = Request.prototype; p; p = Object.getPrototypeOf(p)) {
    const get = Object.getOwnPropertyDescriptor(p, 'body')?.get;
    if (get) return (req) => get.call(req);
  }
  throw new Error('Request has no body getter');
})();

/** Returns a check that stays true while nothing read `req.body` (text(), json() and the like set bodyUsed instead). */
function watchBody(req) {
  let touched = false;
  Object.defineProperty(req, 'body', {
    configurable: true,
    get() {
      touched = true;
      return bodyOf(this);
    },
  });
  return () => !touched;
}

async function discard(body) {
  try {
    const reader = body.getReader();
    while (!(await reader.read()).done);
  } catch {
    // The caller went away mid-upload: the host reports that.
  }
}

async function respond(user, req, env, ctx) {
  try {
    const target = user.default;
    let response;
    if (typeof target?.fetch === 'function') response = await target.fetch(req, envOf(env), ctx);
    else if (served)
      response = await served(req, {
        remoteAddr: { transport: 'tcp', hostname: '127.0.0.1', port: 0 },
        completed: new Promise(() => {}),
      });
    else {
      emit('error', ['The function neither called Deno.serve(handler) nor has `export default { fetch(req, env) }`.']);
      return failure('function_no_handler');
    }
    if (!(response instanceof Response)) {
      emit('error', [`The handler returned ${typeof response}, not a Response.`]);
      return failure('function_error');
    }
    // A function that sets Content-Encoding has encoded the body itself, as on Deno; workerd
    // would encode it once more unless told the body is sent as it is.
    if (response.headers.has('content-encoding'))
      return new Response(response.body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
        encodeBody: 'manual',
      });
    return response;
  } catch (e) {
    emit('error', [e]);
    return failure('function_error');
  }
}
