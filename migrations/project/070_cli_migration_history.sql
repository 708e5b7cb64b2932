-- What the `hearth` CLI needs in a project database (docs/cli.md):
-- * the owner role may create schemas in its database, so an app's migrations
--   (run as that role through database/query) can `create schema` (granting
--   twice is harmless: another migration may grant it too);
-- * the history of the app's migrations, under Supabase's name for it
--   (supabase_migrations.schema_migrations: version, name, statements), with
--   the checksum of each applied file;
-- * what `hearth push` last deployed from files (workflows), so an unchanged
--   file publishes no new version.
do $$
begin
  execute format('grant create on database %I to %I', current_database(), '{{owner}}');
end $$;

create schema if not exists supabase_migrations authorization "{{owner}}";

create table if not exists supabase_migrations.schema_migrations (
  version text primary key,
  name text not null,
  statements text[] not null,
  checksum text not null,
  applied_at timestamptz not null default now()
);
alter table supabase_migrations.schema_migrations owner to "{{owner}}";

create table if not exists supabase_migrations.hearth_deploys (
  kind text not null,
  name text not null,
  checksum text not null,
  version int not null,
  deployed_at timestamptz not null default now(),
  primary key (kind, name)
);
alter table supabase_migrations.hearth_deploys owner to "{{owner}}";
