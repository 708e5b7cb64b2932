/**
 * What every auth operation works with: the platform (clock, config, log),
 * the addressed project, its config/auth settings and its issuer URL.
 */
import type { Platform } from '../context.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import type { Settings } from '../platform/settings-schema.ts';
import { projectBaseUrl } from '../platform/urls.ts';

export interface AuthContext {
  p: Platform;
  project: ProjectRuntime;
  settings: Settings;
  /** The project's data-plane base URL, e.g. http://127.0.0.1:54321 */
  baseUrl: string;
  /** The `iss` claim of access tokens: baseUrl + /auth/v1 */
  issuer: string;
}

export async function authContext(p: Platform, project: ProjectRuntime): Promise<AuthContext> {
  const baseUrl = projectBaseUrl(p.config, project.row);
  return { p, project, settings: await project.settings('auth'), baseUrl, issuer: `${baseUrl}/auth/v1` };
}

export const now = (ctx: AuthContext): Date => ctx.p.clock.now();

export const later = (ctx: AuthContext, ms: number): Date => new Date(ctx.p.clock.now().getTime() + ms);
