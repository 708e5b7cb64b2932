-- Base of every project database: the cluster-wide API roles, the schemas
-- auth, storage and public (pgmq comes in 040), and the SQL helpers auth.uid(), auth.jwt()
-- and auth.role() that RLS policies use (same contract as Supabase).
-- The placeholder {{owner}} is the project's login role (hearth_<ref>_owner).

do $$
declare r text;
begin
  foreach r in array array['anon', 'authenticated', 'service_role'] loop
    begin
      if not exists (select 1 from pg_roles where rolname = r) then
        execute format('create role %I nologin noinherit', r);
      end if;
    exception when duplicate_object or unique_violation then
      null; -- another project's migration created it at the same moment
    end;
  end loop;
end $$;

do $$
begin
  alter role service_role bypassrls;
exception when insufficient_privilege then
  raise warning 'service_role could not be given BYPASSRLS: connect Hearth as a superuser';
end $$;

-- The platform's connection switches into these roles with set_config('role', ...).
do $$
begin
  execute format('grant anon, authenticated, service_role to %I', current_user);
exception when others then null; -- already a member (or a superuser, who needs no grant)
end $$;

create schema if not exists auth;
create schema if not exists storage;
create schema if not exists extensions;

-- public belongs to the project's owner role: it is the app's own schema.
alter schema public owner to "{{owner}}";
grant usage on schema public to anon, authenticated, service_role;
grant usage on schema auth to anon, authenticated, service_role, "{{owner}}";
grant usage on schema storage to anon, authenticated, service_role, "{{owner}}";
grant usage on schema extensions to anon, authenticated, service_role, "{{owner}}";
grant anon, authenticated, service_role to "{{owner}}";

-- Tables the owner creates in public are reachable by the API roles (RLS decides
-- the rows), as in Supabase.
alter default privileges for role "{{owner}}" in schema public
  grant all on tables to anon, authenticated, service_role;
alter default privileges for role "{{owner}}" in schema public
  grant all on sequences to anon, authenticated, service_role;
alter default privileges for role "{{owner}}" in schema public
  grant execute on functions to anon, authenticated, service_role;

create or replace function auth.jwt() returns jsonb
language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;

create or replace function auth.uid() returns uuid
language sql stable
as $$
  select nullif(
    coalesce(current_setting('request.jwt.claim.sub', true), auth.jwt() ->> 'sub'),
    ''
  )::uuid
$$;

create or replace function auth.role() returns text
language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    auth.jwt() ->> 'role'
  )
$$;

create or replace function auth.email() returns text
language sql stable
as $$ select auth.jwt() ->> 'email' $$;

grant execute on function auth.jwt(), auth.uid(), auth.role(), auth.email()
  to anon, authenticated, service_role, "{{owner}}";
