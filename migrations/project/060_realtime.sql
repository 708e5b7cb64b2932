-- Realtime (docs/realtime.md): the `supabase_realtime` publication a table joins to
-- send its changes, the capture triggers kept in step with it, realtime.messages
-- (broadcasts from SQL, and the rows private-channel policies are written on),
-- realtime.send(), realtime.broadcast_changes(), realtime.topic(), presence rows
-- shared by every Hearth process, and the RLS check run as each subscriber.
-- Every Hearth process LISTENs on the channel `hearth_realtime` of the project
-- database; notifications carry JSON (see src/realtime/relay.ts).

create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated, service_role, "{{owner}}";

-- The owner role owns the publication, so migrations written for Supabase
-- (`alter publication supabase_realtime add table messages`) run unchanged on the
-- direct SQL connection. (Run as a superuser, the owner change needs no CREATE on the database.)
do $$
begin
  if not exists (select 1 from pg_publication where pubname = 'supabase_realtime') then
    create publication supabase_realtime;
  end if;
end $$;
alter publication supabase_realtime owner to "{{owner}}";

-- Broadcasts sent from SQL and the probe rows of private-channel checks. Rows are
-- a relay, not a history: Hearth deletes them after 10 minutes.
create table if not exists realtime.messages (
  id uuid primary key default gen_random_uuid(),
  topic text not null,
  extension text not null,
  payload jsonb,
  event text,
  private boolean default false,
  updated_at timestamp not null default now(),
  inserted_at timestamp not null default now()
);
create index if not exists messages_inserted_at on realtime.messages (inserted_at);
alter table realtime.messages enable row level security;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;
-- The owner (the direct SQL connection, like Supabase's postgres role) writes the
-- policies of private channels, and as the table's owner is not bound by them.
alter table realtime.messages owner to "{{owner}}";

-- The channel topic a policy on realtime.messages is checked for.
create or replace function realtime.topic() returns text
language sql stable
as $$ select nullif(current_setting('realtime.topic', true), '')::text $$;
grant execute on function realtime.topic() to anon, authenticated, service_role, "{{owner}}";

-- A change or message too large for one NOTIFY (8000 bytes) waits here for the
-- processes to read it by id; deleted after 10 minutes like realtime.messages.
create table if not exists realtime.relay (
  id bigserial primary key,
  body text not null,
  created_at timestamptz not null default now()
);
create index if not exists relay_created_at on realtime.relay (created_at);
revoke all on realtime.relay from public;

-- Sends one relay body (JSON text) to every Hearth process.
create or replace function realtime.relay_send(body text) returns void
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
declare rid bigint;
begin
  if octet_length(body) <= 7900 then
    perform pg_notify('hearth_realtime', body);
  else
    insert into realtime.relay (body) values (body) returning id into rid;
    perform pg_notify('hearth_realtime', json_build_object('k', 'r', 'id', rid)::text);
  end if;
end $$;
revoke all on function realtime.relay_send(text) from public;

-- A broadcast from SQL: the row is checked against the INSERT policies of
-- realtime.messages (for private topics) and relayed to the topic's subscribers on commit.
create or replace function realtime.send(payload jsonb, event text, topic text, private boolean default true) returns void
language plpgsql
as $$
begin
  begin
    perform set_config('realtime.topic', topic, true);
    insert into realtime.messages (payload, event, topic, private, extension)
      values (payload, event, topic, private, 'broadcast');
  exception when others then
    raise warning 'WarnSendingBroadcastMessage: %', sqlerrm;
  end;
end $$;
grant execute on function realtime.send(jsonb, text, text, boolean) to anon, authenticated, service_role, "{{owner}}";

create or replace function realtime.messages_relay() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
begin
  perform realtime.relay_send(json_build_object('k', 'b', 'topic', new.topic, 'event', new.event,
    'payload', new.payload, 'private', coalesce(new.private, false))::text);
  return null;
end $$;
revoke all on function realtime.messages_relay() from public;

-- Probe rows written by private-channel checks carry no event and are never relayed.
drop trigger if exists relay_broadcast on realtime.messages;
create trigger relay_broadcast after insert on realtime.messages
  for each row when (new.extension = 'broadcast' and new.event is not null)
  execute function realtime.messages_relay();

-- Supabase's trigger helper: `perform realtime.broadcast_changes('topic:' || new.id, tg_op, tg_op,
-- tg_table_name, tg_table_schema, new, old)` in a row trigger.
create or replace function realtime.broadcast_changes(topic_name text, event_name text, operation text,
  table_name text, table_schema text, new record, old record, level text default 'ROW') returns void
language plpgsql
as $$
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
grant execute on function realtime.broadcast_changes(text, text, text, text, text, record, record, text)
  to anon, authenticated, service_role, "{{owner}}";

-- Numbers each captured change: NOTIFY drops a payload identical to an earlier
-- one of the same transaction, and two equal rows must stay two changes.
create sequence if not exists realtime.change_seq;
revoke all on realtime.change_seq from public;

-- Change capture on published tables: one statement-level trigger per operation,
-- reading the statement's transition tables, one relay body per row. Rows are sent
-- whole (old rows too); what a subscriber sees is cut down in Hearth (docs/realtime.md).
create or replace function realtime.capture_changes() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
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
revoke all on function realtime.capture_changes() from public;

-- Keeps the capture triggers on exactly the tables of the publication (also
-- FOR ALL TABLES / TABLES IN SCHEMA forms); run after every DDL command.
create or replace function realtime.sync_capture() returns void
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
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
revoke all on function realtime.sync_capture() from public;

create or replace function realtime.sync_capture_on_ddl() returns event_trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
begin
  -- (A new table joins a FOR ALL TABLES or TABLES IN SCHEMA publication by itself.)
  if tg_tag in ('ALTER PUBLICATION', 'CREATE PUBLICATION', 'DROP PUBLICATION', 'CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO') then
    perform realtime.sync_capture();
  end if;
end $$;
revoke all on function realtime.sync_capture_on_ddl() from public;

drop event trigger if exists realtime_sync_capture;
create event trigger realtime_sync_capture on ddl_command_end
  execute function realtime.sync_capture_on_ddl();

-- Presence of every Hearth process, so a join on any process sees everyone
-- (unlogged: it is rebuilt by the clients' own reconnects after a crash).
create unlogged table if not exists realtime.presences (
  ref text primary key,
  topic text not null,
  key text not null,
  meta jsonb not null,
  node text not null,
  seen_at timestamptz not null default now()
);
create index if not exists presences_topic on realtime.presences (topic);
create index if not exists presences_node on realtime.presences (node);
revoke all on realtime.presences from public;

-- Which of the given subscribers (a JSON array of claim sets, each with a role) may
-- select the changed row: one call per change for all its subscribers, answering
-- their 1-based positions. check_sql is built by Hearth (quoted identifiers) and
-- takes the primary key as $1 (JSON).
create or replace function realtime.visible_to(check_sql text, pk jsonb, subscribers jsonb) returns int[]
language plpgsql
as $$
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
revoke all on function realtime.visible_to(text, jsonb, jsonb) from public;
