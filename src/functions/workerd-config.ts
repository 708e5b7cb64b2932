/**
 * The files one workerd instance runs from: a Cap'n Proto config naming one
 * worker (entry module, shim, the function's bundle), its secrets as text
 * bindings, and the only network it may use. A worker gets no capability it
 * is not given here: no file system, no host environment, no other service.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { NetworkPolicy } from './network.ts';

// Pinned so a workerd upgrade cannot change behaviour under deployed functions.
const COMPATIBILITY_DATE = '2025-09-01';
/** The request header whose JSON workerd turns into `request.cf` (and removes): how the host tells the shim the invocation id. */
export const CF_HEADER = 'x-hearth-cf';
const SHIM = readFileSync(new URL('./worker-shim.js', import.meta.url), 'utf8');

const ENTRY = `import './hearth-shim.js';
import * as user from './user.js';
import { handle } from './hearth-shim.js';
export default { fetch: (request, env, ctx) => handle(user, request, env, ctx) };
`;

export interface WorkerdFiles {
  /** File name (relative to the run directory) → contents. */
  files: Record<string, string>;
  /** Prefix of the shim's log lines on stdout. */
  logPrefix: string;
}

export interface WorkerdSpec {
  socketPath: string;
  bundle: string;
  bindings: Record<string, string>;
  network: NetworkPolicy;
  memoryLimitMb: number;
  /** `host:port` of the Hearth process's own HTTP listener, bound as OWN_API_BINDING; null: none. */
  ownApi: string | null;
}

/** The service binding through which the shim sends a function's requests to its own SUPABASE_URL. */
const OWN_API_BINDING = 'HEARTH_OWN_API';

const quote = (s: string) => JSON.stringify(s);

export function workerdFiles(spec: WorkerdSpec): WorkerdFiles {
  const logPrefix = `@hearth-${randomBytes(12).toString('hex')}:`;
  const files: Record<string, string> = {
    'entry.js': ENTRY,
    'hearth-shim.js': `const LOG_PREFIX = ${quote(logPrefix)};\nconst OWN_API_BINDING = ${quote(OWN_API_BINDING)};\n${SHIM}`,
    'user.js': spec.bundle,
  };
  // Values are embedded from files rather than written as literals, so no
  // secret needs Cap'n Proto escaping; the instance deletes the files once
  // workerd has read them.
  const bindings = Object.keys(spec.bindings).map((name, i) => {
    const file = `secret-${i}`;
    files[file] = spec.bindings[name];
    return `(name = ${quote(name)}, text = embed ${quote(file)})`;
  });
  // One fixed address, the platform's own API: reaching it needs no loopback in the network policy.
  const ownApiService = spec.ownApi
    ? `\n    (name = "own-api", external = (address = ${quote(spec.ownApi)}, http = ())),`
    : '';
  if (spec.ownApi) bindings.push(`(name = ${quote(OWN_API_BINDING)}, service = "own-api")`);
  files['config.capnp'] = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "fn", worker = .fn),
    (name = "internet", network = (allow = [${spec.network.allow.map(quote).join(', ')}], deny = [${spec.network.deny.map(quote).join(', ')}])),${ownApiService}
  ],
  sockets = [(name = "http", address = ${quote(`unix:${spec.socketPath}`)}, http = (cfBlobHeader = ${quote(CF_HEADER)}), service = "fn")],
  v8Flags = [${quote(`--max-old-space-size=${spec.memoryLimitMb}`)}],
);
const fn :Workerd.Worker = (
  modules = [
    (name = "entry.js", esModule = embed "entry.js"),
    (name = "hearth-shim.js", esModule = embed "hearth-shim.js"),
    (name = "user.js", esModule = embed "user.js"),
  ],
  compatibilityDate = ${quote(COMPATIBILITY_DATE)},
  compatibilityFlags = ["nodejs_compat"],
  bindings = [${bindings.join(', ')}],
  globalOutbound = "internet",
);
`;
  return { files, logPrefix };
}
