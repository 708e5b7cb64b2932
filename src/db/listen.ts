/**
 * LISTEN on a one-connection client of its own, closed by the returned
 * function. Not sql.listen(): postgres.js keeps that connection open for
 * good, even after unlisten, and idle projects must hold no connection.
 * onLost runs if the connection drops (notifications may have been missed).
 */
import postgres from 'postgres';
import { withoutWaiting } from './budget.ts';
import { quoteIdent } from './ident.ts';

export async function listenOwnConnection(
  sql: postgres.Sql,
  channel: string,
  onNotify: (payload: string) => void,
  onLost: () => void,
  /** failWhenBusy: refuse at once, rather than queue, when the process has no database connection to spare. */
  opts: { failWhenBusy?: boolean } = {},
): Promise<() => Promise<void>> {
  let stopped = false;
  const socket = (sql.options as { socket?: unknown }).socket;
  const options = {
    ...sql.options,
    socket: opts.failWhenBusy ? withoutWaiting(socket) : socket,
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    onnotify: (ch: string, payload: string) => {
      if (ch === channel) onNotify(payload);
    },
    onclose: () => {
      if (stopped) return;
      void stop().catch(() => {});
      onLost();
    },
  };
  // Parsed options (they carry `shared`) are taken as they are, as postgres.js does for its own listener.
  const client = postgres(options as unknown as postgres.Options<Record<string, postgres.PostgresType>>);
  const stop = () => {
    stopped = true;
    return client.end({ timeout: 5 });
  };
  try {
    await client.unsafe(`listen ${quoteIdent(channel)}`);
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return stop;
}
