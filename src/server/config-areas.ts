/**
 * The areas' settings schemas, handed to the platform when the process is
 * assembled: PATCH /v1/projects/{ref}/config/{area} validates against them and
 * the registry reads them with their defaults. The platform sits below the
 * areas and never imports one (docs/architecture.md, Layout).
 */
import { authSettings } from '../auth/settings.ts';
import { registerConfigArea } from '../platform/project-config.ts';
import { realtimeSettings } from '../realtime/settings.ts';
import { apiSettings } from '../rest/settings.ts';
import { storageSettings } from '../storage/settings.ts';
import { workflowSettings } from '../workflows/settings.ts';

export function registerConfigAreas(): void {
  registerConfigArea('api', apiSettings);
  registerConfigArea('auth', authSettings);
  registerConfigArea('realtime', realtimeSettings);
  registerConfigArea('storage', storageSettings);
  registerConfigArea('workflows', workflowSettings);
}
