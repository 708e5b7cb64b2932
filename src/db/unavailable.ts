/**
 * The database cannot serve right now, though nothing is wrong with what was
 * asked: the connection was lost (PostgreSQL restarting, a terminated backend,
 * a network cut: class 08, 57P01-57P03 and the driver's own connection codes),
 * the server refuses new connections (53300 too many clients; server errors
 * count when FATAL, i.e. they ended the session), or this
 * process's connection budget stayed full past its bound (budget.ts). Every
 * route answers it as 503 `database_unavailable` with Retry-After
 * (http/envelopes.ts, rest/errors.ts); the workflow engine retries or
 * abandons on it and never turns it into a run's failure.
 */
import { HearthError } from '../errors.ts';

const DRIVER_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'CONNECTIONS_EXHAUSTED',
]);

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown; syscall?: unknown } | null;
  const code = e?.code;
  if (typeof code !== 'string') return false;
  if (DRIVER_CODES.has(code)) return true;
  // The embedded cluster's Unix socket is gone while its server is stopped (a TCP URL gives
  // ECONNREFUSED instead); only a connect says so: a file missing elsewhere is no outage.
  if (code === 'ENOENT' && e!.syscall === 'connect') return true;
  // From the server only when it ended the session (FATAL): a function may RAISE any SQLSTATE
  // at ERROR level, and the data plane renders that as PostgREST does.
  return (
    (e!.severity === 'FATAL' || e!.severity === 'PANIC') &&
    (code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300')
  );
}

/** Seconds a client is asked to wait: a restart or a burst of connections passes in about that. */
export const RETRY_AFTER_SECONDS = 2;

export class DatabaseUnavailable extends HearthError {
  readonly retryAfterSeconds = RETRY_AFTER_SECONDS;
  constructor() {
    super('database_unavailable');
  }
}
