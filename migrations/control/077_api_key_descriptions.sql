-- API keys are created, renamed and revoked through the management API
-- (POST/PATCH/DELETE /v1/projects/{ref}/api-keys): a key carries an optional
-- description, as Supabase's keys do. A revoked key's row is deleted.
alter table platform.api_keys add column description text;
