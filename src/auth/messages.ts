/**
 * The text of auth mail. Every message carries its link (GET /auth/v1/verify)
 * and the 6-digit code that can be typed instead (POST /verify); the
 * reauthentication nonce has only the code.
 */
import type { AuthContext } from './context.ts';
import type { Mail } from './mailer.ts';
import type { IssuedSecrets } from './one-time.ts';

export type LinkType = 'magiclink' | 'signup' | 'invite' | 'recovery' | 'email_change';

export function verifyLink(ctx: AuthContext, type: LinkType, linkToken: string, redirectTo: string): string {
  const q = new URLSearchParams({ token: linkToken, type, redirect_to: redirectTo });
  return `${ctx.baseUrl}/auth/v1/verify?${q}`;
}

/** The code, and a magic link when there is a target for it (none while the redirect allowlist is empty). */
export function signInMail(ctx: AuthContext, to: string, s: IssuedSecrets, redirectTo: string | null): Mail {
  return {
    to,
    subject: 'Your sign-in code',
    text:
      `Your sign-in code is ${s.code}. It is valid for 10 minutes and can be used once.\n\n` +
      (redirectTo ? `Or sign in with this link:\n${verifyLink(ctx, 'magiclink', s.linkToken, redirectTo)}\n\n` : '') +
      `If you did not ask to sign in, you can ignore this message.\n`,
  };
}

export function recoveryMail(ctx: AuthContext, to: string, s: IssuedSecrets, redirectTo: string): Mail {
  return {
    to,
    subject: 'Reset your password',
    text:
      `Open this link to choose a new password (valid for 10 minutes, once):\n` +
      `${verifyLink(ctx, 'recovery', s.linkToken, redirectTo)}\n\nOr enter the code ${s.code}.\n\n` +
      `If you did not ask for a password reset, you can ignore this message.\n`,
  };
}

export function emailChangeMail(ctx: AuthContext, to: string, s: IssuedSecrets, redirectTo: string): Mail {
  return {
    to,
    subject: 'Confirm your new e-mail address',
    text:
      `Your confirmation code is ${s.code}. Enter it, or open this link, to make ${to} the e-mail address ` +
      `of your account (valid for 10 minutes, once):\n` +
      `${verifyLink(ctx, 'email_change', s.linkToken, redirectTo)}\n\n` +
      `If you did not ask for this change, you can ignore this message.\n`,
  };
}

export function emailChangedNotice(to: string): Mail {
  return {
    to,
    subject: 'Your e-mail address was changed',
    text: `${to} is now the e-mail address of your account. No mailer is configured for this project, so the change applied at once.\n`,
  };
}

export function inviteMail(ctx: AuthContext, to: string, s: IssuedSecrets, redirectTo: string): Mail {
  return {
    to,
    subject: 'You have been invited',
    text:
      `You have been invited to create an account. Open this link to accept (valid for 10 minutes, once):\n` +
      `${verifyLink(ctx, 'invite', s.linkToken, redirectTo)}\n\nOr enter the code ${s.code}.\n\n` +
      `If you were not expecting this invitation, you can ignore this message.\n`,
  };
}

export function reauthenticationMail(to: string, s: IssuedSecrets): Mail {
  return {
    to,
    subject: 'Confirm it is you',
    text:
      `Your confirmation code is ${s.code}. It is valid for 10 minutes and can be used once, ` +
      `to change your password or e-mail address.\n\nIf you did not ask for it, you can ignore this message.\n`,
  };
}

export function signupMail(ctx: AuthContext, to: string, s: IssuedSecrets, redirectTo: string): Mail {
  return {
    to,
    subject: 'Confirm your e-mail address',
    text:
      `Your confirmation code is ${s.code}. It is valid for 10 minutes and can be used once.\n\n` +
      `Or confirm with this link:\n${verifyLink(ctx, 'signup', s.linkToken, redirectTo)}\n\n` +
      `If you did not sign up, you can ignore this message.\n`,
  };
}
