-- What a start last found up to date in each project database: its OID and a
-- digest of the project migrations (db/migrate.ts migrationsDigest). A start
-- connects only to project databases whose record differs: new migration
-- files change the digest, and a database dropped and created again (a
-- restore into a new database of the same name) has another OID. Null: not
-- known, checked at the next start.
alter table platform.projects add column migrated text;
