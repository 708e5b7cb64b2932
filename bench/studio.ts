/**
 * Hearth Studio: compressed JavaScript of the first load (the entry script
 * and the chunks it imports statically, as served with brotli and gzip), and
 * time to first render in headless chromium of the dashboard (projects page
 * after sign-in) and of the table editor on a 100,000-row table beside the
 * same page on a 10-row table (the reference: the ratio shows what the row
 * count costs; server-side paging and the virtualised grid should keep it
 * near 1).
 */
import { startTestHearth } from '../test/helpers/hearth.ts';
import { startStudioBrowser } from '../test/studio/browser.ts';

export async function studioBench(): Promise<string[]> {
  const h = await startTestHearth();
  const b = await startStudioBrowser();
  try {
    const ref = h.info.PROJECT_REF;
    const q = (query: string) => h.api('POST', `/v1/projects/${ref}/database/query`, { body: { query } });
    await q(`create table big (id bigint primary key, name text, score double precision, at timestamptz default now());
             insert into big select i, 'row ' || i, random() * 1000 from generate_series(1, 100000) i;
             create table small (like big including all); insert into small select * from big where id <= 10;`);
    const { page } = b;
    // The bytes as sent (Content-Length of the precompressed file), following the entry's static imports.
    const sizes: Record<string, number> = {};
    for (const enc of ['br', 'gzip'] as const) {
      sizes[enc] = 0;
      const index = await (await fetch(`${h.url}/dashboard`)).text();
      const names = new Set<string>([/src="\/dashboard\/assets\/([^"]+)"/.exec(index)![1]!]);
      for (const name of names) {
        const plain = await (
          await fetch(`${h.url}/dashboard/assets/${name}`, { headers: { 'accept-encoding': 'identity' } })
        ).text();
        for (const m of plain.matchAll(/from"\.\/([\w-]+\.js)"/g)) names.add(m[1]!);
        const res = await fetch(`${h.url}/dashboard/assets/${name}`, { headers: { 'accept-encoding': enc } });
        sizes[enc] += Number(res.headers.get('content-length') ?? (await res.arrayBuffer()).byteLength);
      }
    }

    const t0 = Date.now();
    await page.goto(`${h.url}/dashboard`);
    await page.getByLabel('E-mail').waitFor();
    const signInMs = Date.now() - t0;
    await page.evaluate((token) => sessionStorage.setItem('hearth.studio.session', token), h.info.MANAGEMENT_TOKEN);
    const t1 = Date.now();
    await page.reload();
    await page.locator('table.list a').first().waitFor();
    const dashboardMs = Date.now() - t1;

    const tablePage = async (name: string) => {
      await page.goto(`${h.url}/dashboard#/`);
      const t = Date.now();
      await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/${name}`);
      await page.reload();
      await page.getByRole('cell', { name: 'row 1', exact: true }).waitFor({ timeout: 30_000 });
      return Date.now() - t;
    };
    await tablePage('small'); // warm: the SQL/REST plan caches and the lazy chunks
    const small = await tablePage('small');
    const big = await tablePage('big');
    return [
      `first-load JS (entry + static imports): ${(sizes.br! / 1024).toFixed(1)} KB brotli, ${(sizes.gzip! / 1024).toFixed(1)} KB gzip (limit 300 KB)`,
      `sign-in page first render: ${signInMs} ms; dashboard (projects) first render after sign-in: ${dashboardMs} ms`,
      `table editor first render: 100,000-row table ${big} ms vs 10-row table ${small} ms (ratio ${(big / small).toFixed(2)})`,
    ];
  } finally {
    await b.close();
    await h.close();
  }
}
