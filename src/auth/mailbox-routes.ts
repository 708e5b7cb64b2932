/**
 * GET /v1/projects/{ref}/mailbox: the development mailbox, i.e. the auth mail
 * a project kept instead of sending because it has no SMTP server configured
 * (newest first, at most 100). Any member of the project's organization may
 * read it, as they may read the project's API keys.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../context.ts';
import { HearthError } from '../errors.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { managementAccess, requireSession } from '../platform/routes.ts';
import { listMailbox } from './mailer.ts';

export async function mailboxRoutes(app: FastifyInstance, opts: { p: Platform; registry: ProjectRegistry }) {
  const access = managementAccess(opts.p);
  app.addHook('onRequest', requireSession(opts.p));
  app.get<{ Params: { ref: string }; Querystring: { limit?: string } }>('/v1/projects/:ref/mailbox', async (request) => {
    const { project } = await access.project(request, request.params.ref);
    const limit = request.query.limit === undefined ? 100 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new HearthError(400, 'invalid_request', 'limit must be an integer from 1 to 1000.');
    const runtime = await opts.registry.byReference(project.ref);
    if (!runtime) throw new HearthError(404, 'not_found', `There is no project with ref "${project.ref}".`);
    return listMailbox({ project: runtime }, limit);
  });
}
