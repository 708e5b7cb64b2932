-- Todos with a priority, readable by everyone signed in, writable by their author.
create type priority as enum ('low', 'normal', 'high');

create table lists (
  id bigint generated always as identity primary key,
  name text not null unique
);

create table todos (
  id bigint generated always as identity primary key,
  list_id bigint not null references lists on delete cascade,
  title text not null check (length(title) between 1 and 200),
  priority priority not null default 'normal',
  tags text[] not null default '{}',
  details jsonb,
  done boolean not null default false,
  author uuid default auth.uid(),
  created_at timestamptz not null default now()
);
create index todos_list on todos (list_id);

alter table todos enable row level security;
create policy "signed-in users read todos" on todos for select to authenticated using (true);
create policy "authors write their todos" on todos for all to authenticated
  using (author = auth.uid()) with check (author = auth.uid());
