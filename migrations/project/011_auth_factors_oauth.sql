-- Accounts II (src/auth): MFA challenges (TOTP and passkeys, including the
-- user-less challenges of passkey-only sign-in), the TOTP replay guard, the
-- passkey credential id, and the state of social sign-in flows in progress.
-- Like 010, only the platform's own connection touches these tables.

-- The last accepted 30-second TOTP step: a code of that step or an earlier one
-- is a replay and is refused.
alter table auth.mfa_factors add column last_totp_step bigint;
-- The WebAuthn credential id (base64url) of a passkey factor, once registered;
-- passkey-only sign-in finds the user by it.
alter table auth.mfa_factors add column web_authn_credential_id text unique;
-- Two factors of one user may not share a friendly name (supabase-js lists them by it).
create unique index mfa_factors_name_idx on auth.mfa_factors (user_id, friendly_name) where friendly_name is not null;

-- One challenge per ceremony, single use. factor_id is null for passkey-only
-- sign-in, where the user is only known from the credential presented.
create table auth.mfa_challenges (
  id uuid primary key default gen_random_uuid(),
  factor_id uuid references auth.mfa_factors (id) on delete cascade,
  kind text not null check (kind in ('totp', 'webauthn_create', 'webauthn_request', 'passkey_signin')),
  -- the WebAuthn challenge (base64url) the ceremony must sign
  web_authn_challenge text,
  attempts integer not null default 0,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz
);
create index mfa_challenges_factor_idx on auth.mfa_challenges (factor_id);

-- A social sign-in (or identity-linking) flow between GET /authorize and GET
-- /callback. The state travels through the provider; only its hash is kept.
-- code_verifier (PKCE towards the provider) is sealed with the master key.
create table auth.oauth_states (
  id uuid primary key default gen_random_uuid(),
  state_hash bytea not null unique,
  provider text not null,
  nonce text,
  code_verifier_sealed text not null,
  redirect_to text not null,
  -- the app's own PKCE challenge: the callback then answers ?code= instead of a session
  code_challenge text,
  -- set when a signed-in user links a new identity to their account
  link_user_id uuid references auth.users (id) on delete cascade,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz
);
