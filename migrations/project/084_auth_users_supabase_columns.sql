-- Columns of Supabase's auth.users that Hearth has no use for of its own, so
-- that SQL written for Supabase runs unchanged: a query that selects `phone`
-- or `confirmed_at`, a view over them, and above all an `after insert on
-- auth.users` trigger that reads `new.phone` or `new.role` (a trigger that
-- failed on a missing field made every sign-up fail). Their values are
-- Supabase's for an e-mail project without a phone provider: `aud` and `role`
-- are 'authenticated', `instance_id` the zero UUID, `phone` and its times
-- null, `confirmed_at` the earlier of the two confirmations (generated, as in
-- GoTrue), `is_sso_user` false. The owner reads them as it reads the others.
alter table auth.users
  add column if not exists instance_id uuid default '00000000-0000-0000-0000-000000000000',
  add column if not exists aud text default 'authenticated',
  add column if not exists role text default 'authenticated',
  add column if not exists phone text,
  add column if not exists phone_confirmed_at timestamptz,
  add column if not exists confirmation_sent_at timestamptz,
  add column if not exists confirmed_at timestamptz generated always as (least(email_confirmed_at, phone_confirmed_at)) stored,
  add column if not exists is_sso_user boolean not null default false;

grant select (instance_id, aud, role, phone, phone_confirmed_at, confirmation_sent_at, confirmed_at, is_sso_user)
  on auth.users to "{{owner}}";
