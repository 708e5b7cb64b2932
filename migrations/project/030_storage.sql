-- Storage: buckets and objects of the project (docs/storage.md).
--
-- * storage.buckets and storage.objects belong to the project owner {{owner}},
--   so the owner can write policies on them over the direct SQL connection.
--   RLS is on; a new project has exactly one policy: read objects of public
--   buckets. Private buckets deny everything until the owner adds policies.
-- * An object row points at its bytes by `version` (one uuid per upload).
--   storage.pending_bytes holds versions whose bytes no row references:
--   uploads in flight (writer = the uploading process's lock id) and bytes
--   left behind by a replace or delete (writer null). The row that claims a
--   version removes its pending entry in the same transaction; a sweeper
--   deletes the bytes of every other entry (src/storage/sweeper.ts).
-- * storage.usage is the project's byte total, kept by statement triggers; its
--   single row is the lock that serialises the quota check of concurrent uploads.
-- * owner_sub is set here from the caller's JWT for API roles, never from the
--   client.

create table storage.buckets (
  id text primary key check (id ~ '^[a-z0-9._-]{2,63}$'),
  name text not null unique,
  public boolean not null default false,
  file_size_limit bigint check (file_size_limit > 0),
  allowed_mime_types text[],
  owner_sub text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table storage.objects (
  id uuid primary key default gen_random_uuid(),
  bucket text not null references storage.buckets (id),
  name text not null,
  owner_sub text,
  version uuid not null unique,
  size bigint not null check (size >= 0),
  content_type text not null,
  cache_control text not null,
  sha256 text not null,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (bucket, name)
);
create index objects_bucket_name_c on storage.objects (bucket, name collate "C");

create table storage.pending_bytes (
  version uuid primary key,
  writer integer,
  created_at timestamptz not null default now()
);
create index pending_bytes_writer on storage.pending_bytes (writer);

create table storage.usage (
  one boolean primary key default true check (one),
  bytes bigint not null default 0
);
insert into storage.usage default values;

alter table storage.buckets owner to "{{owner}}";
alter table storage.objects owner to "{{owner}}";
alter table storage.buckets enable row level security;
alter table storage.objects enable row level security;

grant select, insert, update, delete on storage.objects to anon, authenticated, service_role;
grant select on storage.buckets to anon, authenticated;
grant select, insert, update, delete on storage.buckets to service_role;

-- Path helpers for policies, as in Supabase.
create function storage.foldername(name text) returns text[]
language sql immutable
as $$ select (string_to_array(name, '/'))[1:greatest(array_length(string_to_array(name, '/'), 1) - 1, 0)] $$;

create function storage.filename(name text) returns text
language sql immutable
as $$ select (string_to_array(name, '/'))[array_length(string_to_array(name, '/'), 1)] $$;

create function storage.extension(name text) returns text
language sql immutable
as $$ select case when storage.filename(name) like '%.%' then reverse(split_part(reverse(storage.filename(name)), '.', 1)) else '' end $$;

-- Definer, so policies may ask without a read policy on storage.buckets.
create function storage.bucket_is_public(bucket text) returns boolean
language sql stable security definer set search_path = ''
as $$ select coalesce((select b.public from storage.buckets b where b.id = bucket), false) $$;

-- Raised by the platform inside the upload's transaction, after the row is
-- written: the usage row is locked by then, so two uploads cannot both pass.
create function storage.assert_quota(quota bigint) returns void
language plpgsql security definer set search_path = ''
as $$
begin
  if (select u.bytes from storage.usage u) > quota then
    raise exception using errcode = 'HS001', message = 'quota_exceeded';
  end if;
end $$;

grant execute on function storage.foldername(text), storage.filename(text), storage.extension(text),
  storage.bucket_is_public(text), storage.assert_quota(bigint)
  to anon, authenticated, service_role, "{{owner}}";

-- owner_sub comes from the caller's token for the API roles (invoker: reads
-- current_user); service_role and the owner set it explicitly.
create function storage.objects_set_owner() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if current_user in ('anon', 'authenticated') then
    new.owner_sub := nullif(auth.jwt() ->> 'sub', '');
  end if;
  if tg_op = 'UPDATE' then
    new.updated_at := now();
  end if;
  return new;
end $$;

-- A new row must claim staged bytes: a version nobody uploaded (or that the
-- sweeper already removed) cannot be pointed at.
create function storage.objects_claim_bytes() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  delete from storage.pending_bytes p where p.version = new.version and p.writer is not null;
  if not found then
    raise exception using errcode = 'HS002', message = 'the bytes of this object version are not staged';
  end if;
  return new;
end $$;

create function storage.objects_after_insert() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  update storage.usage set bytes = bytes + coalesce((select sum(n.size) from new_rows n), 0);
  return null;
end $$;

create function storage.objects_after_update() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  insert into storage.pending_bytes (version, writer)
    select o.version, null from old_rows o join new_rows n on n.id = o.id where n.version <> o.version
    on conflict do nothing;
  update storage.usage set bytes = bytes
    + coalesce((select sum(n.size) from new_rows n), 0) - coalesce((select sum(o.size) from old_rows o), 0);
  return null;
end $$;

create function storage.objects_after_delete() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  insert into storage.pending_bytes (version, writer) select o.version, null from old_rows o on conflict do nothing;
  update storage.usage set bytes = bytes - coalesce((select sum(o.size) from old_rows o), 0);
  return null;
end $$;

create trigger a_set_owner before insert or update on storage.objects
  for each row execute function storage.objects_set_owner();
create trigger b_claim_bytes before insert on storage.objects
  for each row execute function storage.objects_claim_bytes();
create trigger usage_insert after insert on storage.objects
  referencing new table as new_rows for each statement execute function storage.objects_after_insert();
create trigger usage_update after update on storage.objects
  referencing old table as old_rows new table as new_rows for each statement execute function storage.objects_after_update();
create trigger usage_delete after delete on storage.objects
  referencing old table as old_rows for each statement execute function storage.objects_after_delete();

create policy "read objects of public buckets" on storage.objects
  for select using (storage.bucket_is_public(bucket));
