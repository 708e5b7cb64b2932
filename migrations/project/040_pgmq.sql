-- Queues: a pgmq schema whose SQL API is call-compatible with the pgmq
-- extension 1.5 (the version Supabase ships), written in plain PL/pgSQL so no
-- extension has to be installed on the server. docs/queues.md is the guide.
--
-- Who owns what, and why:
-- * The schemas pgmq and pgmq_public, pgmq.meta and every function belong to
--   the role running migrations (a superuser). The project owner {{owner}} gets
--   USAGE but not CREATE, so it can neither replace these functions nor plant
--   look-alike overloads that another caller would then run.
-- * The per-queue tables pgmq.q_<name> and pgmq.a_<name> belong to {{owner}},
--   as they belong to the user in Supabase: the owner may read them, grant them
--   and put RLS policies on them.
-- * Only the DDL (pgmq._create, drop_queue) is SECURITY DEFINER, because
--   creating a table in pgmq needs CREATE there. Its input is one validated
--   queue name, every identifier is quoted, and search_path is pinned.
-- * Everything else is SECURITY INVOKER: the caller's table privileges and RLS
--   decide, so granting pgmq_public to `authenticated` is only as wide as the
--   grants and policies the owner puts on each queue's tables.

create schema if not exists pgmq;
create schema if not exists pgmq_public;
revoke all on schema pgmq, pgmq_public from public;
grant usage on schema pgmq to "{{owner}}", anon, authenticated, service_role;
grant usage on schema pgmq_public to service_role;

create table if not exists pgmq.meta (
  queue_name varchar unique not null,
  is_partitioned boolean not null,
  is_unlogged boolean not null,
  created_at timestamptz not null default now()
);
revoke all on pgmq.meta from public;
grant select on pgmq.meta to "{{owner}}", service_role;

do $$
begin
  create type pgmq.message_record as (
    msg_id bigint, read_ct integer, enqueued_at timestamptz, vt timestamptz, message jsonb, headers jsonb
  );
exception when duplicate_object then null;
end $$;

do $$
begin
  create type pgmq.queue_record as (
    queue_name varchar, is_partitioned boolean, is_unlogged boolean, created_at timestamptz
  );
exception when duplicate_object then null;
end $$;

do $$
begin
  create type pgmq.metrics_result as (
    queue_name text, queue_length bigint, newest_msg_age_sec integer, oldest_msg_age_sec integer,
    total_messages bigint, scrape_time timestamptz, queue_visible_length bigint
  );
exception when duplicate_object then null;
end $$;

-- Names become table names, so they are checked before any SQL is built.
create or replace function pgmq.validate_queue_name(queue_name text) returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if queue_name is null or queue_name !~ '^[a-z][a-z0-9_]{0,47}$' then
    raise exception 'invalid queue name %', coalesce(quote_literal(queue_name), 'NULL')
      using errcode = '22023',
            hint = 'A queue name is a lower-case letter followed by up to 47 lower-case letters, digits or underscores (^[a-z][a-z0-9_]{0,47}$).';
  end if;
end $$;

-- The quoted, schema-qualified table of a queue ('q' live, 'a' archive), or a
-- clear error when the queue does not exist (instead of a bare "relation ...").
create or replace function pgmq._table(queue_name text, kind text) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  name text;
begin
  perform pgmq.validate_queue_name(queue_name);
  name := format('pgmq.%I', kind || '_' || queue_name);
  if to_regclass(name) is null then
    raise exception 'queue % does not exist', quote_literal(queue_name)
      using errcode = '42P01', hint = format('Create it first: select pgmq.create(%L);', queue_name);
  end if;
  return name;
end $$;

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
end $$;

create or replace function pgmq."create"(queue_name text) returns void
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq._create(queue_name, false) $$;

create or replace function pgmq.create_non_partitioned(queue_name text) returns void
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq._create(queue_name, false) $$;

create or replace function pgmq.create_unlogged(queue_name text) returns void
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq._create(queue_name, true) $$;

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
  return true;
end $$;

-- send: the implementation every overload calls.
create or replace function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query execute format(
    'insert into %s (vt, message, headers) values ($1, $2, $3) returning msg_id',
    pgmq._table(queue_name, 'q'))
    using coalesce(delay, clock_timestamp()), msg, headers;
end $$;

create or replace function pgmq._after(seconds integer) returns timestamptz
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if seconds < 0 then
    raise exception 'delay must be zero or more seconds, got %', seconds using errcode = '22023';
  end if;
  return clock_timestamp() + make_interval(secs => coalesce(seconds, 0));
end $$;

create or replace function pgmq.send(queue_name text, msg jsonb, delay integer default 0)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send(queue_name, msg, null::jsonb, pgmq._after(delay)) $$;

create or replace function pgmq.send(queue_name text, msg jsonb, delay timestamptz)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send(queue_name, msg, null::jsonb, delay) $$;

create or replace function pgmq.send(queue_name text, msg jsonb, headers jsonb)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send(queue_name, msg, headers, clock_timestamp()) $$;

create or replace function pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send(queue_name, msg, headers, pgmq._after(delay)) $$;

-- send_batch: headers[i] goes with msgs[i]; a shorter headers array leaves
-- the rest without headers.
create or replace function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamptz)
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query execute format(
    'insert into %s (vt, message, headers)
     select $1, m.msg, $3[m.i] from unnest($2) with ordinality as m(msg, i)
     order by m.i
     returning msg_id',
    pgmq._table(queue_name, 'q'))
    using coalesce(delay, clock_timestamp()), msgs, headers;
end $$;

create or replace function pgmq.send_batch(queue_name text, msgs jsonb[], delay integer default 0)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send_batch(queue_name, msgs, null::jsonb[], pgmq._after(delay)) $$;

create or replace function pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamptz)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send_batch(queue_name, msgs, null::jsonb[], delay) $$;

create or replace function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[])
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send_batch(queue_name, msgs, headers, clock_timestamp()) $$;

create or replace function pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.send_batch(queue_name, msgs, headers, pgmq._after(delay)) $$;

-- read: claim up to qty visible messages, oldest first. SKIP LOCKED lets many
-- readers drain one queue; a row another reader claimed and committed in the
-- meantime is re-checked against vt (READ COMMITTED) and so never handed out
-- twice within its visibility timeout. A non-empty `conditional` keeps only
-- messages containing it (jsonb @>).
create or replace function pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb default '{}')
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  t text := pgmq._table(queue_name, 'q');
begin
  return query execute format(
    'with c as (
       select msg_id from %1$s
       where vt <= clock_timestamp() and ($3 = ''{}''::jsonb or message @> $3)
       order by msg_id
       limit $1
       for update skip locked),
     u as (
       update %1$s m set vt = clock_timestamp() + make_interval(secs => $2), read_ct = m.read_ct + 1
       from c where m.msg_id = c.msg_id
       returning m.msg_id, m.read_ct, m.enqueued_at, m.vt, m.message, m.headers)
     select * from u order by msg_id', t)
    using qty, vt, coalesce(conditional, '{}'::jsonb);
end $$;

-- read_with_poll: read, and while nothing is visible retry every
-- poll_interval_ms until max_poll_seconds have passed. Each attempt is a new
-- statement, so it sees messages committed while it waits.
create or replace function pgmq.read_with_poll(
  queue_name text, vt integer, qty integer,
  max_poll_seconds integer default 5, poll_interval_ms integer default 100, conditional jsonb default '{}'
)
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  stop_at timestamptz := clock_timestamp() + make_interval(secs => max_poll_seconds);
begin
  loop
    return query select * from pgmq.read(queue_name, vt, qty, conditional);
    if found or clock_timestamp() >= stop_at then
      return;
    end if;
    perform pg_sleep(poll_interval_ms / 1000.0);
  end loop;
end $$;

-- pop: claim and delete the oldest visible message in one statement.
create or replace function pgmq.pop(queue_name text)
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  t text := pgmq._table(queue_name, 'q');
begin
  return query execute format(
    'with c as (
       select msg_id from %1$s where vt <= clock_timestamp()
       order by msg_id limit 1 for update skip locked)
     delete from %1$s m using c where m.msg_id = c.msg_id
     returning m.msg_id, m.read_ct, m.enqueued_at, m.vt, m.message, m.headers', t);
end $$;

create or replace function pgmq."delete"(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query execute format('delete from %s where msg_id = any($1) returning msg_id', pgmq._table(queue_name, 'q'))
    using msg_ids;
end $$;

create or replace function pgmq."delete"(queue_name text, msg_id bigint) returns boolean
language sql
set search_path = pg_catalog, pg_temp
as $$ select exists (select from pgmq."delete"(queue_name, array[msg_id])) $$;

-- archive: move messages to the queue's archive table in one statement, so a
-- message is either live or archived, never both or neither.
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
    pgmq._table(queue_name, 'q'), pgmq._table(queue_name, 'a'))
    using msg_ids;
end $$;

create or replace function pgmq.archive(queue_name text, msg_id bigint) returns boolean
language sql
set search_path = pg_catalog, pg_temp
as $$ select exists (select from pgmq.archive(queue_name, array[msg_id])) $$;

-- set_vt: the message becomes visible vt seconds from now (0 = at once).
create or replace function pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
returns setof pgmq.message_record
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
begin
  return query execute format(
    'update %s set vt = clock_timestamp() + make_interval(secs => $2) where msg_id = $1
     returning msg_id, read_ct, enqueued_at, vt, message, headers', pgmq._table(queue_name, 'q'))
    using msg_id, vt;
end $$;

create or replace function pgmq.purge_queue(queue_name text) returns bigint
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  n bigint;
begin
  execute format('delete from %s', pgmq._table(queue_name, 'q'));
  get diagnostics n = row_count;
  return n;
end $$;

create or replace function pgmq.list_queues() returns setof pgmq.queue_record
language sql stable
set search_path = pg_catalog, pg_temp
as $$ select queue_name, is_partitioned, is_unlogged, created_at from pgmq.meta order by queue_name $$;

create or replace function pgmq.metrics(queue_name text) returns pgmq.metrics_result
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
  t text := pgmq._table(queue_name, 'q');
  result pgmq.metrics_result;
begin
  execute format(
    'select $1, s.queue_length, s.newest, s.oldest, q.total, s.now, s.visible
     from (select count(*) as queue_length,
                  count(*) filter (where vt <= now()) as visible,
                  extract(epoch from now() - max(enqueued_at))::integer as newest,
                  extract(epoch from now() - min(enqueued_at))::integer as oldest,
                  now() as now
           from %s) s,
          (select case when is_called then last_value else 0 end as total from pgmq.%I) q',
    t, 'q_' || queue_name || '_msg_id_seq')
    into result
    using queue_name;
  return result;
end $$;

create or replace function pgmq.metrics_all() returns setof pgmq.metrics_result
language sql
set search_path = pg_catalog, pg_temp
as $$ select r.* from pgmq.meta m, lateral pgmq.metrics(m.queue_name) r order by m.queue_name $$;

-- pgmq_public: the wrappers Supabase Queues exposes to client libraries
-- (supabase.schema('pgmq_public').rpc('send', ...)). SECURITY INVOKER, so a
-- caller needs table privileges on the queue and passes its RLS policies.
create or replace function pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer default 0)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select * from pgmq.send(queue_name, message, sleep_seconds) $$;

create or replace function pgmq_public.send_batch(queue_name text, messages jsonb[], sleep_seconds integer default 0)
returns setof bigint
language sql
set search_path = pg_catalog, pg_temp
as $$ select * from pgmq.send_batch(queue_name, messages, sleep_seconds) $$;

create or replace function pgmq_public.read(queue_name text, sleep_seconds integer, n integer)
returns setof pgmq.message_record
language sql
set search_path = pg_catalog, pg_temp
as $$ select * from pgmq.read(queue_name, sleep_seconds, n) $$;

create or replace function pgmq_public.pop(queue_name text)
returns setof pgmq.message_record
language sql
set search_path = pg_catalog, pg_temp
as $$ select * from pgmq.pop(queue_name) $$;

create or replace function pgmq_public.archive(queue_name text, message_id bigint) returns boolean
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq.archive(queue_name, message_id) $$;

create or replace function pgmq_public."delete"(queue_name text, message_id bigint) returns boolean
language sql
set search_path = pg_catalog, pg_temp
as $$ select pgmq."delete"(queue_name, message_id) $$;

-- Functions are executable by PUBLIC by default; start from nothing.
revoke all on all functions in schema pgmq, pgmq_public from public;

-- The data path is open to the API roles because it runs with the caller's
-- rights: without a grant on the queue's tables it still fails.
grant execute on function
  pgmq.validate_queue_name(text), pgmq._table(text, text), pgmq._after(integer),
  pgmq.send(text, jsonb, jsonb, timestamptz), pgmq.send(text, jsonb, integer), pgmq.send(text, jsonb, timestamptz),
  pgmq.send(text, jsonb, jsonb), pgmq.send(text, jsonb, jsonb, integer),
  pgmq.send_batch(text, jsonb[], jsonb[], timestamptz), pgmq.send_batch(text, jsonb[], integer),
  pgmq.send_batch(text, jsonb[], timestamptz), pgmq.send_batch(text, jsonb[], jsonb[]),
  pgmq.send_batch(text, jsonb[], jsonb[], integer),
  pgmq.read(text, integer, integer, jsonb), pgmq.read_with_poll(text, integer, integer, integer, integer, jsonb),
  pgmq.pop(text), pgmq."delete"(text, bigint[]), pgmq."delete"(text, bigint),
  pgmq.archive(text, bigint[]), pgmq.archive(text, bigint), pgmq.set_vt(text, bigint, integer)
  to "{{owner}}", anon, authenticated, service_role;

-- Administration: the owner, and service_role for platform-side inspection.
grant execute on function
  pgmq.purge_queue(text), pgmq.list_queues(), pgmq.metrics(text), pgmq.metrics_all()
  to "{{owner}}", service_role;

-- Creating and dropping queues (the SECURITY DEFINER part): the owner only.
grant execute on function
  pgmq._create(text, boolean), pgmq."create"(text), pgmq.create_non_partitioned(text),
  pgmq.create_unlogged(text), pgmq.drop_queue(text)
  to "{{owner}}";

-- Client access is off until the owner opts in (docs/queues.md shows how to
-- grant these to `authenticated` together with RLS on the queue's tables);
-- the grant option is what lets the owner do that without owning the schema.
grant usage on schema pgmq_public to "{{owner}}" with grant option;
grant execute on all functions in schema pgmq_public to "{{owner}}" with grant option;
grant execute on all functions in schema pgmq_public to service_role;
