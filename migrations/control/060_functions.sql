-- Project functions (issue 7): deployed versions, per-project secrets and
-- invocation logs. Backs src/functions/store.ts's FunctionStore interface.

-- One row per deployed version; the newest version of a (project, name) is
-- the current one, so publishing is a single INSERT and readers never see a
-- half-published deploy. Removing a function deletes all its versions.
create table platform.functions (
  project_id  uuid        not null references platform.projects (id) on delete cascade,
  name        text        not null check (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  version     integer     not null check (version > 0),
  entrypoint  text        not null,
  verify_jwt  boolean     not null default true,
  files       jsonb       not null,          -- {"index.ts": "...", "lib/x.ts": "..."} as deployed
  bundle      text        not null,          -- the bundled ES module, built once at deploy
  created_at  timestamptz not null default now(),
  created_by  uuid,                          -- platform account that deployed it, when known
  primary key (project_id, name, version)
);

-- Secrets are exposed to every function of the project as environment
-- variables. Values are encrypted with the master key (like signing keys);
-- value_sha256 is what listing shows, so values never leave once written.
create table platform.function_secrets (
  project_id      uuid        not null references platform.projects (id) on delete cascade,
  name            text        not null check (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,255}$' and name not like 'SUPABASE\_%'),
  value_encrypted bytea       not null,
  value_sha256    text        not null,
  updated_at      timestamptz not null default now(),
  primary key (project_id, name)
);

-- One row per console line of a function and one per finished invocation
-- (the row with status set). invocation_id ties them together; lines written
-- while the module loads have none. Kept bounded by the retention worker.
create table platform.function_logs (
  id            bigint      generated always as identity primary key,
  project_id    uuid        not null references platform.projects (id) on delete cascade,
  function_name text        not null,
  version       integer     not null,
  invocation_id uuid,
  level         text        not null check (level in ('log', 'info', 'debug', 'warn', 'error')),
  message       text        not null,
  method        text,
  path          text,
  status        integer,
  error_code    text,
  duration_ms   integer,
  created_at    timestamptz not null default now()
);

create index function_logs_recent
  on platform.function_logs (project_id, function_name, created_at desc, id desc);
create index function_logs_created_at
  on platform.function_logs (created_at);
