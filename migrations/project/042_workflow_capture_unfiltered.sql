-- Row bindings without a filter captured nothing: the binding's filter reaches
-- hearth_workflows.capture() as trigger argument text, and "no filter" was
-- written as the JSON text 'null', a non-NULL jsonb that no row contains.
-- New bindings pass '{}' (contained in every row); this re-creates the capture
-- triggers installed before the fix with '{}' in place of 'null'. On a fresh
-- database it runs before 050 and finds no capture trigger.
do $migration$
declare
  t record;
begin
  for t in
    select tg.tgname, tg.tgrelid::regclass as rel, pg_get_triggerdef(tg.oid) as def
    from pg_catalog.pg_trigger tg
    join pg_catalog.pg_proc f on f.oid = tg.tgfoid
    join pg_catalog.pg_namespace n on n.oid = f.pronamespace
    where n.nspname = 'hearth_workflows' and f.proname = 'capture' and not tg.tgisinternal
      and pg_get_triggerdef(tg.oid) like '%, ''null'')'
  loop
    execute format('drop trigger %I on %s', t.tgname, t.rel);
    execute regexp_replace(t.def, ', ''null''\)$', ', ''{}'')');
  end loop;
end $migration$;
