-- The owner may create triggers on auth.users, as Supabase's `postgres` can:
-- the "handle_new_user" pattern of Supabase's guides (a profile row per new
-- user, an `after insert` trigger) and `before insert` checks that refuse a
-- sign-up both rely on it (docs/auth.md, Tables). A trigger sees the whole
-- row, as the owner's code on Supabase does; its function runs as whoever
-- the owner made it run as (usually `security definer`, the owner).
grant trigger on auth.users to "{{owner}}";
