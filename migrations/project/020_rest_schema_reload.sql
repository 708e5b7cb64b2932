-- REST schema cache reload: any DDL in the project database notifies every
-- Hearth process listening on the `pgrst` channel (PostgREST's channel and
-- payload, so a user's own `NOTIFY pgrst, 'reload schema'` does the same).
-- NOTIFY is transactional and de-duplicated per transaction: a migration of
-- many statements sends one notification, at commit. Event triggers need a
-- superuser to create; Hearth's migration runner is one. ddl_command_end also
-- fires for DROP, ALTER, COMMENT and GRANT, so no sql_drop trigger is needed.

create or replace function extensions.hearth_rest_schema_changed() returns event_trigger
language plpgsql
as $$
begin
  notify pgrst, 'reload schema';
end;
$$;

revoke all on function extensions.hearth_rest_schema_changed() from public;

drop event trigger if exists hearth_rest_ddl_end;
create event trigger hearth_rest_ddl_end on ddl_command_end
  execute function extensions.hearth_rest_schema_changed();

