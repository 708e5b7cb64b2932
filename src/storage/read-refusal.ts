/**
 * What a read of one object (download, info, signing) answers when the
 * caller's select finds no row. SPEC 7 gives "row violates row-level
 * security policy" for access to a private bucket without a policy; Supabase
 * Storage answers RLS refusals 403 with "new row violates row-level security
 * policy", and a select that RLS filters as 404 "Object not found", so that
 * an answer never says whether an object exists.
 *
 * Both hold here, decided from the policies themselves, never from rows: in a
 * private bucket, when no read policy applies to the caller's role at all,
 * every read is 403 `row_level_security`, whether the name exists or not;
 * when one does (it just admits no row of that name), or the bucket is
 * public, or the caller bypasses RLS, the answer is 404 `not_found`, as in
 * Supabase. So a user whose policies admit their own folder gets 404 (and
 * storage-js's exists() false) for a file they have not uploaded yet, even
 * before they have any, and no answer reveals that an object exists.
 */
import type postgres from 'postgres';
import type { Caller } from '../db/with-role.ts';
import { fail, type HearthError } from '../errors.ts';
import { objectNotFound } from './objects.ts';

export const readRefused = () => fail('row_level_security');

/**
 * The bucket, whether the caller's role bypasses RLS, and whether a permissive
 * read policy (SELECT or ALL) on storage.objects applies to that role: to
 * PUBLIC, to the role, or to a role whose privileges it has. The built-in
 * policy for public buckets (its condition exactly `storage.bucket_is_public(bucket)`)
 * does not count: it admits nothing in a private bucket.
 */
const POLICIES = `select b.public, r.rolbypassrls as bypass, exists (
    select 1 from pg_policy p
    where p.polrelid = 'storage.objects'::regclass and p.polcmd in ('r', '*') and p.polpermissive
      and pg_get_expr(p.polqual, p.polrelid) is distinct from 'storage.bucket_is_public(bucket)'
      and exists (select 1 from unnest(p.polroles) as applies(role)
        where applies.role = 0 or pg_has_role(r.oid, applies.role, 'usage'))
  ) as has_policy
  from storage.buckets b, pg_roles r where b.id = $1 and r.rolname = $2`;

/** The error for an object of `bucket` that the caller's select did not find. */
export async function unreadable(sql: postgres.Sql, caller: Caller, bucket: string): Promise<HearthError> {
  // On the platform's connection: the bucket has no read policy for callers, and the policies are a catalog matter.
  const [found] = await sql.unsafe(POLICIES, [bucket, caller.role]);
  if (found && !found.public && !found.bypass && !found.has_policy) return readRefused();
  return objectNotFound();
}
