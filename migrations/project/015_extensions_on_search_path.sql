-- Supabase's databases put the extensions schema on the search path
-- ("$user", public, extensions), so migrations written for Supabase call
-- uuid_generate_v4() or moddatetime(...) unqualified after
-- `create extension ... with schema extensions`. The same here, for the new
-- sessions of every role (a role's own setting would still win; the platform
-- sets none).
do $$
begin
  execute format('alter database %I set search_path = "$user", public, extensions', current_database());
end $$;

-- moddatetime (the updated_at trigger of Supabase's guides) is a contrib
-- extension only a superuser may create, which the owner role is not: it is
-- made here, in extensions, when the server has it and the platform's role
-- may, so a Supabase migration's `create extension if not exists moddatetime`
-- finds it made.
do $$
begin
  if exists (select 1 from pg_available_extensions where name = 'moddatetime') then
    create extension if not exists moddatetime schema extensions;
  end if;
exception when insufficient_privilege then
  raise notice 'moddatetime not created: the platform''s database role may not create it';
end $$;
