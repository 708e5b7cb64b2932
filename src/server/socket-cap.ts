/**
 * The cap on client sockets per process (HEARTH_MAX_SOCKETS): Node's
 * server.maxConnections closes every connection past it as soon as it is
 * accepted, so idle, keep-alive or slowloris sockets cannot pile up until the
 * process runs out of file descriptors or memory. Requests on the sockets
 * already open go on; a refused client may connect again once one closes.
 *
 * Refusals are logged once per LOG_EVERY_MS with their count, not once per
 * socket: a flood must not turn into a flood of log lines.
 */
import type { Server } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';

export const LOG_EVERY_MS = 10_000;

export function capClientSockets(server: Server, max: number, log: FastifyBaseLogger, everyMs = LOG_EVERY_MS): void {
  server.maxConnections = max;
  let refused = 0;
  let window: NodeJS.Timeout | null = null;
  const report = () => {
    window = null;
    if (refused === 0) return;
    log.warn(
      { refused, max },
      `refused ${refused} client socket(s) in ${everyMs / 1000} s: ${max} were open (HEARTH_MAX_SOCKETS)`,
    );
    refused = 0;
    window = setTimeout(report, everyMs).unref();
  };
  server.on('drop', () => {
    refused++;
    // The first refusal is said at once; later ones are summed until a quiet interval passes.
    if (!window) report();
  });
}
