-- Project functions, multi-process store (issue 7).
--
-- Version numbers must only grow, also across a delete and redeploy of the
-- same name: every Hearth process keeps running instances keyed by version
-- and refuses to let an older version displace a newer one, so a number
-- reused after a delete would be refused by a process that still runs the
-- old instance. This counter survives the removal of the versions.
create table platform.function_version_counters (
  project_id   uuid    not null references platform.projects (id) on delete cascade,
  name         text    not null,
  last_version integer not null,
  primary key (project_id, name)
);

insert into platform.function_version_counters (project_id, name, last_version)
  select project_id, name, max(version) from platform.functions group by project_id, name;

-- Logs are read per function and trimmed per function by the retention worker.
create index function_logs_by_function_id
  on platform.function_logs (project_id, function_name, id desc);
