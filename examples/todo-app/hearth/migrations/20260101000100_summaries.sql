-- A view of open work per list, and the daily summary the workflow writes.
create view open_todos as
  select l.name as list, count(*) filter (where not t.done) as open, count(*) as total
  from lists l left join todos t on t.list_id = l.id
  group by l.name;

create table summaries (
  day date primary key default current_date,
  open_todos int not null
);

create function summarize() returns int language sql as $$
  insert into summaries (open_todos) select count(*) from todos where not done
  on conflict (day) do update set open_todos = excluded.open_todos
  returning open_todos
$$;
