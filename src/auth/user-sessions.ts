/**
 * The signed-in user's own sessions: GET /auth/v1/sessions lists the live
 * ones (a session is live while one of its refresh tokens is unexpired),
 * DELETE /auth/v1/sessions/{id} ends one (its refresh tokens stop working;
 * access tokens already issued live until they expire, as with logout).
 */
import { fail } from '../errors.ts';
import { now, type AuthContext } from './context.ts';
import { sessionIdOf, userGone, type UserClaims } from './http.ts';

export async function listSessions(ctx: AuthContext, userId: string, currentSessionId: string | null) {
  const rows = await ctx.project
    .sql`select s.id, s.aal, s.amr, s.created_at, coalesce(s.refreshed_at, s.created_at) as updated_at
    from auth.sessions s
    where s.user_id = ${userId}
      and exists (select 1 from auth.refresh_tokens r where r.session_id = s.id and not r.revoked and r.expires_at > ${now(ctx)})
    order by s.created_at desc`;
  return rows.map((r) => ({
    id: r.id,
    aal: r.aal,
    amr: r.amr,
    created_at: r.created_at,
    updated_at: r.updated_at,
    current: r.id === currentSessionId,
  }));
}

export async function revokeSession(ctx: AuthContext, userId: string, sessionId: string): Promise<void> {
  const gone = await ctx.project
    .sql`delete from auth.sessions where id = ${sessionId} and user_id = ${userId} returning id`;
  // 404, as for an unknown factor id: the id names nothing the caller has (the 403 of
  // sessionEnded is about the caller's own session having ended).
  if (gone.length === 0)
    throw fail('session_not_found', 'No session with this id belongs to you (it may already have ended).', {
      status: 404,
    });
}

export const sessionEnded = () => fail('session_not_found');

/**
 * Calls that mint a session or a lasting credential (factor enrolment and
 * verification, identity linking) need the access token's session to still
 * exist, as GoTrue requires: otherwise a token outliving its logout, a global
 * sign-out or a password change could start a fresh session.
 */
export async function requireLiveSession(ctx: AuthContext, claims: UserClaims): Promise<void> {
  const sessionId = sessionIdOf(claims);
  // The user is checked first, as GoTrue does: a deleted user's sessions are gone too, but the answer is user_not_found.
  const [row] = await ctx.project.sql`select
      exists (select 1 from auth.users where id = ${claims.sub} and deleted_at is null) as user,
      exists (select 1 from auth.sessions where id = ${sessionId} and user_id = ${claims.sub}) as session`;
  if (!row!.user) throw userGone();
  if (!row!.session) throw sessionEnded();
}

/** The access token's user still exists (not deleted, not soft-deleted): else 403 user_not_found. */
export async function requireTokenUser(ctx: AuthContext, claims: UserClaims): Promise<void> {
  const [row] = await ctx.project.sql`select 1 from auth.users where id = ${claims.sub} and deleted_at is null`;
  if (!row) throw userGone();
}
