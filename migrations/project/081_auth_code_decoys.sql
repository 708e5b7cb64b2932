-- Decoys for codes not sent (src/auth/one-time.ts): /otp with create_user
-- false and /recover send nothing to an address without an account, yet a
-- code sent to an existing one locks after 5 wrong tries at POST /verify.
-- A decoy counts the tries of the unknown address the same way, so the lock
-- does not tell who has an account. It holds no secret, only a hash of the
-- purpose and address, its tries and its expiry. A fixed number of slots,
-- picked by that hash (a newer decoy takes over its slot), bounds the table
-- however many addresses are sprayed.
create table auth.code_decoys (
  slot integer primary key check (slot >= 0 and slot < 65536),
  key bytea not null,
  attempts integer not null default 0,
  expires_at timestamptz not null
);
