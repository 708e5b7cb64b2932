/**
 * Sign-in by e-mail: /otp (code + magic link), /recover (reset link + code),
 * their redemption by POST /verify (code) or GET /verify (link), and the PKCE
 * exchange of the auth code a link redirect carries.
 */
import { fail, HearthError } from '../errors.ts';
import { now, type AuthContext } from './context.ts';
import { deliver } from './mailer.ts';
import { recoveryMail, signInMail } from './messages.ts';
import { issueDecoy, issueOneTime, redeemCode, redeemLink, type Purpose, type RedeemedToken } from './one-time.ts';
import { exchangeAuthCode, mintAuthCode, startFlow, type Challenge, type ProviderTokens } from './pkce.ts';
import { assertNotBanned, issueSession, type AmrMethod, type SessionPayload } from './sessions.ts';
import {
  applyEmail,
  createUser,
  findUserByEmail,
  findUserById,
  refuseSignupWhenDisabled,
  type UserRow,
} from './users.ts';

export interface EmailRequest {
  email: string;
  redirectTo: string;
  challenge: Challenge | null;
}

/** POST /otp's request: no link target while the redirect allowlist is empty (signInTarget). */
export type SignInRequest = Omit<EmailRequest, 'redirectTo'> & {
  redirectTo: string | null;
  createUser: boolean;
  metadata?: Record<string, unknown>;
};

/**
 * POST /otp before the answer, under disable_signup: an unknown address with
 * create_user is 422 signup_disabled, as GoTrue answers (which tells it apart
 * from a known one; the request has already spent rate_limit_email_sent, so
 * probing addresses is as slow as sending mail). A known address still gets
 * its code, and never an account: one deleted meanwhile gets a decoy.
 */
export async function refuseSignInSignup(ctx: AuthContext, req: SignInRequest): Promise<SignInRequest> {
  if (!req.createUser || ctx.settings.disable_signup !== true) return req;
  if (!(await findUserByEmail(ctx.project.sql, req.email))) refuseSignupWhenDisabled(ctx);
  return { ...req, createUser: false };
}

/**
 * POST /otp, after the answer: finds or (unless createUser is false) creates
 * the user, then mails a code and a link; an unknown address with createUser
 * false gets a decoy instead (one-time.ts), so /verify answers it as it
 * answers an existing one.
 */
export async function sendSignInMail(ctx: AuthContext, req: SignInRequest): Promise<void> {
  const secrets = await ctx.project.sql.begin(async (tx) => {
    let user = await findUserByEmail(tx, req.email);
    if (!user && !req.createUser) {
      await issueDecoy(ctx, tx, { purpose: 'email', email: req.email });
      return null;
    }
    user ??= await createUser(ctx, tx, {
      email: req.email,
      passwordHash: null,
      metadata: req.metadata,
      confirmed: false,
    });
    const flowStateId = req.challenge ? await startFlow(ctx, tx, req.challenge, user.id, 'magiclink') : null;
    return issueOneTime(ctx, tx, { userId: user.id, purpose: 'email', email: req.email, flowStateId });
  });
  if (secrets) await deliver(ctx, signInMail(ctx, req.email, secrets, req.redirectTo));
}

/** POST /recover, after the answer: mails a reset link to an existing user; an unknown address gets a decoy. */
export async function sendRecoveryMail(ctx: AuthContext, req: EmailRequest): Promise<void> {
  const secrets = await ctx.project.sql.begin(async (tx) => {
    const user = await findUserByEmail(tx, req.email);
    if (!user) {
      await issueDecoy(ctx, tx, { purpose: 'recovery', email: req.email });
      return null;
    }
    const flowStateId = req.challenge ? await startFlow(ctx, tx, req.challenge, user.id, 'recovery') : null;
    return issueOneTime(ctx, tx, { userId: user.id, purpose: 'recovery', email: req.email, flowStateId });
  });
  if (secrets) await deliver(ctx, recoveryMail(ctx, req.email, secrets, req.redirectTo));
}

/** The purposes /verify redeems; a reauthentication nonce is only ever spent by PUT /user. */
type SignInPurpose = Exclude<Purpose, 'reauthentication'>;

/** amr of a typed code, and of a followed link. */
const AMR: Record<SignInPurpose, AmrMethod> = { email: 'otp', recovery: 'recovery', email_change: 'email_change' };
const LINK_AMR: Record<SignInPurpose, AmrMethod> = {
  email: 'magiclink',
  recovery: 'recovery',
  email_change: 'email_change',
};

/** What redeeming a token does to the user: confirms the address, or applies the e-mail change. */
async function applyRedeemed(ctx: AuthContext, t: RedeemedToken): Promise<UserRow> {
  if (t.purpose === 'email_change') {
    return ctx.project.sql.begin(async (tx) => {
      const [pending] = await tx`select email_change from auth.users where id = ${t.user_id} for update`;
      if (pending?.email_change !== t.email)
        throw fail('otp_expired', 'This e-mail change was replaced by a newer one.');
      return applyEmail(ctx, tx, t.user_id, t.email);
    });
  }
  const [user] = await ctx.project
    .sql`update auth.users set email_confirmed_at = coalesce(email_confirmed_at, ${now(ctx)})
    where id = ${t.user_id} returning *`;
  if (!user) throw fail('otp_expired');
  return user as UserRow;
}

const CODE_TYPES: Record<string, SignInPurpose[]> = {
  // GoTrue's `email` type also redeems a recovery code or link (the /auth/confirm route of
  // Supabase's server-side guides verifies every mail's token_hash with type email).
  email: ['email', 'recovery'],
  magiclink: ['email'],
  signup: ['email'],
  // admin invitations (POST /invite, generate_link) are sign-in messages too
  invite: ['email'],
  recovery: ['recovery'],
  email_change: ['email_change'],
};

export function purposesOf(type: string): SignInPurpose[] {
  const purposes = CODE_TYPES[type];
  if (!purposes) throw fail('validation_failed', `type must be one of ${Object.keys(CODE_TYPES).join(', ')}.`);
  return purposes;
}

/** POST /verify {type, email, token}: the typed code, always answered with a session. */
export async function verifyCode(
  ctx: AuthContext,
  input: { email: string; type: string; code: string },
): Promise<SessionPayload> {
  const redeemed = await redeemCode(ctx, { email: input.email, purposes: purposesOf(input.type), code: input.code });
  const user = await applyRedeemed(ctx, redeemed);
  assertNotBanned(ctx, user, 403);
  return issueSession(ctx, user, { amr: AMR[redeemed.purpose as SignInPurpose] });
}

/** POST /verify {type, token_hash}: a link token presented by an app instead of followed in a browser. */
export async function verifyLinkToken(
  ctx: AuthContext,
  input: { type: string; token: string },
): Promise<SessionPayload> {
  const redeemed = await redeemLink(ctx, input.token, purposesOf(input.type));
  // GoTrue's words for a link (a code is "Token has expired or is invalid").
  if (!redeemed) throw fail('otp_expired', 'Email link is invalid or has expired');
  const user = await applyRedeemed(ctx, redeemed);
  assertNotBanned(ctx, user, 403);
  return issueSession(ctx, user, { amr: LINK_AMR[redeemed.purpose as SignInPurpose] });
}

export type LinkOutcome =
  | { kind: 'session'; session: SessionPayload; type: string }
  | { kind: 'code'; code: string }
  | { kind: 'error'; code: string; description: string };

/** GET /verify: redeems a link; under PKCE yields an auth code instead of a session. */
export async function followLink(ctx: AuthContext, input: { token: string; type: string }): Promise<LinkOutcome> {
  const purposes = CODE_TYPES[input.type] ?? [];
  const redeemed = purposes.length && input.token ? await redeemLink(ctx, input.token, purposes) : null;
  if (!redeemed) return { kind: 'error', code: 'otp_expired', description: 'Email link is invalid or has expired' };
  let user: UserRow;
  try {
    user = await applyRedeemed(ctx, redeemed);
    assertNotBanned(ctx, user);
  } catch (err) {
    if (err instanceof HearthError) return { kind: 'error', code: err.code, description: err.message };
    throw err;
  }
  if (redeemed.flow_state_id) return { kind: 'code', code: await mintAuthCode(ctx, redeemed.flow_state_id) };
  return {
    kind: 'session',
    session: await issueSession(ctx, user, { amr: LINK_AMR[redeemed.purpose as SignInPurpose] }),
    type: input.type,
  };
}

const FLOW_AMR: Record<string, AmrMethod> = {
  magiclink: 'magiclink',
  // A sign-up's confirmation link (mailer_autoconfirm false): a link followed, as a magic link is.
  email_signup: 'magiclink',
  recovery: 'recovery',
  email_change: 'email_change',
  oauth: 'oauth',
};

/** grant_type=pkce; a social sign-in's session also carries the provider's tokens, as GoTrue's does. */
export async function pkceGrant(
  ctx: AuthContext,
  authCode: string,
  verifier: string,
): Promise<SessionPayload & Partial<ProviderTokens>> {
  const flow = await exchangeAuthCode(ctx, authCode, verifier);
  const user = await findUserById(ctx.project.sql, flow.userId);
  if (!user) throw fail('flow_state_not_found', 'The user of this flow no longer exists.');
  const session = await issueSession(ctx, user, { amr: FLOW_AMR[flow.authenticationMethod] ?? 'pkce' });
  return { ...session, ...flow.providerTokens };
}
