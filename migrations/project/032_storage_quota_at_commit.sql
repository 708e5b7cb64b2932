-- The storage quota is enforced at COMMIT by a deferred constraint trigger on
-- storage.usage instead of by storage.assert_quota(quota), which the upload
-- called under the caller's role, so anon and authenticated had to be able to
-- execute it: once `storage` was exposed in config/api db_schema, anyone could
-- call it through /rest/v1/rpc and bisect the project's stored bytes.
--
-- The platform puts the quota in the transaction's setting
-- storage.quota_bytes (set_config(..., true)) before it writes objects; the
-- usage row's total is checked when the transaction commits, behind the row
-- lock the writes took, so concurrent uploads cannot both pass. Writes without the setting
-- (the owner's direct SQL) are not limited, as before.
create function storage.usage_within_quota() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  quota bigint := nullif(current_setting('storage.quota_bytes', true), '')::bigint;
begin
  if quota is not null and new.bytes > quota then
    raise exception using errcode = 'HS001', message = 'quota_exceeded';
  end if;
  return null;
end $$;

create constraint trigger within_quota after update on storage.usage
  deferrable initially deferred for each row execute function storage.usage_within_quota();

drop function storage.assert_quota(bigint);

-- Functions are executable by PUBLIC unless revoked. Trigger functions cannot
-- be called directly and need no EXECUTE to fire; grant them to nobody.
revoke all on function storage.usage_within_quota(), storage.objects_set_owner(), storage.objects_claim_bytes(),
  storage.objects_after_insert(), storage.objects_after_update(), storage.objects_after_delete() from public;

-- storage.bucket_is_public, a definer, is granted by name only (PUBLIC loses
-- it). anon and authenticated keep it: the read policy of public buckets calls
-- it under the caller's role (docs/database-functions.md says why that is
-- acceptable). The invoker helpers (auth.uid() and the like, storage path
-- helpers) keep PUBLIC: they can do nothing the caller could not, and a role
-- the owner creates may be subject to policies that call them.
revoke all on function storage.bucket_is_public(text) from public;
