-- Queues: send, read and delete run a statement whose plan is kept. Until now
-- each call built its statement on the queue's table as dynamic SQL, parsed
-- and planned again on every call (044): measured with pgbench (4 clients
-- looping send + read + delete), the same statements sent as prepared ones
-- ran the cycle about 1.5 times as fast. Now each queue has three small
-- functions of its own, made with it, whose statements are static: PL/pgSQL
-- plans them once per session. The entry points check the name as before,
-- then call the queue's function (still a dynamic statement, but a function
-- call, which plans in a fraction of the time of the INSERT or the UPDATE).
-- Behaviour, errors and grants are unchanged; the queue's functions run with
-- the caller's rights, as the dynamic statements did.

-- The queue's own functions: _send_<name>, _read_<name>, _delete_<name>.
-- A valid name ([a-z][a-z0-9_]{0,47}) needs no quoting and keeps the longest
-- function name at 56 bytes. Called by pgmq._create (as its definer) and below.
create or replace function pgmq._queue_functions(queue_name text) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $fn$
declare
  q text := 'pgmq.q_' || queue_name;
begin
  execute pg_catalog.format($f$
    create or replace function pgmq._send_%1$s(vt timestamptz, msg jsonb, headers jsonb)
    returns setof bigint language plpgsql as $b$
    begin
      return query insert into %2$s as m (vt, message, headers) values ($1, $2, $3) returning m.msg_id;
    end $b$$f$, queue_name, q);
  execute pg_catalog.format($f$
    create or replace function pgmq._read_%1$s(qty integer, vt integer, conditional jsonb)
    returns setof pgmq.message_record language plpgsql as $b$
    begin
      -- As pgmq.read in 044: SKIP LOCKED, the claimed ids handed to the UPDATE as an array.
      return query with u as (
        update %2$s m set vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2), read_ct = m.read_ct + 1
        where m.msg_id operator(pg_catalog.=) any (array(
          select c.msg_id from %2$s c
          where c.vt operator(pg_catalog.<=) pg_catalog.clock_timestamp()
            and ($3 operator(pg_catalog.=) '{}'::jsonb or c.message operator(pg_catalog.@>) $3)
          order by c.msg_id
          limit $1
          for update skip locked))
        returning m.msg_id, m.read_ct, m.enqueued_at, m.vt, m.message, m.headers)
      select u.msg_id, u.read_ct, u.enqueued_at, u.vt, u.message, u.headers from u order by u.msg_id;
    end $b$$f$, queue_name, q);
  execute pg_catalog.format($f$
    create or replace function pgmq._delete_%1$s(msg_ids bigint[])
    returns setof bigint language plpgsql as $b$
    begin
      return query delete from %2$s m where m.msg_id operator(pg_catalog.=) any ($1) returning m.msg_id;
    end $b$$f$, queue_name, q);
  execute pg_catalog.format(
    'revoke all on function pgmq._send_%1$s(timestamptz, jsonb, jsonb), pgmq._read_%1$s(integer, integer, jsonb),
       pgmq._delete_%1$s(bigint[]) from public', queue_name);
  execute pg_catalog.format(
    'grant execute on function pgmq._send_%1$s(timestamptz, jsonb, jsonb), pgmq._read_%1$s(integer, integer, jsonb),
       pgmq._delete_%1$s(bigint[]) to "{{owner}}", anon, authenticated, service_role', queue_name);
end $fn$;

revoke all on function pgmq._queue_functions(text) from public;

-- Creating a queue makes its functions, also for a queue that already exists
-- (one made before this migration, or whose functions were dropped).
create or replace function pgmq._create(queue_name text, unlogged boolean) returns void
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  q text := 'q_' || queue_name;
  a text := 'a_' || queue_name;
begin
  perform pgmq.validate_queue_name(queue_name);
  -- Two sessions creating the same queue at once would collide in pg_type.
  perform pg_advisory_xact_lock(hashtext('pgmq.create'), hashtext(queue_name));
  if exists (select 1 from pgmq.meta m where m.queue_name = _create.queue_name)
     and to_regclass(format('pgmq.%I', q)) is not null and to_regclass(format('pgmq.%I', a)) is not null then
    perform pgmq._queue_functions(queue_name);
    return; -- exists: leave the owner's grants and settings alone
  end if;
  -- Otherwise create what is missing (the owner may have dropped a table).
  execute format(
    'create %s table if not exists pgmq.%I (
       msg_id bigint primary key generated always as identity,
       read_ct integer not null default 0,
       enqueued_at timestamptz not null default now(),
       vt timestamptz not null,
       message jsonb,
       headers jsonb)',
    case when unlogged then 'unlogged' else '' end, q);
  execute format('create index if not exists %I on pgmq.%I (vt)', q || '_vt_idx', q);
  execute format(
    'create table if not exists pgmq.%I (
       msg_id bigint primary key,
       read_ct integer not null default 0,
       enqueued_at timestamptz not null default now(),
       archived_at timestamptz not null default now(),
       vt timestamptz not null,
       message jsonb,
       headers jsonb)', a);
  -- pgmq names this index archived_at_idx_<name>, which overflows 63 bytes
  -- for a 48-character name; this form is unique for every valid name.
  execute format('create index if not exists %I on pgmq.%I (archived_at)', a || '_archived_idx', a);
  execute format('alter table pgmq.%I owner to %I', q, '{{owner}}');
  execute format('alter table pgmq.%I owner to %I', a, '{{owner}}');
  execute format('grant select, insert, update, delete on pgmq.%I, pgmq.%I to service_role', q, a);
  execute format('grant select on sequence pgmq.%I to service_role', q || '_msg_id_seq');
  insert into pgmq.meta (queue_name, is_partitioned, is_unlogged) values (queue_name, false, unlogged)
    on conflict do nothing;
  perform pgmq._queue_functions(queue_name);
end $$;

create or replace function pgmq.drop_queue(queue_name text) returns boolean
language plpgsql security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq.validate_queue_name(queue_name);
  -- Only tables registered as queues are ever dropped through this function.
  delete from pgmq.meta m where m.queue_name = drop_queue.queue_name;
  if not found then
    raise exception 'queue % does not exist', quote_literal(queue_name) using errcode = '42P01';
  end if;
  execute format('drop table if exists pgmq.%I, pgmq.%I', 'q_' || queue_name, 'a_' || queue_name);
  execute format(
    'drop function if exists pgmq._send_%1$s(timestamptz, jsonb, jsonb), pgmq._read_%1$s(integer, integer, jsonb),
       pgmq._delete_%1$s(bigint[])', queue_name);
  return true;
end $$;

-- The entry points: the name checked as before (pgmq._queue_table's errors),
-- then the queue's function.
create or replace function pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamptz)
returns setof bigint
language plpgsql
as $$
begin
  perform pgmq._queue_table(queue_name, 'q');
  return query execute 'select pgmq._send_' || queue_name || '($1, $2, $3)' using vt, msg, headers;
end $$;

create or replace function pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb default '{}')
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq._queue_table(queue_name, 'q');
  return query execute 'select * from pgmq._read_' || queue_name || '($1, $2, $3)'
    using qty, vt, coalesce(conditional, '{}'::jsonb);
end $$;

create or replace function pgmq."delete"(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgmq._queue_table(queue_name, 'q');
  return query execute 'select pgmq._delete_' || queue_name || '($1)' using msg_ids;
end $$;

create or replace function pgmq."delete"(queue_name text, msg_id bigint) returns boolean
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  deleted bigint;
begin
  perform pgmq._queue_table(queue_name, 'q');
  execute 'select pgmq._delete_' || queue_name || '(array[$1])' into deleted using msg_id;
  return deleted is not null;
end $$;

-- The queues that exist already.
do $$
declare
  queue text;
begin
  for queue in select m.queue_name from pgmq.meta m where to_regclass('pgmq.q_' || m.queue_name) is not null loop
    perform pgmq._queue_functions(queue);
  end loop;
end $$;
