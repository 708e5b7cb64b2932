-- Daily request counts per project (UTC days), for the daily request quota
-- (config/limits daily_request_quota) and GET /v1/projects/{ref}/usage. Each
-- API process adds what it counted about once a second (src/platform/request-usage.ts).
create table platform.request_usage (
  project_id uuid not null references platform.projects (id) on delete cascade,
  day date not null,
  requests bigint not null check (requests >= 0),
  primary key (project_id, day)
);
