-- The control database: platform accounts, organizations, members, management
-- sessions, projects, their keys and their configuration.
create schema if not exists platform;

create table platform.accounts (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  password_hash text not null,
  created_at timestamptz not null default now()
);
create unique index accounts_email_key on platform.accounts (lower(email));

create table platform.organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  created_at timestamptz not null default now()
);

create table platform.members (
  organization_id uuid not null references platform.organizations (id) on delete cascade,
  account_id uuid not null references platform.accounts (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'developer')),
  created_at timestamptz not null default now(),
  primary key (organization_id, account_id)
);

-- Management sessions (POST /v1/login, hearth status): opaque bearer tokens, stored hashed.
create table platform.sessions (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references platform.accounts (id) on delete cascade,
  token_hash bytea not null unique,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index sessions_expires_at on platform.sessions (expires_at);

create table platform.projects (
  id uuid primary key default gen_random_uuid(),
  ref text not null unique check (ref ~ '^[a-z]{20}$'),
  name text not null,
  organization_id uuid not null references platform.organizations (id),
  db_name text not null unique,
  owner_role text not null unique,
  owner_password_sealed text not null,
  is_default boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index projects_one_default on platform.projects (is_default) where is_default;

-- ES256 signing keys; the private JWK is sealed with the master key.
create table platform.signing_keys (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references platform.projects (id) on delete cascade,
  kid text not null,
  public_jwk jsonb not null,
  private_jwk_sealed text not null,
  created_at timestamptz not null default now()
);
create index signing_keys_project on platform.signing_keys (project_id);

-- Project API keys: looked up by hash; sealed so owners can read them back.
create table platform.api_keys (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references platform.projects (id) on delete cascade,
  name text not null,
  type text not null check (type in ('publishable', 'secret')),
  key_hash bytea not null unique,
  key_sealed text not null,
  created_at timestamptz not null default now(),
  unique (project_id, type, name)
);

-- Per-project settings, one JSON object per area (auth, storage, workflows, ...).
create table platform.project_config (
  project_id uuid not null references platform.projects (id) on delete cascade,
  area text not null,
  settings jsonb not null default '{}',
  updated_at timestamptz not null default now(),
  primary key (project_id, area)
);

-- Who changed which setting, from what to what (secret values redacted).
create table platform.config_audit (
  id bigserial primary key,
  project_id uuid not null references platform.projects (id) on delete cascade,
  area text not null,
  account_id uuid references platform.accounts (id) on delete set null,
  changes jsonb not null,
  created_at timestamptz not null default now()
);
create index config_audit_project on platform.config_audit (project_id, id desc);
