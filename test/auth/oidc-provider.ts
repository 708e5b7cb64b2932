/**
 * A real OpenID provider (oidc-provider) on a local port for social sign-in
 * tests, and a browserless user agent that walks its dev login and consent
 * pages over plain HTTP, keeping the provider's cookies, until the browser
 * would land back on Hearth's callback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error oidc-provider ships no type declarations (and @types/oidc-provider is not installed)
import Provider from 'oidc-provider';

export interface Person {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  secret: string;
  people: Map<string, Person>;
  /** Logins the provider also gives a refresh token (it gives none to the others, which RFC 6749 allows). */
  refreshTokensFor: Set<string>;
  /** The provider's userinfo endpoint, which takes its access tokens. */
  userinfo: string;
  /** From the provider's authorization URL to the first URL outside the provider (Hearth's callback). */
  signIn(authorizationUrl: string, login: string): Promise<string>;
  close(): Promise<void>;
}

export async function startProvider(redirectUris: string[]): Promise<TestProvider> {
  const people = new Map<string, Person>();
  const refreshTokensFor = new Set<string>();
  let handler: http.RequestListener = (_req, res) => res.end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'hearth-test';
  const secret = 'a-client-secret-for-tests-only-0123456789';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: secret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['oidc-test-cookie-key'] },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx: unknown, _client: unknown, code: { accountId: string }) =>
      refreshTokensFor.has(code.accountId),
    async findAccount(_ctx: unknown, id: string) {
      const person = people.get(id);
      if (!person) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...person }) };
    },
  });
  provider.on('server_error', (_ctx: unknown, err: unknown) => console.error('oidc-provider error', err));
  handler = provider.callback() as http.RequestListener;

  async function signIn(authorizationUrl: string, login: string): Promise<string> {
    const jar = new Map<string, string>();
    let url = authorizationUrl;
    let method = 'GET';
    let body: string | undefined;
    for (let hop = 0; hop < 20; hop++) {
      if (!url.startsWith(issuer)) return url;
      const res = await fetch(url, {
        method,
        redirect: 'manual',
        body,
        headers: {
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair!.indexOf('=');
        jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      if (res.status >= 300 && res.status < 400) {
        url = new URL(res.headers.get('location')!, url).toString();
        method = 'GET';
        body = undefined;
        continue;
      }
      const page = await res.text();
      if (res.status !== 200 || !/\/interaction\//.test(url))
        throw new Error(`provider answered ${res.status} at ${url}: ${page.slice(0, 300)}`);
      // The dev interaction pages: a login form, then a consent form; both post back to the same URL.
      method = 'POST';
      body = page.includes('name="login"')
        ? new URLSearchParams({ prompt: 'login', login, password: 'x' }).toString()
        : 'prompt=consent';
    }
    throw new Error('too many redirects at the provider');
  }

  return {
    issuer,
    clientId,
    secret,
    people,
    refreshTokensFor,
    userinfo: `${issuer}/me`,
    signIn,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
