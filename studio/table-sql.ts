/**
 * The SQL the table editor runs (through database/query, as the owner
 * role): introspection and DDL. Pure text, no browser APIs, so the tests
 * run what it makes against a real database.
 */

/** SQL text quoting (database/query takes no parameters): a literal and an identifier. */
import { quoteIdent as ident, quoteLiteral as literal } from '../src/db/ident.ts';

export { ident, literal };

export interface TableRef {
  schema: string;
  name: string;
}
export interface ColumnInfo {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  pk: boolean;
  /** The table's primary key constraint (on every column's row, whether or not the column is in it). */
  pk_constraint: string | null;
  unique: boolean;
  /** The single-column unique constraint, to drop when unique is turned off. */
  unique_constraint: string | null;
  references: string | null;
  /** The single-column foreign key constraint and its ON DELETE action. */
  fk_constraint: string | null;
  on_delete: OnDelete | null;
}
export const ON_DELETE = ['no action', 'cascade', 'set null', 'restrict', 'set default'] as const;
export type OnDelete = (typeof ON_DELETE)[number];
export interface ColumnSpec {
  name: string;
  type: string;
  default: string;
  notNull: boolean;
  unique: boolean;
  primaryKey: boolean;
  /** `table(column)` or `schema.table(column)`, empty for none. */
  references: string;
  onDelete: OnDelete;
}

export const qualified = (t: TableRef) => `${ident(t.schema)}.${ident(t.name)}`;

export const listTablesSql = (schemas: string[]) => `
select n.nspname as schema, c.relname as name,
       case c.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table' else 'table' end as kind,
       c.relrowsecurity as rls
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
 where n.nspname in (${schemas.map(literal).join(', ')}) and c.relkind in ('r', 'p', 'v', 'm', 'f')
 order by 1, 2`;

export const columnsSql = (t: TableRef) => `
with k as (select * from pg_constraint where conrelid = ${literal(qualified(t))}::regclass)
select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, not a.attnotnull as nullable,
       pg_get_expr(d.adbin, d.adrelid) as default,
       coalesce(a.attnum = any (pk.conkey), false) as pk, pk.conname as pk_constraint,
       u.conname is not null as unique, u.conname as unique_constraint,
       f.confrelid::regclass::text || '(' || (select attname from pg_attribute where attrelid = f.confrelid and attnum = f.confkey[1]) || ')' as references,
       f.conname as fk_constraint,
       case f.confdeltype when 'a' then 'no action' when 'c' then 'cascade' when 'n' then 'set null' when 'r' then 'restrict' when 'd' then 'set default' end as on_delete
  from pg_attribute a
  left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
  left join k pk on pk.contype = 'p'
  left join lateral (select conname from k where contype = 'u' and conkey = array[a.attnum] limit 1) u on true
  left join lateral (select * from k where contype = 'f' and conkey = array[a.attnum] limit 1) f on true
 where a.attrelid = ${literal(qualified(t))}::regclass and a.attnum > 0 and not a.attisdropped
 order by a.attnum`;

export const policiesSql = (t: TableRef) => `
select policyname as name, cmd as command, permissive, roles::text[] as roles, qual as using, with_check
  from pg_policies where schemaname = ${literal(t.schema)} and tablename = ${literal(t.name)} order by policyname`;

function references(spec: string, onDelete: OnDelete): string {
  const m = /^\s*([\w."]+)\s*\(\s*([\w"]+)\s*\)\s*$/.exec(spec);
  if (!m) throw new Error(`"${spec}" is not a reference: write table(column), for example authors(id).`);
  const table = m[1]!
    .split('.')
    .map((p) => ident(p.replace(/"/g, '')))
    .join('.');
  return ` references ${table} (${ident(m[2]!.replace(/"/g, ''))})${onDelete === 'no action' ? '' : ` on delete ${onDelete}`}`;
}

/** A column definition as CREATE TABLE and ADD COLUMN take it; type and default are SQL as typed. `inlineKey` false leaves the primary key to a table constraint. */
export function columnDefinition(c: ColumnSpec, inlineKey = true): string {
  if (!c.name.trim()) throw new Error('Every column needs a name.');
  if (!c.type.trim()) throw new Error(`Column ${c.name} needs a type (for example text, bigint, timestamptz, jsonb).`);
  let sql = `${ident(c.name.trim())} ${c.type.trim()}`;
  if (c.default.trim()) sql += ` default ${c.default.trim()}`;
  if (c.primaryKey && inlineKey) sql += ' primary key';
  else if (c.notNull || c.primaryKey) sql += ' not null';
  if (c.unique && !c.primaryKey) sql += ' unique';
  if (c.references.trim()) sql += references(c.references, c.onDelete);
  return sql;
}

/** CREATE TABLE; several primary key columns make one composite key (a table constraint). */
export function createTableSql(t: TableRef, columns: ColumnSpec[]): string {
  if (!t.name.trim()) throw new Error('The table needs a name.');
  if (columns.length === 0) throw new Error('Add at least one column.');
  const key = columns.filter((c) => c.primaryKey);
  const lines = columns.map((c) => columnDefinition(c, key.length === 1));
  if (key.length > 1) lines.push(`primary key (${key.map((c) => ident(c.name.trim())).join(', ')})`);
  return `create table ${qualified(t)} (\n  ${lines.join(',\n  ')}\n);`;
}

/** The table's primary key now: its constraint name and columns (in column order). */
export function primaryKeyOf(columns: ColumnInfo[]): { constraint: string | null; columns: string[] } {
  return { constraint: columns[0]?.pk_constraint ?? null, columns: columns.filter((c) => c.pk).map((c) => c.name) };
}

/** The statements that make `key` the primary key (none: no primary key); empty when it already is. */
export function primaryKeySql(t: TableRef, current: ColumnInfo[], key: string[]): string {
  const now = primaryKeyOf(current);
  if (now.columns.join('\0') === key.join('\0')) return '';
  const out: string[] = [];
  if (now.constraint) out.push(`alter table ${qualified(t)} drop constraint ${ident(now.constraint)};`);
  if (key.length) out.push(`alter table ${qualified(t)} add primary key (${key.map(ident).join(', ')});`);
  return out.join('\n');
}

/** ADD COLUMN; a new primary key column of a table that has a key joins it (the key is remade). */
export function addColumnSql(t: TableRef, c: ColumnSpec, current: ColumnInfo[]): string {
  const key = primaryKeyOf(current);
  if (!c.primaryKey || !key.constraint) return `alter table ${qualified(t)} add column ${columnDefinition(c)};`;
  return [
    `alter table ${qualified(t)} add column ${columnDefinition(c, false)};`,
    primaryKeySql(t, current, [...key.columns, c.name.trim()]),
  ].join('\n');
}

export const dropColumnSql = (t: TableRef, column: string) =>
  `alter table ${qualified(t)} drop column ${ident(column)};`;
export const dropTableSql = (t: TableRef, kind: string) =>
  `drop ${kind === 'view' ? 'view' : kind === 'materialized view' ? 'materialized view' : 'table'} ${qualified(t)};`;

/**
 * The statements that turn column `before` into `after`: rename, type,
 * default, primary key (joining or leaving the table's key, which is
 * remade), not null, unique, foreign key (dropped and made again when it
 * changes). database/query runs them as one transaction: all or none.
 */
export function alterColumnSql(t: TableRef, before: ColumnInfo, after: ColumnSpec, current: ColumnInfo[]): string {
  const out: string[] = [];
  const table = qualified(t);
  const name = after.name.trim() || before.name;
  if (name !== before.name) out.push(`alter table ${table} rename column ${ident(before.name)} to ${ident(name)};`);
  const col = `alter table ${table} alter column ${ident(name)}`;
  if (after.type.trim() && after.type.trim() !== before.type)
    out.push(`${col} type ${after.type.trim()} using ${ident(name)}::${after.type.trim()};`);
  if (after.default.trim() !== (before.default ?? ''))
    out.push(after.default.trim() ? `${col} set default ${after.default.trim()};` : `${col} drop default;`);
  if (after.primaryKey !== before.pk) {
    const renamed = current.map((c) => (c.name === before.name ? { ...c, name, pk: after.primaryKey } : c));
    const key = primaryKeySql(
      t,
      current,
      renamed.filter((c) => c.pk).map((c) => c.name),
    );
    if (key) out.push(key);
  }
  // A key column is not null whatever the box says; one leaving the key keeps not null unless unticked.
  const notNull = after.notNull || after.primaryKey;
  if (notNull !== !before.nullable) out.push(`${col} ${notNull ? 'set' : 'drop'} not null;`);
  if (after.unique !== before.unique) {
    if (after.unique) out.push(`alter table ${table} add unique (${ident(name)});`);
    else if (before.unique_constraint)
      out.push(`alter table ${table} drop constraint ${ident(before.unique_constraint)};`);
  }
  const reference = after.references.trim();
  if (reference !== (before.references ?? '') || (reference && after.onDelete !== (before.on_delete ?? 'no action'))) {
    if (before.fk_constraint) out.push(`alter table ${table} drop constraint ${ident(before.fk_constraint)};`);
    if (reference)
      out.push(`alter table ${table} add foreign key (${ident(name)})${references(reference, after.onDelete)};`);
  }
  return out.join('\n');
}

export const rlsSql = (t: TableRef, on: boolean) =>
  `alter table ${qualified(t)} ${on ? 'enable' : 'disable'} row level security;`;

export interface PolicySpec {
  name: string;
  command: string;
  roles: string;
  using: string;
  check: string;
}
export function createPolicySql(t: TableRef, p: PolicySpec): string {
  if (!p.name.trim()) throw new Error('The policy needs a name.');
  const roles = p.roles
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  let sql = `create policy ${ident(p.name.trim())} on ${qualified(t)} for ${p.command}`;
  if (roles.length) sql += ` to ${roles.map((r) => (r === 'public' ? 'public' : ident(r))).join(', ')}`;
  if (p.using.trim()) sql += ` using (${p.using.trim()})`;
  if (p.check.trim()) sql += ` with check (${p.check.trim()})`;
  return `${sql};`;
}
export const dropPolicySql = (t: TableRef, name: string) => `drop policy ${ident(name)} on ${qualified(t)};`;
