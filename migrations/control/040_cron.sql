-- Cron jobs (SPEC 2.14, 4.5): one row per job, and one fire record per
-- (job, scheduled minute). The fire record's primary key is what makes a
-- minute fire exactly once however many Hearth processes tick at the same
-- instant: each inserts it with ON CONFLICT DO NOTHING and only the process
-- whose insert went through delivers. The same rows are the job's short run
-- history (the newest 20 are kept).
create table if not exists platform.cron_jobs (
  id uuid primary key default gen_random_uuid(),
  project_id uuid not null references platform.projects (id) on delete cascade,
  name text not null check (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  schedule text not null,
  target_kind text not null check (target_kind in ('enqueue', 'webhook', 'workflow')),
  target text not null,
  payload jsonb not null,
  -- The webhook signing secret, sealed with the master key; only webhook jobs have one.
  secret_sealed text check ((secret_sealed is not null) = (target_kind = 'webhook')),
  created_at timestamptz not null,
  -- The outcome of the newest finished fire (by scheduled minute).
  last_minute timestamptz,
  last_finished_at timestamptz,
  last_status text check (last_status in ('succeeded', 'failed')),
  last_http_status integer,
  last_error text,
  unique (project_id, name)
);

create table if not exists platform.cron_fires (
  job_id uuid not null references platform.cron_jobs (id) on delete cascade,
  minute timestamptz not null,
  started_at timestamptz not null,
  finished_at timestamptz,
  -- running: claimed, delivery under way (or the process died during it; a
  -- fire is never repeated, so it stays so).
  status text not null default 'running' check (status in ('running', 'succeeded', 'failed')),
  http_status integer,
  result jsonb,
  error text,
  primary key (job_id, minute)
);
