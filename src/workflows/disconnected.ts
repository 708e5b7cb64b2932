/**
 * Whether an error means the database connection was lost (PostgreSQL
 * restarting, a terminated backend, a network cut) rather than a refusal of
 * what was asked: class 08, admin shutdown 57P01-57P03, or the driver's own
 * connection codes. The engine retries or abandons on these; it never turns
 * them into a run's failure.
 */
const CONNECTION_LOST = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET']);

export function disconnected(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('08') || /^57P0[123]$/.test(code) || CONNECTION_LOST.has(code));
}
