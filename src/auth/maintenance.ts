/**
 * Removal of auth rows nobody can use any more, for a periodic worker
 * (startWorkers): sessions whose every refresh token has expired (30 days
 * after its last rotation), one-time tokens and PKCE flows a day after they
 * expired (MFA challenges and social sign-in states counted with the flows),
 * and development-mailbox messages after 7 days.
 */
import type { Platform } from '../context.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';
import { every, type Worker } from '../server/workers.ts';
import { listProjects } from '../platform/projects.ts';

const DAY = 86400_000;

export async function purgeExpiredAuthRows(project: ProjectRuntime, now: Date): Promise<{ sessions: number; tokens: number; flows: number; mail: number }> {
  const sql = project.sql;
  const dayAgo = new Date(now.getTime() - DAY);
  const sessions = await sql`delete from auth.sessions s where not exists
    (select 1 from auth.refresh_tokens r where r.session_id = s.id and r.expires_at > ${now}) returning 1`;
  const tokens = await sql`delete from auth.one_time_tokens where expires_at < ${dayAgo} returning 1`;
  const flows = await sql`delete from auth.flow_state where created_at < ${dayAgo} returning 1`;
  const challenges = await sql`delete from auth.mfa_challenges where expires_at < ${dayAgo} returning 1`;
  const states = await sql`delete from auth.oauth_states where expires_at < ${dayAgo} returning 1`;
  const mail = await sql`delete from auth.dev_mailbox where created_at < ${new Date(now.getTime() - 7 * DAY)} returning 1`;
  return { sessions: sessions.length, tokens: tokens.length, flows: flows.length + challenges.length + states.length, mail: mail.length };
}

/** Hourly: drop expired sessions, tokens, flows and old mail of every project. */
export function startAuthMaintenance(p: Platform, registry: ProjectRegistry): Worker {
  return every(p, 'auth cleanup', 3600_000, async () => {
    for (const { ref } of await listProjects(p.dbs.control)) {
      const project = await registry.byReference(ref);
      if (project) await purgeExpiredAuthRows(project, p.clock.now());
    }
  });
}
