-- The rest of pgmq 1.5's public SQL API, so clients and scripts written for
-- the extension find every function they call (docs/queues.md, "Differences
-- from the pgmq extension"). Same ownership rules as 040_pgmq.sql: the
-- functions belong to the platform, run as the caller, and are granted to the
-- roles that may use them.

-- The table name pgmq builds for a queue ('q' live, 'a' archive). pgmq
-- lower-cases the name; here an invalid name is refused, as everywhere else.
create or replace function pgmq.format_table_name(queue_name text, prefix text) returns text
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq.validate_queue_name(queue_name);
  return prefix || '_' || queue_name;
end $$;

-- pgmq detaches the archive table from the extension so that it survives
-- DROP EXTENSION. Here no queue table belongs to an extension, so there is
-- nothing to detach: the call only checks that the queue exists.
create or replace function pgmq.detach_archive(queue_name text) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq._table(queue_name, 'a');
end $$;

-- Deprecated in pgmq 1.5 (partitioned queues are not provided here); kept
-- callable with the same warning pgmq gives.
create or replace function pgmq.drop_queue(queue_name text, partitioned boolean) returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  raise warning 'drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. Use drop_queue(queue_name) instead.';
  return pgmq.drop_queue(queue_name);
end $$;

-- Partitioned queues need pg_partman, which a project database does not have.
-- Refuse them by name with a clear error instead of "function does not exist".
create or replace function pgmq.create_partitioned(
  queue_name text, partition_interval text default '10000', retention_interval text default '100000'
) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'partitioned queues are not supported'
    using errcode = '0A000',
          hint = format('Create a regular queue instead: select pgmq.create(%L);', queue_name);
end $$;

create or replace function pgmq.convert_archive_partitioned(
  table_name text, partition_interval text default '10000', retention_interval text default '100000',
  leading_partition integer default 10
) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  raise exception 'partitioned archives are not supported' using errcode = '0A000';
end $$;

revoke all on function
  pgmq.format_table_name(text, text), pgmq.detach_archive(text), pgmq.drop_queue(text, boolean),
  pgmq.create_partitioned(text, text, text), pgmq.convert_archive_partitioned(text, text, text, integer)
  from public;

grant execute on function pgmq.format_table_name(text, text) to "{{owner}}", anon, authenticated, service_role;
grant execute on function pgmq.detach_archive(text) to "{{owner}}", service_role;
-- Queue DDL stays the owner's, like create and drop_queue in 040.
grant execute on function
  pgmq.drop_queue(text, boolean), pgmq.create_partitioned(text, text, text),
  pgmq.convert_archive_partitioned(text, text, text, integer)
  to "{{owner}}";
