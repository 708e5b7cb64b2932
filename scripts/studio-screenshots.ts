/**
 * Screenshots of every Hearth Studio page, light and dark, into docs/studio/
 * (`node --import tsx scripts/studio-screenshots.ts`; needs DATABASE_URL and
 * Debian's chromium). A throwaway Hearth with a little sample data.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestHearth } from '../test/helpers/hearth.ts';
import { startStudioBrowser } from '../test/studio/browser.ts';
import { ensureDatabaseUrl } from './scratch-db.ts';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/studio');

const stopEmbedded = await ensureDatabaseUrl();
const h = await startTestHearth();
try {
  const ref = h.info.PROJECT_REF;
  const key = h.info.SECRET_KEY;
  await h.api('POST', `/v1/projects/${ref}/database/query`, {
    body: {
      query: `create table books (id bigint primary key, title text not null, author text, published date, tags jsonb default '[]');
              insert into books select i, 'Book ' || i, 'Author ' || (i % 7), date '2000-01-01' + i * 40, jsonb_build_array('tag' || (i % 3)) from generate_series(1, 60) i;
              alter table books enable row level security;
              create policy "readable by everyone" on books for select to authenticated using (true);`,
    },
  });
  const data = (method: string, p: string, body: unknown) =>
    fetch(`${h.url}${p}`, {
      method,
      headers: { apikey: key, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  for (const email of ['ada@example.com', 'grace@example.com', 'linus@example.com'])
    await data('POST', '/auth/v1/admin/users', { email, password: 'Sample-password-1', email_confirm: true });
  await data('POST', '/storage/v1/bucket', { name: 'covers', id: 'covers', public: false });
  await fetch(`${h.url}/storage/v1/object/covers/readme.txt`, {
    method: 'POST',
    headers: { apikey: key, authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
    body: 'Cover images of the books.\n',
  });

  const pages: [string, string, string?][] = [
    ['projects', '#/'],
    ['overview', `#/p/${ref}`],
    ['table-rows', `#/p/${ref}/tables/public/books`, 'Book 1'],
    ['table-structure', `#/p/${ref}/tables/public/books/structure`, 'title'],
    ['table-policies', `#/p/${ref}/tables/public/books/policies`, 'readable by everyone'],
    ['sql-editor', `#/p/${ref}/sql`],
    ['users', `#/p/${ref}/users`, 'ada@example.com'],
    ['auth-settings', `#/p/${ref}/auth`],
    ['storage', `#/p/${ref}/storage/covers`, 'readme.txt'],
  ];
  for (const scheme of ['light', 'dark'] as const) {
    const b = await startStudioBrowser(scheme);
    const { page } = b;
    await page.setViewportSize({ width: 1100, height: 640 });
    await page.goto(`${h.url}/dashboard`);
    await page.getByLabel('E-mail').waitFor();
    await page.screenshot({ path: `${OUT}/sign-in-${scheme}.png` });
    await page.evaluate((t) => sessionStorage.setItem('hearth.studio.session', t), h.info.MANAGEMENT_TOKEN);
    for (const [name, hash, text] of pages) {
      await page.goto(`${h.url}/dashboard${hash}`);
      await page.reload();
      await page.locator('h1').first().waitFor();
      if (text) await page.getByText(text, { exact: true }).first().waitFor();
      if (name === 'sql-editor') {
        await page.locator('.cm-content').click();
        await page.keyboard.press('ControlOrMeta+a');
        await page.keyboard.type('select author, count(*) from books group by author order by 2 desc;');
        await page.keyboard.press('Control+Enter');
        await page.getByText('Result 1: SELECT').waitFor();
      }
      await page.waitForTimeout(200);
      await page.screenshot({ path: `${OUT}/${name}-${scheme}.png` });
    }
    await b.close();
  }
  console.log(`Screenshots written to ${OUT}`);
} finally {
  await h.close();
  await stopEmbedded();
}
