-- The quota check at COMMIT (migration 032) compared the usage row as each
-- update left it, not the total the transaction commits: a cross-bucket move
-- inserts the copy (usage + size) before it deletes the source (back to
-- usage), so near the quota it was refused although it changes nothing. The
-- deferred trigger now reads the row as it is when the transaction commits,
-- still behind the row lock the writes took.
create or replace function storage.usage_within_quota() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  quota bigint := nullif(current_setting('storage.quota_bytes', true), '')::bigint;
begin
  if quota is not null and (select u.bytes from storage.usage u) > quota then
    raise exception using errcode = 'HS001', message = 'quota_exceeded';
  end if;
  return null;
end $$;
