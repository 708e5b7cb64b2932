/**
 * TOTP factors (SPEC 2.5, 4.1, 8): RFC 6238 with SHA-1, 6 digits and a
 * 30-second period, accepting the previous and next step for clock drift.
 * The secret is shown once at enrolment and stored sealed with the master
 * key. Each accepted code's step is remembered: a code of that step or an
 * earlier one is refused as a replay, so a code works once even inside its
 * 90-second window. A challenge takes at most 5 wrong codes.
 */
import * as OTPAuth from 'otpauth';
import { fail } from '../errors.ts';
import { now, type AuthContext } from './context.ts';
import {
  consumeChallenge,
  createChallenge,
  insertFactor,
  lockChallenge,
  stepUpSession,
  userFactor,
  type FactorRow,
} from './factors.ts';
import type { UserClaims } from './http.ts';
import type { SessionPayload } from './sessions.ts';
import { signedInUser, type UserRow } from './users.ts';
import { invalid } from './validate.ts';

export const TOTP_PERIOD_S = 30;
const SIX_DIGITS = /^[0-9]{6}$/;

function totp(secret: OTPAuth.Secret, issuer: string, label: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_S, secret });
}

/** The issuer shown by authenticator apps: the request's, else the host of site_url. */
function issuerOf(ctx: AuthContext, requested: string | undefined): string {
  if (requested) return requested.slice(0, 100);
  try {
    return new URL(String(ctx.settings.site_url)).host || 'Hearth';
  } catch {
    return 'Hearth';
  }
}

/** POST /factors {factor_type: totp}: a new unverified factor and its one-time view of the secret. */
export async function enrolTotp(
  ctx: AuthContext,
  user: UserRow,
  input: { friendlyName: string | null; issuer?: string },
) {
  const secret = new OTPAuth.Secret({ size: 20 });
  const t = totp(secret, issuerOf(ctx, input.issuer), user.email ?? user.id);
  const factor = await insertFactor(ctx, ctx.project.sql, {
    userId: user.id,
    type: 'totp',
    friendlyName: input.friendlyName,
    secretSealed: ctx.p.master.encrypt(secret.base32),
  });
  const uri = t.toString();
  // SPEC 2.5: qr_code is the otpauth:// URI itself, for the app to render as a QR code.
  return {
    id: factor.id,
    type: 'totp' as const,
    friendly_name: factor.friendly_name,
    totp: { secret: secret.base32, uri, qr_code: uri },
  };
}

export async function challengeTotp(ctx: AuthContext, factor: FactorRow) {
  const c = await createChallenge(ctx, ctx.project.sql, { factorId: factor.id, kind: 'totp' });
  return { id: c.id, type: 'totp' as const, expires_at: c.expires_at };
}

/** The 30-second step the code belongs to (current, previous or next), or null when it matches none. */
export function matchingStep(secretBase32: string, code: string, at: Date): number | null {
  const t = totp(OTPAuth.Secret.fromBase32(secretBase32), 'x', 'x');
  const delta = t.validate({ token: code, timestamp: at.getTime(), window: 1 });
  if (delta === null) return null;
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_S) + delta;
}

/** POST /factors/{id}/verify {challenge_id, code}: marks the factor verified and answers a new aal2 session. */
export async function verifyTotp(
  ctx: AuthContext,
  claims: UserClaims,
  factorId: string,
  challengeId: string,
  code: string,
): Promise<SessionPayload> {
  const outcome = await ctx.project.sql.begin(async (tx) => {
    const factor = await userFactor(tx, claims.sub, factorId, true);
    if (factor.factor_type !== 'totp')
      throw invalid('This factor is not a TOTP factor; send a WebAuthn credential instead of a code.');
    await lockChallenge(ctx, tx, challengeId, factor.id, ['totp']);
    // A code that is not 6 digits is just a wrong code, spending a try (GoTrue answers it 422 too).
    const step = SIX_DIGITS.test(code)
      ? matchingStep(ctx.p.master.decrypt(factor.secret_sealed!), code, now(ctx))
      : null;
    if (step === null) {
      await tx`update auth.mfa_challenges set attempts = attempts + 1 where id = ${challengeId}`;
      return { wrong: true as const };
    }
    if (factor.last_totp_step !== null && step <= Number(factor.last_totp_step)) {
      await consumeChallenge(ctx, tx, challengeId);
      return { replay: true as const };
    }
    await consumeChallenge(ctx, tx, challengeId);
    await tx`update auth.mfa_factors set last_totp_step = ${step}, status = 'verified', updated_at = ${now(ctx)} where id = ${factor.id}`;
    const user = await signedInUser(tx, claims.sub);
    return { session: await stepUpSession(ctx, tx, user, claims, factor) };
  });
  if ('wrong' in outcome) throw fail('mfa_verification_failed');
  if ('replay' in outcome) {
    throw fail('mfa_verification_rejected');
  }
  return outcome.session;
}
