/**
 * Every 10 minutes, on every project: relayed broadcasts (realtime.messages)
 * and large relay bodies older than their retention are deleted, so sends
 * from SQL with no Hearth process listening cannot grow without bound.
 * (A project with channels open also prunes from its hub.)
 */
import type { Platform } from '../context.ts';
import { listProjects } from '../platform/projects.ts';
import { every, type Worker } from '../periodic.ts';
import { pruneRelayed } from './hub.ts';

export function startRealtimeRetention(p: Platform): Worker {
  return every(p, 'realtime relay retention', 10 * 60_000, async () => {
    for (const { ref, db_name } of await listProjects(p.dbs.control)) {
      try {
        await p.dbs.briefly(db_name, pruneRelayed);
      } catch (err) {
        p.log.error({ err, ref }, 'realtime retention failed for a project');
      }
    }
  });
}
