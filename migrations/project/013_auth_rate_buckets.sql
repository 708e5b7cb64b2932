-- Per-client-IP rate limits (sign-ups, guests, mail) become token buckets
-- (GCRA): one row per (bucket, client IP) holding its theoretical arrival
-- time, instead of fixed one-hour windows, which let a burst of 2x the limit
-- through at a window edge and then locked a client out for up to an hour.
create table auth.rate_buckets (
  bucket text not null,
  client_ip text not null,
  tat timestamptz not null,
  primary key (bucket, client_ip)
);

drop table auth.rate_limits;

-- Buckets idle for an hour are swept by the requests that pass.
create index rate_buckets_tat_idx on auth.rate_buckets (tat);
