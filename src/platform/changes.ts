/**
 * Cross-process cache invalidation. A change to a project (deleted, config
 * patched, an API key created, renamed or revoked) is announced with NOTIFY
 * inside the writing transaction, so every Hearth process that caches project
 * data drops its copy on commit.
 */
import type postgres from 'postgres';
import type { Sql } from '../db/pools.ts';

export const CHANGES_CHANNEL = 'hearth_changes';

export interface Change {
  /** `keys`: an API key was created, renamed or revoked (api-keys.ts). */
  kind: 'project' | 'config' | 'keys';
  projectId: string;
  area?: string;
}

export async function announce(tx: postgres.TransactionSql | Sql, change: Change): Promise<void> {
  await tx`select pg_notify(${CHANGES_CHANNEL}, ${JSON.stringify(change)})`;
}

export async function listenForChanges(control: Sql, onChange: (c: Change) => void): Promise<() => Promise<void>> {
  const { unlisten } = await control.listen(CHANGES_CHANNEL, (payload) => {
    try {
      onChange(JSON.parse(payload) as Change);
    } catch {
      /* a payload from something else on the channel: ignore */
    }
  });
  return unlisten;
}
