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
  perform pgmq.validate_queue_name(queue_name);
  raise exception 'partitioned queues are not supported'
    using errcode = '0A000',
          hint = format('Create a regular queue instead: select pgmq.create(%L);', queue_name);
end $$;
