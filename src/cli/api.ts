/**
 * Where a command goes: the management API (`/v1`) of a remote Hearth the
 * user logged in to, or of the local Hearth of the data folder (as `hearth
 * status` reads it). Every command, SQL included (through
 * POST /v1/projects/{ref}/database/query), goes over this one HTTP API, so it
 * behaves the same against either.
 *
 *   URL:   HEARTH_API_URL, else the saved login's, else the local Hearth's.
 *   Token: HEARTH_ACCESS_TOKEN, else the saved login's, else (local Hearth
 *          only) a management token minted from the data folder.
 */
import { linkedRef } from './app-folder.ts';
import { readLogin } from './credentials.ts';
import { CliError } from './output.ts';

export interface ProjectJson {
  id: string;
  ref: string;
  name: string;
  organization_id: string;
  is_default: boolean;
  base_url: string;
  api_url: string;
  status: string;
  created_at: string;
}

/** A refusal from Hearth with its code, for commands that handle some codes themselves. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

export class Api {
  constructor(
    readonly url: string,
    private readonly token: string,
    /** How to fix a refused token, for the one-line error. */
    private readonly relogin: string,
    readonly local: boolean,
  ) {}

  // Callers name the answer's type; unnamed, it is the parsed JSON as it came.
  // biome-ignore lint/suspicious/noExplicitAny: see above.
  async call<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.url + path, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15 * 60_000),
      });
    } catch (err) {
      const cause = ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message;
      throw new CliError(
        `Cannot reach ${this.url} (${cause}). ${this.local ? 'Is Hearth running? Start it with `npm start`.' : 'Check the URL given to `hearth login --url`.'}`,
      );
    }
    const text = await res.text();
    let parsed: { error?: { code?: unknown; message?: string } } | null = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      throw this.notHearth(res);
    }
    if (res.ok) return parsed as T;
    const code = parsed?.error?.code;
    if (typeof code !== 'string') throw this.notHearth(res);
    if (res.status === 401) throw new CliError(this.relogin);
    throw new ApiError(
      res.status,
      code,
      `${parsed?.error?.message ?? code} (${code})`,
      parsed as Record<string, unknown>,
    );
  }

  private notHearth(res: Response): CliError {
    return new CliError(
      `${this.url} does not answer as a Hearth server (${res.status} ${res.headers.get('content-type') ?? 'no content type'} for the management API): check the URL given to \`hearth login --url\`.`,
    );
  }
}

/** The API of the saved login or of the local Hearth. */
export async function connect(env: NodeJS.ProcessEnv = process.env): Promise<Api> {
  const login = readLogin(env);
  const envToken = env.HEARTH_ACCESS_TOKEN || null;
  const envUrl = env.HEARTH_API_URL?.replace(/\/+$/, '') || null;
  if (envToken || login) {
    const url = envUrl ?? login?.api_url ?? null;
    if (url) {
      const relogin = envToken
        ? `${url} refused HEARTH_ACCESS_TOKEN (expired or revoked): set a valid management token, or unset it and run \`hearth login --url ${url}\`.`
        : `Your login to ${url} has expired or was revoked: run \`hearth login --url ${url}\` again.`;
      return new Api(url, envToken ?? login!.access_token, relogin, false);
    }
  }
  // The data folder's database code is loaded only for the local Hearth.
  const { localConnection, localConfig } = await import('./status.ts');
  const info = await localConnection(localConfig(env));
  const url = envUrl ?? info.API_URL;
  return new Api(
    url,
    envToken ?? info.MANAGEMENT_TOKEN,
    'The local Hearth refused the management token of its data folder: restart it with `npm start`.',
    true,
  );
}

export interface Target {
  api: Api;
  project: ProjectJson;
  /** `/v1/projects/{ref}`: the prefix of the project's routes. */
  path: string;
}

/** The project a command acts on: --project-ref, else the linked one, else the default one. */
export async function target(
  opts: { projectRef?: string; workdir?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<Target> {
  const api = await connect(env);
  let ref = opts.projectRef ?? linkedRef(opts.workdir) ?? null;
  if (!ref) {
    const projects = await api.call<ProjectJson[]>('GET', '/v1/projects');
    const chosen = projects.find((p) => p.is_default) ?? (projects.length === 1 ? projects[0] : undefined);
    if (!chosen)
      throw new CliError(
        `${api.url} has ${projects.length} projects and none is the default: pass --project-ref, or run \`hearth link --project-ref <ref>\`.`,
      );
    ref = chosen.ref;
  }
  const path = `/v1/projects/${encodeURIComponent(ref)}`;
  try {
    const project = await api.call<ProjectJson>('GET', path);
    return { api, project, path };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      throw new CliError(
        `There is no project "${ref}" at ${api.url}: \`hearth projects list\` shows yours; pass --project-ref or run \`hearth link --project-ref <ref>\`.`,
      );
    }
    if (err instanceof ApiError && err.status === 403)
      throw new CliError(`Project "${ref}" at ${api.url}: ${err.message}`);
    throw err;
  }
}

export interface SqlFailure {
  message: string;
  sqlstate: string;
  position: number | null;
  detail: string | null;
  hint: string | null;
}

/** A statement PostgreSQL refused, with where in the text it failed. */
export class SqlError extends CliError {
  constructor(readonly failure: SqlFailure) {
    super(failure.message);
  }
}

/** Runs SQL as the project's owner role; the rows of the last statement. */
export async function sql<T = Record<string, unknown>>(t: Target, query: string, timeoutMs?: number): Promise<T[]> {
  try {
    return await t.api.call<T[]>('POST', `${t.path}/database/query`, {
      query,
      ...(timeoutMs ? { timeout_ms: timeoutMs } : {}),
    });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'sql_error') {
      const b = err.body as {
        error: { message: string };
        sqlstate: string;
        position?: number;
        detail?: string;
        hint?: string;
      };
      throw new SqlError({
        message: b.error.message,
        sqlstate: b.sqlstate,
        position: b.position ?? null,
        detail: b.detail ?? null,
        hint: b.hint ?? null,
      });
    }
    throw err;
  }
}
