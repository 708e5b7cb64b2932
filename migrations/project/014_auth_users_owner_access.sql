-- What Supabase's `postgres` may do with auth.users and the owner could not
-- (docs/auth.md, Tables):
-- * create triggers on it: the "handle_new_user" pattern of Supabase's guides
--   (a profile row per new user, an `after insert` trigger) and `before
--   insert` checks that refuse a sign-up both rely on it. A trigger sees the
--   whole row, as the owner's code on Supabase does; its function runs as
--   whoever the owner made it run as (usually `security definer`, the owner).
-- * read every column but the password hash: app metadata (the roles that
--   `is_admin()`-style functions and views read), confirmation, ban, invite
--   and deletion times, a pending e-mail change.
grant trigger on auth.users to "{{owner}}";
grant select (email_confirmed_at, email_change, raw_app_meta_data, banned_until, invited_at, deleted_at)
  on auth.users to "{{owner}}";
