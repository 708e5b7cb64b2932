/**
 * `hearth gen types typescript`: the `Database` type supabase-js takes
 * (`createClient<Database>`), in the shape `supabase gen types typescript`
 * prints, built from the project's catalog (catalog.ts).
 */
import type { Command } from 'commander';
import { target } from './api.ts';
import {
  readCatalog,
  type Catalog,
  type CatalogColumn,
  type CatalogFunction,
  type CatalogRelation,
  type CatalogType,
  type ViewColumnOrigin,
  viewColumnOrigins,
} from './catalog.ts';
import { accepts, act, examples, optionsOf, schemaNames, schemaOption } from './program.ts';

// The types Supabase's generator (postgres-meta's typegen) names; any other base type (ranges,
// tsvector, inet, interval, ...) is `unknown` there, so it is here too: code written against
// Supabase's types, and postgrest-js's own type tests, expect exactly that.
const NUMBER = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric']);
const STRING = new Set([
  'bytea',
  'bpchar',
  'varchar',
  'date',
  'text',
  'citext',
  'time',
  'timetz',
  'timestamp',
  'timestamptz',
  'uuid',
  'vector',
]);

/** Argument modes that take a value: in, inout, variadic. */
const INPUT_MODES = new Set(['i', 'b', 'v']);
/** The types of an unnamed argument PostgREST (and so Supabase's generator) accepts. */
const BODY_TYPES = new Set(['json', 'jsonb', 'text']);

/** A foreign key as a relationship of the relation `on` (a table's oid, or a view's that shows its columns). */
interface Relationship {
  name: string;
  on: number;
  columns: string[];
  isOneToOne: boolean;
  refName: string;
  refColumns: string[];
}

const key = (name: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name));
const str = (s: string) => JSON.stringify(s);

class Renderer {
  private readonly types = new Map<number, CatalogType>();
  private readonly enums = new Map<number, string[]>();
  private readonly relations = new Map<number, CatalogRelation>();
  private readonly inferred: Map<number, Relationship[]>;

  constructor(
    private readonly catalog: Catalog,
    private readonly schemas: string[],
  ) {
    for (const t of catalog.types ?? []) this.types.set(t.oid, t);
    for (const e of catalog.enums) this.enums.set(e.oid, e.labels);
    for (const r of catalog.relations) this.relations.set(r.oid, r);
    this.inferred = this.inferRelationships();
  }

  /** The TypeScript type of values of a PostgreSQL type, as PostgREST sends them in JSON. */
  tsType(oid: number, depth = 0): string {
    const t = this.types.get(oid);
    if (!t || depth > 10) return 'unknown';
    if (t.category === 'A' && t.elem) return `${this.parens(this.tsType(t.elem, depth + 1))}[]`;
    if (t.type === 'd') return this.tsType(t.base, depth + 1);
    if (t.type === 'e') {
      if (this.schemas.includes(t.schema)) return `Database[${str(t.schema)}]["Enums"][${str(t.name)}]`;
      return (this.enums.get(oid) ?? []).map(str).join(' | ') || 'string';
    }
    if (t.type === 'c') {
      const rel = this.relations.get(t.relid);
      if (rel?.kind === 'c') return `Database[${str(rel.schema)}]["CompositeTypes"][${str(rel.name)}]`;
      if (rel && (rel.kind === 'r' || rel.kind === 'p' || rel.kind === 'f'))
        return `Database[${str(rel.schema)}]["Tables"][${str(rel.name)}]["Row"]`;
      if (rel) return `Database[${str(rel.schema)}]["Views"][${str(rel.name)}]["Row"]`;
      return 'unknown';
    }
    if (t.name === 'bool') return 'boolean';
    if (NUMBER.has(t.name)) return 'number';
    if (STRING.has(t.name)) return 'string';
    if (t.name === 'json' || t.name === 'jsonb') return 'Json';
    if (t.name === 'void') return 'undefined';
    if (t.name === 'record') return 'Record<string, unknown>';
    return 'unknown';
  }

  private parens(t: string): string {
    return t.includes(' ') ? `(${t})` : t;
  }

  private nullable(t: string, nullable: boolean): string {
    return nullable && t !== 'unknown' ? `${t} | null` : t;
  }

  private object(fields: string[], indent: string): string {
    if (fields.length === 0) return `{\n${indent}  [_ in never]: never\n${indent}}`;
    return `{\n${fields.map((f) => `${indent}  ${f}`).join('\n')}\n${indent}}`;
  }

  private isView(r: CatalogRelation) {
    return r.kind === 'v' || r.kind === 'm';
  }

  /**
   * A table's or view's computed fields, as Supabase's generator finds them: functions whose
   * only argument is an unnamed row of it (`create function title_of(books)`), which PostgREST
   * selects like columns (`select=id,title_of`); in Row only, nullable, typed as the function's
   * value (one row, not an array, for a set-returning one).
   */
  private computedFields(r: CatalogRelation): string[] {
    return this.catalog.functions
      .filter((f) => {
        const args = f.arg_modes.flatMap((mode, i) => (mode === 't' ? [] : [i]));
        if (args.length !== 1 || f.arg_modes[args[0]!] !== 'i' || f.arg_names[args[0]!] || f.n_defaults) return false;
        const arg = this.types.get(f.arg_types[args[0]!]!);
        return arg?.type === 'c' && arg.relid === r.oid;
      })
      .map((f) => `${key(f.name)}: ${this.nullable(this.returnShape(f, '          '), true)}`);
  }

  private rowFields(r: CatalogRelation): string[] {
    // A view's columns carry no NOT NULL: PostgreSQL cannot promise it, so neither do the types.
    return r.columns.map(
      (c) => `${key(c.name)}: ${this.nullable(this.tsType(c.type_oid), !c.not_null || this.isView(r))}`,
    );
  }

  /** Never written: generated columns, identity ALWAYS columns, columns of a view that cannot be written. */
  private neverWritten(c: CatalogColumn) {
    return c.generated === 's' || c.identity === 'a' || !c.updatable;
  }

  private insertFields(r: CatalogRelation): string[] {
    return r.columns.map((c) => {
      if (this.neverWritten(c)) return `${key(c.name)}?: never`;
      const optional = !c.not_null || c.default !== null || c.identity !== '' || this.isView(r);
      return `${key(c.name)}${optional ? '?' : ''}: ${this.nullable(this.tsType(c.type_oid), !c.not_null || this.isView(r))}`;
    });
  }

  private updateFields(r: CatalogRelation): string[] {
    return r.columns.map((c) =>
      this.neverWritten(c)
        ? `${key(c.name)}?: never`
        : `${key(c.name)}?: ${this.nullable(this.tsType(c.type_oid), !c.not_null || this.isView(r))}`,
    );
  }

  /**
   * Relationships as Supabase's generator (and PostgREST) infer them: each foreign key of a
   * table, and the same key again wherever a view shows all its columns unchanged: from the
   * view (a view of the referencing table), to the view (a view of the referenced table), and
   * from view to view; only those to the relation's own schema, ordered by key name, then
   * referenced relation and columns.
   */
  private inferRelationships(): Map<number, Relationship[]> {
    const byName = new Map(this.catalog.relations.map((r) => [`${r.schema}.${r.name}`, r]));
    const views = this.catalog.relations.filter((r) => this.isView(r) && r.rule);
    // Oids come as JSON strings (PostgreSQL's json of an oid); a rule's are numbers.
    const direct = new Map(views.map((v) => [Number(v.oid), viewColumnOrigins(v.rule!)]));
    // Every table or view column each view column shows, following views of views.
    const origins = new Map<number, ViewColumnOrigin[]>();
    for (const v of views) {
      const all = [...direct.get(Number(v.oid))!];
      for (let frontier = all, depth = 0; frontier.length && depth < 16; depth++) {
        frontier = frontier.flatMap((o) =>
          (direct.get(o.table) ?? []).filter((d) => d.num === o.column).map((d) => ({ ...d, num: o.num })),
        );
        all.push(...frontier);
      }
      origins.set(v.oid, all);
    }
    // The view columns that show all the given columns of the table, every combination of them.
    const shown = (view: CatalogRelation, table: CatalogRelation, columns: string[]): string[][] => {
      const choices = columns.map((name) => {
        const num = table.columns.find((c) => c.name === name)?.num;
        return (origins.get(view.oid) ?? [])
          .filter((o) => o.table === Number(table.oid) && o.column === Number(num))
          .flatMap((o) => view.columns.filter((c) => c.num === o.num).map((c) => c.name));
      });
      return choices.reduce<string[][]>((acc, names) => acc.flatMap((a) => names.map((n) => [...a, n])), [[]]);
    };
    const sorted = (a: string[]) => [...a].sort().join(',');
    const all: Relationship[] = [];
    for (const k of this.catalog.foreign_keys) {
      const table = byName.get(`${k.schema}.${k.table}`);
      if (!table) continue;
      const isOneToOne = table.unique_sets.some((u) => sorted(u) === sorted(k.columns));
      const base = { name: k.name, isOneToOne };
      const from = [{ on: table, columns: k.columns }];
      const to = [{ schema: k.ref_schema, name: k.ref_table, columns: k.ref_columns }];
      const referenced = byName.get(`${k.ref_schema}.${k.ref_table}`);
      for (const v of views) {
        for (const columns of shown(v, table, k.columns)) from.push({ on: v, columns });
        if (referenced)
          for (const columns of shown(v, referenced, k.ref_columns))
            to.push({ schema: v.schema, name: v.name, columns });
      }
      for (const f of from)
        for (const t of to)
          if (t.schema === f.on.schema)
            all.push({ ...base, on: f.on.oid, columns: f.columns, refName: t.name, refColumns: t.columns });
    }
    all.sort(
      (a, b) =>
        a.name.localeCompare(b.name) ||
        a.refName.localeCompare(b.refName) ||
        JSON.stringify(a.refColumns).localeCompare(JSON.stringify(b.refColumns)),
    );
    const byRelation = new Map<number, Relationship[]>();
    for (const r of all) byRelation.set(r.on, [...(byRelation.get(r.on) ?? []), r]);
    return byRelation;
  }

  private relationships(r: CatalogRelation, indent: string): string {
    const rels = this.inferred.get(r.oid) ?? [];
    if (rels.length === 0) return '[]';
    const items = rels.map(
      (k) =>
        `${indent}  {\n${indent}    foreignKeyName: ${str(k.name)}\n${indent}    columns: ${JSON.stringify(k.columns)}\n${indent}    isOneToOne: ${k.isOneToOne}\n${indent}    referencedRelation: ${str(k.refName)}\n${indent}    referencedColumns: ${JSON.stringify(k.refColumns)}\n${indent}  },`,
    );
    return `[\n${items.join('\n')}\n${indent}]`;
  }

  private table(r: CatalogRelation, indent: string): string {
    const i2 = `${indent}  `;
    const parts = [`${i2}Row: ${this.object([...this.rowFields(r), ...this.computedFields(r)], i2)}`];
    const writable =
      r.kind === 'r' || r.kind === 'p' || ((r.kind === 'v' || r.kind === 'f') && (r.updatable & (8 | 4)) !== 0);
    if (writable) {
      parts.push(`${i2}Insert: ${this.object(this.insertFields(r), i2)}`);
      parts.push(`${i2}Update: ${this.object(this.updateFields(r), i2)}`);
    }
    parts.push(`${i2}Relationships: ${this.relationships(r, i2)}`);
    return `${indent}${key(r.name)}: {\n${parts.join('\n')}\n${indent}}`;
  }

  /**
   * Whether the function is typed at all, as Supabase's generator decides
   * (postgres-meta's typegen): PostgREST calls a function by its argument
   * names, so one with unnamed arguments is left out, unless its one unnamed
   * argument is json, jsonb or text and either its only argument (the request
   * body is passed as it is) or one with a default; or the only argument and a
   * table's row (a computed field). Two unnamed arguments would be two `""` keys.
   */
  private typed(f: CatalogFunction): boolean {
    const inputs = f.arg_modes.flatMap((mode, i) => (INPUT_MODES.has(mode) ? [i] : []));
    const unnamed = inputs.filter((i) => !f.arg_names[i]);
    if (unnamed.length === 0) return true;
    if (unnamed.length > 1) return false;
    const at = inputs.indexOf(unnamed[0]!);
    const type = this.types.get(f.arg_types[unnamed[0]!]!);
    const body = type?.schema === 'pg_catalog' && BODY_TYPES.has(type.name);
    if (inputs.length === 1) return body || (type?.type === 'c' && this.relations.get(type.relid)?.kind !== 'c');
    return body && at >= inputs.length - f.n_defaults;
  }

  /** The input arguments (in, inout, variadic) of a function; trailing ones with defaults are optional. */
  private inputArgs(f: CatalogFunction): { name: string; type: number; optional: boolean }[] {
    const inputs = f.arg_modes.flatMap((mode, i) => (INPUT_MODES.has(mode) ? [i] : []));
    return inputs.map((i, n) => ({
      name: f.arg_names[i] ?? '',
      type: f.arg_types[i]!,
      optional: n >= inputs.length - f.n_defaults,
    }));
  }

  /** The name of the table, view or composite type whose rows the function returns, if it does. */
  private returnedRelation(f: CatalogFunction): string | null {
    const t = this.types.get(f.returns);
    return t?.type === 'c' && t.relid ? t.name : null;
  }

  /**
   * What the function returns, one value of it: a `returns table(...)` object (its columns not
   * nullable, as Supabase's generator types them), a table's or view's row as its columns, else
   * the type.
   */
  private returnShape(f: CatalogFunction, indent: string): string {
    const outputs = f.arg_modes.flatMap((mode, i) =>
      mode === 'o' || mode === 'b' || mode === 't' ? [{ name: f.arg_names[i] ?? '', type: f.arg_types[i]! }] : [],
    );
    const returnType = this.types.get(f.returns);
    if (f.arg_modes.includes('t') || (outputs.length > 1 && returnType?.name === 'record'))
      return this.object(
        outputs.map((o) => `${key(o.name)}: ${this.tsType(o.type)}`),
        indent,
      );
    const rel = returnType?.type === 'c' ? this.relations.get(returnType.relid) : undefined;
    if (rel && rel.kind !== 'c') return this.object(this.rowFields(rel), indent);
    return this.tsType(f.returns);
  }

  /**
   * SetofOptions, as Supabase's generator writes them for a function returning rows of a table,
   * view or composite type, so postgrest-js types `.select()` on `rpc()` and embeds the function
   * from the row it takes: `from` is the row type of its only argument, or '*'; it is one-to-one
   * (one row, not an array) unless set-returning with a ROWS estimate above 1 (the default 1000).
   */
  private setofOptions(f: CatalogFunction): { from: string; to: string; isOneToOne: boolean } | null {
    const to = this.returnedRelation(f);
    if (!to) return null;
    const only = f.arg_types.length === 1 ? this.types.get(f.arg_types[0]!) : undefined;
    const from = only?.type === 'c' && only.relid && only.format ? only.format : '*';
    return { from, to, isOneToOne: (f.rows ?? 0) <= 1 };
  }

  /**
   * The error Supabase's generator types as Returns (`{ error: true } & "..."`) where PostgREST
   * would refuse the call: overloads it cannot choose between (one without arguments beside one
   * whose only, unnamed argument has a default; one named argument with different types), and a
   * computed field (an unnamed row argument) called with rpc().
   */
  private callError(f: CatalogFunction, overloads: CatalogFunction[]): string | null {
    const inputs = this.inputArgs(f);
    const name = `${f.schema}.${f.name}`;
    const ambiguous = (candidates: string) =>
      `Could not choose the best candidate function between: ${candidates}. Try renaming the parameters or the function itself in the database so function overloading can be resolved`;
    const others = overloads.filter((o) => o !== f).map((o) => ({ o, inputs: this.inputArgs(o) }));
    if (inputs.length === 0) {
      const other = others.find((x) => x.inputs.length === 1 && !x.inputs[0]!.name && x.inputs[0]!.optional);
      if (other) return ambiguous(`${name}(), ${name}( => ${this.types.get(other.o.returns)?.name ?? 'unknown'})`);
    }
    if (inputs.length === 1 && inputs[0]!.name) {
      const arg = inputs[0]!;
      const clashes = others.filter(
        (x) => x.inputs.length === 1 && x.inputs[0]!.name === arg.name && x.inputs[0]!.type !== arg.type,
      );
      if (clashes.length)
        return ambiguous(
          [{ inputs }, ...clashes]
            .sort((a, b) => a.inputs[0]!.type - b.inputs[0]!.type)
            .map(
              (x) =>
                `${name}(${x.inputs.map((a) => `${a.name} => ${this.types.get(a.type)?.name ?? 'unknown'}`).join(', ')})`,
            )
            .join(', '),
        );
    }
    const only = inputs.length === 1 && !inputs[0]!.name ? this.types.get(inputs[0]!.type) : undefined;
    if (only?.type === 'c' && only.relid && !this.returnedRelation(f))
      return `the function ${name} with parameter or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache`;
    return null;
  }

  private functionSignature(f: CatalogFunction, overloads: CatalogFunction[], indent: string): string {
    const inputs = this.inputArgs(f);
    const args = inputs.length
      ? this.object(
          inputs.map((a) => `${key(a.name)}${a.optional ? '?' : ''}: ${this.tsType(a.type)}`),
          indent,
        )
      : 'never';
    const error = this.callError(f, overloads);
    const setof = this.setofOptions(f);
    let returns = error ? `{ error: true } & ${str(error)}` : this.returnShape(f, indent);
    // A set-returning function of rows that is one-to-one (ROWS 1) returns one object, as postgrest-js
    // expects with SetofOptions; the error type is suffixed as Supabase's generator writes it.
    if (f.returns_set && !setof?.isOneToOne) returns = error ? `${returns}[]` : `${this.parens(returns)}[]`;
    if (!setof) return `{ Args: ${args}; Returns: ${returns} }`;
    const options = this.object(
      [
        `from: ${str(setof.from)}`,
        `to: ${str(setof.to)}`,
        `isOneToOne: ${setof.isOneToOne}`,
        `isSetofReturn: ${f.returns_set}`,
      ],
      indent,
    );
    return `{ Args: ${args}; Returns: ${returns}; SetofOptions: ${options} }`;
  }

  private schema(name: string): string {
    const I = '      ';
    const rels = this.catalog.relations.filter((r) => r.schema === name);
    const tables = rels.filter((r) => r.kind === 'r' || r.kind === 'p' || r.kind === 'f').map((r) => this.table(r, I));
    const views = rels.filter((r) => r.kind === 'v' || r.kind === 'm').map((r) => this.table(r, I));
    const byName = new Map<string, CatalogFunction[]>();
    for (const f of this.catalog.functions.filter((f) => f.schema === name && this.typed(f)))
      byName.set(f.name, [...(byName.get(f.name) ?? []), f]);
    // Overloads in the order Supabase's generator prints them: by argument list, then result.
    const signature = (f: CatalogFunction) => [f.arguments ?? '', f.result ?? ''];
    for (const overloads of byName.values())
      overloads.sort((a, b) => {
        const [x, y] = [signature(a), signature(b)];
        return x[0]!.localeCompare(y[0]!) || x[1]!.localeCompare(y[1]!);
      });
    const functions = [...byName].map(([fname, overloads]) => {
      const sigs = overloads.map((f) => this.functionSignature(f, overloads, `${I}  `));
      // Overloads are a union of signatures, one per line.
      return sigs.length === 1
        ? `${I}${key(fname)}: ${sigs[0]}`
        : `${I}${key(fname)}:\n${sigs.map((s) => `${I}  | ${s}`).join('\n')}`;
    });
    const enums = (this.catalog.types ?? [])
      .filter((t) => t.schema === name && t.type === 'e')
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((t) => `${I}${key(t.name)}: ${(this.enums.get(t.oid) ?? []).map(str).join(' | ') || 'never'}`);
    const composites = rels
      .filter((r) => r.kind === 'c')
      .map(
        (r) =>
          `${I}${key(r.name)}: ${this.object(
            r.columns.map((c) => `${key(c.name)}: ${this.nullable(this.tsType(c.type_oid), true)}`),
            I,
          )}`,
      );
    const section = (title: string, items: string[]) =>
      `    ${title}: ${items.length ? `{\n${items.join('\n')}\n    }` : '{\n      [_ in never]: never\n    }'}`;
    return `  ${key(name)}: {\n${[section('Tables', tables), section('Views', views), section('Functions', functions), section('Enums', enums), section('CompositeTypes', composites)].join('\n')}\n  }`;
  }

  render(): string {
    const constants = this.schemas
      .map((s) => {
        const enums = (this.catalog.types ?? [])
          .filter((t) => t.schema === s && t.type === 'e')
          .sort((a, b) => a.name.localeCompare(b.name));
        return `  ${key(s)}: {\n    Enums: {${enums.map((t) => `\n      ${key(t.name)}: [${(this.enums.get(t.oid) ?? []).map(str).join(', ')}],`).join('')}${enums.length ? '\n    ' : ''}},\n  },`;
      })
      .join('\n');
    return `${HEADER}
export type Database = {
  // Lets createClient<Database>() pick the matching PostgREST features.
  __InternalSupabase: {
    PostgrestVersion: "12"
  }
${this.schemas.map((s) => this.schema(s)).join('\n')}
}
${helperTypes(this.schemas.includes('public') ? 'public' : this.schemas[0]!)}
export const Constants = {
${constants}
} as const
`;
  }
}

const HEADER = `// Generated by \`hearth gen types typescript\` from the project's catalog. Do not edit.

export type Json =
  | string
  | number
  | boolean
  | null
  | { [key: string]: Json | undefined }
  | Json[]
`;

/** Tables<>, TablesInsert<>, TablesUpdate<>, Enums<>, CompositeTypes<>: by name in the default schema, or {schema} then name. */
function helperTypes(defaultSchema: string): string {
  const pick = (name: string, base: (d: string) => string, within: string, member: string | null) => `
export type ${name}<
  NameOrOptions extends keyof ${base('DefaultSchema')} | { schema: keyof DatabaseWithoutInternals },
  Name extends NameOrOptions extends { schema: keyof DatabaseWithoutInternals }
    ? keyof ${within}
    : never = never,
> = NameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? ${member ? `${within}[Name] extends { ${member}: infer R } ? R : never` : `${within}[Name]`}
  : NameOrOptions extends keyof ${base('DefaultSchema')}
    ? ${member ? `${base('DefaultSchema')}[NameOrOptions] extends { ${member}: infer R } ? R : never` : `${base('DefaultSchema')}[NameOrOptions]`}
    : never
`;
  const S = 'DatabaseWithoutInternals[NameOrOptions["schema"]]';
  return `
type DatabaseWithoutInternals = Omit<Database, "__InternalSupabase">

type DefaultSchema = DatabaseWithoutInternals[${str(defaultSchema)}]
${pick('Tables', (d) => `(${d}["Tables"] & ${d}["Views"])`, `(${S}["Tables"] & ${S}["Views"])`, 'Row')}${pick('TablesInsert', (d) => `${d}["Tables"]`, `${S}["Tables"]`, 'Insert')}${pick('TablesUpdate', (d) => `${d}["Tables"]`, `${S}["Tables"]`, 'Update')}${pick('Enums', (d) => `${d}["Enums"]`, `${S}["Enums"]`, null)}${pick('CompositeTypes', (d) => `${d}["CompositeTypes"]`, `${S}["CompositeTypes"]`, null)}`;
}

export function renderTypes(catalog: Catalog, schemas: string[]): string {
  return new Renderer(catalog, schemas).render();
}

export function registerGen(program: Command): void {
  const gen = program.command('gen').description('generate code from the project');
  const types = gen
    .command('types')
    .argument(
      '<language>',
      'only "typescript"',
      accepts(
        (v) => v === 'typescript',
        (v) => `Only TypeScript types are generated: \`hearth gen types typescript\`, not "${v}".`,
      ),
    )
    .description('print the Database type of the project for createClient<Database>() (supabase gen types shape)')
    .addOption(schemaOption('comma-separated schemas', 'public'))
    .action(
      act(async (_language: string, ...args) => {
        const opts = optionsOf<{ schema: string }>(args);
        const schemas = schemaNames(opts.schema);
        const t = await target(opts);
        const catalog = await readCatalog(t, schemas);
        process.stdout.write(renderTypes(catalog, schemas));
      }),
    );
  examples(types, [
    ['hearth gen types typescript > src/database.types.ts', 'types of the public schema'],
    ['hearth gen types typescript --schema public,billing', 'several schemas'],
  ]);
  examples(gen, [['hearth gen types typescript > src/database.types.ts', 'types for supabase-js']]);
}
