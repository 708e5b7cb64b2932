/**
 * The redirect allowlist (SPEC 5): config/auth `uri_allow_list`, comma
 * separated glob patterns matched as Supabase's (gobwas/glob with the
 * separators `.` and `/`): `*` matches within one host label or path segment
 * (never crosses `.` or `/`, so `https://*.app.test` does not allow
 * `https://x.y.app.test`), `**` matches anything, `?` one character other
 * than `.` and `/`. A pattern is matched against scheme://host[:port]/path of
 * the target (query and fragment ignored, so an app may add its own query).
 * Besides the list, site_url itself is allowed: without redirect_to, links
 * lead to site_url (and carry it as their redirect_to), a permitted target
 * since the operator set it in the same settings. Sign-in links (magic links,
 * social sign-in) are the exception: while the list is empty they have no
 * target at all (signInTarget).
 */
import { fail } from '../errors.ts';
import type { Settings } from '../platform/settings-schema.ts';

export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      out += '.*';
      i++;
    } else if (c === '*') out += '[^./]*';
    else if (c === '?') out += '[^./]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

function comparable(target: string): string | null {
  try {
    const u = new URL(target);
    if (u.protocol === 'javascript:' || u.protocol === 'data:') return null;
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return null;
  }
}

export function isAllowedRedirect(target: string, allowList: string): boolean {
  const url = comparable(target);
  if (!url) return false;
  const trimmed = url.replace(/\/$/, '');
  return allowList
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .some((pattern) => {
      const re = globToRegExp(pattern);
      return re.test(url) || re.test(trimmed);
    });
}

/**
 * The target of a sign-in link (a magic link, social sign-in): as
 * redirectTarget, but while the allowlist is empty (the default) there is
 * none, site_url included (SPEC 5: "empty by default, so magic links and
 * social sign-in do nothing until it is configured"): a redirect_to is 400
 * bad_redirect, and without one the answer is null (no link is made).
 */
export function signInTarget(settings: Settings, redirectTo: string | undefined): string | null {
  if (String(settings.uri_allow_list ?? '').trim() !== '') return redirectTarget(settings, redirectTo);
  if (redirectTo === undefined || redirectTo === '') return null;
  throw notAllowed(redirectTo);
}

/** signInTarget where a target is a must (following a magic link, starting social sign-in): none is 400 bad_redirect. */
export function requiredSignInTarget(settings: Settings, redirectTo: string | undefined, what: string): string {
  const target = signInTarget(settings, redirectTo);
  if (target === null)
    throw fail(
      'bad_redirect',
      `${what} needs the project's redirect allowlist (config/auth uri_allow_list), which is empty: add the URLs your app signs users in at.`,
    );
  return target;
}

const notAllowed = (redirectTo: string) =>
  fail(
    'bad_redirect',
    `redirect_to "${redirectTo.slice(0, 200)}" is not on the project's redirect allowlist (config/auth uri_allow_list).`,
  );

/** The target of a link: redirect_to when it is allowlisted (else 400 bad_redirect), or site_url. */
export function redirectTarget(settings: Settings, redirectTo: string | undefined): string {
  if (redirectTo === undefined || redirectTo === '') return String(settings.site_url);
  const site = String(settings.site_url ?? '');
  const isSite = site !== '' && redirectTo.replace(/\/$/, '') === site.replace(/\/$/, '');
  if (!isSite && !isAllowedRedirect(redirectTo, String(settings.uri_allow_list ?? ''))) throw notAllowed(redirectTo);
  return redirectTo;
}
