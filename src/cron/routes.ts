/**
 * Cron-job management (SPEC 4.5): /v1/projects/{ref}/cron-jobs for owner and
 * admin sessions of the project's organization. Errors are the management
 * envelope `{error: {code, message}}`.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../context.ts';
import { managementAccess, objectBody, refuseNonJsonBodies, requireSession } from '../http/management-access.ts';
import { createCronJob, deleteCronJob, getCronJob, listCronJobs } from './jobs.ts';

const ADMINS = ['owner', 'admin'] as const;

type Ref = { Params: { ref: string } };
type RefName = { Params: { ref: string; name: string } };

export async function cronRoutes(app: FastifyInstance, opts: { p: Platform }) {
  const { p } = opts;
  const access = managementAccess(p);

  app.addHook('onRequest', requireSession(p));
  refuseNonJsonBodies(app);

  app.get<Ref>('/v1/projects/:ref/cron-jobs', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    return listCronJobs(p, project);
  });

  app.post<Ref>('/v1/projects/:ref/cron-jobs', async (request, reply) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    return reply.code(201).send(await createCronJob(p, project, objectBody(request)));
  });

  app.get<RefName>('/v1/projects/:ref/cron-jobs/:name', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    return getCronJob(p, project, request.params.name);
  });

  app.delete<RefName>('/v1/projects/:ref/cron-jobs/:name', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    await deleteCronJob(p, project, request.params.name);
    return { name: request.params.name, deleted: true };
  });
}
