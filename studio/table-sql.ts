/** The SQL the table editor runs (through database/query, as the owner role): introspection and DDL. */
import { ident, literal } from './api.ts';

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
  unique: boolean;
  references: string | null;
}
export interface ColumnSpec {
  name: string;
  type: string;
  default: string;
  notNull: boolean;
  unique: boolean;
  primaryKey: boolean;
  /** `table(column)` or `schema.table(column)`, empty for none. */
  references: string;
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
select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, not a.attnotnull as nullable,
       pg_get_expr(d.adbin, d.adrelid) as default,
       exists (select 1 from pg_constraint k where k.conrelid = a.attrelid and k.contype = 'p' and a.attnum = any (k.conkey)) as pk,
       exists (select 1 from pg_constraint k where k.conrelid = a.attrelid and k.contype = 'u' and k.conkey = array[a.attnum]) as unique,
       (select confrelid::regclass::text || '(' || (select attname from pg_attribute where attrelid = k.confrelid and attnum = k.confkey[1]) || ')'
          from pg_constraint k where k.conrelid = a.attrelid and k.contype = 'f' and k.conkey = array[a.attnum] limit 1) as references
  from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
 where a.attrelid = ${literal(qualified(t))}::regclass and a.attnum > 0 and not a.attisdropped
 order by a.attnum`;

export const policiesSql = (t: TableRef) => `
select policyname as name, cmd as command, permissive, roles::text[] as roles, qual as using, with_check
  from pg_policies where schemaname = ${literal(t.schema)} and tablename = ${literal(t.name)} order by policyname`;

function references(spec: string): string {
  const m = /^\s*([\w."]+)\s*\(\s*([\w"]+)\s*\)\s*$/.exec(spec);
  if (!m) throw new Error(`"${spec}" is not a reference: write table(column), for example authors(id).`);
  const table = m[1]!.split('.').map((p) => ident(p.replace(/"/g, ''))).join('.');
  return ` references ${table} (${ident(m[2]!.replace(/"/g, ''))})`;
}

/** A column definition as CREATE TABLE and ADD COLUMN take it; type and default are SQL as typed. */
export function columnDefinition(c: ColumnSpec): string {
  if (!c.name.trim()) throw new Error('Every column needs a name.');
  if (!c.type.trim()) throw new Error(`Column ${c.name} needs a type (for example text, bigint, timestamptz, jsonb).`);
  let sql = `${ident(c.name.trim())} ${c.type.trim()}`;
  if (c.default.trim()) sql += ` default ${c.default.trim()}`;
  if (c.primaryKey) sql += ' primary key';
  else if (c.notNull) sql += ' not null';
  if (c.unique && !c.primaryKey) sql += ' unique';
  if (c.references.trim()) sql += references(c.references);
  return sql;
}

export function createTableSql(t: TableRef, columns: ColumnSpec[]): string {
  if (!t.name.trim()) throw new Error('The table needs a name.');
  if (columns.length === 0) throw new Error('Add at least one column.');
  return `create table ${qualified(t)} (\n  ${columns.map(columnDefinition).join(',\n  ')}\n);`;
}

export const addColumnSql = (t: TableRef, c: ColumnSpec) => `alter table ${qualified(t)} add column ${columnDefinition(c)};`;
export const dropColumnSql = (t: TableRef, column: string) => `alter table ${qualified(t)} drop column ${ident(column)};`;
export const dropTableSql = (t: TableRef, kind: string) => `drop ${kind === 'view' ? 'view' : kind === 'materialized view' ? 'materialized view' : 'table'} ${qualified(t)};`;

/** The statements that turn column `before` into `after` (rename, type, default, not null, unique). */
export function alterColumnSql(t: TableRef, before: ColumnInfo, after: ColumnSpec): string {
  const out: string[] = [];
  const table = qualified(t);
  let name = before.name;
  if (after.name.trim() && after.name.trim() !== before.name) {
    out.push(`alter table ${table} rename column ${ident(before.name)} to ${ident(after.name.trim())};`);
    name = after.name.trim();
  }
  const col = `alter table ${table} alter column ${ident(name)}`;
  if (after.type.trim() && after.type.trim() !== before.type) out.push(`${col} type ${after.type.trim()} using ${ident(name)}::${after.type.trim()};`);
  if (after.default.trim() !== (before.default ?? '')) out.push(after.default.trim() ? `${col} set default ${after.default.trim()};` : `${col} drop default;`);
  if (after.notNull !== !before.nullable) out.push(`${col} ${after.notNull ? 'set' : 'drop'} not null;`);
  if (after.unique && !before.unique) out.push(`alter table ${table} add unique (${ident(name)});`);
  if (after.references.trim() && after.references.trim() !== (before.references ?? '')) out.push(`alter table ${table} add foreign key (${ident(name)})${references(after.references)};`);
  return out.join('\n');
}

export const rlsSql = (t: TableRef, on: boolean) => `alter table ${qualified(t)} ${on ? 'enable' : 'disable'} row level security;`;

export interface PolicySpec {
  name: string;
  command: string;
  roles: string;
  using: string;
  check: string;
}
export function createPolicySql(t: TableRef, p: PolicySpec): string {
  if (!p.name.trim()) throw new Error('The policy needs a name.');
  const roles = p.roles.split(',').map((r) => r.trim()).filter(Boolean);
  let sql = `create policy ${ident(p.name.trim())} on ${qualified(t)} for ${p.command}`;
  if (roles.length) sql += ` to ${roles.map((r) => (r === 'public' ? 'public' : ident(r))).join(', ')}`;
  if (p.using.trim()) sql += ` using (${p.using.trim()})`;
  if (p.check.trim()) sql += ` with check (${p.check.trim()})`;
  return `${sql};`;
}
export const dropPolicySql = (t: TableRef, name: string) => `drop policy ${ident(name)} on ${qualified(t)};`;
