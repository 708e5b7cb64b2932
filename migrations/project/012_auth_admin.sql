-- Accounts admin API (src/auth/admin.ts): bans, invitations, soft deletion,
-- and the e-mailed reauthentication nonce of GET /auth/v1/reauthenticate.

-- Sign-in and refresh are refused (user_banned) while banned_until is in the future.
alter table auth.users add column banned_until timestamptz;
-- When the user was invited (POST /invite, generate_link type invite).
alter table auth.users add column invited_at timestamptz;
-- Set by a soft delete, which also clears the e-mail and password and removes
-- sessions, identities and factors; the row stays so references to it survive.
alter table auth.users add column deleted_at timestamptz;

alter table auth.one_time_tokens drop constraint one_time_tokens_purpose_check;
alter table auth.one_time_tokens add constraint one_time_tokens_purpose_check
  check (purpose in ('email', 'recovery', 'email_change', 'reauthentication'));
