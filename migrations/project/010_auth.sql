-- Accounts (src/auth): users, identities, sessions and their refresh-token
-- families, one-time codes and links, PKCE flow state, MFA factors (used by a
-- later release), per-IP rate-limit windows and the development mailbox.
-- Only the platform's own connection touches these tables; the API roles have
-- no grants on them. Every secret (refresh token, code, link token, auth code)
-- is stored as a SHA-256 hash.

create table auth.users (
  id uuid primary key default gen_random_uuid(),
  -- lower-cased and trimmed by the platform before it gets here
  email text unique check (email = lower(email)),
  encrypted_password text,
  email_confirmed_at timestamptz,
  -- a pending e-mail change, applied when its confirmation link is redeemed
  email_change text check (email_change = lower(email_change)),
  is_anonymous boolean not null default false,
  raw_user_meta_data jsonb not null default '{}',
  raw_app_meta_data jsonb not null default '{}',
  last_sign_in_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

-- Linked social identities (provider, provider's subject). E-mail/password
-- accounts have none: the password is a sign-in method of the user row.
create table auth.identities (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  provider text not null,
  provider_id text not null,
  identity_data jsonb not null default '{}',
  email text,
  last_sign_in_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (provider, provider_id)
);
create index identities_user_idx on auth.identities (user_id);

create table auth.mfa_factors (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  factor_type text not null check (factor_type in ('totp', 'webauthn')),
  friendly_name text,
  status text not null default 'unverified' check (status in ('unverified', 'verified')),
  secret_sealed text,
  web_authn_credential jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index mfa_factors_user_idx on auth.mfa_factors (user_id);

-- A session is a refresh-token family: every rotation stays in the session.
-- Logging out or a refresh-token reuse deletes the session, and with it every
-- token of the family.
create table auth.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  aal text not null default 'aal1' check (aal in ('aal1', 'aal2')),
  -- [{method, timestamp}] as carried by the access token's amr claim
  amr jsonb not null default '[]',
  created_at timestamptz not null,
  refreshed_at timestamptz
);
create index sessions_user_idx on auth.sessions (user_id);

create table auth.refresh_tokens (
  id bigserial primary key,
  token_hash bytea not null unique,
  session_id uuid not null references auth.sessions (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  parent bigint,
  -- true once used (rotated): a second use is a reuse
  revoked boolean not null default false,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index refresh_tokens_session_idx on auth.refresh_tokens (session_id);

-- PKCE: the challenge given when a flow starts, then the auth code minted when
-- the flow's link is redeemed (exchangeable for 5 minutes, once).
create table auth.flow_state (
  id uuid primary key default gen_random_uuid(),
  user_id uuid references auth.users (id) on delete cascade,
  code_challenge text not null,
  code_challenge_method text not null check (code_challenge_method = 's256'),
  authentication_method text not null,
  auth_code_hash bytea unique,
  auth_code_issued_at timestamptz,
  consumed_at timestamptz,
  created_at timestamptz not null
);

-- One e-mailed message's secrets: a 6-digit code and a link token, both
-- hashed; redeeming either consumes the row. A new message for the same user
-- and purpose supersedes the previous one.
create table auth.one_time_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  purpose text not null check (purpose in ('email', 'recovery', 'email_change')),
  -- the address the message went to (the new address for an e-mail change)
  email text not null,
  code_hash bytea not null,
  link_hash bytea not null unique,
  attempts integer not null default 0,
  flow_state_id uuid references auth.flow_state (id) on delete set null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz
);
create index one_time_tokens_active_idx on auth.one_time_tokens (user_id, purpose) where consumed_at is null;

-- Fixed one-hour windows of per-client-IP counters (sign-ups, guests, mail).
create table auth.rate_limits (
  bucket text not null,
  client_ip text not null,
  window_start timestamptz not null,
  hits integer not null,
  primary key (bucket, client_ip, window_start)
);

-- Messages kept instead of sent while the project has no SMTP server
-- configured; the management API lists them (GET /v1/projects/{ref}/mailbox).
create table auth.dev_mailbox (
  id bigserial primary key,
  to_address text not null,
  subject text not null,
  body text not null,
  created_at timestamptz not null
);

-- The owner role (direct SQL) may reference users from its own tables
-- (`references auth.users (id)`) and read their public columns, as in Supabase.
grant references (id) on auth.users to "{{owner}}";
grant select (id, email, is_anonymous, raw_user_meta_data, created_at, updated_at, last_sign_in_at) on auth.users to "{{owner}}";
