/**
 * What a read of one object (download, info, signing) answers when the
 * caller's select finds no row. SPEC 7 gives "row violates row-level
 * security policy" for access to a private bucket without a policy; Supabase
 * Storage answers RLS refusals 403 with "new row violates row-level security
 * policy", and a select that RLS filters as 404 "Object not found", so that
 * an answer never says whether an object exists.
 *
 * Both hold here: when the caller can read no object of a private bucket at
 * all (no policy admits them there), every read in it is 403
 * `row_level_security`, whether the name exists or not; when they can read
 * some of its objects (or the bucket is public, or they bypass RLS), a name
 * they cannot see is 404 `not_found`, as in Supabase. Neither depends on rows
 * the caller cannot see, so no answer reveals that an object exists.
 */
import type postgres from 'postgres';
import { type Caller, type RequestInfo, withRoleStatement } from '../db/with-role.ts';
import { fail, type HearthError } from '../errors.ts';
import { objectNotFound } from './objects.ts';

export const readRefused = () => fail('row_level_security');

const SEES = `select (select rolbypassrls from pg_roles where rolname = current_user) as bypass,
  exists (select 1 from storage.objects where bucket = $1) as sees_any`;

/** The error for an object of `bucket` that the caller's select did not find. */
export async function unreadable(
  sql: postgres.Sql,
  caller: Caller,
  bucket: string,
  request?: RequestInfo,
): Promise<HearthError> {
  // The bucket as the platform sees it (callers have no read policy on storage.buckets); what the caller sees, under their role.
  const [[found], [sees]] = await Promise.all([
    sql.unsafe('select public from storage.buckets where id = $1', [bucket]),
    withRoleStatement(sql, caller, SEES, [bucket], request),
  ]);
  if (found && !found.public && !sees!.bypass && !sees!.sees_any) return readRefused();
  return objectNotFound();
}
