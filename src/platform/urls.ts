import type { Config } from '../config.ts';
import type { ProjectRow } from './projects.ts';

/** The server's public root, e.g. http://127.0.0.1:54321 (set once listening). */
export function serverUrl(config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** A project's data-plane base URL: the server root for the default project, else /project/{ref}. */
export function projectBaseUrl(config: Config, project: Pick<ProjectRow, 'ref' | 'is_default'>): string {
  return project.is_default ? serverUrl(config) : `${serverUrl(config)}/project/${project.ref}`;
}
