/**
 * Hearth Studio with values JavaScript cannot hold as a number and with the
 * edges the audit found: bigint keys past 2^53 and exact numerics in the
 * table editor. One browser on the default project, signed in as an owner.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { startStudioBrowser, type StudioBrowser } from './browser.ts';

let h: TestHearth;
let b: StudioBrowser;
let ref = '';
const OWNER = { email: 'owner@values.test', password: 'Values-owner-pw-1' };

const sql = async (query: string) => {
  const r = await h.api('POST', `/v1/projects/${ref}/database/query`, { body: { query } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
};

before(async () => {
  h = await startTestHearth();
  ref = h.info.PROJECT_REF;
  const [org] = (await h.api('GET', '/v1/organizations')).body;
  assert.equal(
    (await h.api('POST', `/v1/organizations/${org.id}/members`, { body: { ...OWNER, role: 'owner' } })).status,
    201,
  );
  b = await startStudioBrowser();
  const { page } = b;
  await page.goto(`${h.url}/dashboard`);
  await page.getByLabel('E-mail').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
});
after(async () => {
  await b?.close();
  await h?.close();
});

describe('Hearth Studio values', () => {
  test('a bigint key past 2^53 edits and deletes its own row; numeric shows every digit', async () => {
    const { page } = b;
    await sql(`create table big (id bigint primary key, label text, amount numeric);
      insert into big values (9007199254740993, 'odd', 0.1000000000000000055511151231257827),
                             (9007199254740992, 'even', 1)`);
    await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/big`);
    const grid = page.getByRole('region', { name: 'Rows of big' });
    await grid.getByRole('cell', { name: '9007199254740993' }).waitFor();
    await grid.getByRole('cell', { name: '0.1000000000000000055511151231257827' }).waitFor();

    const odd = grid.getByRole('row').filter({ hasText: 'odd' });
    await odd.getByRole('button', { name: /^Edit row/ }).click();
    assert.equal(await page.getByLabel(/^id/).inputValue(), '9007199254740993');
    await page.getByLabel(/^label/).fill('odd edited');
    await page.getByRole('button', { name: 'Save' }).click();
    await grid.getByRole('cell', { name: 'odd edited' }).waitFor();
    assert.deepEqual(await sql('select id::text, label from big order by id'), [
      { id: '9007199254740992', label: 'even' },
      { id: '9007199254740993', label: 'odd edited' },
    ]);

    await grid
      .getByRole('row')
      .filter({ hasText: 'odd edited' })
      .getByRole('button', { name: /^Edit row/ })
      .click();
    await page.getByRole('button', { name: 'Delete row' }).click();
    await page.getByRole('dialog', { name: 'Delete this row?' }).getByRole('button', { name: 'Delete row' }).click();
    await grid.getByRole('cell', { name: 'odd edited' }).waitFor({ state: 'detached' });
    assert.deepEqual(await sql('select id::text, label from big order by id'), [
      { id: '9007199254740992', label: 'even' },
    ]);
  });

  test("an array cell saves as the dialog shows it (JSON, nulls included) or in PostgreSQL's {a,NULL} form", async () => {
    const { page } = b;
    await sql(`create table tagged (id int primary key, tags text[]); insert into tagged values (1, '{x,NULL}')`);
    // The table list was read before the table existed: the address naming it reads it again.
    await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/tagged`);
    const grid = page.getByRole('region', { name: 'Rows of tagged' });
    for (const [typed, stored] of [
      ['["y", null, "z"]', '{y,NULL,z}'],
      ['{a,NULL}', '{a,NULL}'],
    ] as const) {
      await grid.getByRole('button', { name: 'Edit row 1' }).click();
      await page.getByLabel(/^tags/).fill(typed);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      assert.deepEqual(await sql('select tags::text from tagged'), [{ tags: stored }], typed);
    }
  });

  test('rows are ordered by the primary key until a header is clicked; an edited row keeps its place', async () => {
    const { page } = b;
    await sql(`create table ordered (id int primary key, label text);
      insert into ordered values (3, 'c'), (1, 'a'), (2, 'b')`);
    await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/ordered`);
    await page.reload(); // a new hash alone keeps the table list loaded before the table was made
    const grid = page.getByRole('region', { name: 'Rows of ordered' });
    const labels = () => grid.locator('tbody tr[data-index] td:nth-child(3)').allTextContents();
    await grid.getByRole('cell', { name: 'c', exact: true }).waitFor();
    assert.deepEqual(await labels(), ['a', 'b', 'c']);
    await grid.getByRole('button', { name: 'Edit row 1' }).click();
    await page.getByLabel(/^label/).fill('a edited');
    await page.getByRole('button', { name: 'Save' }).click();
    await grid.getByRole('cell', { name: 'a edited' }).waitFor();
    assert.deepEqual(await labels(), ['a edited', 'b', 'c']);
  });

  test('keys and filter values with , : " ( ) are taken as written: such rows edit, delete and filter', async () => {
    const { page } = b;
    await sql(`create table keyed (a int, b text, note text, primary key (a, b));
      insert into keyed values (1, 'x,y', 'comma'), (2, 'k:1', 'colon'), (3, 'q"(r)', 'quote'), (4, 'a,b', 'plain')`);
    await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/keyed`);
    await page.reload();
    const grid = page.getByRole('region', { name: 'Rows of keyed' });
    await grid.getByRole('cell', { name: 'comma' }).waitFor();
    for (const [note, edited] of [
      ['comma', 'comma edited'],
      ['quote', 'quote edited'],
    ]) {
      await grid
        .getByRole('row')
        .filter({ hasText: note })
        .getByRole('button', { name: /^Edit row/ })
        .click();
      await page.getByLabel(/^note/).fill(edited!);
      await page.getByRole('button', { name: 'Save' }).click();
      await grid.getByRole('cell', { name: edited }).waitFor();
    }
    await grid
      .getByRole('row')
      .filter({ hasText: 'colon' })
      .getByRole('button', { name: /^Edit row/ })
      .click();
    await page.getByRole('button', { name: 'Delete row' }).click();
    await page.getByRole('dialog', { name: 'Delete this row?' }).getByRole('button', { name: 'Delete row' }).click();
    await grid.getByRole('cell', { name: 'colon' }).waitFor({ state: 'detached' });
    assert.deepEqual(await sql('select b, note from keyed order by a'), [
      { b: 'x,y', note: 'comma edited' },
      { b: 'q"(r)', note: 'quote edited' },
      { b: 'a,b', note: 'plain' },
    ]);

    const filters = page.getByRole('form', { name: 'Filter rows' });
    await filters.getByLabel('Column').selectOption('b');
    await filters.getByLabel('Value').fill('a,b');
    await filters.getByRole('button', { name: 'Add filter' }).click();
    await grid.getByRole('cell', { name: 'comma edited' }).waitFor({ state: 'detached' });
    await grid.getByRole('cell', { name: 'plain' }).waitFor();
  });

  test('a save or delete that changes no row (gone meanwhile) says so instead of closing as done', async () => {
    const { page } = b;
    await sql(`create table vanishing (id int primary key, label text); insert into vanishing values (1, 'here')`);
    await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/vanishing`);
    await page.reload();
    const grid = page.getByRole('region', { name: 'Rows of vanishing' });
    await grid.getByRole('button', { name: 'Edit row 1' }).click();
    await sql('delete from vanishing');
    await page.getByLabel(/^label/).fill('there');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'No row was changed' }).waitFor();
    await page.getByRole('button', { name: 'Delete row' }).click();
    await page.getByRole('dialog', { name: 'Delete this row?' }).getByRole('button', { name: 'Delete row' }).click();
    await page
      .getByRole('dialog', { name: 'Delete this row?' })
      .getByRole('alert')
      .filter({ hasText: 'No row was changed' })
      .waitFor();
  });

  test('a clicked header sorts ascending first, with the primary key after it, so pages neither skip nor repeat rows', async () => {
    const { page } = b;
    await sql(`create table ties (id int primary key, n int);
      insert into ties select i, i % 3 from generate_series(1, 1200) i`);
    await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/ties`);
    await page.reload();
    const grid = page.getByRole('region', { name: 'Rows of ties' });
    await grid.getByRole('button', { name: 'Edit row 1', exact: true }).waitFor();
    const sorted = page.waitForRequest((r) => r.url().includes('/rest/v1/ties?') && r.url().includes('order='));
    await grid.getByRole('button', { name: 'n', exact: true }).click();
    const order = new URL((await sorted).url()).searchParams.get('order');
    assert.equal(order, '"n".asc,"id".asc');
    // What those pages hold: every id exactly once across the three pages.
    const seen: number[] = [];
    for (let offset = 0; offset < 1200; offset += 500) {
      const r = await fetch(`${h.url}/rest/v1/ties?select=id&order=${order}&limit=500&offset=${offset}`, {
        headers: { apikey: h.info.SECRET_KEY },
      });
      seen.push(...((await r.json()) as { id: number }[]).map((x) => x.id));
    }
    assert.equal(new Set(seen).size, 1200);
  });

  test('the SQL editor shows every column of a repeated name, and values as PostgreSQL prints them', async () => {
    const { page } = b;
    await page.goto(`${h.url}/dashboard#/p/${ref}/sql`);
    const editor = page.getByRole('textbox', { name: 'SQL query' });
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type("select 1 as a, 2 as a, 3, 4, '\\x0102'::bytea as b, '2020-01-01'::date as d");
    await page.keyboard.press('Control+Enter');
    const result = page.getByRole('region', { name: 'Result 1' });
    await result.getByRole('cell', { name: '\\x0102' }).waitFor();
    assert.deepEqual(await result.getByRole('columnheader').allTextContents(), [
      'a',
      'a',
      '?column?',
      '?column?',
      'b',
      'd',
    ]);
    assert.deepEqual(await result.getByRole('cell').allTextContents(), ['1', '2', '3', '4', '\\x0102', '2020-01-01']);
  });

  test("a structure change PostgreSQL refuses shows its SQLSTATE, not database/query's sql_error", async () => {
    const { page } = b;
    await page.goto(`${h.url}/dashboard#/p/${ref}/tables/public/big/structure`);
    await page.getByRole('button', { name: 'Add column' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('broken');
    await dialog.getByLabel('Type').fill('no_such_type');
    await dialog.getByRole('button', { name: 'Run' }).click();
    const alert = dialog.getByRole('alert').filter({ hasText: 'type "no_such_type" does not exist' });
    await alert.waitFor();
    assert.match((await alert.textContent())!, /\(42704\)/);
    assert.doesNotMatch((await alert.textContent())!, /sql_error/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  test('secret auth settings are password fields, also while unset', async () => {
    const { page } = b;
    await page.goto(`${h.url}/dashboard#/p/${ref}/auth`);
    const auth = (await h.api('GET', `/v1/projects/${ref}/config/auth`)).body;
    const secrets = Object.keys(auth).filter((k) => k === 'smtp_pass' || /^external_\w+_secret$/.test(k));
    assert.ok(secrets.length > 1);
    assert.equal(auth.smtp_pass, null);
    for (const k of secrets)
      assert.equal(await page.getByLabel(k, { exact: true }).getAttribute('type'), 'password', k);
    assert.equal(await page.getByLabel('smtp_user', { exact: true }).getAttribute('type'), 'text');
  });

  test('the storage browser loads a folder past 1,000 entries a page at a time', async () => {
    const { page } = b;
    const storage = async (method: string, path: string, body: string) => {
      const res = await fetch(`${h.url}/project/${ref}/storage/v1${path}`, {
        method,
        headers: {
          apikey: h.info.SECRET_KEY,
          authorization: `Bearer ${h.info.SECRET_KEY}`,
          'content-type': path === '/bucket' ? 'application/json' : 'text/plain',
        },
        body,
      });
      assert.ok(res.ok, await res.text());
    };
    await storage('POST', '/bucket', JSON.stringify({ name: 'many' }));
    const names = Array.from({ length: 1001 }, (_, i) => `f${String(i).padStart(4, '0')}.txt`);
    for (let i = 0; i < names.length; i += 50)
      await Promise.all(names.slice(i, i + 50).map((n) => storage('POST', `/object/many/${n}`, n)));

    await page.goto(`${h.url}/dashboard#/p/${ref}/storage/many`);
    await page.getByRole('status').filter({ hasText: '1,000 entries shown' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'f1000.txt' }).count(), 0);
    await page.getByRole('button', { name: 'Load 1,000 more' }).click();
    await page.getByRole('button', { name: 'f1000.txt' }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: /^1,001 entries$/ })
      .waitFor();
    assert.equal(await page.getByRole('button', { name: /^Load .* more$/ }).count(), 0);
  });

  test('on a phone the navigation stacks above the content, which has the width, and nothing widens the page', async () => {
    const { page } = b;
    // A user, so the users page has rows (and their header's hidden "Actions" label).
    const signup = await fetch(`${h.info.BASE_URL}/auth/v1/signup`, {
      method: 'POST',
      headers: { apikey: h.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'phone@studio.test', password: 'a-phone-user-password' }),
    });
    assert.equal(signup.status, 201);
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const tables = ['tables/public/big', 'tables/public/big/structure', 'tables/public/big/policies'];
      for (const section of ['', ...tables, 'sql', 'users', 'auth', 'storage/many']) {
        await page.goto(`${h.url}/dashboard#/p/${ref}/${section}`);
        await page.reload();
        const content = page.locator('.page');
        await content.locator('h1, h2').first().waitFor();
        const nav = (await page.getByRole('navigation', { name: 'Project' }).boundingBox())!;
        const box = (await content.boundingBox())!;
        assert.ok(box.width > 340, `${section}: content ${box.width} px wide`);
        assert.ok(box.y >= nav.y + nav.height, `${section}: content beside the navigation`);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 390, `${section}: the page is ${width} px wide`);
      }
      await page.goto(`${h.url}/dashboard#/`);
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      const projects = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(projects <= 390, `projects: the page is ${projects} px wide`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  test('without an SMTP server, a recovery link is said to be in the development mailbox, not sent', async () => {
    const { page } = b;
    assert.equal((await h.api('GET', `/v1/projects/${ref}/config/auth`)).body.smtp_host, null);
    await page.goto(`${h.url}/dashboard#/p/${ref}/users`);
    await page.reload();
    await page.getByRole('button', { name: 'Send recovery link to phone@studio.test' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Recovery link for phone@studio.test is in the development mailbox' })
      .waitFor();
    // The mail is made after the answer (the address's existence is never told by timing): wait for it.
    const inMailbox = async () =>
      ((await h.api('GET', `/v1/projects/${ref}/mailbox`)).body as { to: string }[]).some(
        (m) => m.to === 'phone@studio.test',
      );
    assert.equal(await until(inMailbox, (found) => found, 10_000), true);
  });

  test('no page had a CSP violation or a script error', () => {
    assert.deepEqual(b.problems, []);
  });
});
