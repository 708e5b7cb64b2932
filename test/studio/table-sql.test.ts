/**
 * The DDL the table editor makes (studio/table-sql.ts), run as the Studio
 * runs it (POST /v1/projects/{ref}/database/query, as the owner role) on a
 * real Hearth: create and alter tables, columns, primary keys (composite,
 * changed, dropped), foreign keys with their ON DELETE action, not null and
 * unique, each checked in the catalog through the Studio's own introspection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import {
  addColumnSql,
  alterColumnSql,
  columnsSql,
  createTableSql,
  primaryKeyOf,
  primaryKeySql,
  type ColumnInfo,
  type ColumnSpec,
  type TableRef,
} from '../../studio/table-sql.ts';

let h: TestHearth;
const authors: TableRef = { schema: 'public', name: 'authors' };
const books: TableRef = { schema: 'public', name: 'books' };

const spec = (over: Partial<ColumnSpec>): ColumnSpec => ({
  name: '',
  type: 'text',
  default: '',
  notNull: false,
  unique: false,
  primaryKey: false,
  references: '',
  onDelete: 'no action',
  ...over,
});
const specOf = (c: ColumnInfo, over: Partial<ColumnSpec> = {}): ColumnSpec =>
  spec({
    name: c.name,
    type: c.type,
    default: c.default ?? '',
    notNull: !c.nullable,
    unique: c.unique,
    primaryKey: c.pk,
    references: c.references ?? '',
    onDelete: c.on_delete ?? 'no action',
    ...over,
  });

async function sql(query: string) {
  const res = await h.api('POST', `/v1/projects/${h.info.PROJECT_REF}/database/query`, { body: { query } });
  return res;
}
async function run(query: string) {
  const res = await sql(query);
  assert.equal(res.status, 201, `${query}\n→ ${JSON.stringify(res.body)}`);
  return res.body;
}
const columns = async (t: TableRef): Promise<ColumnInfo[]> => run(columnsSql(t));
const column = async (t: TableRef, name: string) => (await columns(t)).find((c) => c.name === name)!;

before(async () => {
  h = await startTestHearth();
});
after(async () => {
  await h?.close();
});

describe('table editor SQL', () => {
  test('create table: a composite primary key, a foreign key with on delete cascade, unique, not null', async () => {
    await run(
      createTableSql(authors, [
        spec({ name: 'id', type: 'bigint', primaryKey: true }),
        spec({ name: 'name', notNull: true, unique: true }),
      ]),
    );
    const made = createTableSql(books, [
      spec({ name: 'author_id', type: 'bigint', primaryKey: true, references: 'authors(id)', onDelete: 'cascade' }),
      spec({ name: 'title', primaryKey: true }),
      spec({ name: 'isbn', unique: true }),
      spec({ name: 'pages', type: 'integer', default: '100' }),
    ]);
    assert.match(made, /primary key \("author_id", "title"\)/);
    await run(made);
    assert.deepEqual(primaryKeyOf(await columns(books)).columns, ['author_id', 'title']);
    const author = await column(books, 'author_id');
    assert.equal(author.references, 'authors(id)');
    assert.equal(author.on_delete, 'cascade');
    assert.equal(author.nullable, false);
    assert.equal((await column(books, 'isbn')).unique, true);
    assert.equal((await column(authors, 'name')).nullable, false);
  });

  test('the primary key changes after creation: fewer columns, a column joining it, a new key column, none', async () => {
    await run(
      `insert into authors values (1, 'Ada'); insert into books (author_id, title, isbn) values (1, 'Notes', 'x-1')`,
    );
    await run(primaryKeySql(books, await columns(books), ['isbn']));
    assert.deepEqual(primaryKeyOf(await columns(books)).columns, ['isbn']);

    // Ticking "Primary key" on a column's edit makes it part of the key (renamed in the same change).
    const title = await column(books, 'title');
    await run(alterColumnSql(books, title, specOf(title, { name: 'heading', primaryKey: true }), await columns(books)));
    assert.deepEqual(primaryKeyOf(await columns(books)).columns, ['heading', 'isbn']);

    // A new column with "Primary key" on a table that has one joins the key.
    await run(
      addColumnSql(
        books,
        spec({ name: 'edition', type: 'integer', default: '1', primaryKey: true }),
        await columns(books),
      ),
    );
    assert.deepEqual(primaryKeyOf(await columns(books)).columns, ['heading', 'isbn', 'edition']);

    // Leaving the key and unticking not null in one edit: the key is remade first.
    const isbn = await column(books, 'isbn');
    await run(alterColumnSql(books, isbn, specOf(isbn, { primaryKey: false, notNull: false }), await columns(books)));
    assert.deepEqual(primaryKeyOf(await columns(books)).columns, ['heading', 'edition']);
    assert.equal((await column(books, 'isbn')).nullable, true);

    await run(primaryKeySql(books, await columns(books), []));
    const after = primaryKeyOf(await columns(books));
    assert.deepEqual(after, { constraint: null, columns: [] });
    await run(primaryKeySql(books, await columns(books), ['heading', 'edition']));
    assert.equal(primaryKeySql(books, await columns(books), ['heading', 'edition']), '');
  });

  test('a key the rows do not allow fails whole: the old key stays', async () => {
    await run(`insert into books (author_id, heading, isbn, edition, pages) values (1, 'Notes', 'x-2', 2, 200)`);
    const res = await sql(primaryKeySql(books, await columns(books), ['author_id']));
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'sql_error');
    assert.match(res.body.message, /could not create unique index/);
    assert.deepEqual(primaryKeyOf(await columns(books)).columns, ['heading', 'edition']);
  });

  test('columns: type, default, unique off and on, the foreign key changed and removed', async () => {
    const pages = await column(books, 'pages');
    await run(
      alterColumnSql(
        books,
        pages,
        specOf(pages, { type: 'bigint', default: '', notNull: true, unique: true }),
        await columns(books),
      ),
    );
    const changed = await column(books, 'pages');
    assert.deepEqual([changed.type, changed.default, changed.nullable, changed.unique], ['bigint', null, false, true]);
    await run(alterColumnSql(books, changed, specOf(changed, { unique: false }), await columns(books)));
    assert.equal((await column(books, 'pages')).unique, false);

    const author = await column(books, 'author_id');
    await run(alterColumnSql(books, author, specOf(author, { onDelete: 'restrict' }), await columns(books)));
    assert.equal((await column(books, 'author_id')).on_delete, 'restrict');
    const refused = await sql(`delete from authors where id = 1`);
    assert.equal(refused.body.sqlstate, '23503');
    await run(
      alterColumnSql(books, await column(books, 'author_id'), specOf(author, { references: '' }), await columns(books)),
    );
    const free = await column(books, 'author_id');
    assert.deepEqual([free.references, free.fk_constraint], [null, null]);
    await run(`delete from authors where id = 1`);
    assert.equal(alterColumnSql(books, free, specOf(free), await columns(books)), '');
  });
});
