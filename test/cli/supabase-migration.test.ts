/**
 * A migration written for a Supabase project, as Supabase's guides write one,
 * pushed with `hearth db push` unchanged: extensions in the extensions schema
 * called unqualified (uuid_generate_v4, moddatetime), the handle_new_user
 * trigger on auth.users, a bucket inserted in SQL with policies on
 * storage.objects by bucket_id, a table added to supabase_realtime. Then the
 * app uses it through supabase-js.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { HANDLE_NEW_USER } from '../helpers/supabase-guides.ts';
import { remoteEnv, runHearth } from './run.ts';

let th: TestHearth;
const app = mkdtempSync(path.join(tmpdir(), 'hearth-supabase-app-'));
before(async () => {
  th = await startTestHearth();
});
after(async () => {
  await th.close();
  rmSync(app, { recursive: true, force: true });
});

const MIGRATION = `create extension if not exists "uuid-ossp" with schema extensions;
create extension if not exists moddatetime schema extensions;

create table public.profiles (
  id uuid references auth.users on delete cascade not null primary key,
  updated_at timestamp with time zone,
  full_name text,
  avatar_url text
);
alter table public.profiles enable row level security;
create policy "Public profiles are viewable by everyone." on profiles for select using (true);
create policy "Users can update own profile." on profiles for update using ((select auth.uid()) = id);

${HANDLE_NEW_USER}
create table public.todos (
  id uuid default uuid_generate_v4() primary key,
  user_id uuid references auth.users not null default auth.uid(),
  task text not null,
  updated_at timestamptz not null default now()
);
alter table public.todos enable row level security;
create policy "Own todos" on todos for all to authenticated
  using ((select auth.uid()) = user_id) with check ((select auth.uid()) = user_id);
create trigger handle_updated_at before update on todos
  for each row execute procedure moddatetime (updated_at);
alter publication supabase_realtime add table todos;

insert into storage.buckets (id, name) values ('avatars', 'avatars');
create policy "Avatar images are publicly accessible." on storage.objects
  for select using (bucket_id = 'avatars');
create policy "Anyone can upload an avatar." on storage.objects
  for insert with check (bucket_id = 'avatars');
`;

test("a Supabase project's migration pushes unchanged, and the app works on it", async () => {
  mkdirSync(path.join(app, 'hearth', 'migrations'), { recursive: true });
  writeFileSync(path.join(app, 'hearth', 'migrations', '20260101000000_init.sql'), MIGRATION);
  const pushed = await runHearth(['db', 'push'], { env: remoteEnv(th), cwd: app });
  assert.equal(pushed.status, 0, pushed.stderr);

  const sb = createClient(th.info.BASE_URL, th.info.PUBLISHABLE_KEY, {
    realtime: { transport: WebSocket as never },
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const email = `ada-${Date.now()}@example.com`;
  const { data: signed, error } = await sb.auth.signUp({
    email,
    password: 'Quiet-harbour-lantern-42',
    options: { data: { full_name: 'Ada Lovelace', avatar_url: 'ada.png' } },
  });
  assert.equal(error, null);
  const uid = signed.user!.id;
  // handle_new_user made the profile.
  const profile = await sb.from('profiles').select('full_name, avatar_url').eq('id', uid).single();
  assert.deepEqual(profile.data, { full_name: 'Ada Lovelace', avatar_url: 'ada.png' });

  // uuid_generate_v4() as the default; moddatetime moves updated_at on update.
  const todo = await sb.from('todos').insert({ task: 'write' }).select().single();
  assert.equal(todo.error, null);
  assert.match(todo.data.id, /^[0-9a-f-]{36}$/);
  const updated = await sb.from('todos').update({ task: 'written' }).eq('id', todo.data.id).select().single();
  assert.ok(new Date(updated.data.updated_at) > new Date(todo.data.updated_at));

  // The bucket and its policies by bucket_id.
  const up = await sb.storage.from('avatars').upload(`${uid}.png`, Buffer.from('png'), { contentType: 'image/png' });
  assert.equal(up.error, null);
  const down = await sb.storage.from('avatars').download(`${uid}.png`);
  assert.equal(await down.data!.text(), 'png');
});

// A Supabase Queues project: the extension line `supabase db pull` writes, a queue, and the
// dashboard's "Expose Queues via PostgREST" SQL (its wrappers replaced and commented).
const QUEUES_MIGRATION = `create extension if not exists "pgmq" with schema "pgmq" version '1.4.4';
select pgmq.create('emails');

create schema if not exists pgmq_public;
grant usage on schema pgmq_public to anon, authenticated, service_role;
create or replace function pgmq_public.pop(queue_name text)
  returns setof pgmq.message_record
  language plpgsql
  set search_path = ''
as $$
begin
  return query select * from pgmq.pop(queue_name := queue_name);
end;
$$;
comment on function pgmq_public.pop(queue_name text) is 'Retrieves and locks the next message from the specified queue.';
create or replace function pgmq_public.send(queue_name text, message jsonb, sleep_seconds integer default 0)
  returns setof bigint
  language plpgsql
  set search_path = ''
as $$
begin
  return query select * from pgmq.send(queue_name := queue_name, msg := message, delay := sleep_seconds);
end;
$$;
grant execute on function pgmq_public.pop(text), pgmq_public.send(text, jsonb, integer) to service_role;
`;

test("a Supabase Queues migration pushes unchanged: create extension pgmq is already satisfied, and the owner may replace pgmq_public's wrappers", async () => {
  writeFileSync(path.join(app, 'hearth', 'migrations', '20260102000000_queues.sql'), QUEUES_MIGRATION);
  const pushed = await runHearth(['db', 'push'], { env: remoteEnv(th), cwd: app });
  assert.equal(pushed.status, 0, pushed.stderr);
  const exposed = await th.api('PATCH', `/v1/projects/${th.info.PROJECT_REF}/config/api`, {
    body: { db_schema: 'public,pgmq_public' },
  });
  assert.equal(exposed.status, 200);
  const admin = createClient(th.info.BASE_URL, th.info.SECRET_KEY, {
    realtime: { transport: WebSocket as never },
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const queues = admin.schema('pgmq_public');
  const sent = await queues.rpc('send', { queue_name: 'emails', message: { to: 'ada@example.com' } });
  assert.equal(sent.error, null);
  const popped = await queues.rpc('pop', { queue_name: 'emails' });
  assert.equal(popped.error, null);
  assert.deepEqual(
    popped.data.map((m: { message: unknown }) => m.message),
    [{ to: 'ada@example.com' }],
  );
  const dumped = await runHearth(['db', 'dump'], { env: remoteEnv(th), cwd: app });
  assert.equal(dumped.status, 0, dumped.stderr);
  assert.ok(!dumped.stdout.includes('pgmq_public'), 'the dump holds the app schema, not the platform-made pgmq_public');
});
