/**
 * What a user needs to connect to a project: the lines `hearth start` prints
 * and `hearth status` outputs (BASE_URL, API_URL, PROJECT_REF, keys, DB_URL,
 * MANAGEMENT_TOKEN, JWKS_URL).
 */
import type { Platform } from '../context.ts';
import { withDatabase } from '../db/pools.ts';
import { CLI_SESSION_SECONDS, createSession } from './accounts.ts';
import { projectApiKeys } from './api-keys.ts';
import type { ProjectRow } from './projects.ts';
import { projectBaseUrl, serverUrl } from './urls.ts';

export interface ConnectionInfo {
  BASE_URL: string;
  API_URL: string;
  PROJECT_REF: string;
  PUBLISHABLE_KEY: string;
  SECRET_KEY: string;
  DB_URL: string;
  MANAGEMENT_TOKEN: string;
  JWKS_URL: string;
}

/** The project's direct SQL URL: its owner role on its own database, on the server Hearth uses. */
export function projectDbUrl(p: Platform, project: ProjectRow): string {
  const u = new URL(withDatabase(p.dbs.serverUrl, project.db_name));
  u.username = project.owner_role;
  u.password = p.master.decrypt(project.owner_password_sealed);
  return u.toString();
}

export async function connectionInfo(
  p: Platform,
  project: ProjectRow,
  ownerAccountId: string,
): Promise<ConnectionInfo> {
  const keys = await projectApiKeys(p, project.id);
  const base = projectBaseUrl(p.config, project);
  const session = await createSession(p, ownerAccountId, CLI_SESSION_SECONDS);
  return {
    BASE_URL: base,
    API_URL: serverUrl(p.config),
    PROJECT_REF: project.ref,
    PUBLISHABLE_KEY: keys.find((k) => k.type === 'publishable')!.api_key,
    SECRET_KEY: keys.find((k) => k.type === 'secret')!.api_key,
    DB_URL: projectDbUrl(p, project),
    MANAGEMENT_TOKEN: session.access_token,
    JWKS_URL: `${base}/auth/v1/.well-known/jwks.json`,
  };
}
