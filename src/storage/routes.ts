/**
 * The storage area (/storage/v1, SPEC 4.2): buckets, objects, signed URLs.
 * Owns the bytes backend and this process's writer lock; sweeps left-over
 * bytes at start and every minute (sweeper.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../context.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import { fail } from '../errors.ts';
import { sendError } from '../http/envelopes.ts';
import { createBackend } from './backend/index.ts';
import type { StorageContext } from './context.ts';
import { storageError } from './pg-errors.ts';
import { bucketRoutes } from './routes-buckets.ts';
import { objectRoutes } from './routes-objects.ts';
import { transferRoutes } from './routes-transfer.ts';
import { acquireWriterLock, sweepAll, sweepProject, type WriterLock } from './sweeper.ts';

const SWEEP_EVERY_MS = 60_000;

export async function storageRoutes(app: FastifyInstance, opts: { p: Platform }) {
  const { p } = opts;
  const backend = await createBackend(p.config);
  let lock: WriterLock | null = null;
  const draining = new Set<Promise<unknown>>();
  const s: StorageContext = {
    p,
    backend,
    writer: 0, // set once the lock is held (onReady), before any request is served
    drain(project: ProjectRuntime) {
      const run = sweepProject(p, backend, project.ref, project.sql, { crashed: false, self: s.writer })
        .catch((err) =>
          p.log.error({ err, ref: project.ref }, 'storage: removing deleted bytes failed; the sweep retries'),
        )
        .finally(() => draining.delete(run));
      draining.add(run);
    },
  };

  let sweeping: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const sweep = () => {
    sweeping = sweepAll(p, backend, s.writer)
      .catch((err) => p.log.error({ err }, 'storage sweep failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(sweep, SWEEP_EVERY_MS).unref();
      });
  };
  // The routes are built while PostgreSQL is still starting (server/runtime.ts): the lock's
  // connection waits for the app to be readied, once the control database is there, and the
  // first sweep for listening, once every project database is migrated.
  app.addHook('onReady', async () => {
    lock = await acquireWriterLock(p);
    s.writer = lock.id;
  });
  app.addHook('onListen', async () => sweep());
  app.addHook('onClose', async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await sweeping;
    await Promise.all(draining);
    await lock?.release();
    backend.close();
  });

  // Database errors of every storage route keep their storage meaning (and are a 4xx where the input was bad).
  app.setErrorHandler((err, request, reply) => sendError(request, reply, storageError(err)));
  await app.register(bucketRoutes, { prefix: '/storage/v1', s });
  await app.register(objectRoutes, { prefix: '/storage/v1', s });
  await app.register(transferRoutes, { prefix: '/storage/v1', s });
  await app.register(unsupportedRoutes, { prefix: '/storage/v1' });
}

/**
 * storage-js calls that reach Supabase services Hearth does not have. A 501 with a code
 * says so plainly, where a bare 404 would read as a missing object or bucket.
 */
const UNSUPPORTED: Record<string, string> = {
  cdn: "purgeCache() and purgeBucketCache() clear Supabase's CDN; Hearth has no CDN in front of storage, so there is nothing to purge.",
  vector: 'Vector buckets (storage.vectors) are not available in Hearth.',
  iceberg: 'Analytics buckets (storage.analytics, Iceberg) are not available in Hearth.',
};

async function unsupportedRoutes(app: FastifyInstance) {
  for (const [path, message] of Object.entries(UNSUPPORTED)) {
    app.all(`/${path}`, async () => {
      throw fail('not_implemented', message);
    });
    app.all(`/${path}/*`, async () => {
      throw fail('not_implemented', message);
    });
  }
}
