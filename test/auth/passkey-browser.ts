/**
 * Headless Debian chromium (playwright-core) with the DevTools virtual
 * authenticator (resident keys, user verification) for passkey tests. The
 * test serves a small page at http://localhost:<port> (a secure context)
 * whose functions turn the server's JSON options into navigator.credentials
 * calls and the resulting credentials back into JSON.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';

const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title><script>
const dec = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
const enc = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const ids = (list) => (list || []).map((c) => ({ ...c, id: dec(c.id) }));
window.register = async (o) => {
  const c = await navigator.credentials.create({ publicKey: { ...o, challenge: dec(o.challenge), user: { ...o.user, id: dec(o.user.id) }, excludeCredentials: ids(o.excludeCredentials) } });
  return { id: c.id, rawId: enc(c.rawId), type: c.type, authenticatorAttachment: c.authenticatorAttachment, clientExtensionResults: c.getClientExtensionResults(),
    response: { clientDataJSON: enc(c.response.clientDataJSON), attestationObject: enc(c.response.attestationObject), transports: c.response.getTransports() } };
};
window.authenticate = async (o) => {
  const c = await navigator.credentials.get({ publicKey: { ...o, challenge: dec(o.challenge), allowCredentials: ids(o.allowCredentials) } });
  return { id: c.id, rawId: enc(c.rawId), type: c.type, authenticatorAttachment: c.authenticatorAttachment, clientExtensionResults: c.getClientExtensionResults(),
    response: { clientDataJSON: enc(c.response.clientDataJSON), authenticatorData: enc(c.response.authenticatorData), signature: enc(c.response.signature),
      userHandle: c.response.userHandle ? enc(c.response.userHandle) : undefined } };
};
</script>`;

export interface PasskeyBrowser {
  /** http://localhost:<port>, the relying party's origin. */
  origin: string;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  register(options: unknown): Promise<any>;
  authenticate(options: unknown): Promise<any>;
  setUserVerified(ok: boolean): Promise<void>;
  close(): Promise<void>;
}

export async function startPasskeyBrowser(): Promise<PasskeyBrowser> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    const b = browser;
    return {
      origin,
      page,
      cdp,
      authenticatorId,
      register: (o) => page.evaluate((x) => (window as any).register(x), o),
      authenticate: (o) => page.evaluate((x) => (window as any).authenticate(x), o),
      setUserVerified: async (ok) => {
        await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: ok });
      },
      async close() {
        await b.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  } catch (err) {
    await browser?.close();
    server.close();
    throw err;
  }
}
