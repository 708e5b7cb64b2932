-- Queues, closer to pgmq and Supabase Queues (a run of pgmq's own regression
-- test and of Supabase's "Expose Queues via PostgREST" SQL against Hearth):
--
-- * pgmq_public belongs to the project owner, with its six wrappers, as it
--   belongs to `postgres` (the user) on Supabase: the dashboard's SQL for it
--   (create or replace function pgmq_public.pop(...), comment on function ...)
--   is in many projects' migrations and failed here with "permission denied".
--   Safe to hand over: the wrappers are SECURITY INVOKER and no platform code
--   calls them; the pgmq schema, whose functions the platform does call, stays
--   the platform's.
-- * A new queue's name is at most 47 characters, pgmq's limit (its tables'
--   indexes must fit in 63 bytes): 48 was taken here and could not be created
--   on Supabase. Existing queues keep working.
-- * The deprecation warning of drop_queue(name, partitioned) is pgmq's word
--   for word, and create_partitioned checks the name before suggesting
--   pgmq.create with it.

alter schema pgmq_public owner to "{{owner}}";
alter function pgmq_public.send(text, jsonb, integer) owner to "{{owner}}";
alter function pgmq_public.send_batch(text, jsonb[], integer) owner to "{{owner}}";
alter function pgmq_public.read(text, integer, integer) owner to "{{owner}}";
alter function pgmq_public.pop(text) owner to "{{owner}}";
alter function pgmq_public.archive(text, bigint) owner to "{{owner}}";
alter function pgmq_public."delete"(text, bigint) owner to "{{owner}}";

-- The length pgmq allows a new queue's name; the pattern is validate_queue_name's.
create or replace function pgmq._check_new_queue_name(queue_name text) returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq.validate_queue_name(queue_name);
  if length(queue_name) > 47 then
    raise exception 'queue name is too long, maximum length is 47 characters'
      using errcode = '22023',
            hint = 'A new queue''s name is a lower-case letter followed by up to 46 lower-case letters, digits or underscores, as in pgmq.';
  end if;
end $$;
revoke all on function pgmq._check_new_queue_name(text) from public;
grant execute on function pgmq._check_new_queue_name(text) to "{{owner}}";

create or replace function pgmq."create"(queue_name text) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq._check_new_queue_name(queue_name);
  perform pgmq._create(queue_name, false);
end $$;

create or replace function pgmq.create_non_partitioned(queue_name text) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq._check_new_queue_name(queue_name);
  perform pgmq._create(queue_name, false);
end $$;

create or replace function pgmq.create_unlogged(queue_name text) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq._check_new_queue_name(queue_name);
  perform pgmq._create(queue_name, true);
end $$;

create or replace function pgmq.drop_queue(queue_name text, partitioned boolean) returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  raise warning 'drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. Use drop_queue(queue_name) instead';
  return pgmq.drop_queue(queue_name);
end $$;

create or replace function pgmq.create_partitioned(
  queue_name text, partition_interval text default '10000', retention_interval text default '100000'
) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq._check_new_queue_name(queue_name);
  raise exception 'partitioned queues are not supported'
    using errcode = '0A000',
          hint = format('Create a regular queue instead: select pgmq.create(%L);', queue_name);
end $$;
