/**
 * Which relationship an embed follows: `parent?select=target!hint(...)`. The
 * answer is one relationship, or a 400 that says why not (none, several,
 * many-to-many which Hearth does not embed). Matching and wording follow
 * PostgREST 12/13 (its findRel), so existing client code keeps working:
 *
 * - `target` is a table or view joined by a foreign key, or, for a table, the
 *   name of a foreign-key constraint or of a single referencing column of the
 *   parent (`best_friends_first_user_fkey(*)`, `parent_id(*)`).
 * - `target!hint`: the hint is a constraint name or a single column of either
 *   side of the key.
 * - A self-referencing key gives two relationships; the table name picks the
 *   to-many one (children), the column name the to-one (parent), and a hint
 *   must name the referencing column (`collections!parent_id(*)`).
 * - A function of the parent's row returning rows of a table or view is a
 *   computed relationship named after the function: to-one when it is not
 *   SETOF or is declared ROWS 1, else to-many.
 */
import { fail } from '../errors.ts';
import type { ForeignKey, Relation, RestFunction, SchemaCache } from './schema-cache.ts';
import { relationKey } from './schema-cache.ts';
import { closest } from './suggest.ts';

export interface Relationship {
  /** The foreign key joined on; null for a computed relationship. */
  fk: ForeignKey | null;
  /** A computed relationship: the function of the parent's row that yields the target rows. */
  fn: RestFunction | null;
  target: Relation;
  /** Parent columns and target columns, pairwise equal in the join (empty for a computed relationship). */
  parentColumns: string[];
  targetColumns: string[];
  toOne: boolean;
  cardinality: 'many-to-one' | 'one-to-many' | 'one-to-one';
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));
const describe = (r: Relationship, parent: Relation) =>
  `${r.cardinality} via ${r.fk!.constraint} using ${r.fk!.from.name}(${r.fk!.fromColumns.join(', ')}) and ${r.fk!.to.name}(${r.fk!.toColumns.join(', ')})` +
  (r.target === parent ? ' (self-reference)' : '');

/** Every foreign-key relationship of the parent, in both directions. */
function foreignKeyRelationships(cache: SchemaCache, parent: Relation): Relationship[] {
  const out: Relationship[] = [];
  for (const fk of cache.foreignKeys) {
    if (fk.from === parent) {
      out.push({
        fk,
        fn: null,
        target: fk.to,
        parentColumns: fk.fromColumns,
        targetColumns: fk.toColumns,
        toOne: true,
        cardinality: 'many-to-one',
      });
    }
    if (fk.to === parent) {
      // The referencing side is one-to-one when its key columns are unique.
      const oneToOne = fk.from.uniqueKeys.some((k) => sameSet(k, fk.fromColumns));
      out.push({
        fk,
        fn: null,
        target: fk.from,
        parentColumns: fk.toColumns,
        targetColumns: fk.fromColumns,
        toOne: oneToOne,
        cardinality: oneToOne ? 'one-to-one' : 'one-to-many',
      });
    }
  }
  return out;
}

/** Functions of the parent's row returning rows of an exposed table or view. */
function computedRelationships(cache: SchemaCache, parent: Relation, name: string): Relationship[] {
  const fns = cache.functions.get(relationKey(parent.schema, name)) ?? [];
  return fns
    .filter((fn) => fn.rowArgument === parent && fn.relation && fn.returns === 'composite')
    .map((fn) => ({
      fk: null,
      fn,
      target: fn.relation!,
      parentColumns: [],
      targetColumns: [],
      toOne: fn.singleRow,
      cardinality: fn.singleRow ? ('many-to-one' as const) : ('one-to-many' as const),
    }));
}

const single = (columns: string[]) => (columns.length === 1 ? columns[0] : null);
const isView = (r: Relation) => r.kind === 'view' || r.kind === 'materialized view';

function matches(r: Relationship, parent: Relation, target: string, hint: string | null): boolean {
  const fk = r.fk!;
  const byTable = r.target.name === target;
  if (r.target === parent) {
    // A self-reference: fk.to === parent is the children side (to-many), fk.from the parent side (to-one).
    const children = r.targetColumns === fk.fromColumns;
    if (hint) return byTable && children && single(r.targetColumns) === hint;
    return (byTable && children) || (!children && single(r.parentColumns) === target);
  }
  if (hint) {
    return (
      byTable &&
      (fk.constraint === hint ||
        single(r.parentColumns) === hint ||
        single(r.targetColumns) === hint ||
        fk.fromColumns.includes(hint))
    );
  }
  return byTable || (!isView(r.target) && (fk.constraint === target || single(r.parentColumns) === target));
}

export function findRelationship(
  cache: SchemaCache,
  parent: Relation,
  targetName: string,
  hint: string | null,
): Relationship {
  const all = foreignKeyRelationships(cache, parent);
  const found = [
    ...all.filter((r) => matches(r, parent, targetName, hint)),
    ...computedRelationships(cache, parent, targetName),
  ];
  if (found.length === 1) return found[0];
  if (found.length > 1) {
    // SPEC 7: 400, where PostgREST answers 300.
    throw fail(
      'PGRST201',
      `Could not embed because more than one relationship was found for '${parent.name}' and '${targetName}'`,
      {
        details: found.map((r) => describe(r, parent)).join('; '),
        hint: `Try changing '${targetName}' to one of the following: ${found.map((r) => `'${targetName}!${r.fk!.constraint}'`).join(', ')}. Find the desired relationship in the 'details' key.`,
      },
    );
  }
  const target = cache.relations.get(relationKey(parent.schema, targetName));
  const junction = target && findJunction(cache, parent, target, hint);
  if (junction) {
    throw fail(
      'PGRST127',
      `Embedding '${targetName}' from '${parent.name}' needs the many-to-many relationship through '${junction.name}', which is not supported`,
      {
        details: `'${parent.name}' and '${targetName}' are joined only through the junction table '${junction.name}'.`,
        hint: `Embed the junction table instead: select=*,${junction.name}(${targetName}(*))`,
      },
    );
  }
  throw fail(
    'PGRST200',
    `Could not find a relationship between '${parent.name}' and '${targetName}' in the schema cache`,
    {
      details: `Searched for a foreign key relationship between '${parent.name}' and '${targetName}${hint ? `' using the hint '${hint}` : ''}' in the schema '${parent.schema}', but no matches were found.`,
      hint: noRelationshipHint(cache, parent, targetName, all),
    },
  );
}

/**
 * PostgREST's suggestion: a close name among the parent's related tables (not
 * the name itself), or, for a parent without relationships, a close name among
 * the tables that have some.
 */
function noRelationshipHint(
  cache: SchemaCache,
  parent: Relation,
  targetName: string,
  all: Relationship[],
): string | null {
  if (all.length) {
    const names = new Set(all.map((r) => r.target.name));
    names.delete(targetName);
    const child = closest(names, targetName, 0.33);
    return child ? `Perhaps you meant '${child}' instead of '${targetName}'.` : null;
  }
  const parents = new Set<string>();
  for (const fk of cache.foreignKeys) {
    for (const r of [fk.from, fk.to]) if (r.schema === parent.schema) parents.add(r.name);
  }
  const other = closest(parents, parent.name, 0.33);
  return other ? `Perhaps you meant '${other}' instead of '${parent.name}'.` : null;
}

/** A table with foreign keys to both sides: the many-to-many SPEC 4.3 refuses. */
function findJunction(cache: SchemaCache, parent: Relation, target: Relation, hint: string | null): Relation | null {
  for (const toParent of cache.foreignKeys) {
    if (toParent.to !== parent || (hint && toParent.from.name !== hint)) continue;
    const j = toParent.from;
    if (cache.foreignKeys.some((fk) => fk.from === j && fk.to === target && fk !== toParent)) return j;
  }
  return null;
}
