/**
 * The process logger: readable lines on a terminal (pino-pretty, loaded only
 * then), one JSON object a line otherwise or with HEARTH_LOG_FORMAT=json, for
 * log collectors. With HEARTH_ACCESS_LOG=1, one line per request.
 */
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from '../config.ts';

export async function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Promise<Logger> {
  if (config.logFormat === 'json') return pino({ level: config.logLevel });
  const { default: pretty } = await import('pino-pretty');
  // sync: a line written just before the process exits (a failed start) is not lost.
  return pino(
    { level: config.logLevel },
    pretty({
      colorize: Boolean(process.stdout.isTTY),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      sync: true,
    }),
  );
}

/** The path with the query's values dropped (`?select&id`): filters can hold personal data. */
export function pathWithoutValues(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const names = url
    .slice(q + 1)
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=')[0]);
  return `${url.slice(0, q)}?${names.join('&')}`;
}

/** One line per answered request: method, path without query values, status, duration and project ref. */
export function accessLog(app: FastifyInstance, log: Logger): void {
  app.addHook('onResponse', (request, reply, done) => {
    const params = request.params as { ref?: unknown } | undefined;
    const project = request.hearth?.project.ref ?? (typeof params?.ref === 'string' ? params.ref : null);
    log.info(
      {
        method: request.method,
        path: pathWithoutValues(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        project,
      },
      'request',
    );
    done();
  });
}
