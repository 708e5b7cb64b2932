/**
 * The functions service of one Hearth process: one runtime over the control
 * database store, created by startHearth whatever the process's role (the
 * HTTP routes and the workflow engine's `function` step both use it) and
 * shut down with the process. Found from the Platform, so several Hearths
 * in one process (tests) each keep their own.
 */
import type { Platform } from '../context.ts';
import { HearthError } from '../errors.ts';
import { type ApiKeyType, projectApiKeys } from '../platform/api-keys.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';
import { listenerAddress, projectBaseUrl } from '../platform/urls.ts';
import { DbFunctionStore } from './db-store.ts';
import { createFunctionsRuntime, type FunctionsRuntime, type FunctionsRuntimeOptions } from './runtime.ts';

export interface FunctionsService {
  runtime: FunctionsRuntime;
  stop(): Promise<void>;
}

const services = new WeakMap<Platform, FunctionsService>();

/**
 * What Supabase gives every function besides its secrets: the project's URL,
 * its publishable key (as SUPABASE_ANON_KEY too, the name older code reads)
 * and its secret key (as SUPABASE_SERVICE_ROLE_KEY too), so the admin clients
 * of Supabase's guides (`createClient(url, SUPABASE_SERVICE_ROLE_KEY)`) run
 * unchanged; every key of each type by name as JSON (SUPABASE_PUBLISHABLE_KEYS,
 * SUPABASE_SECRET_KEYS: `{"default": "sb_..."}`, Supabase's current names);
 * and the public JWKS that verifies the project's user tokens (SUPABASE_JWKS).
 * Only the project's own keys: the deploying owner or admin can read them
 * anyway, and no other project's or the platform's are ever given. The first
 * key of each type (projectApiKeys' order) is the one `hearth status` prints;
 * revoking it moves to the next.
 *
 * Not SUPABASE_DB_URL: the database listens on an address a function's
 * network refuses (loopback, this host, a private network), so it could not
 * be used.
 */
async function platformEnv(p: Platform, project: ProjectRuntime): Promise<Record<string, string>> {
  const keys = await projectApiKeys(p, project.id);
  const byName = (type: ApiKeyType) =>
    JSON.stringify(Object.fromEntries(keys.filter((k) => k.type === type).map((k) => [k.name, k.api_key])));
  const publishable = keys.find((k) => k.type === 'publishable')?.api_key;
  const secret = keys.find((k) => k.type === 'secret')?.api_key;
  return {
    SUPABASE_URL: projectBaseUrl(p.config, project.row),
    ...(publishable && { SUPABASE_ANON_KEY: publishable, SUPABASE_PUBLISHABLE_KEY: publishable }),
    ...(secret && { SUPABASE_SERVICE_ROLE_KEY: secret, SUPABASE_SECRET_KEY: secret }),
    SUPABASE_PUBLISHABLE_KEYS: byName('publishable'),
    SUPABASE_SECRET_KEYS: byName('secret'),
    SUPABASE_JWKS: project.jwksJson,
  };
}

const envs = new WeakMap<ProjectRuntime, Promise<Record<string, string>>>();

/**
 * platformEnv of a loaded project, memoised per loaded project (so a key or
 * URL change is picked up when the registry reloads it): the same promise
 * each time, which the runtime then reads without waiting.
 */
export function functionEnv(p: Platform, project: ProjectRuntime): Promise<Record<string, string>> {
  let env = envs.get(project);
  if (!env) {
    env = platformEnv(p, project);
    envs.set(project, env);
    env.catch(() => envs.delete(project));
  }
  return env;
}

export async function startFunctions(
  p: Platform,
  registry: ProjectRegistry,
  options: Omit<Partial<FunctionsRuntimeOptions>, 'store'> = {},
): Promise<FunctionsService> {
  const store = new DbFunctionStore(p);
  await store.start();
  const runtime = createFunctionsRuntime(p.config, {
    store,
    timeoutMs: p.config.functionTimeoutMs,
    memoryLimitMb: p.config.functionMemoryMb,
    platformEnv: async (ref) => {
      const project = await registry.byReference(ref);
      return project ? functionEnv(p, project) : {};
    },
    // A worker-role process serves no HTTP: its functions reach the API over the network.
    ownApi: () => (p.config.role === 'worker' ? null : listenerAddress(p.config)),
    ...options,
  });
  const service: FunctionsService = {
    runtime,
    async stop() {
      if (services.get(p) === service) services.delete(p);
      await runtime.shutdown();
      await store.close();
    },
  };
  services.set(p, service);
  return service;
}

/** This process's functions runtime; throws if startHearth did not start one. */
export function functionsRuntime(p: Platform): FunctionsRuntime {
  const service = services.get(p);
  if (!service)
    throw new Error('The functions runtime is not started (startFunctions was not called for this platform).');
  return service.runtime;
}

/**
 * The workflow engine's `function` step invoker, or null when no runtime runs
 * here. A platform refusal (404 function_not_found, 504 function_timeout, ...)
 * comes back as that status with the error envelope as body, as an HTTP
 * caller would see it, so the step decides retries by status.
 */
export function functionInvoker(
  p: Platform,
): ((projectRef: string, name: string, body: unknown) => Promise<{ status: number; body: unknown }>) | null {
  const service = services.get(p);
  if (!service) return null;
  return async (ref, name, body) => {
    try {
      return await service.runtime.invokeFunctionJson(ref, name, body);
    } catch (e) {
      if (!(e instanceof HearthError)) throw e;
      return { status: e.status, body: { error: { code: e.code, message: e.message } } };
    }
  };
}
