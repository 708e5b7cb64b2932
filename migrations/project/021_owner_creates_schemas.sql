-- The project's owner role may create schemas in its own database, as
-- Supabase's `postgres` role can: `CREATE SCHEMA personal` in a user's
-- migration over DB_URL works, and the schema is the owner's. Exposing it over
-- REST is still config/api db_schema's decision (with the owner granting
-- USAGE to anon/authenticated as on Supabase). Project creation grants the
-- same to new projects; this reaches the existing ones.
do $$
begin
  execute format('grant create on database %I to %I', current_database(), '{{owner}}');
end
$$;
