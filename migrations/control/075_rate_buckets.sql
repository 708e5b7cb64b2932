-- Token buckets (GCRA, src/server/rate-limit.ts) of the management API: the
-- sign-in throttle of POST /v1/login (src/platform/login-throttle.ts). One row
-- per (bucket, subject) holding its theoretical arrival time; the subject is a
-- client address, or an account's e-mail and a client address.
create table platform.rate_buckets (
  bucket text not null,
  subject text not null,
  tat timestamptz not null,
  primary key (bucket, subject)
);

-- Buckets idle for an hour are swept by the requests that pass.
create index rate_buckets_tat_idx on platform.rate_buckets (tat);
