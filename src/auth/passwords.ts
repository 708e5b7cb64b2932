/**
 * argon2id hashing and verification for the accounts API, at most a few at a
 * time. argon2 runs on libuv's threadpool (UV_THREADPOOL_SIZE, 4 by default),
 * which also serves fs, dns.lookup, zlib and crypto jobs: a burst of sign-ins
 * could fill every thread for seconds, and a storage read queued behind them
 * waited as long (measured: fs.stat took 2.6 s during 24 concurrent hashes,
 * 0.2 ms with this gate; docs/auth.md, Performance). So one thread is always
 * left for other work, and no more hashes run at once than there are cores,
 * since more only add latency and 19 MiB each. Waiting callers queue here in
 * order; the unknown-address dummy verification queues the same way, so it
 * still takes as long as a real one.
 */
import { availableParallelism } from 'node:os';
import { hashPassword as hash, verifyPassword as verify } from '../platform/passwords.ts';

const threadpool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const LIMIT = Math.max(1, Math.min(threadpool - 1, availableParallelism()));

let running = 0;
const waiting: (() => void)[] = [];

async function gated<T>(job: () => Promise<T>): Promise<T> {
  if (running >= LIMIT) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await job();
  } finally {
    const next = waiting.shift();
    if (next)
      next(); // the slot passes straight to the next caller
    else running--;
  }
}

export const hashPassword = (password: string): Promise<string> => gated(() => hash(password));

export const verifyPassword = (stored: string | null | undefined, password: string): Promise<boolean> =>
  gated(() => verify(stored, password));
