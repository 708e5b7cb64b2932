-- Durable workflows (SPEC 2.8-2.13, 3.2): definitions, runs, their step rows,
-- signals, trigger bindings, the log-drain target and its event outbox.
-- Every row carries project_id and every query filters on it.

-- Immutable versions; only `enabled` changes (for every version at once).
-- Secrets inside steps are sealed with the master key (secret_sealed).
create table platform.workflow_definitions (
  project_id uuid not null references platform.projects (id) on delete cascade,
  name text not null check (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  version integer not null check (version > 0),
  enabled boolean not null default true,
  steps jsonb not null,
  created_at timestamptz not null default now(),
  primary key (project_id, name, version)
);

create table platform.workflow_runs (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references platform.projects (id) on delete cascade,
  workflow text not null,
  version integer not null,
  status text not null check (status in ('pending', 'running', 'waiting', 'succeeded', 'failed', 'cancelled')),
  cursor integer not null default 0,
  input jsonb not null default '{}',
  output jsonb,
  compensation_state text not null default 'none' check (compensation_state in ('none', 'running', 'compensated', 'incomplete')),
  -- Position of the step being undone while compensation runs (walks backwards).
  compensation_cursor integer,
  last_error text check (char_length(last_error) <= 2000),
  idempotency_key text check (char_length(idempotency_key) <= 400),
  -- Row lease: a worker owns the run until lease_until (FOR UPDATE SKIP LOCKED picks).
  lease_owner text,
  lease_until timestamptz,
  -- When the engine should next look at the run (timers, backoff, wait deadlines).
  wake_at timestamptz,
  depth integer not null default 0,
  parent_run_id uuid references platform.workflow_runs (id) on delete set null,
  parent_step_id uuid,
  trigger text not null default 'api',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz,
  foreign key (project_id, workflow, version) references platform.workflow_definitions (project_id, name, version)
);
create unique index workflow_runs_idempotency on platform.workflow_runs (project_id, workflow, idempotency_key)
  where idempotency_key is not null;
create index workflow_runs_list on platform.workflow_runs (project_id, workflow, created_at desc);
create index workflow_runs_due on platform.workflow_runs (project_id, wake_at)
  where status in ('pending', 'running', 'waiting') or compensation_state = 'running';
create index workflow_runs_finished on platform.workflow_runs (finished_at) where finished_at is not null;
create index workflow_runs_parent on platform.workflow_runs (parent_run_id) where parent_run_id is not null;

create table platform.workflow_run_steps (
  id uuid primary key default gen_random_uuid(),
  run_id uuid not null references platform.workflow_runs (id) on delete cascade,
  -- Main steps: index in the definition; fan-out children: the fanout's index.
  position integer not null,
  key text not null,
  kind text not null,
  status text not null check (status in ('pending', 'running', 'succeeded', 'failed', 'skipped')),
  attempt integer not null default 0,
  max_attempts integer not null,
  output jsonb,
  error text check (char_length(error) <= 2000),
  compensating boolean not null default false,
  parent_step_id uuid references platform.workflow_run_steps (id) on delete cascade,
  child_run_id uuid,
  -- Start of the current attempt or wait (timeouts count from here).
  started_at timestamptz,
  next_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (run_id, key)
);
create index workflow_run_steps_parent on platform.workflow_run_steps (parent_step_id) where parent_step_id is not null;

create table platform.workflow_signals (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references platform.projects (id) on delete cascade,
  run_id uuid not null references platform.workflow_runs (id) on delete cascade,
  signal text not null,
  payload jsonb,
  idempotency_key text,
  consumed_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index workflow_signals_idempotency on platform.workflow_signals (run_id, idempotency_key) where idempotency_key is not null;
create index workflow_signals_pending on platform.workflow_signals (run_id, signal, created_at) where consumed_at is null;

create table platform.workflow_queue_triggers (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references platform.projects (id) on delete cascade,
  queue text not null,
  workflow text not null,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  unique (project_id, queue)
);

create table platform.workflow_row_triggers (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references platform.projects (id) on delete cascade,
  schema_name text not null,
  table_name text not null,
  events text[] not null,
  filter jsonb,
  workflow text not null,
  created_at timestamptz not null default now(),
  unique (project_id, schema_name, table_name, workflow)
);

create table platform.workflow_log_drains (
  project_id uuid primary key references platform.projects (id) on delete cascade,
  url text not null,
  created_at timestamptz not null default now()
);

-- Outbox of SPEC 6.1 events, written in the transaction of the transition
-- (only while a drain is configured) and shipped by a worker.
create table platform.workflow_events (
  id bigserial primary key,
  project_id uuid not null references platform.projects (id) on delete cascade,
  event text not null,
  run_id uuid not null,
  workflow text not null,
  step text,
  attempt integer,
  at timestamptz not null,
  ship_attempts integer not null default 0
);
create index workflow_events_project on platform.workflow_events (project_id, id);
