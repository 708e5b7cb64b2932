/**
 * GET /v1/projects/{ref}/mailbox: the development mailbox, i.e. the auth mail
 * a project kept instead of sending because it has no SMTP server configured
 * (newest first, at most 100). Any member of the project's organization may
 * read it, as they may read the project's API keys.
 *
 * POST /v1/projects/{ref}/config/auth/smtp-test `{to}` (owners and admins):
 * sends a test message through the saved SMTP settings and answers whether
 * the server took it, with the server's refusal when it did not.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { managementAccess, refuseNonJsonBodies, requireSession } from '../http/management-access.ts';
import { authContext } from './context.ts';
import { listMailbox, mailerConfigured, sendSmtp } from './mailer.ts';
import { normaliseEmail } from './validate.ts';

export async function mailboxRoutes(app: FastifyInstance, opts: { p: Platform; registry: ProjectRegistry }) {
  const access = managementAccess(opts.p);
  refuseNonJsonBodies(app);
  app.addHook('onRequest', requireSession(opts.p));
  app.get<{ Params: { ref: string }; Querystring: { limit?: string } }>(
    '/v1/projects/:ref/mailbox',
    async (request) => {
      const { project } = await access.project(request, request.params.ref);
      const limit = request.query.limit === undefined ? 100 : Number(request.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw fail('invalid_request', 'limit must be an integer from 1 to 1000.');
      const runtime = await opts.registry.byReference(project.ref);
      if (!runtime) throw fail('not_found', `There is no project with ref "${project.ref}".`);
      return listMailbox({ project: runtime }, limit);
    },
  );

  app.post<{ Params: { ref: string } }>('/v1/projects/:ref/config/auth/smtp-test', async (request) => {
    const { project } = await access.project(request, request.params.ref, ['owner', 'admin']);
    const body = request.body as { to?: unknown } | undefined;
    if (!body || typeof body !== 'object' || typeof body.to !== 'string')
      throw fail('invalid_request', 'Send {"to": "<e-mail address>"}: where the test mail goes.');
    const to = normaliseEmail(body.to);
    const runtime = await opts.registry.byReference(project.ref);
    if (!runtime) throw fail('not_found', `There is no project with ref "${project.ref}".`);
    const ctx = await authContext(opts.p, runtime);
    if (!mailerConfigured(ctx.settings)) throw fail('smtp_not_configured');
    try {
      await sendSmtp(ctx, {
        to,
        subject: 'Hearth test mail',
        text: `This is a test message from Hearth for project ${project.ref}: your SMTP settings work.\n`,
      });
    } catch (err) {
      throw fail(
        'smtp_failed',
        `The SMTP server did not take the test mail: ${(err as Error).message}. Check smtp_host, smtp_port, smtp_user and smtp_pass.`,
      );
    }
    return { sent: true, to };
  });
}
