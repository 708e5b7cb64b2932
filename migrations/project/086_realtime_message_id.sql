-- Broadcasts sent from SQL (realtime.send, realtime.broadcast_changes) carry the id
-- of their realtime.messages row, which subscribers receive as the message's
-- `meta: {id}`, as Supabase Realtime sends it (docs/realtime.md, Broadcast).
create or replace function realtime.messages_relay() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
begin
  perform realtime.relay_send(json_build_object('k', 'b', 'topic', new.topic, 'event', new.event,
    'payload', new.payload, 'private', coalesce(new.private, false), 'id', new.id)::text);
  return null;
end $$;
revoke all on function realtime.messages_relay() from public;
