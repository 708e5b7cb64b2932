import type { AreaSpec } from '../platform/settings-schema.ts';

/** config/storage fields. */
export const storageSettings: AreaSpec = {
  quota_bytes: { type: 'integer', default: 1024 * 1024 * 1024, min: 0, max: Number.MAX_SAFE_INTEGER },
  file_size_limit: { type: 'integer', default: 50 * 1024 * 1024, min: 1, max: 50 * 1024 * 1024 },
};
