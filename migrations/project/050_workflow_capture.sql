-- Row-change capture for workflow row triggers (SPEC 2.13). Creating a row
-- binding installs, on the bound table, a trigger that calls
-- hearth_workflows.capture(binding_id, filter): the filter is matched by
-- containment (record @> filter) right here, so a non-matching change never
-- leaves the database; a matching one is written to hearth_workflows.changes,
-- which the platform drains into runs.
--
-- The schema and the function belong to the migrating role, not to the
-- project owner {{owner}}: the owner can neither read nor forge captured
-- changes. capture() is SECURITY DEFINER so a change made by any role
-- (anon through the REST API included) can record itself.

create schema if not exists hearth_workflows;
revoke all on schema hearth_workflows from public;

create table if not exists hearth_workflows.changes (
  id bigserial primary key,
  binding_id uuid not null,
  action text not null,
  table_name text not null,
  record jsonb,
  old jsonb,
  ts double precision not null,
  attempts integer not null default 0,
  dead boolean not null default false
);
create index if not exists changes_live on hearth_workflows.changes (id) where not dead;

create or replace function hearth_workflows.capture() returns trigger
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  filter jsonb := tg_argv[1]::jsonb;
  rec jsonb;
  prev jsonb;
begin
  if tg_op = 'DELETE' then
    rec := to_jsonb(old);
  else
    rec := to_jsonb(new);
  end if;
  if filter is not null and not (rec @> filter) then
    return null;
  end if;
  if tg_op <> 'INSERT' then
    prev := to_jsonb(old);
  end if;
  -- SPEC 2.13: a captured payload over 1 MB is replaced by a marker.
  if octet_length(rec::text) > 1048576 then
    rec := '{"oversized": true}';
  end if;
  if prev is not null and octet_length(prev::text) > 1048576 then
    prev := '{"oversized": true}';
  end if;
  insert into hearth_workflows.changes (binding_id, action, table_name, record, old, ts)
  values (tg_argv[0]::uuid, lower(tg_op), tg_table_name, rec, prev, extract(epoch from clock_timestamp()));
  return null;
end $$;
revoke all on function hearth_workflows.capture() from public;
