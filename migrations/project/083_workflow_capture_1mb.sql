-- SPEC 2.13 and 8 say "over 1 MB": a captured record (or old record) over
-- 1,000,000 bytes is replaced by {"oversized": true}. 050 took 1 MiB
-- (1,048,576), so a record between the two went whole. Only the threshold
-- changes; the function is given whole again, as a SQL function must be.

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
  -- SPEC 2.13: a captured payload over 1 MB (10^6 bytes, as SPEC writes MB) is replaced by a marker.
  if octet_length(rec::text) > 1000000 then
    rec := '{"oversized": true}';
  end if;
  if prev is not null and octet_length(prev::text) > 1000000 then
    prev := '{"oversized": true}';
  end if;
  insert into hearth_workflows.changes (binding_id, action, table_name, record, old, ts)
  values (tg_argv[0]::uuid, lower(tg_op), tg_table_name, rec, prev, extract(epoch from clock_timestamp()));
  return null;
end $$;
revoke all on function hearth_workflows.capture() from public;
