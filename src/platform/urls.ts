import type { Config } from '../config.ts';
import type { ProjectRow } from './projects.ts';

/** `host:port` of this process's HTTP listener as reached from this machine, e.g. 127.0.0.1:54321 (set once listening). */
export function listenerAddress(config: Pick<Config, 'host' | 'port'>): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** The server's public root, e.g. http://127.0.0.1:54321 (set once listening). */
export function serverUrl(config: Config): string {
  return config.publicUrl ?? `http://${listenerAddress(config)}`;
}

/** A project's data-plane base URL: the server root for the default project, else /project/{ref}. */
export function projectBaseUrl(config: Config, project: Pick<ProjectRow, 'ref' | 'is_default'>): string {
  return project.is_default ? serverUrl(config) : `${serverUrl(config)}/project/${project.ref}`;
}
