/**
 * Headless Debian chromium (playwright-core) on Hearth Studio: one browser
 * for a test file, with every Content-Security-Policy violation and page
 * error kept (tests assert there are none), and axe-core run in the page
 * through DevTools evaluation (the page's CSP allows no injected script).
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface StudioBrowser {
  browser: Browser;
  page: Page;
  /** Console CSP reports, uncaught page errors and alert()s seen so far. */
  problems: string[];
  /** axe-core violations of impact serious or critical on the page as it is now, in the light and in the dark scheme. */
  axe(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startStudioBrowser(colorScheme: 'light' | 'dark' = 'light'): Promise<StudioBrowser> {
  const browser = await chromium.launch({
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
  const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  // Generous for a loaded CI machine; a step that breaks still fails within seconds, not the runner's timeout.
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message} ${e.stack?.slice(0, 600)}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return {
    browser,
    page,
    problems,
    async axe() {
      if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
      const found: string[] = [];
      // The Studio follows prefers-color-scheme: each scheme has its own colours to check.
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        // The page hears of the change (matchMedia's change event, which the editors follow) at its next frames.
        await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
        const result = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ['violations'] }));
        for (const v of result.violations as {
          id: string;
          impact: string;
          help: string;
          nodes: { target: string[] }[];
        }[]) {
          if (v.impact === 'serious' || v.impact === 'critical')
            found.push(
              `${scheme}: ${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
            );
        }
      }
      await page.emulateMedia({ colorScheme });
      return found;
    },
    close: () => browser.close(),
  };
}
