/**
 * Removal of auth rows nobody can use any more, for a periodic worker
 * (startWorkers): sessions whose every refresh token has expired (30 days
 * after its last rotation), one-time tokens and PKCE flows a day after they
 * expired (MFA challenges and social sign-in states counted with the flows;
 * passkey sign-in challenges as soon as they are used or expired), code
 * decoys once expired (counted with the tokens), and development-mailbox
 * messages after 7 days.
 */
import type { Platform } from '../context.ts';
import type { Sql } from '../db/pools.ts';
import { every, type Worker } from '../periodic.ts';
import { listProjects } from '../platform/projects.ts';

const DAY = 86400_000;

export async function purgeExpiredAuthRows(
  project: { sql: Sql },
  now: Date,
): Promise<{ sessions: number; tokens: number; flows: number; mail: number }> {
  const sql = project.sql;
  const dayAgo = new Date(now.getTime() - DAY);
  const sessions = await sql`delete from auth.sessions s where not exists
    (select 1 from auth.refresh_tokens r where r.session_id = s.id and r.expires_at > ${now}) returning 1`;
  const tokens = await sql`delete from auth.one_time_tokens where expires_at < ${dayAgo} returning 1`;
  const decoys = await sql`delete from auth.code_decoys where expires_at < ${now} returning 1`;
  const flows = await sql`delete from auth.flow_state where created_at < ${dayAgo} returning 1`;
  // Passkey sign-in challenges belong to nobody and anyone may ask for one: they go as soon as they are used or expired.
  const challenges = await sql`delete from auth.mfa_challenges
    where expires_at < ${dayAgo} or (kind = 'passkey_signin' and (expires_at < ${now} or consumed_at is not null)) returning 1`;
  const states = await sql`delete from auth.oauth_states where expires_at < ${dayAgo} returning 1`;
  const mail =
    await sql`delete from auth.dev_mailbox where created_at < ${new Date(now.getTime() - 7 * DAY)} returning 1`;
  return {
    sessions: sessions.length,
    tokens: tokens.length + decoys.length,
    flows: flows.length + challenges.length + states.length,
    mail: mail.length,
  };
}

/** Hourly: drop expired sessions, tokens, flows and old mail of every project. */
export function startAuthMaintenance(p: Platform): Worker {
  return every(p, 'auth cleanup', 3600_000, async () => {
    // One project at a time on a connection of its own, so the pass leaves no project pool awake.
    for (const { ref, db_name } of await listProjects(p.dbs.control)) {
      try {
        await p.dbs.briefly(db_name, (sql) => purgeExpiredAuthRows({ sql }, p.clock.now()));
      } catch (err) {
        p.log.error({ err, ref }, 'auth cleanup failed for a project');
      }
    }
  });
}
