-- Supabase Storage's names for storage.objects' columns, so that policies
-- written for Supabase (`bucket_id = 'avatars'`, `owner = auth.uid()`,
-- `owner_id = auth.uid()::text`, `path_tokens[1] = ...`) work unchanged
-- (docs/storage.md, Policies). Each is generated from Hearth's own column:
-- one value under two names, which the platform keeps in step and no client
-- can set. Stored, not virtual: PostgreSQL 15 has no virtual columns. The
-- owner_sub trigger runs first, so they always see the caller's own sub.
alter table storage.objects
  add column bucket_id text generated always as (bucket) stored,
  add column owner_id text generated always as (owner_sub) stored,
  add column owner uuid generated always as (
    case when owner_sub ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then owner_sub::uuid end
  ) stored,
  add column path_tokens text[] generated always as (string_to_array(name, '/')) stored;

comment on column storage.objects.bucket_id is 'Supabase''s name for bucket (generated from it).';
comment on column storage.objects.owner_id is 'Supabase''s name for owner_sub (generated from it).';
comment on column storage.objects.owner is 'owner_sub as a uuid, null when the sub is not one (generated from it).';
comment on column storage.objects.path_tokens is 'The segments of name (generated from it).';
