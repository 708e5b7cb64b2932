-- Queues: the per-message calls (send, read, delete, archive) without the
-- layers that made each one cost two to three times what its statement does.
-- Measured with pg_stat_statements (docs/queues.md, "Performance"): in 040
-- one pgmq.send(q, msg) ran four functions that each pinned search_path (a
-- SET clause on a function saves, sets and restores the setting on every
-- call, and keeps a SQL-language wrapper from being inlined, so its body is
-- parsed and planned again on every call), plus the name's regular
-- expression, before its one INSERT. Now each entry point still pins
-- search_path once and runs the statement itself; the helpers below it run
-- inside that pinned path and so carry no SET clause of their own.
-- Behaviour, errors and grants are unchanged.

-- The quoted table of a queue ('q' live, 'a' archive), or the same errors as
-- pgmq._table: 22023 for a malformed name, 42P01 for a queue that does not
-- exist. Only called from the functions below, which pin search_path; every
-- name it uses is schema-qualified or from pg_catalog.
create or replace function pgmq._queue_table(queue_name text, kind text) returns text
language plpgsql stable
as $$
declare
  name text;
begin
  -- The same rule as pgmq.validate_queue_name, whose error a bad name gets.
  if queue_name is null or queue_name !~ '^[a-z][a-z0-9_]{0,47}$' then
    perform pgmq.validate_queue_name(queue_name);
  end if;
  -- A valid name needs no quoting: [a-z][a-z0-9_]* is a plain identifier.
  name := 'pgmq.' || kind || '_' || queue_name;
  if pg_catalog.to_regclass(name) is null then
    raise exception 'queue % does not exist', pg_catalog.quote_literal(queue_name)
      using errcode = '42P01', hint = pg_catalog.format('Create it first: select pgmq.create(%L);', queue_name);
  end if;
  return name;
end $$;

-- The INSERT every send overload makes (vt already resolved).
create or replace function pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamptz)
returns setof bigint
language plpgsql
as $$
begin
  return query execute 'insert into ' || pgmq._queue_table(queue_name, 'q') || ' (vt, message, headers) values ($1, $2, $3) returning msg_id'
    using vt, msg, headers;
end $$;

-- A delay in seconds as a visibility time, refusing a negative one (as pgmq._after).
create or replace function pgmq._visible_after(seconds integer) returns timestamptz
language plpgsql volatile
as $$
begin
  if seconds < 0 then
    raise exception 'delay must be zero or more seconds, got %', seconds using errcode = '22023';
  end if;
  return pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => coalesce(seconds, 0));
end $$;

revoke all on function pgmq._queue_table(text, text), pgmq._send(text, jsonb, jsonb, timestamptz), pgmq._visible_after(integer) from public;
grant execute on function pgmq._queue_table(text, text), pgmq._send(text, jsonb, jsonb, timestamptz), pgmq._visible_after(integer)
  to "{{owner}}", anon, authenticated, service_role;

-- send: every overload, PL/pgSQL so the call below it is planned once per session.
create or replace function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query select pgmq._send(queue_name, msg, headers, coalesce(delay, clock_timestamp()));
end $$;

create or replace function pgmq.send(queue_name text, msg jsonb, delay integer default 0)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query select pgmq._send(queue_name, msg, null::jsonb, pgmq._visible_after(delay));
end $$;

create or replace function pgmq.send(queue_name text, msg jsonb, delay timestamptz)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query select pgmq._send(queue_name, msg, null::jsonb, coalesce(delay, clock_timestamp()));
end $$;

create or replace function pgmq.send(queue_name text, msg jsonb, headers jsonb)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query select pgmq._send(queue_name, msg, headers, clock_timestamp());
end $$;

create or replace function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query select pgmq._send(queue_name, msg, headers, pgmq._visible_after(delay));
end $$;

-- read: as in 040 (SKIP LOCKED; a row another reader claimed and committed
-- meantime is re-checked against vt under READ COMMITTED), the claimed ids
-- handed to the UPDATE as an array rather than joined: the same rows, in a
-- statement that plans in about half the time.
create or replace function pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb default '{}')
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  t text := pgmq._queue_table(queue_name, 'q');
begin
  return query execute format(
    'with u as (
       update %1$s m set vt = clock_timestamp() + make_interval(secs => $2), read_ct = m.read_ct + 1
       where m.msg_id = any (array(
         select msg_id from %1$s
         where vt <= clock_timestamp() and ($3 = ''{}''::jsonb or message @> $3)
         order by msg_id
         limit $1
         for update skip locked))
       returning m.msg_id, m.read_ct, m.enqueued_at, m.vt, m.message, m.headers)
     select * from u order by msg_id', t)
    using qty, vt, coalesce(conditional, '{}'::jsonb);
end $$;

create or replace function pgmq."delete"(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query execute 'delete from ' || pgmq._queue_table(queue_name, 'q') || ' where msg_id = any($1) returning msg_id'
    using msg_ids;
end $$;

create or replace function pgmq."delete"(queue_name text, msg_id bigint) returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  deleted bigint;
begin
  execute 'delete from ' || pgmq._queue_table(queue_name, 'q') || ' where msg_id = $1 returning msg_id'
    into deleted using msg_id;
  return deleted is not null;
end $$;

-- archive: one statement, so a message is either live or archived (as 040).
create or replace function pgmq.archive(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query execute format(
    'with d as (
       delete from %s where msg_id = any($1)
       returning msg_id, read_ct, enqueued_at, vt, message, headers)
     insert into %s (msg_id, read_ct, enqueued_at, vt, message, headers)
     select msg_id, read_ct, enqueued_at, vt, message, headers from d
     returning msg_id',
    pgmq._queue_table(queue_name, 'q'), pgmq._queue_table(queue_name, 'a'))
    using msg_ids;
end $$;

create or replace function pgmq.archive(queue_name text, msg_id bigint) returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return exists (select from pgmq.archive(queue_name, array[msg_id]));
end $$;
