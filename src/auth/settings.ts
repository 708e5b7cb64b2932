import { isIP } from 'node:net';
import { httpUrl, outboundHost, outboundUrl, type AreaSpec, type CheckContext } from '../platform/settings-schema.ts';
import { isEmailAddress } from './validate.ts';

function rpId(v: string): string | null {
  return v === '' || /^[a-z0-9.-]+$/i.test(v)
    ? null
    : 'must be a host name such as example.com (no scheme, port or path)';
}

function originList(v: string): string | null {
  for (const origin of v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (httpUrl(origin) !== null || new URL(origin).origin !== origin)
      return `"${origin}" is not an origin such as https://app.example.com`;
  }
  return null;
}

/**
 * smtp_admin_email, the sender of every auth mail: a bare address. Anything
 * else is saved fine but refused by the SMTP server at every sending (501),
 * where nobody sees it; a display name belongs in smtp_sender_name.
 */
function senderAddress(v: string): string | null {
  if (v === '') return null;
  return isEmailAddress(v) && !/[<>()[\]\\,;:"]/.test(v)
    ? null
    : 'must be an e-mail address such as auth@example.com (the name goes in smtp_sender_name)';
}

/**
 * smtp_host: a host name or IP address, then the outbound guard. A scheme,
 * port or path (`smtp://mail.example.com:587`) would make every sending fail
 * at the DNS lookup; the port is smtp_port.
 */
function smtpHost(v: string, ctx: CheckContext): string | null {
  const host = v.trim();
  if (host !== '' && !isIP(host.replace(/^\[(.*)\]$/, '$1')) && !/^[\p{L}\p{N}_.-]+$/u.test(host))
    return 'must be a host name or IP address such as smtp.example.com (no scheme, port or path: the port is smtp_port)';
  return outboundHost(v, ctx);
}

/**
 * uri_allow_list: comma-separated URL patterns (src/auth/redirects.ts). A
 * target is compared as scheme://host[:port]/path, so an entry that is not
 * such a URL once its wildcards are filled in ("not a url", "localhost:3000")
 * could never match and would silently allow nothing.
 */
function redirectPatterns(v: string): string | null {
  for (const pattern of v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const why = `"${pattern.slice(0, 200)}" is not a URL or URL pattern such as https://app.example.com/**, https://*.example.com/** or myapp://callback`;
    if (!/^[a-z][a-z0-9+.-]*:\/\/\S*$/i.test(pattern)) return why;
    try {
      const url = new URL(pattern.replace(/\*\*|\*|\?/g, '0'));
      // Never a redirect target (src/auth/redirects.ts refuses them whatever the list says).
      if (url.protocol === 'javascript:' || url.protocol === 'data:') return why;
    } catch {
      return why;
    }
  }
  return null;
}

/** Social sign-in provider fields, named as in Supabase: external_<provider>_enabled, _client_id, _secret, _url. */
function provider(name: string): AreaSpec {
  return {
    [`external_${name}_enabled`]: { type: 'boolean', default: false },
    [`external_${name}_client_id`]: { type: 'string', default: null, maxLength: 1024 },
    [`external_${name}_secret`]: { type: 'string', default: null, maxLength: 4096, secret: true },
    /** The OpenID issuer (oidc: required; google: overrides accounts.google.com; github: a GitHub Enterprise base URL). */
    [`external_${name}_url`]: { type: 'string', default: null, maxLength: 2048, check: outboundUrl },
  };
}

/** config/auth fields; names follow the Supabase Management API. */
export const authSettings: AreaSpec = {
  site_url: { type: 'string', default: 'http://localhost:3000', maxLength: 2048, check: httpUrl },
  uri_allow_list: { type: 'string', default: '', maxLength: 8192, check: redirectPatterns },
  /**
   * GoTrue's DISABLE_SIGNUP: the public API creates no user (password sign-up, /otp for an unknown
   * address, a social identity matching nobody, a guest); the admin API still does (invite-only projects).
   */
  disable_signup: { type: 'boolean', default: false },
  /**
   * GoTrue's MAILER_AUTOCONFIRM (Supabase's "Confirm email" off): a password sign-up is confirmed at once
   * and answered with a session. false: the user is made unconfirmed and mailed a confirmation link and
   * code, the answer has no session, and password sign-in is 400 email_not_confirmed until confirmed.
   */
  mailer_autoconfirm: { type: 'boolean', default: true },
  /**
   * GoTrue's manual linking (Supabase's security_manual_linking_enabled): a signed-in user links another
   * identity (GET /user/identities/authorize) or unlinks one. On by default here, as SPEC 4.1 offers both;
   * off: 404 manual_linking_disabled, as on Supabase, where it starts off.
   */
  security_manual_linking_enabled: { type: 'boolean', default: true },
  /** Guest sign-in (POST /signup without e-mail and password); off: 422 anonymous_provider_disabled. */
  external_anonymous_users_enabled: { type: 'boolean', default: true },
  // Per client IP: this many at once, refilling at this many per 10 s (src/auth/rate-limit.ts).
  rate_limit_signups: { type: 'integer', default: 30, min: 0, max: 1_000_000 },
  rate_limit_anonymous_users: { type: 'integer', default: 30, min: 0, max: 1_000_000 },
  /** /otp, /recover, /resend, /reauthenticate and admin mails (each may send one e-mail). */
  rate_limit_email_sent: { type: 'integer', default: 60, min: 0, max: 1_000_000 },
  /** POST /webauthn/authenticate/options (public; each answer stores a challenge for 5 minutes). */
  rate_limit_passkey: { type: 'integer', default: 30, min: 0, max: 1_000_000 },
  /**
   * POST /factors/{id}/challenge and /verify, each: this many at once, refilling at this many per
   * minute (GoTrue's MFA pace), per address and, for verify, per factor too.
   */
  rate_limit_mfa: { type: 'integer', default: 15, min: 0, max: 1_000_000 },
  smtp_host: { type: 'string', default: null, maxLength: 255, check: smtpHost },
  smtp_port: { type: 'integer', default: 587, min: 1, max: 65535 },
  smtp_user: { type: 'string', default: null, maxLength: 255 },
  smtp_pass: { type: 'string', default: null, maxLength: 1024, secret: true },
  smtp_admin_email: { type: 'string', default: null, maxLength: 320, check: senderAddress },
  smtp_sender_name: { type: 'string', default: null, maxLength: 255 },
  /** Passkeys: the relying party. Nothing WebAuthn works (422 webauthn_not_configured) until rp_id and rp_origins are set. */
  webauthn_rp_id: { type: 'string', default: null, maxLength: 253, check: rpId },
  webauthn_rp_display_name: { type: 'string', default: null, maxLength: 255 },
  /** Comma-separated origins (scheme://host[:port]) whose pages may run the ceremonies. */
  webauthn_rp_origins: { type: 'string', default: null, maxLength: 4096, check: originList },
  ...provider('oidc'),
  ...provider('github'),
  ...provider('google'),
};
