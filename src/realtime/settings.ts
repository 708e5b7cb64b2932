import type { AreaSpec, Settings } from '../platform/settings-schema.ts';

/** config/realtime: Supabase Realtime's tenant limits, by the same names. */
export const realtimeSettings: AreaSpec = {
  enabled: { type: 'boolean', default: true },
  max_concurrent_users: { type: 'integer', default: 200, min: 1, max: 1_000_000 },
  max_channels_per_client: { type: 'integer', default: 100, min: 1, max: 10_000 },
  max_joins_per_second: { type: 'integer', default: 100, min: 1, max: 1_000_000 },
  max_events_per_second: { type: 'integer', default: 100, min: 1, max: 1_000_000 },
  max_payload_size_in_kb: { type: 'integer', default: 256, min: 1, max: 3000 },
};

export interface RealtimeLimits {
  enabled: boolean;
  maxConcurrentUsers: number;
  maxChannelsPerClient: number;
  maxJoinsPerSecond: number;
  maxEventsPerSecond: number;
  maxPayloadBytes: number;
}

export function limitsOf(s: Settings): RealtimeLimits {
  return {
    enabled: s.enabled as boolean,
    maxConcurrentUsers: s.max_concurrent_users as number,
    maxChannelsPerClient: s.max_channels_per_client as number,
    maxJoinsPerSecond: s.max_joins_per_second as number,
    maxEventsPerSecond: s.max_events_per_second as number,
    maxPayloadBytes: (s.max_payload_size_in_kb as number) * 1024,
  };
}
