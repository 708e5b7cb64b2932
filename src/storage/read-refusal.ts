/**
 * What a read of one object (download, info, signing) answers when the
 * caller's select finds no row. SPEC 7 gives "row violates row-level
 * security policy" for access to a private bucket without a policy; Supabase
 * Storage answers RLS refusals 403 with "new row violates row-level security
 * policy", and a select that RLS filters as 404 "Object not found", so that
 * an answer never says whether an object exists.
 *
 * Both hold here, decided from the policies themselves, never from the
 * bucket's rows. In a private bucket the answer is 403 `row_level_security`,
 * whether the name exists or not, when no read policy could admit any object
 * of that bucket to the caller: none applies to the caller's role, or each
 * that does is false for every object of the bucket (a policy for another
 * bucket, or one whose claims condition the caller fails). That is found by
 * evaluating each policy's condition, as the caller, on a row of the bucket
 * whose other columns are all NULL: `bucket = 'homes' and owner_sub =
 * auth.uid()::text` is NULL there (it may admit some object), `bucket =
 * 'homes'` is false for any other bucket. Otherwise (a policy may admit
 * objects of the bucket, just not this name), or in a public bucket, or for
 * a caller who bypasses RLS, the answer is 404 `not_found`, as in Supabase.
 * So a user whose policies admit their own folder gets 404 (and storage-js's
 * exists() false) for a file they have not uploaded yet, even before they
 * have any, and no answer reveals that an object exists.
 */
import type postgres from 'postgres';
import { type Caller, withRoleStatement } from '../db/with-role.ts';
import { fail, type HearthError } from '../errors.ts';
import { objectNotFound } from './objects.ts';

export const readRefused = () => fail('row_level_security');

/**
 * The bucket, whether the caller's role bypasses RLS, the conditions of the
 * permissive read policies (SELECT or ALL) on storage.objects that apply to
 * that role (to PUBLIC, to the role, or to a role whose privileges it has;
 * `true` for one without a condition), and storage.objects' columns as a row
 * of typed NULLs with the bucket's two columns set to $1. The built-in policy
 * for public buckets (its condition exactly `storage.bucket_is_public(bucket)`)
 * does not count: it admits nothing in a private bucket.
 */
const POLICIES = `select b.public, r.rolbypassrls as bypass,
    array(select coalesce(pg_get_expr(p.polqual, p.polrelid), 'true') from pg_policy p
      where p.polrelid = 'storage.objects'::regclass and p.polcmd in ('r', '*') and p.polpermissive
        and pg_get_expr(p.polqual, p.polrelid) is distinct from 'storage.bucket_is_public(bucket)'
        and exists (select 1 from unnest(p.polroles) as applies(role)
          where applies.role = 0 or pg_has_role(r.oid, applies.role, 'usage'))) as conditions,
    (select string_agg(case when a.attname in ('bucket', 'bucket_id') then format('$1::text as %I', a.attname)
        else format('null::%s as %I', format_type(a.atttypid, a.atttypmod), a.attname) end, ', ' order by a.attnum)
      from pg_attribute a where a.attrelid = 'storage.objects'::regclass and a.attnum > 0 and not a.attisdropped
    ) as columns
  from storage.buckets b, pg_roles r where b.id = $1 and r.rolname = $2`;

/** The error for an object of `bucket` that the caller's select did not find. */
export async function unreadable(sql: postgres.Sql, caller: Caller, bucket: string): Promise<HearthError> {
  // On the platform's connection: the policies are a catalog matter.
  const [found] = await sql.unsafe(POLICIES, [bucket, caller.role]);
  if (!found || found.public || found.bypass) return objectNotFound();
  const conditions = found.conditions as string[];
  if (conditions.length === 0 || !(await mayAdmitAny(sql, caller, conditions, found.columns as string, bucket)))
    return readRefused();
  return objectNotFound();
}

/**
 * Whether any condition is not false for an object of `bucket` whose other
 * columns are NULL, evaluated as the caller (their role and claims, as RLS
 * evaluates it). A condition that fails on such a row counts as one that may
 * admit objects: the answer is then the 404 it always was.
 */
async function mayAdmitAny(
  sql: postgres.Sql,
  caller: Caller,
  conditions: string[],
  columns: string,
  bucket: string,
): Promise<boolean> {
  const anyNotFalse = conditions.map((c) => `(${c}) is not false`).join(' or ');
  try {
    const [row] = await withRoleStatement(
      sql,
      caller,
      `select ${anyNotFalse} as may from (select ${columns}) as objects`,
      [bucket],
      { readOnly: true },
    );
    return row!.may === true;
  } catch {
    return true;
  }
}
