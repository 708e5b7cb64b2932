-- Object hashes name their algorithm. Uploads hash with BLAKE3 from now on
-- (about four times less CPU per byte than SHA-256 here; docs/storage.md,
-- Performance); rows written before keep their SHA-256, marked as such, and a
-- replay onto one of them is decided by hashing the new bytes with SHA-256.
alter table storage.objects rename column sha256 to content_hash;
update storage.objects set content_hash = 'sha256:' || content_hash where content_hash not like '%:%';
comment on column storage.objects.content_hash is
  '<algorithm>:<hex digest> of the object''s bytes, computed while they streamed in: blake3, or sha256 for objects stored before migration 031.';
