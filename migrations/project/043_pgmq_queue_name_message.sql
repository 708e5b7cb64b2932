-- The error for a malformed queue name states the rule in its message, not
-- only in its HINT: many clients (node-postgres, psycopg, supabase-js) show the
-- message alone. Same code (22023) and hint as 040_pgmq.sql.
create or replace function pgmq.validate_queue_name(queue_name text) returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if queue_name is null or queue_name !~ '^[a-z][a-z0-9_]{0,47}$' then
    raise exception 'invalid queue name %: a queue name must match ^[a-z][a-z0-9_]{0,47}$', coalesce(quote_literal(queue_name), 'NULL')
      using errcode = '22023',
            hint = 'A queue name is a lower-case letter followed by up to 47 lower-case letters, digits or underscores (^[a-z][a-z0-9_]{0,47}$).';
  end if;
end $$;
