import type { AreaSpec } from '../platform/settings-schema.ts';

/** config/workflows fields: the capability is off until enabled. */
export const workflowSettings: AreaSpec = {
  enabled: { type: 'boolean', default: false },
};
