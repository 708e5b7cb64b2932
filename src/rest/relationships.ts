/**
 * Which foreign key an embed follows: `parent?select=target!hint(...)`. The
 * answer is one relationship, or a 400 that says why not (none, several,
 * many-to-many which Hearth does not embed). Same wording as PostgREST where
 * PostgREST has one, so existing client code that matches on it still works.
 */
import { HearthError } from '../errors.ts';
import type { ForeignKey, Relation, SchemaCache } from './schema-cache.ts';
import { relationKey } from './schema-cache.ts';

export interface Relationship {
  fk: ForeignKey;
  target: Relation;
  /** Parent columns and target columns, pairwise equal in the join. */
  parentColumns: string[];
  targetColumns: string[];
  toOne: boolean;
  cardinality: 'many-to-one' | 'one-to-many' | 'one-to-one';
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));
const describe = (r: Relationship, parent: Relation) =>
  `${r.cardinality} via ${r.fk.constraint} using ${r.fk.from.name}(${r.fk.fromColumns.join(', ')}) and ${r.fk.to.name}(${r.fk.toColumns.join(', ')})` +
  (r.target === parent ? ' (self-reference)' : '');

function candidates(cache: SchemaCache, parent: Relation, target: Relation): Relationship[] {
  const out: Relationship[] = [];
  for (const fk of cache.foreignKeys) {
    if (fk.from === parent && fk.to === target) {
      out.push({ fk, target, parentColumns: fk.fromColumns, targetColumns: fk.toColumns, toOne: true, cardinality: 'many-to-one' });
    }
    if (fk.to === parent && fk.from === target) {
      // The referencing side is one-to-one when its key columns are unique.
      const oneToOne = target.uniqueKeys.some((k) => sameSet(k, fk.fromColumns));
      out.push({
        fk,
        target,
        parentColumns: fk.toColumns,
        targetColumns: fk.fromColumns,
        toOne: oneToOne,
        cardinality: oneToOne ? 'one-to-one' : 'one-to-many',
      });
    }
  }
  return out;
}

/** A hint names the constraint or a column of the referencing side. */
const matchesHint = (r: Relationship, hint: string) => r.fk.constraint === hint || r.fk.fromColumns.includes(hint);

export function findRelationship(cache: SchemaCache, parent: Relation, targetName: string, hint: string | null): Relationship {
  const target = cache.relations.get(relationKey(parent.schema, targetName));
  const notFound = (details: string) =>
    new HearthError(
      400,
      'PGRST200',
      `Could not find a relationship between '${parent.name}' and '${targetName}' in the schema cache`,
      details,
      'Embed only tables and views joined to this one by a foreign key; name a constraint or a foreign-key column after "!" to pick one.',
    );
  if (!target) {
    throw notFound(`Searched for a foreign key relationship between '${parent.name}' and '${targetName}' in the schema '${parent.schema}', but '${targetName}' is not a table or view of that schema.`);
  }
  const all = candidates(cache, parent, target);
  const found = hint ? all.filter((r) => matchesHint(r, hint)) : all;
  if (found.length === 1) return found[0];
  if (found.length > 1) {
    throw new HearthError(
      400,
      'PGRST201',
      `Could not embed because more than one relationship was found for '${parent.name}' and '${targetName}'`,
      found.map((r) => describe(r, parent)).join('; '),
      `Try changing '${targetName}' to one of the following: ${found.map((r) => `'${targetName}!${r.fk.constraint}'`).join(', ')}. Find the desired relationship in the 'details' key.`,
    );
  }
  const junction = findJunction(cache, parent, target, hint);
  if (junction) {
    throw new HearthError(
      400,
      'PGRST127',
      `Embedding '${targetName}' from '${parent.name}' needs the many-to-many relationship through '${junction.name}', which is not supported`,
      `'${parent.name}' and '${targetName}' are joined only through the junction table '${junction.name}'.`,
      `Embed the junction table instead: select=*,${junction.name}(${targetName}(*))`,
    );
  }
  throw notFound(
    hint
      ? `Searched for a foreign key relationship between '${parent.name}' and '${targetName}' using the hint '${hint}' in the schema '${parent.schema}', but no matches were found.`
      : `Searched for a foreign key relationship between '${parent.name}' and '${targetName}' in the schema '${parent.schema}', but no matches were found.`,
  );
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
