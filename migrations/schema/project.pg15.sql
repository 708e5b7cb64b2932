--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: auth; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA auth;


ALTER SCHEMA auth OWNER TO postgres;

--
-- Name: extensions; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA extensions;


ALTER SCHEMA extensions OWNER TO postgres;

--
-- Name: hearth; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA hearth;


ALTER SCHEMA hearth OWNER TO postgres;

--
-- Name: hearth_workflows; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA hearth_workflows;


ALTER SCHEMA hearth_workflows OWNER TO postgres;

--
-- Name: pgmq; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA pgmq;


ALTER SCHEMA pgmq OWNER TO postgres;

--
-- Name: pgmq_public; Type: SCHEMA; Schema: -; Owner: hearth_<ref>_owner
--

CREATE SCHEMA pgmq_public;


ALTER SCHEMA pgmq_public OWNER TO hearth_<ref>_owner;

--
-- Name: public; Type: SCHEMA; Schema: -; Owner: hearth_<ref>_owner
--

-- *not* creating schema, since initdb creates it


ALTER SCHEMA public OWNER TO hearth_<ref>_owner;

--
-- Name: realtime; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA realtime;


ALTER SCHEMA realtime OWNER TO postgres;

--
-- Name: storage; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA storage;


ALTER SCHEMA storage OWNER TO postgres;

--
-- Name: supabase_migrations; Type: SCHEMA; Schema: -; Owner: hearth_<ref>_owner
--

CREATE SCHEMA supabase_migrations;


ALTER SCHEMA supabase_migrations OWNER TO hearth_<ref>_owner;

--
-- Name: moddatetime; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS moddatetime WITH SCHEMA extensions;


--
-- Name: message_record; Type: TYPE; Schema: pgmq; Owner: postgres
--

CREATE TYPE pgmq.message_record AS (
	msg_id bigint,
	read_ct integer,
	enqueued_at timestamp with time zone,
	vt timestamp with time zone,
	message jsonb,
	headers jsonb
);


ALTER TYPE pgmq.message_record OWNER TO postgres;

--
-- Name: metrics_result; Type: TYPE; Schema: pgmq; Owner: postgres
--

CREATE TYPE pgmq.metrics_result AS (
	queue_name text,
	queue_length bigint,
	newest_msg_age_sec integer,
	oldest_msg_age_sec integer,
	total_messages bigint,
	scrape_time timestamp with time zone,
	queue_visible_length bigint
);


ALTER TYPE pgmq.metrics_result OWNER TO postgres;

--
-- Name: queue_record; Type: TYPE; Schema: pgmq; Owner: postgres
--

CREATE TYPE pgmq.queue_record AS (
	queue_name character varying,
	is_partitioned boolean,
	is_unlogged boolean,
	created_at timestamp with time zone
);


ALTER TYPE pgmq.queue_record OWNER TO postgres;

--
-- Name: email(); Type: FUNCTION; Schema: auth; Owner: postgres
--

CREATE FUNCTION auth.email() RETURNS text
    LANGUAGE sql STABLE
    AS $$ select auth.jwt() ->> 'email' $$;


ALTER FUNCTION auth.email() OWNER TO postgres;

--
-- Name: jwt(); Type: FUNCTION; Schema: auth; Owner: postgres
--

CREATE FUNCTION auth.jwt() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;


ALTER FUNCTION auth.jwt() OWNER TO postgres;

--
-- Name: role(); Type: FUNCTION; Schema: auth; Owner: postgres
--

CREATE FUNCTION auth.role() RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    auth.jwt() ->> 'role'
  )
$$;


ALTER FUNCTION auth.role() OWNER TO postgres;

--
-- Name: uid(); Type: FUNCTION; Schema: auth; Owner: postgres
--

CREATE FUNCTION auth.uid() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$
  select nullif(
    coalesce(current_setting('request.jwt.claim.sub', true), auth.jwt() ->> 'sub'),
    ''
  )::uuid
$$;


ALTER FUNCTION auth.uid() OWNER TO postgres;

--
-- Name: hearth_rest_schema_changed(); Type: FUNCTION; Schema: extensions; Owner: postgres
--

CREATE FUNCTION extensions.hearth_rest_schema_changed() RETURNS event_trigger
    LANGUAGE plpgsql
    AS $$
begin
  notify pgrst, 'reload schema';
end;
$$;


ALTER FUNCTION extensions.hearth_rest_schema_changed() OWNER TO postgres;

--
-- Name: capture(); Type: FUNCTION; Schema: hearth_workflows; Owner: postgres
--

CREATE FUNCTION hearth_workflows.capture() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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


ALTER FUNCTION hearth_workflows.capture() OWNER TO postgres;

--
-- Name: _after(integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq._after(seconds integer) RETURNS timestamp with time zone
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if seconds < 0 then
    raise exception 'delay must be zero or more seconds, got %', seconds using errcode = '22023';
  end if;
  return clock_timestamp() + make_interval(secs => coalesce(seconds, 0));
end $$;


ALTER FUNCTION pgmq._after(seconds integer) OWNER TO postgres;

--
-- Name: _create(text, boolean); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq._create(queue_name text, unlogged boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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
  execute format('alter table pgmq.%I owner to %I', q, 'hearth_<ref>_owner');
  execute format('alter table pgmq.%I owner to %I', a, 'hearth_<ref>_owner');
  execute format('grant select, insert, update, delete on pgmq.%I, pgmq.%I to service_role', q, a);
  execute format('grant select on sequence pgmq.%I to service_role', q || '_msg_id_seq');
  insert into pgmq.meta (queue_name, is_partitioned, is_unlogged) values (queue_name, false, unlogged)
    on conflict do nothing;
  perform pgmq._queue_functions(queue_name);
end $$;


ALTER FUNCTION pgmq._create(queue_name text, unlogged boolean) OWNER TO postgres;

--
-- Name: _queue_functions(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq._queue_functions(queue_name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
       pgmq._delete_%1$s(bigint[]) to "hearth_<ref>_owner", anon, authenticated, service_role', queue_name);
end $_$;


ALTER FUNCTION pgmq._queue_functions(queue_name text) OWNER TO postgres;

--
-- Name: _queue_table(text, text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq._queue_table(queue_name text, kind text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $_$
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
end $_$;


ALTER FUNCTION pgmq._queue_table(queue_name text, kind text) OWNER TO postgres;

--
-- Name: _send(text, jsonb, jsonb, timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $_$
begin
  perform pgmq._queue_table(queue_name, 'q');
  return query execute 'select pgmq._send_' || queue_name || '($1, $2, $3)' using vt, msg, headers;
end $_$;


ALTER FUNCTION pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone) OWNER TO postgres;

--
-- Name: _table(text, text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq._table(queue_name text, kind text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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


ALTER FUNCTION pgmq._table(queue_name text, kind text) OWNER TO postgres;

--
-- Name: _visible_after(integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq._visible_after(seconds integer) RETURNS timestamp with time zone
    LANGUAGE plpgsql
    AS $$
begin
  if seconds < 0 then
    raise exception 'delay must be zero or more seconds, got %', seconds using errcode = '22023';
  end if;
  return pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => coalesce(seconds, 0));
end $$;


ALTER FUNCTION pgmq._visible_after(seconds integer) OWNER TO postgres;

--
-- Name: archive(text, bigint[]); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
end $_$;


ALTER FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) OWNER TO postgres;

--
-- Name: archive(text, bigint); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.archive(queue_name text, msg_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return exists (select from pgmq.archive(queue_name, array[msg_id]));
end $$;


ALTER FUNCTION pgmq.archive(queue_name text, msg_id bigint) OWNER TO postgres;

--
-- Name: convert_archive_partitioned(text, text, text, integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, leading_partition integer DEFAULT 10) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  raise exception 'partitioned archives are not supported' using errcode = '0A000';
end $$;


ALTER FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer) OWNER TO postgres;

--
-- Name: create(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq."create"(queue_name text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq._create(queue_name, false) $$;


ALTER FUNCTION pgmq."create"(queue_name text) OWNER TO postgres;

--
-- Name: create_non_partitioned(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.create_non_partitioned(queue_name text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq._create(queue_name, false) $$;


ALTER FUNCTION pgmq.create_non_partitioned(queue_name text) OWNER TO postgres;

--
-- Name: create_partitioned(text, text, text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform pgmq.validate_queue_name(queue_name);
  raise exception 'partitioned queues are not supported'
    using errcode = '0A000',
          hint = format('Create a regular queue instead: select pgmq.create(%L);', queue_name);
end $$;


ALTER FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text, retention_interval text) OWNER TO postgres;

--
-- Name: create_unlogged(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.create_unlogged(queue_name text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq._create(queue_name, true) $$;


ALTER FUNCTION pgmq.create_unlogged(queue_name text) OWNER TO postgres;

--
-- Name: delete(text, bigint[]); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  perform pgmq._queue_table(queue_name, 'q');
  return query execute 'select pgmq._delete_' || queue_name || '($1)' using msg_ids;
end $_$;


ALTER FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) OWNER TO postgres;

--
-- Name: delete(text, bigint); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.delete(queue_name text, msg_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  deleted bigint;
begin
  perform pgmq._queue_table(queue_name, 'q');
  execute 'select pgmq._delete_' || queue_name || '(array[$1])' into deleted using msg_id;
  return deleted is not null;
end $_$;


ALTER FUNCTION pgmq.delete(queue_name text, msg_id bigint) OWNER TO postgres;

--
-- Name: detach_archive(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.detach_archive(queue_name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform pgmq._table(queue_name, 'a');
end $$;


ALTER FUNCTION pgmq.detach_archive(queue_name text) OWNER TO postgres;

--
-- Name: drop_queue(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.drop_queue(queue_name text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
end $_$;


ALTER FUNCTION pgmq.drop_queue(queue_name text) OWNER TO postgres;

--
-- Name: drop_queue(text, boolean); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  raise warning 'drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. Use drop_queue(queue_name) instead';
  return pgmq.drop_queue(queue_name);
end $$;


ALTER FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) OWNER TO postgres;

--
-- Name: format_table_name(text, text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.format_table_name(queue_name text, prefix text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform pgmq.validate_queue_name(queue_name);
  return prefix || '_' || queue_name;
end $$;


ALTER FUNCTION pgmq.format_table_name(queue_name text, prefix text) OWNER TO postgres;

--
-- Name: list_queues(); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.list_queues() RETURNS SETOF pgmq.queue_record
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select queue_name, is_partitioned, is_unlogged, created_at from pgmq.meta order by queue_name $$;


ALTER FUNCTION pgmq.list_queues() OWNER TO postgres;

--
-- Name: metrics(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.metrics(queue_name text) RETURNS pgmq.metrics_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
end $_$;


ALTER FUNCTION pgmq.metrics(queue_name text) OWNER TO postgres;

--
-- Name: metrics_all(); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.metrics_all() RETURNS SETOF pgmq.metrics_result
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select r.* from pgmq.meta m, lateral pgmq.metrics(m.queue_name) r order by m.queue_name $$;


ALTER FUNCTION pgmq.metrics_all() OWNER TO postgres;

--
-- Name: pop(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.pop(queue_name text) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
declare
  t text := pgmq._table(queue_name, 'q');
begin
  return query execute format(
    'with c as (
       select msg_id from %1$s where vt <= clock_timestamp()
       order by msg_id limit 1 for update skip locked)
     delete from %1$s m using c where m.msg_id = c.msg_id
     returning m.msg_id, m.read_ct, m.enqueued_at, m.vt, m.message, m.headers', t);
end $_$;


ALTER FUNCTION pgmq.pop(queue_name text) OWNER TO postgres;

--
-- Name: purge_queue(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.purge_queue(queue_name text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  n bigint;
begin
  execute format('delete from %s', pgmq._table(queue_name, 'q'));
  get diagnostics n = row_count;
  return n;
end $$;


ALTER FUNCTION pgmq.purge_queue(queue_name text) OWNER TO postgres;

--
-- Name: read(text, integer, integer, jsonb); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'::jsonb) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  perform pgmq._queue_table(queue_name, 'q');
  return query execute 'select * from pgmq._read_' || queue_name || '($1, $2, $3)'
    using qty, vt, coalesce(conditional, '{}'::jsonb);
end $_$;


ALTER FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) OWNER TO postgres;

--
-- Name: read_with_poll(text, integer, integer, integer, integer, jsonb); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT '{}'::jsonb) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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


ALTER FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) OWNER TO postgres;

--
-- Name: send(text, jsonb, integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer DEFAULT 0) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query select pgmq._send(queue_name, msg, null::jsonb, pgmq._visible_after(delay));
end $$;


ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) OWNER TO postgres;

--
-- Name: send(text, jsonb, jsonb); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query select pgmq._send(queue_name, msg, headers, clock_timestamp());
end $$;


ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) OWNER TO postgres;

--
-- Name: send(text, jsonb, timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query select pgmq._send(queue_name, msg, null::jsonb, coalesce(delay, clock_timestamp()));
end $$;


ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) OWNER TO postgres;

--
-- Name: send(text, jsonb, jsonb, integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query select pgmq._send(queue_name, msg, headers, pgmq._visible_after(delay));
end $$;


ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) OWNER TO postgres;

--
-- Name: send(text, jsonb, jsonb, timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return query select pgmq._send(queue_name, msg, headers, coalesce(delay, clock_timestamp()));
end $$;


ALTER FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) OWNER TO postgres;

--
-- Name: send_batch(text, jsonb[], jsonb[]); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) RETURNS SETOF bigint
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq.send_batch(queue_name, msgs, headers, clock_timestamp()) $$;


ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) OWNER TO postgres;

--
-- Name: send_batch(text, jsonb[], integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer DEFAULT 0) RETURNS SETOF bigint
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq.send_batch(queue_name, msgs, null::jsonb[], pgmq._after(delay)) $$;


ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) OWNER TO postgres;

--
-- Name: send_batch(text, jsonb[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq.send_batch(queue_name, msgs, null::jsonb[], delay) $$;


ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) OWNER TO postgres;

--
-- Name: send_batch(text, jsonb[], jsonb[], integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) RETURNS SETOF bigint
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq.send_batch(queue_name, msgs, headers, pgmq._after(delay)) $$;


ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) OWNER TO postgres;

--
-- Name: send_batch(text, jsonb[], jsonb[], timestamp with time zone); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) RETURNS SETOF bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  return query execute format(
    'insert into %s (vt, message, headers)
     select $1, m.msg, $3[m.i] from unnest($2) with ordinality as m(msg, i)
     order by m.i
     returning msg_id',
    pgmq._table(queue_name, 'q'))
    using coalesce(delay, clock_timestamp()), msgs, headers;
end $_$;


ALTER FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) OWNER TO postgres;

--
-- Name: set_vt(text, bigint, integer); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) RETURNS SETOF pgmq.message_record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  return query execute format(
    'update %s set vt = clock_timestamp() + make_interval(secs => $2) where msg_id = $1
     returning msg_id, read_ct, enqueued_at, vt, message, headers', pgmq._table(queue_name, 'q'))
    using msg_id, vt;
end $_$;


ALTER FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) OWNER TO postgres;

--
-- Name: validate_queue_name(text); Type: FUNCTION; Schema: pgmq; Owner: postgres
--

CREATE FUNCTION pgmq.validate_queue_name(queue_name text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
  if queue_name is null or queue_name !~ '^[a-z][a-z0-9_]{0,47}$' then
    raise exception 'invalid queue name %: a queue name must match ^[a-z][a-z0-9_]{0,47}$', coalesce(quote_literal(queue_name), 'NULL')
      using errcode = '22023',
            hint = 'A queue name is a lower-case letter followed by up to 47 lower-case letters, digits or underscores (^[a-z][a-z0-9_]{0,47}$).';
  end if;
end $_$;


ALTER FUNCTION pgmq.validate_queue_name(queue_name text) OWNER TO postgres;

--
-- Name: archive(text, bigint); Type: FUNCTION; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

CREATE FUNCTION pgmq_public.archive(queue_name text, message_id bigint) RETURNS boolean
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq.archive(queue_name, message_id) $$;


ALTER FUNCTION pgmq_public.archive(queue_name text, message_id bigint) OWNER TO hearth_<ref>_owner;

--
-- Name: delete(text, bigint); Type: FUNCTION; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

CREATE FUNCTION pgmq_public.delete(queue_name text, message_id bigint) RETURNS boolean
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select pgmq."delete"(queue_name, message_id) $$;


ALTER FUNCTION pgmq_public.delete(queue_name text, message_id bigint) OWNER TO hearth_<ref>_owner;

--
-- Name: pop(text); Type: FUNCTION; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

CREATE FUNCTION pgmq_public.pop(queue_name text) RETURNS SETOF pgmq.message_record
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select * from pgmq.pop(queue_name) $$;


ALTER FUNCTION pgmq_public.pop(queue_name text) OWNER TO hearth_<ref>_owner;

--
-- Name: read(text, integer, integer); Type: FUNCTION; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

CREATE FUNCTION pgmq_public.read(queue_name text, sleep_seconds integer, n integer) RETURNS SETOF pgmq.message_record
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select * from pgmq.read(queue_name, sleep_seconds, n) $$;


ALTER FUNCTION pgmq_public.read(queue_name text, sleep_seconds integer, n integer) OWNER TO hearth_<ref>_owner;

--
-- Name: send(text, jsonb, integer); Type: FUNCTION; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

CREATE FUNCTION pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer DEFAULT 0) RETURNS SETOF bigint
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select * from pgmq.send(queue_name, message, sleep_seconds) $$;


ALTER FUNCTION pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer) OWNER TO hearth_<ref>_owner;

--
-- Name: send_batch(text, jsonb[], integer); Type: FUNCTION; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

CREATE FUNCTION pgmq_public.send_batch(queue_name text, messages jsonb[], sleep_seconds integer DEFAULT 0) RETURNS SETOF bigint
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ select * from pgmq.send_batch(queue_name, messages, sleep_seconds) $$;


ALTER FUNCTION pgmq_public.send_batch(queue_name text, messages jsonb[], sleep_seconds integer) OWNER TO hearth_<ref>_owner;

--
-- Name: broadcast_changes(text, text, text, text, text, record, record, text); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text DEFAULT 'ROW'::text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  if level = 'STATEMENT' then
    raise exception 'function can only be triggered for each row, not for each statement';
  end if;
  if operation not in ('INSERT', 'UPDATE', 'DELETE') then
    raise exception 'Unexpected operation type: %', operation;
  end if;
  perform realtime.send(jsonb_build_object('old_record', old, 'record', new, 'operation', operation,
    'table', table_name, 'schema', table_schema), event_name, topic_name);
end $$;


ALTER FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) OWNER TO postgres;

--
-- Name: capture_changes(); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.capture_changes() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  head jsonb := jsonb_build_object('k', 'c', 'type', tg_op, 'schema', tg_table_schema, 'table', tg_table_name,
    'relid', tg_relid::int8, 'ts', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'));
begin
  if tg_op = 'INSERT' then
    perform realtime.relay_send((head || jsonb_build_object('seq', nextval('realtime.change_seq'), 'record', to_jsonb(n.*)))::text) from new_rows n;
  elsif tg_op = 'DELETE' then
    perform realtime.relay_send((head || jsonb_build_object('seq', nextval('realtime.change_seq'), 'old_record', to_jsonb(o.*)))::text) from old_rows o;
  else
    -- (alias.* is the row even when the table has a column named like the alias.)
  -- The two transition tables hold an updated row's old and new versions at the same position.
    perform realtime.relay_send((head || jsonb_build_object('seq', nextval('realtime.change_seq'), 'record', n, 'old_record', o))::text)
      from unnest(array(select to_jsonb(x.*) from new_rows x), array(select to_jsonb(x.*) from old_rows x)) as u(n, o);
  end if;
  return null;
end $$;


ALTER FUNCTION realtime.capture_changes() OWNER TO postgres;

--
-- Name: messages_relay(); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.messages_relay() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  perform realtime.relay_send(json_build_object('k', 'b', 'topic', new.topic, 'event', new.event,
    'payload', new.payload, 'private', coalesce(new.private, false), 'id', new.id)::text);
  return null;
end $$;


ALTER FUNCTION realtime.messages_relay() OWNER TO postgres;

--
-- Name: relay_send(text); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.relay_send(body text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare rid bigint;
begin
  if octet_length(body) <= 7900 then
    perform pg_notify('hearth_realtime', body);
  else
    insert into realtime.relay (body) values (body) returning id into rid;
    perform pg_notify('hearth_realtime', json_build_object('k', 'r', 'id', rid)::text);
  end if;
end $$;


ALTER FUNCTION realtime.relay_send(body text) OWNER TO postgres;

--
-- Name: send(jsonb, text, text, boolean); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean DEFAULT true) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  begin
    perform set_config('realtime.topic', topic, true);
    insert into realtime.messages (payload, event, topic, private, extension)
      values (payload, event, topic, private, 'broadcast');
  exception when others then
    raise warning 'WarnSendingBroadcastMessage: %', sqlerrm;
  end;
end $$;


ALTER FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) OWNER TO postgres;

--
-- Name: sync_capture(); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.sync_capture() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare t record;
begin
  for t in
    select c.oid::regclass as rel from pg_class c
    join pg_namespace s on s.oid = c.relnamespace
    join pg_publication_tables p on p.schemaname = s.nspname and p.tablename = c.relname
    where p.pubname = 'supabase_realtime' and c.relkind = 'r'
      and not exists (select 1 from pg_trigger g where g.tgrelid = c.oid and g.tgname = 'realtime_capture_insert')
  loop
    execute format('create trigger realtime_capture_insert after insert on %s referencing new table as new_rows for each statement execute function realtime.capture_changes()', t.rel);
    execute format('create trigger realtime_capture_update after update on %s referencing old table as old_rows new table as new_rows for each statement execute function realtime.capture_changes()', t.rel);
    execute format('create trigger realtime_capture_delete after delete on %s referencing old table as old_rows for each statement execute function realtime.capture_changes()', t.rel);
  end loop;
  for t in
    select c.oid::regclass as rel from pg_class c
    join pg_namespace s on s.oid = c.relnamespace
    join pg_trigger g on g.tgrelid = c.oid and g.tgname = 'realtime_capture_insert'
    where not exists (select 1 from pg_publication_tables p where p.pubname = 'supabase_realtime'
      and p.schemaname = s.nspname and p.tablename = c.relname)
  loop
    execute format('drop trigger realtime_capture_insert on %s', t.rel);
    execute format('drop trigger realtime_capture_update on %s', t.rel);
    execute format('drop trigger realtime_capture_delete on %s', t.rel);
  end loop;
end $$;


ALTER FUNCTION realtime.sync_capture() OWNER TO postgres;

--
-- Name: sync_capture_on_ddl(); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.sync_capture_on_ddl() RETURNS event_trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  -- (A new table joins a FOR ALL TABLES or TABLES IN SCHEMA publication by itself.)
  if tg_tag in ('ALTER PUBLICATION', 'CREATE PUBLICATION', 'DROP PUBLICATION', 'CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO') then
    perform realtime.sync_capture();
  end if;
end $$;


ALTER FUNCTION realtime.sync_capture_on_ddl() OWNER TO postgres;

--
-- Name: topic(); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.topic() RETURNS text
    LANGUAGE sql STABLE
    AS $$ select nullif(current_setting('realtime.topic', true), '')::text $$;


ALTER FUNCTION realtime.topic() OWNER TO postgres;

--
-- Name: visible_to(text, jsonb, jsonb); Type: FUNCTION; Schema: realtime; Owner: postgres
--

CREATE FUNCTION realtime.visible_to(check_sql text, pk jsonb, subscribers jsonb) RETURNS integer[]
    LANGUAGE plpgsql
    AS $$
declare
  i int;
  seen boolean;
  out int[] := '{}';
begin
  perform set_config('statement_timeout', '10s', true);
  for i in 0 .. jsonb_array_length(subscribers) - 1 loop
    perform set_config('role', subscribers -> i ->> 'role', true);
    perform set_config('request.jwt.claims', (subscribers -> i)::text, true);
    execute check_sql into seen using pk;
    if seen then out := out || (i + 1); end if;
    perform set_config('role', 'none', true);
  end loop;
  return out;
end $$;


ALTER FUNCTION realtime.visible_to(check_sql text, pk jsonb, subscribers jsonb) OWNER TO postgres;

--
-- Name: bucket_is_public(text); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.bucket_is_public(bucket text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$ select coalesce((select b.public from storage.buckets b where b.id = bucket), false) $$;


ALTER FUNCTION storage.bucket_is_public(bucket text) OWNER TO postgres;

--
-- Name: extension(text); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.extension(name text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ select case when storage.filename(name) like '%.%' then reverse(split_part(reverse(storage.filename(name)), '.', 1)) else '' end $$;


ALTER FUNCTION storage.extension(name text) OWNER TO postgres;

--
-- Name: filename(text); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.filename(name text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ select (string_to_array(name, '/'))[array_length(string_to_array(name, '/'), 1)] $$;


ALTER FUNCTION storage.filename(name text) OWNER TO postgres;

--
-- Name: foldername(text); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.foldername(name text) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    AS $$ select (string_to_array(name, '/'))[1:greatest(array_length(string_to_array(name, '/'), 1) - 1, 0)] $$;


ALTER FUNCTION storage.foldername(name text) OWNER TO postgres;

--
-- Name: objects_after_delete(); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.objects_after_delete() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into storage.pending_bytes (version, writer) select o.version, null from old_rows o on conflict do nothing;
  update storage.usage set bytes = bytes - coalesce((select sum(o.size) from old_rows o), 0);
  return null;
end $$;


ALTER FUNCTION storage.objects_after_delete() OWNER TO postgres;

--
-- Name: objects_after_insert(); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.objects_after_insert() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update storage.usage set bytes = bytes + coalesce((select sum(n.size) from new_rows n), 0);
  return null;
end $$;


ALTER FUNCTION storage.objects_after_insert() OWNER TO postgres;

--
-- Name: objects_after_update(); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.objects_after_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into storage.pending_bytes (version, writer)
    select o.version, null from old_rows o join new_rows n on n.id = o.id where n.version <> o.version
    on conflict do nothing;
  update storage.usage set bytes = bytes
    + coalesce((select sum(n.size) from new_rows n), 0) - coalesce((select sum(o.size) from old_rows o), 0);
  return null;
end $$;


ALTER FUNCTION storage.objects_after_update() OWNER TO postgres;

--
-- Name: objects_claim_bytes(); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.objects_claim_bytes() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from storage.pending_bytes p where p.version = new.version and p.writer is not null;
  if not found then
    raise exception using errcode = 'HS002', message = 'the bytes of this object version are not staged';
  end if;
  return new;
end $$;


ALTER FUNCTION storage.objects_claim_bytes() OWNER TO postgres;

--
-- Name: objects_set_owner(); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.objects_set_owner() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if current_user in ('anon', 'authenticated') then
    new.owner_sub := nullif(auth.jwt() ->> 'sub', '');
  end if;
  if tg_op = 'UPDATE' then
    new.updated_at := now();
  end if;
  return new;
end $$;


ALTER FUNCTION storage.objects_set_owner() OWNER TO postgres;

--
-- Name: usage_within_quota(); Type: FUNCTION; Schema: storage; Owner: postgres
--

CREATE FUNCTION storage.usage_within_quota() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  quota bigint := nullif(current_setting('storage.quota_bytes', true), '')::bigint;
begin
  if quota is not null and (select u.bytes from storage.usage u) > quota then
    raise exception using errcode = 'HS001', message = 'quota_exceeded';
  end if;
  return null;
end $$;


ALTER FUNCTION storage.usage_within_quota() OWNER TO postgres;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: code_decoys; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.code_decoys (
    slot integer NOT NULL,
    key bytea NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT code_decoys_slot_check CHECK (((slot >= 0) AND (slot < 65536)))
);


ALTER TABLE auth.code_decoys OWNER TO postgres;

--
-- Name: dev_mailbox; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.dev_mailbox (
    id bigint NOT NULL,
    to_address text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


ALTER TABLE auth.dev_mailbox OWNER TO postgres;

--
-- Name: dev_mailbox_id_seq; Type: SEQUENCE; Schema: auth; Owner: postgres
--

CREATE SEQUENCE auth.dev_mailbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE auth.dev_mailbox_id_seq OWNER TO postgres;

--
-- Name: dev_mailbox_id_seq; Type: SEQUENCE OWNED BY; Schema: auth; Owner: postgres
--

ALTER SEQUENCE auth.dev_mailbox_id_seq OWNED BY auth.dev_mailbox.id;


--
-- Name: flow_state; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.flow_state (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid,
    code_challenge text NOT NULL,
    code_challenge_method text NOT NULL,
    authentication_method text NOT NULL,
    auth_code_hash bytea,
    auth_code_issued_at timestamp with time zone,
    consumed_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    provider_token_sealed text,
    provider_refresh_token_sealed text,
    CONSTRAINT flow_state_code_challenge_method_check CHECK ((code_challenge_method = 's256'::text))
);


ALTER TABLE auth.flow_state OWNER TO postgres;

--
-- Name: identities; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.identities (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    provider_id text NOT NULL,
    identity_data jsonb DEFAULT '{}'::jsonb NOT NULL,
    email text,
    last_sign_in_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);


ALTER TABLE auth.identities OWNER TO postgres;

--
-- Name: mfa_challenges; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.mfa_challenges (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    factor_id uuid,
    kind text NOT NULL,
    web_authn_challenge text,
    attempts integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    consumed_at timestamp with time zone,
    CONSTRAINT mfa_challenges_kind_check CHECK ((kind = ANY (ARRAY['totp'::text, 'webauthn_create'::text, 'webauthn_request'::text, 'passkey_signin'::text])))
);


ALTER TABLE auth.mfa_challenges OWNER TO postgres;

--
-- Name: mfa_factors; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.mfa_factors (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    factor_type text NOT NULL,
    friendly_name text,
    status text DEFAULT 'unverified'::text NOT NULL,
    secret_sealed text,
    web_authn_credential jsonb,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    last_totp_step bigint,
    web_authn_credential_id text,
    CONSTRAINT mfa_factors_factor_type_check CHECK ((factor_type = ANY (ARRAY['totp'::text, 'webauthn'::text]))),
    CONSTRAINT mfa_factors_status_check CHECK ((status = ANY (ARRAY['unverified'::text, 'verified'::text])))
);


ALTER TABLE auth.mfa_factors OWNER TO postgres;

--
-- Name: oauth_states; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.oauth_states (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    state_hash bytea NOT NULL,
    provider text NOT NULL,
    nonce text,
    code_verifier_sealed text NOT NULL,
    redirect_to text NOT NULL,
    code_challenge text,
    link_user_id uuid,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    consumed_at timestamp with time zone
);


ALTER TABLE auth.oauth_states OWNER TO postgres;

--
-- Name: one_time_tokens; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.one_time_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    purpose text NOT NULL,
    email text NOT NULL,
    code_hash bytea NOT NULL,
    link_hash bytea NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    flow_state_id uuid,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    consumed_at timestamp with time zone,
    CONSTRAINT one_time_tokens_purpose_check CHECK ((purpose = ANY (ARRAY['email'::text, 'recovery'::text, 'email_change'::text, 'reauthentication'::text])))
);


ALTER TABLE auth.one_time_tokens OWNER TO postgres;

--
-- Name: rate_buckets; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.rate_buckets (
    bucket text NOT NULL,
    client_ip text NOT NULL,
    tat timestamp with time zone NOT NULL
);


ALTER TABLE auth.rate_buckets OWNER TO postgres;

--
-- Name: refresh_tokens; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.refresh_tokens (
    id bigint NOT NULL,
    token_hash bytea NOT NULL,
    session_id uuid NOT NULL,
    user_id uuid NOT NULL,
    parent bigint,
    revoked boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


ALTER TABLE auth.refresh_tokens OWNER TO postgres;

--
-- Name: refresh_tokens_id_seq; Type: SEQUENCE; Schema: auth; Owner: postgres
--

CREATE SEQUENCE auth.refresh_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE auth.refresh_tokens_id_seq OWNER TO postgres;

--
-- Name: refresh_tokens_id_seq; Type: SEQUENCE OWNED BY; Schema: auth; Owner: postgres
--

ALTER SEQUENCE auth.refresh_tokens_id_seq OWNED BY auth.refresh_tokens.id;


--
-- Name: sessions; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    aal text DEFAULT 'aal1'::text NOT NULL,
    amr jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    refreshed_at timestamp with time zone,
    CONSTRAINT sessions_aal_check CHECK ((aal = ANY (ARRAY['aal1'::text, 'aal2'::text])))
);


ALTER TABLE auth.sessions OWNER TO postgres;

--
-- Name: users; Type: TABLE; Schema: auth; Owner: postgres
--

CREATE TABLE auth.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text,
    encrypted_password text,
    email_confirmed_at timestamp with time zone,
    email_change text,
    is_anonymous boolean DEFAULT false NOT NULL,
    raw_user_meta_data jsonb DEFAULT '{}'::jsonb NOT NULL,
    raw_app_meta_data jsonb DEFAULT '{}'::jsonb NOT NULL,
    last_sign_in_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    banned_until timestamp with time zone,
    invited_at timestamp with time zone,
    deleted_at timestamp with time zone,
    instance_id uuid DEFAULT '00000000-0000-0000-0000-000000000000'::uuid,
    aud text DEFAULT 'authenticated'::text,
    role text DEFAULT 'authenticated'::text,
    phone text,
    phone_confirmed_at timestamp with time zone,
    confirmation_sent_at timestamp with time zone,
    confirmed_at timestamp with time zone GENERATED ALWAYS AS (LEAST(email_confirmed_at, phone_confirmed_at)) STORED,
    is_sso_user boolean DEFAULT false NOT NULL,
    CONSTRAINT users_email_change_check CHECK ((email_change = lower(email_change))),
    CONSTRAINT users_email_check CHECK ((email = lower(email)))
);


ALTER TABLE auth.users OWNER TO postgres;

--
-- Name: migrations; Type: TABLE; Schema: hearth; Owner: postgres
--

CREATE TABLE hearth.migrations (
    id text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE hearth.migrations OWNER TO postgres;

--
-- Name: changes; Type: TABLE; Schema: hearth_workflows; Owner: postgres
--

CREATE TABLE hearth_workflows.changes (
    id bigint NOT NULL,
    binding_id uuid NOT NULL,
    action text NOT NULL,
    table_name text NOT NULL,
    record jsonb,
    old jsonb,
    ts double precision NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    dead boolean DEFAULT false NOT NULL
);


ALTER TABLE hearth_workflows.changes OWNER TO postgres;

--
-- Name: changes_id_seq; Type: SEQUENCE; Schema: hearth_workflows; Owner: postgres
--

CREATE SEQUENCE hearth_workflows.changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE hearth_workflows.changes_id_seq OWNER TO postgres;

--
-- Name: changes_id_seq; Type: SEQUENCE OWNED BY; Schema: hearth_workflows; Owner: postgres
--

ALTER SEQUENCE hearth_workflows.changes_id_seq OWNED BY hearth_workflows.changes.id;


--
-- Name: meta; Type: TABLE; Schema: pgmq; Owner: postgres
--

CREATE TABLE pgmq.meta (
    queue_name character varying NOT NULL,
    is_partitioned boolean NOT NULL,
    is_unlogged boolean NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE pgmq.meta OWNER TO postgres;

--
-- Name: change_seq; Type: SEQUENCE; Schema: realtime; Owner: postgres
--

CREATE SEQUENCE realtime.change_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE realtime.change_seq OWNER TO postgres;

--
-- Name: messages; Type: TABLE; Schema: realtime; Owner: hearth_<ref>_owner
--

CREATE TABLE realtime.messages (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    topic text NOT NULL,
    extension text NOT NULL,
    payload jsonb,
    event text,
    private boolean DEFAULT false,
    updated_at timestamp without time zone DEFAULT now() NOT NULL,
    inserted_at timestamp without time zone DEFAULT now() NOT NULL
);


ALTER TABLE realtime.messages OWNER TO hearth_<ref>_owner;

--
-- Name: presences; Type: TABLE; Schema: realtime; Owner: postgres
--

CREATE UNLOGGED TABLE realtime.presences (
    ref text NOT NULL,
    topic text NOT NULL,
    key text NOT NULL,
    meta jsonb NOT NULL,
    node text NOT NULL,
    seen_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE realtime.presences OWNER TO postgres;

--
-- Name: relay; Type: TABLE; Schema: realtime; Owner: postgres
--

CREATE TABLE realtime.relay (
    id bigint NOT NULL,
    body text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE realtime.relay OWNER TO postgres;

--
-- Name: relay_id_seq; Type: SEQUENCE; Schema: realtime; Owner: postgres
--

CREATE SEQUENCE realtime.relay_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE realtime.relay_id_seq OWNER TO postgres;

--
-- Name: relay_id_seq; Type: SEQUENCE OWNED BY; Schema: realtime; Owner: postgres
--

ALTER SEQUENCE realtime.relay_id_seq OWNED BY realtime.relay.id;


--
-- Name: buckets; Type: TABLE; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE TABLE storage.buckets (
    id text NOT NULL,
    name text NOT NULL,
    public boolean DEFAULT false NOT NULL,
    file_size_limit bigint,
    allowed_mime_types text[],
    owner_sub text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT buckets_file_size_limit_check CHECK ((file_size_limit > 0)),
    CONSTRAINT buckets_id_check CHECK ((id ~ '^[a-z0-9._-]{2,63}$'::text))
);


ALTER TABLE storage.buckets OWNER TO hearth_<ref>_owner;

--
-- Name: objects; Type: TABLE; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE TABLE storage.objects (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    bucket text NOT NULL,
    name text NOT NULL,
    owner_sub text,
    version uuid NOT NULL,
    size bigint NOT NULL,
    content_type text NOT NULL,
    cache_control text NOT NULL,
    content_hash text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    bucket_id text GENERATED ALWAYS AS (bucket) STORED,
    owner_id text GENERATED ALWAYS AS (owner_sub) STORED,
    owner uuid GENERATED ALWAYS AS (
CASE
    WHEN (owner_sub ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'::text) THEN (owner_sub)::uuid
    ELSE NULL::uuid
END) STORED,
    path_tokens text[] GENERATED ALWAYS AS (string_to_array(name, '/'::text)) STORED,
    CONSTRAINT objects_size_check CHECK ((size >= 0))
);


ALTER TABLE storage.objects OWNER TO hearth_<ref>_owner;

--
-- Name: pending_bytes; Type: TABLE; Schema: storage; Owner: postgres
--

CREATE TABLE storage.pending_bytes (
    version uuid NOT NULL,
    writer integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE storage.pending_bytes OWNER TO postgres;

--
-- Name: usage; Type: TABLE; Schema: storage; Owner: postgres
--

CREATE TABLE storage.usage (
    one boolean DEFAULT true NOT NULL,
    bytes bigint DEFAULT 0 NOT NULL,
    CONSTRAINT usage_one_check CHECK (one)
);


ALTER TABLE storage.usage OWNER TO postgres;

--
-- Name: hearth_deploys; Type: TABLE; Schema: supabase_migrations; Owner: hearth_<ref>_owner
--

CREATE TABLE supabase_migrations.hearth_deploys (
    kind text NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    version integer NOT NULL,
    deployed_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE supabase_migrations.hearth_deploys OWNER TO hearth_<ref>_owner;

--
-- Name: schema_migrations; Type: TABLE; Schema: supabase_migrations; Owner: hearth_<ref>_owner
--

CREATE TABLE supabase_migrations.schema_migrations (
    version text NOT NULL,
    name text NOT NULL,
    statements text[] NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE supabase_migrations.schema_migrations OWNER TO hearth_<ref>_owner;

--
-- Name: dev_mailbox id; Type: DEFAULT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.dev_mailbox ALTER COLUMN id SET DEFAULT nextval('auth.dev_mailbox_id_seq'::regclass);


--
-- Name: refresh_tokens id; Type: DEFAULT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.refresh_tokens ALTER COLUMN id SET DEFAULT nextval('auth.refresh_tokens_id_seq'::regclass);


--
-- Name: changes id; Type: DEFAULT; Schema: hearth_workflows; Owner: postgres
--

ALTER TABLE ONLY hearth_workflows.changes ALTER COLUMN id SET DEFAULT nextval('hearth_workflows.changes_id_seq'::regclass);


--
-- Name: relay id; Type: DEFAULT; Schema: realtime; Owner: postgres
--

ALTER TABLE ONLY realtime.relay ALTER COLUMN id SET DEFAULT nextval('realtime.relay_id_seq'::regclass);


--
-- Name: code_decoys code_decoys_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.code_decoys
    ADD CONSTRAINT code_decoys_pkey PRIMARY KEY (slot);


--
-- Name: dev_mailbox dev_mailbox_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.dev_mailbox
    ADD CONSTRAINT dev_mailbox_pkey PRIMARY KEY (id);


--
-- Name: flow_state flow_state_auth_code_hash_key; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.flow_state
    ADD CONSTRAINT flow_state_auth_code_hash_key UNIQUE (auth_code_hash);


--
-- Name: flow_state flow_state_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.flow_state
    ADD CONSTRAINT flow_state_pkey PRIMARY KEY (id);


--
-- Name: identities identities_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.identities
    ADD CONSTRAINT identities_pkey PRIMARY KEY (id);


--
-- Name: identities identities_provider_provider_id_key; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.identities
    ADD CONSTRAINT identities_provider_provider_id_key UNIQUE (provider, provider_id);


--
-- Name: mfa_challenges mfa_challenges_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.mfa_challenges
    ADD CONSTRAINT mfa_challenges_pkey PRIMARY KEY (id);


--
-- Name: mfa_factors mfa_factors_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.mfa_factors
    ADD CONSTRAINT mfa_factors_pkey PRIMARY KEY (id);


--
-- Name: mfa_factors mfa_factors_web_authn_credential_id_key; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.mfa_factors
    ADD CONSTRAINT mfa_factors_web_authn_credential_id_key UNIQUE (web_authn_credential_id);


--
-- Name: oauth_states oauth_states_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.oauth_states
    ADD CONSTRAINT oauth_states_pkey PRIMARY KEY (id);


--
-- Name: oauth_states oauth_states_state_hash_key; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.oauth_states
    ADD CONSTRAINT oauth_states_state_hash_key UNIQUE (state_hash);


--
-- Name: one_time_tokens one_time_tokens_link_hash_key; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_link_hash_key UNIQUE (link_hash);


--
-- Name: one_time_tokens one_time_tokens_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_pkey PRIMARY KEY (id);


--
-- Name: rate_buckets rate_buckets_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.rate_buckets
    ADD CONSTRAINT rate_buckets_pkey PRIMARY KEY (bucket, client_ip);


--
-- Name: refresh_tokens refresh_tokens_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id);


--
-- Name: refresh_tokens refresh_tokens_token_hash_key; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_token_hash_key UNIQUE (token_hash);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: users users_email_key; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.users
    ADD CONSTRAINT users_email_key UNIQUE (email);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: migrations migrations_pkey; Type: CONSTRAINT; Schema: hearth; Owner: postgres
--

ALTER TABLE ONLY hearth.migrations
    ADD CONSTRAINT migrations_pkey PRIMARY KEY (id);


--
-- Name: changes changes_pkey; Type: CONSTRAINT; Schema: hearth_workflows; Owner: postgres
--

ALTER TABLE ONLY hearth_workflows.changes
    ADD CONSTRAINT changes_pkey PRIMARY KEY (id);


--
-- Name: meta meta_queue_name_key; Type: CONSTRAINT; Schema: pgmq; Owner: postgres
--

ALTER TABLE ONLY pgmq.meta
    ADD CONSTRAINT meta_queue_name_key UNIQUE (queue_name);


--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: realtime; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY realtime.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (id);


--
-- Name: presences presences_pkey; Type: CONSTRAINT; Schema: realtime; Owner: postgres
--

ALTER TABLE ONLY realtime.presences
    ADD CONSTRAINT presences_pkey PRIMARY KEY (ref);


--
-- Name: relay relay_pkey; Type: CONSTRAINT; Schema: realtime; Owner: postgres
--

ALTER TABLE ONLY realtime.relay
    ADD CONSTRAINT relay_pkey PRIMARY KEY (id);


--
-- Name: buckets buckets_name_key; Type: CONSTRAINT; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY storage.buckets
    ADD CONSTRAINT buckets_name_key UNIQUE (name);


--
-- Name: buckets buckets_pkey; Type: CONSTRAINT; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY storage.buckets
    ADD CONSTRAINT buckets_pkey PRIMARY KEY (id);


--
-- Name: objects objects_bucket_name_key; Type: CONSTRAINT; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY storage.objects
    ADD CONSTRAINT objects_bucket_name_key UNIQUE (bucket, name);


--
-- Name: objects objects_pkey; Type: CONSTRAINT; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY storage.objects
    ADD CONSTRAINT objects_pkey PRIMARY KEY (id);


--
-- Name: objects objects_version_key; Type: CONSTRAINT; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY storage.objects
    ADD CONSTRAINT objects_version_key UNIQUE (version);


--
-- Name: pending_bytes pending_bytes_pkey; Type: CONSTRAINT; Schema: storage; Owner: postgres
--

ALTER TABLE ONLY storage.pending_bytes
    ADD CONSTRAINT pending_bytes_pkey PRIMARY KEY (version);


--
-- Name: usage usage_pkey; Type: CONSTRAINT; Schema: storage; Owner: postgres
--

ALTER TABLE ONLY storage.usage
    ADD CONSTRAINT usage_pkey PRIMARY KEY (one);


--
-- Name: hearth_deploys hearth_deploys_pkey; Type: CONSTRAINT; Schema: supabase_migrations; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY supabase_migrations.hearth_deploys
    ADD CONSTRAINT hearth_deploys_pkey PRIMARY KEY (kind, name);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: supabase_migrations; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY supabase_migrations.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: identities_user_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE INDEX identities_user_idx ON auth.identities USING btree (user_id);


--
-- Name: mfa_challenges_factor_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE INDEX mfa_challenges_factor_idx ON auth.mfa_challenges USING btree (factor_id);


--
-- Name: mfa_factors_name_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE UNIQUE INDEX mfa_factors_name_idx ON auth.mfa_factors USING btree (user_id, friendly_name) WHERE (friendly_name IS NOT NULL);


--
-- Name: mfa_factors_user_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE INDEX mfa_factors_user_idx ON auth.mfa_factors USING btree (user_id);


--
-- Name: one_time_tokens_active_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE INDEX one_time_tokens_active_idx ON auth.one_time_tokens USING btree (user_id, purpose) WHERE (consumed_at IS NULL);


--
-- Name: rate_buckets_tat_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE INDEX rate_buckets_tat_idx ON auth.rate_buckets USING btree (tat);


--
-- Name: refresh_tokens_session_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE INDEX refresh_tokens_session_idx ON auth.refresh_tokens USING btree (session_id);


--
-- Name: sessions_user_idx; Type: INDEX; Schema: auth; Owner: postgres
--

CREATE INDEX sessions_user_idx ON auth.sessions USING btree (user_id);


--
-- Name: changes_live; Type: INDEX; Schema: hearth_workflows; Owner: postgres
--

CREATE INDEX changes_live ON hearth_workflows.changes USING btree (id) WHERE (NOT dead);


--
-- Name: messages_inserted_at; Type: INDEX; Schema: realtime; Owner: hearth_<ref>_owner
--

CREATE INDEX messages_inserted_at ON realtime.messages USING btree (inserted_at);


--
-- Name: presences_node; Type: INDEX; Schema: realtime; Owner: postgres
--

CREATE INDEX presences_node ON realtime.presences USING btree (node);


--
-- Name: presences_topic; Type: INDEX; Schema: realtime; Owner: postgres
--

CREATE INDEX presences_topic ON realtime.presences USING btree (topic);


--
-- Name: relay_created_at; Type: INDEX; Schema: realtime; Owner: postgres
--

CREATE INDEX relay_created_at ON realtime.relay USING btree (created_at);


--
-- Name: objects_bucket_name_c; Type: INDEX; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE INDEX objects_bucket_name_c ON storage.objects USING btree (bucket, name COLLATE "C");


--
-- Name: pending_bytes_writer; Type: INDEX; Schema: storage; Owner: postgres
--

CREATE INDEX pending_bytes_writer ON storage.pending_bytes USING btree (writer);


--
-- Name: messages relay_broadcast; Type: TRIGGER; Schema: realtime; Owner: hearth_<ref>_owner
--

CREATE TRIGGER relay_broadcast AFTER INSERT ON realtime.messages FOR EACH ROW WHEN (((new.extension = 'broadcast'::text) AND (new.event IS NOT NULL))) EXECUTE FUNCTION realtime.messages_relay();


--
-- Name: objects a_set_owner; Type: TRIGGER; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE TRIGGER a_set_owner BEFORE INSERT OR UPDATE ON storage.objects FOR EACH ROW EXECUTE FUNCTION storage.objects_set_owner();


--
-- Name: objects b_claim_bytes; Type: TRIGGER; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE TRIGGER b_claim_bytes BEFORE INSERT ON storage.objects FOR EACH ROW EXECUTE FUNCTION storage.objects_claim_bytes();


--
-- Name: objects usage_delete; Type: TRIGGER; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE TRIGGER usage_delete AFTER DELETE ON storage.objects REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION storage.objects_after_delete();


--
-- Name: objects usage_insert; Type: TRIGGER; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE TRIGGER usage_insert AFTER INSERT ON storage.objects REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION storage.objects_after_insert();


--
-- Name: objects usage_update; Type: TRIGGER; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE TRIGGER usage_update AFTER UPDATE ON storage.objects REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION storage.objects_after_update();


--
-- Name: usage within_quota; Type: TRIGGER; Schema: storage; Owner: postgres
--

CREATE CONSTRAINT TRIGGER within_quota AFTER UPDATE ON storage.usage DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storage.usage_within_quota();


--
-- Name: flow_state flow_state_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.flow_state
    ADD CONSTRAINT flow_state_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: identities identities_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.identities
    ADD CONSTRAINT identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: mfa_challenges mfa_challenges_factor_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.mfa_challenges
    ADD CONSTRAINT mfa_challenges_factor_id_fkey FOREIGN KEY (factor_id) REFERENCES auth.mfa_factors(id) ON DELETE CASCADE;


--
-- Name: mfa_factors mfa_factors_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.mfa_factors
    ADD CONSTRAINT mfa_factors_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: oauth_states oauth_states_link_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.oauth_states
    ADD CONSTRAINT oauth_states_link_user_id_fkey FOREIGN KEY (link_user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: one_time_tokens one_time_tokens_flow_state_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_flow_state_id_fkey FOREIGN KEY (flow_state_id) REFERENCES auth.flow_state(id) ON DELETE SET NULL;


--
-- Name: one_time_tokens one_time_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: refresh_tokens refresh_tokens_session_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES auth.sessions(id) ON DELETE CASCADE;


--
-- Name: refresh_tokens refresh_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: postgres
--

ALTER TABLE ONLY auth.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: objects objects_bucket_fkey; Type: FK CONSTRAINT; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE ONLY storage.objects
    ADD CONSTRAINT objects_bucket_fkey FOREIGN KEY (bucket) REFERENCES storage.buckets(id);


--
-- Name: messages; Type: ROW SECURITY; Schema: realtime; Owner: hearth_<ref>_owner
--

ALTER TABLE realtime.messages ENABLE ROW LEVEL SECURITY;

--
-- Name: buckets; Type: ROW SECURITY; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE storage.buckets ENABLE ROW LEVEL SECURITY;

--
-- Name: objects; Type: ROW SECURITY; Schema: storage; Owner: hearth_<ref>_owner
--

ALTER TABLE storage.objects ENABLE ROW LEVEL SECURITY;

--
-- Name: objects read objects of public buckets; Type: POLICY; Schema: storage; Owner: hearth_<ref>_owner
--

CREATE POLICY "read objects of public buckets" ON storage.objects FOR SELECT USING (storage.bucket_is_public(bucket));


--
-- Name: supabase_realtime; Type: PUBLICATION; Schema: -; Owner: hearth_<ref>_owner
--

CREATE PUBLICATION supabase_realtime WITH (publish = 'insert, update, delete, truncate');


ALTER PUBLICATION supabase_realtime OWNER TO hearth_<ref>_owner;

--
-- Name: SCHEMA auth; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA auth TO anon;
GRANT USAGE ON SCHEMA auth TO authenticated;
GRANT USAGE ON SCHEMA auth TO service_role;
GRANT USAGE ON SCHEMA auth TO hearth_<ref>_owner;


--
-- Name: SCHEMA extensions; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA extensions TO anon;
GRANT USAGE ON SCHEMA extensions TO authenticated;
GRANT USAGE ON SCHEMA extensions TO service_role;
GRANT USAGE ON SCHEMA extensions TO hearth_<ref>_owner;


--
-- Name: SCHEMA pgmq; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA pgmq TO hearth_<ref>_owner;
GRANT USAGE ON SCHEMA pgmq TO anon;
GRANT USAGE ON SCHEMA pgmq TO authenticated;
GRANT USAGE ON SCHEMA pgmq TO service_role;


--
-- Name: SCHEMA pgmq_public; Type: ACL; Schema: -; Owner: hearth_<ref>_owner
--

REVOKE ALL ON SCHEMA pgmq_public FROM hearth_<ref>_owner;
GRANT CREATE ON SCHEMA pgmq_public TO hearth_<ref>_owner;
GRANT USAGE ON SCHEMA pgmq_public TO hearth_<ref>_owner WITH GRANT OPTION;
GRANT USAGE ON SCHEMA pgmq_public TO service_role;


--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: hearth_<ref>_owner
--

GRANT USAGE ON SCHEMA public TO anon;
GRANT USAGE ON SCHEMA public TO authenticated;
GRANT USAGE ON SCHEMA public TO service_role;


--
-- Name: SCHEMA realtime; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA realtime TO anon;
GRANT USAGE ON SCHEMA realtime TO authenticated;
GRANT USAGE ON SCHEMA realtime TO service_role;
GRANT USAGE ON SCHEMA realtime TO hearth_<ref>_owner;


--
-- Name: SCHEMA storage; Type: ACL; Schema: -; Owner: postgres
--

GRANT USAGE ON SCHEMA storage TO anon;
GRANT USAGE ON SCHEMA storage TO authenticated;
GRANT USAGE ON SCHEMA storage TO service_role;
GRANT USAGE ON SCHEMA storage TO hearth_<ref>_owner;


--
-- Name: FUNCTION email(); Type: ACL; Schema: auth; Owner: postgres
--

GRANT ALL ON FUNCTION auth.email() TO anon;
GRANT ALL ON FUNCTION auth.email() TO authenticated;
GRANT ALL ON FUNCTION auth.email() TO service_role;
GRANT ALL ON FUNCTION auth.email() TO hearth_<ref>_owner;


--
-- Name: FUNCTION jwt(); Type: ACL; Schema: auth; Owner: postgres
--

GRANT ALL ON FUNCTION auth.jwt() TO anon;
GRANT ALL ON FUNCTION auth.jwt() TO authenticated;
GRANT ALL ON FUNCTION auth.jwt() TO service_role;
GRANT ALL ON FUNCTION auth.jwt() TO hearth_<ref>_owner;


--
-- Name: FUNCTION role(); Type: ACL; Schema: auth; Owner: postgres
--

GRANT ALL ON FUNCTION auth.role() TO anon;
GRANT ALL ON FUNCTION auth.role() TO authenticated;
GRANT ALL ON FUNCTION auth.role() TO service_role;
GRANT ALL ON FUNCTION auth.role() TO hearth_<ref>_owner;


--
-- Name: FUNCTION uid(); Type: ACL; Schema: auth; Owner: postgres
--

GRANT ALL ON FUNCTION auth.uid() TO anon;
GRANT ALL ON FUNCTION auth.uid() TO authenticated;
GRANT ALL ON FUNCTION auth.uid() TO service_role;
GRANT ALL ON FUNCTION auth.uid() TO hearth_<ref>_owner;


--
-- Name: FUNCTION hearth_rest_schema_changed(); Type: ACL; Schema: extensions; Owner: postgres
--

REVOKE ALL ON FUNCTION extensions.hearth_rest_schema_changed() FROM PUBLIC;


--
-- Name: FUNCTION capture(); Type: ACL; Schema: hearth_workflows; Owner: postgres
--

REVOKE ALL ON FUNCTION hearth_workflows.capture() FROM PUBLIC;


--
-- Name: FUNCTION _after(seconds integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq._after(seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._after(seconds integer) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq._after(seconds integer) TO anon;
GRANT ALL ON FUNCTION pgmq._after(seconds integer) TO authenticated;
GRANT ALL ON FUNCTION pgmq._after(seconds integer) TO service_role;


--
-- Name: FUNCTION _create(queue_name text, unlogged boolean); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq._create(queue_name text, unlogged boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._create(queue_name text, unlogged boolean) TO hearth_<ref>_owner;


--
-- Name: FUNCTION _queue_functions(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq._queue_functions(queue_name text) FROM PUBLIC;


--
-- Name: FUNCTION _queue_table(queue_name text, kind text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq._queue_table(queue_name text, kind text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._queue_table(queue_name text, kind text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq._queue_table(queue_name text, kind text) TO anon;
GRANT ALL ON FUNCTION pgmq._queue_table(queue_name text, kind text) TO authenticated;
GRANT ALL ON FUNCTION pgmq._queue_table(queue_name text, kind text) TO service_role;


--
-- Name: FUNCTION _send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone) TO anon;
GRANT ALL ON FUNCTION pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone) TO authenticated;
GRANT ALL ON FUNCTION pgmq._send(queue_name text, msg jsonb, headers jsonb, vt timestamp with time zone) TO service_role;


--
-- Name: FUNCTION _table(queue_name text, kind text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq._table(queue_name text, kind text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._table(queue_name text, kind text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq._table(queue_name text, kind text) TO anon;
GRANT ALL ON FUNCTION pgmq._table(queue_name text, kind text) TO authenticated;
GRANT ALL ON FUNCTION pgmq._table(queue_name text, kind text) TO service_role;


--
-- Name: FUNCTION _visible_after(seconds integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq._visible_after(seconds integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq._visible_after(seconds integer) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq._visible_after(seconds integer) TO anon;
GRANT ALL ON FUNCTION pgmq._visible_after(seconds integer) TO authenticated;
GRANT ALL ON FUNCTION pgmq._visible_after(seconds integer) TO service_role;


--
-- Name: FUNCTION archive(queue_name text, msg_ids bigint[]); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) TO anon;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) TO authenticated;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_ids bigint[]) TO service_role;


--
-- Name: FUNCTION archive(queue_name text, msg_id bigint); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.archive(queue_name text, msg_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_id bigint) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_id bigint) TO anon;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_id bigint) TO authenticated;
GRANT ALL ON FUNCTION pgmq.archive(queue_name text, msg_id bigint) TO service_role;


--
-- Name: FUNCTION convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text, retention_interval text, leading_partition integer) TO hearth_<ref>_owner;


--
-- Name: FUNCTION "create"(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq."create"(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq."create"(queue_name text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION create_non_partitioned(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.create_non_partitioned(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_non_partitioned(queue_name text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION create_partitioned(queue_name text, partition_interval text, retention_interval text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text, retention_interval text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text, retention_interval text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION create_unlogged(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.create_unlogged(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.create_unlogged(queue_name text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION delete(queue_name text, msg_ids bigint[]); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) TO anon;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) TO authenticated;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_ids bigint[]) TO service_role;


--
-- Name: FUNCTION delete(queue_name text, msg_id bigint); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.delete(queue_name text, msg_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_id bigint) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_id bigint) TO anon;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_id bigint) TO authenticated;
GRANT ALL ON FUNCTION pgmq.delete(queue_name text, msg_id bigint) TO service_role;


--
-- Name: FUNCTION detach_archive(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.detach_archive(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.detach_archive(queue_name text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.detach_archive(queue_name text) TO service_role;


--
-- Name: FUNCTION drop_queue(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.drop_queue(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.drop_queue(queue_name text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION drop_queue(queue_name text, partitioned boolean); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean) TO hearth_<ref>_owner;


--
-- Name: FUNCTION format_table_name(queue_name text, prefix text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.format_table_name(queue_name text, prefix text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.format_table_name(queue_name text, prefix text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.format_table_name(queue_name text, prefix text) TO anon;
GRANT ALL ON FUNCTION pgmq.format_table_name(queue_name text, prefix text) TO authenticated;
GRANT ALL ON FUNCTION pgmq.format_table_name(queue_name text, prefix text) TO service_role;


--
-- Name: FUNCTION list_queues(); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.list_queues() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.list_queues() TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.list_queues() TO service_role;


--
-- Name: FUNCTION metrics(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.metrics(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.metrics(queue_name text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.metrics(queue_name text) TO service_role;


--
-- Name: FUNCTION metrics_all(); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.metrics_all() FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.metrics_all() TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.metrics_all() TO service_role;


--
-- Name: FUNCTION pop(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.pop(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.pop(queue_name text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.pop(queue_name text) TO anon;
GRANT ALL ON FUNCTION pgmq.pop(queue_name text) TO authenticated;
GRANT ALL ON FUNCTION pgmq.pop(queue_name text) TO service_role;


--
-- Name: FUNCTION purge_queue(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.purge_queue(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.purge_queue(queue_name text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.purge_queue(queue_name text) TO service_role;


--
-- Name: FUNCTION read(queue_name text, vt integer, qty integer, conditional jsonb); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) TO anon;
GRANT ALL ON FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) TO authenticated;
GRANT ALL ON FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb) TO service_role;


--
-- Name: FUNCTION read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) TO anon;
GRANT ALL ON FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) TO authenticated;
GRANT ALL ON FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, conditional jsonb) TO service_role;


--
-- Name: FUNCTION send(queue_name text, msg jsonb, delay integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) TO anon;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer) TO service_role;


--
-- Name: FUNCTION send(queue_name text, msg jsonb, headers jsonb); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) TO anon;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb) TO service_role;


--
-- Name: FUNCTION send(queue_name text, msg jsonb, delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) TO anon;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamp with time zone) TO service_role;


--
-- Name: FUNCTION send(queue_name text, msg jsonb, headers jsonb, delay integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) TO anon;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer) TO service_role;


--
-- Name: FUNCTION send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) TO anon;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone) TO service_role;


--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], headers jsonb[]); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) TO anon;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[]) TO service_role;


--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], delay integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) TO anon;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer) TO service_role;


--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) TO anon;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamp with time zone) TO service_role;


--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) TO anon;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer) TO service_role;


--
-- Name: FUNCTION send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) TO anon;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) TO authenticated;
GRANT ALL ON FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone) TO service_role;


--
-- Name: FUNCTION set_vt(queue_name text, msg_id bigint, vt integer); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) TO anon;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) TO authenticated;
GRANT ALL ON FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer) TO service_role;


--
-- Name: FUNCTION validate_queue_name(queue_name text); Type: ACL; Schema: pgmq; Owner: postgres
--

REVOKE ALL ON FUNCTION pgmq.validate_queue_name(queue_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION pgmq.validate_queue_name(queue_name text) TO hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq.validate_queue_name(queue_name text) TO anon;
GRANT ALL ON FUNCTION pgmq.validate_queue_name(queue_name text) TO authenticated;
GRANT ALL ON FUNCTION pgmq.validate_queue_name(queue_name text) TO service_role;


--
-- Name: FUNCTION archive(queue_name text, message_id bigint); Type: ACL; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

REVOKE ALL ON FUNCTION pgmq_public.archive(queue_name text, message_id bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION pgmq_public.archive(queue_name text, message_id bigint) FROM hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq_public.archive(queue_name text, message_id bigint) TO hearth_<ref>_owner WITH GRANT OPTION;
GRANT ALL ON FUNCTION pgmq_public.archive(queue_name text, message_id bigint) TO service_role;


--
-- Name: FUNCTION delete(queue_name text, message_id bigint); Type: ACL; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

REVOKE ALL ON FUNCTION pgmq_public.delete(queue_name text, message_id bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION pgmq_public.delete(queue_name text, message_id bigint) FROM hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq_public.delete(queue_name text, message_id bigint) TO hearth_<ref>_owner WITH GRANT OPTION;
GRANT ALL ON FUNCTION pgmq_public.delete(queue_name text, message_id bigint) TO service_role;


--
-- Name: FUNCTION pop(queue_name text); Type: ACL; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

REVOKE ALL ON FUNCTION pgmq_public.pop(queue_name text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pgmq_public.pop(queue_name text) FROM hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq_public.pop(queue_name text) TO hearth_<ref>_owner WITH GRANT OPTION;
GRANT ALL ON FUNCTION pgmq_public.pop(queue_name text) TO service_role;


--
-- Name: FUNCTION read(queue_name text, sleep_seconds integer, n integer); Type: ACL; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

REVOKE ALL ON FUNCTION pgmq_public.read(queue_name text, sleep_seconds integer, n integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION pgmq_public.read(queue_name text, sleep_seconds integer, n integer) FROM hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq_public.read(queue_name text, sleep_seconds integer, n integer) TO hearth_<ref>_owner WITH GRANT OPTION;
GRANT ALL ON FUNCTION pgmq_public.read(queue_name text, sleep_seconds integer, n integer) TO service_role;


--
-- Name: FUNCTION send(queue_name text, message jsonb, sleep_seconds integer); Type: ACL; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

REVOKE ALL ON FUNCTION pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer) FROM hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer) TO hearth_<ref>_owner WITH GRANT OPTION;
GRANT ALL ON FUNCTION pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer) TO service_role;


--
-- Name: FUNCTION send_batch(queue_name text, messages jsonb[], sleep_seconds integer); Type: ACL; Schema: pgmq_public; Owner: hearth_<ref>_owner
--

REVOKE ALL ON FUNCTION pgmq_public.send_batch(queue_name text, messages jsonb[], sleep_seconds integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION pgmq_public.send_batch(queue_name text, messages jsonb[], sleep_seconds integer) FROM hearth_<ref>_owner;
GRANT ALL ON FUNCTION pgmq_public.send_batch(queue_name text, messages jsonb[], sleep_seconds integer) TO hearth_<ref>_owner WITH GRANT OPTION;
GRANT ALL ON FUNCTION pgmq_public.send_batch(queue_name text, messages jsonb[], sleep_seconds integer) TO service_role;


--
-- Name: FUNCTION broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text); Type: ACL; Schema: realtime; Owner: postgres
--

GRANT ALL ON FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) TO anon;
GRANT ALL ON FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) TO authenticated;
GRANT ALL ON FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) TO service_role;
GRANT ALL ON FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION capture_changes(); Type: ACL; Schema: realtime; Owner: postgres
--

REVOKE ALL ON FUNCTION realtime.capture_changes() FROM PUBLIC;


--
-- Name: FUNCTION messages_relay(); Type: ACL; Schema: realtime; Owner: postgres
--

REVOKE ALL ON FUNCTION realtime.messages_relay() FROM PUBLIC;


--
-- Name: FUNCTION relay_send(body text); Type: ACL; Schema: realtime; Owner: postgres
--

REVOKE ALL ON FUNCTION realtime.relay_send(body text) FROM PUBLIC;


--
-- Name: FUNCTION send(payload jsonb, event text, topic text, private boolean); Type: ACL; Schema: realtime; Owner: postgres
--

GRANT ALL ON FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) TO anon;
GRANT ALL ON FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) TO authenticated;
GRANT ALL ON FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) TO service_role;
GRANT ALL ON FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) TO hearth_<ref>_owner;


--
-- Name: FUNCTION sync_capture(); Type: ACL; Schema: realtime; Owner: postgres
--

REVOKE ALL ON FUNCTION realtime.sync_capture() FROM PUBLIC;


--
-- Name: FUNCTION sync_capture_on_ddl(); Type: ACL; Schema: realtime; Owner: postgres
--

REVOKE ALL ON FUNCTION realtime.sync_capture_on_ddl() FROM PUBLIC;


--
-- Name: FUNCTION topic(); Type: ACL; Schema: realtime; Owner: postgres
--

GRANT ALL ON FUNCTION realtime.topic() TO anon;
GRANT ALL ON FUNCTION realtime.topic() TO authenticated;
GRANT ALL ON FUNCTION realtime.topic() TO service_role;
GRANT ALL ON FUNCTION realtime.topic() TO hearth_<ref>_owner;


--
-- Name: FUNCTION visible_to(check_sql text, pk jsonb, subscribers jsonb); Type: ACL; Schema: realtime; Owner: postgres
--

REVOKE ALL ON FUNCTION realtime.visible_to(check_sql text, pk jsonb, subscribers jsonb) FROM PUBLIC;


--
-- Name: FUNCTION bucket_is_public(bucket text); Type: ACL; Schema: storage; Owner: postgres
--

REVOKE ALL ON FUNCTION storage.bucket_is_public(bucket text) FROM PUBLIC;
GRANT ALL ON FUNCTION storage.bucket_is_public(bucket text) TO anon;
GRANT ALL ON FUNCTION storage.bucket_is_public(bucket text) TO authenticated;
GRANT ALL ON FUNCTION storage.bucket_is_public(bucket text) TO service_role;
GRANT ALL ON FUNCTION storage.bucket_is_public(bucket text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION extension(name text); Type: ACL; Schema: storage; Owner: postgres
--

GRANT ALL ON FUNCTION storage.extension(name text) TO anon;
GRANT ALL ON FUNCTION storage.extension(name text) TO authenticated;
GRANT ALL ON FUNCTION storage.extension(name text) TO service_role;
GRANT ALL ON FUNCTION storage.extension(name text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION filename(name text); Type: ACL; Schema: storage; Owner: postgres
--

GRANT ALL ON FUNCTION storage.filename(name text) TO anon;
GRANT ALL ON FUNCTION storage.filename(name text) TO authenticated;
GRANT ALL ON FUNCTION storage.filename(name text) TO service_role;
GRANT ALL ON FUNCTION storage.filename(name text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION foldername(name text); Type: ACL; Schema: storage; Owner: postgres
--

GRANT ALL ON FUNCTION storage.foldername(name text) TO anon;
GRANT ALL ON FUNCTION storage.foldername(name text) TO authenticated;
GRANT ALL ON FUNCTION storage.foldername(name text) TO service_role;
GRANT ALL ON FUNCTION storage.foldername(name text) TO hearth_<ref>_owner;


--
-- Name: FUNCTION objects_after_delete(); Type: ACL; Schema: storage; Owner: postgres
--

REVOKE ALL ON FUNCTION storage.objects_after_delete() FROM PUBLIC;


--
-- Name: FUNCTION objects_after_insert(); Type: ACL; Schema: storage; Owner: postgres
--

REVOKE ALL ON FUNCTION storage.objects_after_insert() FROM PUBLIC;


--
-- Name: FUNCTION objects_after_update(); Type: ACL; Schema: storage; Owner: postgres
--

REVOKE ALL ON FUNCTION storage.objects_after_update() FROM PUBLIC;


--
-- Name: FUNCTION objects_claim_bytes(); Type: ACL; Schema: storage; Owner: postgres
--

REVOKE ALL ON FUNCTION storage.objects_claim_bytes() FROM PUBLIC;


--
-- Name: FUNCTION objects_set_owner(); Type: ACL; Schema: storage; Owner: postgres
--

REVOKE ALL ON FUNCTION storage.objects_set_owner() FROM PUBLIC;


--
-- Name: FUNCTION usage_within_quota(); Type: ACL; Schema: storage; Owner: postgres
--

REVOKE ALL ON FUNCTION storage.usage_within_quota() FROM PUBLIC;


--
-- Name: TABLE users; Type: ACL; Schema: auth; Owner: postgres
--

GRANT TRIGGER ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.id; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(id),REFERENCES(id) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.email; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(email) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.email_confirmed_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(email_confirmed_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.email_change; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(email_change) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.is_anonymous; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(is_anonymous) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.raw_user_meta_data; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(raw_user_meta_data) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.raw_app_meta_data; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(raw_app_meta_data) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.last_sign_in_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(last_sign_in_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.created_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(created_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.updated_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(updated_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.banned_until; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(banned_until) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.invited_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(invited_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.deleted_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(deleted_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.instance_id; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(instance_id) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.aud; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(aud) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.role; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(role) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.phone; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(phone) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.phone_confirmed_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(phone_confirmed_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.confirmation_sent_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(confirmation_sent_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.confirmed_at; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(confirmed_at) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: COLUMN users.is_sso_user; Type: ACL; Schema: auth; Owner: postgres
--

GRANT SELECT(is_sso_user) ON TABLE auth.users TO hearth_<ref>_owner;


--
-- Name: TABLE meta; Type: ACL; Schema: pgmq; Owner: postgres
--

GRANT SELECT ON TABLE pgmq.meta TO hearth_<ref>_owner;
GRANT SELECT ON TABLE pgmq.meta TO service_role;


--
-- Name: TABLE messages; Type: ACL; Schema: realtime; Owner: hearth_<ref>_owner
--

GRANT SELECT,INSERT,UPDATE ON TABLE realtime.messages TO anon;
GRANT SELECT,INSERT,UPDATE ON TABLE realtime.messages TO authenticated;
GRANT SELECT,INSERT,UPDATE ON TABLE realtime.messages TO service_role;


--
-- Name: TABLE buckets; Type: ACL; Schema: storage; Owner: hearth_<ref>_owner
--

GRANT SELECT ON TABLE storage.buckets TO anon;
GRANT SELECT ON TABLE storage.buckets TO authenticated;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.buckets TO service_role;


--
-- Name: TABLE objects; Type: ACL; Schema: storage; Owner: hearth_<ref>_owner
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.objects TO anon;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.objects TO authenticated;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.objects TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR SEQUENCES; Type: DEFAULT ACL; Schema: public; Owner: hearth_<ref>_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON SEQUENCES  TO anon;
ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON SEQUENCES  TO authenticated;
ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON SEQUENCES  TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: public; Owner: hearth_<ref>_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON FUNCTIONS  TO anon;
ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON FUNCTIONS  TO authenticated;
ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON FUNCTIONS  TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: public; Owner: hearth_<ref>_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON TABLES  TO anon;
ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON TABLES  TO authenticated;
ALTER DEFAULT PRIVILEGES FOR ROLE hearth_<ref>_owner IN SCHEMA public GRANT ALL ON TABLES  TO service_role;


--
-- Name: hearth_rest_ddl_end; Type: EVENT TRIGGER; Schema: -; Owner: postgres
--

CREATE EVENT TRIGGER hearth_rest_ddl_end ON ddl_command_end
   EXECUTE FUNCTION extensions.hearth_rest_schema_changed();


ALTER EVENT TRIGGER hearth_rest_ddl_end OWNER TO postgres;

--
-- Name: realtime_sync_capture; Type: EVENT TRIGGER; Schema: -; Owner: postgres
--

CREATE EVENT TRIGGER realtime_sync_capture ON ddl_command_end
   EXECUTE FUNCTION realtime.sync_capture_on_ddl();


ALTER EVENT TRIGGER realtime_sync_capture OWNER TO postgres;

--
-- PostgreSQL database dump complete
--


