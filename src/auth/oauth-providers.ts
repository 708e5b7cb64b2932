/**
 * Social sign-in providers (SPEC 5): operator configuration in config/auth
 * named as in Supabase (external_<provider>_enabled, _client_id, _secret,
 * _url). `oidc` is any OpenID Connect issuer (_url required), `google` an
 * OpenID Connect preset, `github` plain OAuth 2.0 (GitHub is not an OpenID
 * provider; its profile comes from its REST API). A provider is usable only
 * when enabled with a client id and secret. openid-client talks to them
 * through the SSRF-guarded fetch; plain http:// is accepted only for
 * loopback issuers, which the guard itself only lets through when
 * HEARTH_OUTBOUND_ALLOW opens them (local development and tests).
 */
import type * as oidc from 'openid-client';
import { lazy } from '../lazy.ts';
import { fail } from '../errors.ts';
import { sha256 } from '../secrets.ts';
import type { AuthContext } from './context.ts';
import { guardedFetch, type GuardedFetch } from './oauth-fetch.ts';

export type ProviderName = 'oidc' | 'github' | 'google';
export const PROVIDERS: readonly ProviderName[] = ['oidc', 'github', 'google'];

export interface Provider {
  name: ProviderName;
  /** Whether the provider speaks OpenID Connect (ID token, nonce) or plain OAuth 2.0. */
  openid: boolean;
  url: string;
  clientId: string;
  secret: string;
  scope: string;
  /** GitHub's REST API base, for the profile. */
  apiBase?: string;
}

const DEFAULT_URL: Record<ProviderName, string | null> = {
  oidc: null,
  google: 'https://accounts.google.com',
  github: 'https://github.com',
};

/** The provider's settings, or 400 validation_failed (unknown name) / 400 provider_disabled (not enabled or not configured). */
export function providerOf(ctx: AuthContext, name: string | undefined): Provider {
  if (!name || !PROVIDERS.includes(name as ProviderName)) {
    throw fail(
      'validation_failed',
      `provider must be one of ${PROVIDERS.join(', ')} (got "${String(name ?? '').slice(0, 40)}").`,
    );
  }
  const n = name as ProviderName;
  const s = ctx.settings;
  const url = String(s[`external_${n}_url`] || DEFAULT_URL[n] || '').replace(/\/+$/, '');
  const clientId = s[`external_${n}_client_id`];
  const secret = s[`external_${n}_secret`];
  if (s[`external_${n}_enabled`] !== true || !clientId || !secret || !url) {
    throw fail(
      'provider_disabled',
      `Sign-in with ${n} is not enabled for this project: set external_${n}_enabled, _client_id and _secret${n === 'oidc' ? ' and _url' : ''} in config/auth.`,
    );
  }
  if (n === 'github') {
    const apiBase = url === 'https://github.com' ? 'https://api.github.com' : `${url}/api/v3`;
    return {
      name: n,
      openid: false,
      url,
      clientId: String(clientId),
      secret: String(secret),
      scope: 'read:user user:email',
      apiBase,
    };
  }
  return {
    name: n,
    openid: true,
    url,
    clientId: String(clientId),
    secret: String(secret),
    scope: 'openid email profile',
  };
}

const isLoopback = (u: URL) => ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname);

export const unreachable = (provider: string, err: unknown) =>
  fail(
    'provider_unreachable',
    `The ${provider} provider could not be used: ${err instanceof Error ? err.message : String(err)}`,
  );

/** openid-client, loaded when a project first uses social sign-in. */
export const openidClient = lazy(() => import('openid-client'));

async function configure(provider: Provider, fetch: GuardedFetch): Promise<oidc.Configuration> {
  const client = await openidClient();
  const base = new URL(provider.url);
  if (base.protocol !== 'https:' && !isLoopback(base)) throw new Error(`${provider.url} must be an https:// URL.`);
  const execute = base.protocol === 'http:' ? [client.allowInsecureRequests] : [];
  let config: oidc.Configuration;
  if (provider.openid) {
    config = await client.discovery(base, provider.clientId, provider.secret, undefined, {
      [client.customFetch]: fetch as never,
      execute,
    });
  } else {
    config = new client.Configuration(
      {
        issuer: provider.url,
        authorization_endpoint: `${provider.url}/login/oauth/authorize`,
        token_endpoint: `${provider.url}/login/oauth/access_token`,
      },
      provider.clientId,
      provider.secret,
    );
    config[client.customFetch] = fetch as never;
    for (const e of execute) e(config);
  }
  return config;
}

/**
 * The openid-client configuration of a provider, discovered once per
 * (project, issuer, client, secret) and kept; a failed discovery is not kept.
 */
export function configurationOf(ctx: AuthContext, provider: Provider): Promise<oidc.Configuration> {
  const memo = ctx.project.cached('auth:oauth-configurations', () => new Map<string, Promise<oidc.Configuration>>());
  const key = [provider.name, provider.url, provider.clientId, sha256(provider.secret).toString('hex')].join('|');
  let config = memo.get(key);
  if (!config) {
    config = configure(provider, guardedFetch(ctx.p.config.outboundAllow));
    memo.set(key, config);
    config.catch(() => memo.delete(key));
  }
  return config.catch((err) => {
    throw unreachable(provider.name, err);
  });
}
