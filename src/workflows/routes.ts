/**
 * Workflow management routes (SPEC 4.6): owner or admin sessions only, and
 * 403 forbidden until config/workflows.enabled is on. So is the log drain
 * (PUT/GET/DELETE /v1/projects/{ref}/log-drain), which ships the workflow
 * engine's events and so belongs to the capability like every other route.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import type { ProjectRow } from '../platform/projects.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { managementAccess, objectBody, refuseNonJsonBodies, requireSession } from '../http/management-access.ts';
import { refuseUnknownFields } from '../platform/text.ts';
import { checkWorkflowName, getDefinition, listDefinitions, publishDefinition, setEnabled } from './definitions.ts';
import { getLogDrain, removeLogDrain, setLogDrain } from './drain.ts';
import {
  cancelRun,
  checkIdempotencyKey,
  checkRequestJson,
  getRun,
  listRuns,
  sendSignal,
  startRun,
  workflowsEnabled,
} from './runs.ts';
import {
  createQueueTrigger,
  createRowTrigger,
  deleteQueueTrigger,
  deleteRowTrigger,
  listQueueTriggers,
  listRowTriggers,
} from './triggers.ts';
import { LIMITS } from './validate.ts';

type Params = { ref: string; name: string; id: string };

export async function workflowRoutes(app: FastifyInstance, opts: { p: Platform; registry: ProjectRegistry }) {
  const { p, registry } = opts;
  const access = managementAccess(p);

  app.addHook('onRequest', requireSession(p));
  refuseNonJsonBodies(app);

  /** The project, for an owner/admin, with workflows enabled. */
  async function gate(request: FastifyRequest<{ Params: Partial<Params> }>): Promise<ProjectRow> {
    const { project } = await access.project(request, request.params.ref!, ['owner', 'admin']);
    if (!(await workflowsEnabled(p.dbs.control, project.id))) {
      throw fail(
        'forbidden',
        'Workflows are not enabled for this project: PATCH /v1/projects/{ref}/config/workflows {"enabled": true}.',
      );
    }
    return project;
  }

  /** The workflow name of the path: a malformed one is 400 invalid_name on every route, as on PUT. */
  const named = (request: FastifyRequest<{ Params: Partial<Params> }>) => checkWorkflowName(request.params.name);

  const W = '/v1/projects/:ref/workflows';

  app.get<{ Params: Params }>(W, async (request) => listDefinitions(p, (await gate(request)).id));

  app.get<{ Params: Params }>(`${W}/:name`, async (request) =>
    getDefinition(p, (await gate(request)).id, named(request)),
  );

  // A definition within every SPEC limit (200 steps, each with a 256 KiB payload and a compensation of
  // its own) is far over the server-wide body limit; only owner/admin sessions get this far.
  const definitionBodyLimit = Math.max(
    p.config.bodyLimitBytes,
    LIMITS.steps * 2 * (LIMITS.payloadBytes + LIMITS.sqlBytes) + 1024 * 1024,
  );
  app.put<{ Params: Params }>(`${W}/:name`, { bodyLimit: definitionBodyLimit }, async (request, reply) => {
    const project = await gate(request);
    return reply.code(201).send(await publishDefinition(p, project.id, request.params.name, request.body));
  });

  app.patch<{ Params: Params }>(`${W}/:name`, async (request, reply) => {
    const project = await gate(request);
    refuseUnknownFields(objectBody(request), ['enabled'], 'A workflow PATCH');
    await setEnabled(p, project.id, named(request), request.body);
    return reply.code(204).send();
  });

  app.post<{ Params: Params }>(`${W}/:name/runs`, async (request, reply) => {
    const project = await gate(request);
    const name = named(request);
    // Every field is optional, so a start may come without a body at all.
    const body = request.body === undefined || request.body === null ? {} : objectBody(request);
    refuseUnknownFields(body, ['input', 'idempotency_key'], 'A run start');
    const key = checkIdempotencyKey(body.idempotency_key);
    // Only an absent input defaults to {}: an explicit null is valid JSON input and is kept.
    const input = checkRequestJson(body.input === undefined ? {} : body.input, 'input');
    const run = await startRun(p, project, name, input, { idempotencyKey: key, trigger: 'api' });
    return reply.code(run.created ? 201 : 200).send({ id: run.id, status: run.status });
  });

  app.get<{ Params: Params }>(`${W}/:name/runs`, async (request) =>
    listRuns(p, (await gate(request)).id, named(request)),
  );

  app.get<{ Params: Params }>(`${W}/:name/runs/:id`, async (request) =>
    getRun(p, (await gate(request)).id, named(request), request.params.id),
  );

  app.post<{ Params: Params }>(`${W}/:name/runs/:id/cancel`, async (request) =>
    cancelRun(p, (await gate(request)).id, named(request), request.params.id),
  );

  app.post<{ Params: Params }>(`${W}/:name/runs/:id/signals`, async (request, reply) => {
    const project = await gate(request);
    refuseUnknownFields(objectBody(request), ['signal', 'payload', 'idempotency_key'], 'A signal');
    const out = await sendSignal(p, project.id, named(request), request.params.id, request.body);
    return reply.code(out.created ? 201 : 200).send(out.signal);
  });

  const Q = '/v1/projects/:ref/workflow-queue-triggers';
  app.get<{ Params: Params }>(Q, async (request) => listQueueTriggers(p, (await gate(request)).id));
  app.post<{ Params: Params }>(Q, async (request, reply) => {
    const project = await gate(request);
    const body = objectBody(request);
    refuseUnknownFields(body, ['queue', 'workflow'], 'A queue trigger');
    return reply.code(201).send(await createQueueTrigger(p, registry, project, body));
  });
  app.delete<{ Params: Params }>(`${Q}/:id`, async (request, reply) => {
    await deleteQueueTrigger(p, (await gate(request)).id, request.params.id);
    return reply.code(204).send();
  });

  const R = '/v1/projects/:ref/workflow-row-triggers';
  app.get<{ Params: Params }>(R, async (request) => listRowTriggers(p, (await gate(request)).id));
  app.post<{ Params: Params }>(R, async (request, reply) => {
    const project = await gate(request);
    const body = objectBody(request);
    refuseUnknownFields(body, ['table', 'events', 'filter', 'workflow'], 'A row trigger');
    return reply.code(201).send(await createRowTrigger(p, registry, project, body));
  });
  app.delete<{ Params: Params }>(`${R}/:id`, async (request, reply) => {
    const project = await gate(request);
    await deleteRowTrigger(p, registry, project, request.params.id);
    return reply.code(204).send();
  });

  app.put<{ Params: Params }>('/v1/projects/:ref/log-drain', async (request) => {
    const project = await gate(request);
    const body = objectBody(request);
    refuseUnknownFields(body, ['url'], 'A log drain');
    return setLogDrain(p, project.id, body.url);
  });
  app.get<{ Params: Params }>('/v1/projects/:ref/log-drain', async (request) => {
    return getLogDrain(p, (await gate(request)).id);
  });
  app.delete<{ Params: Params }>('/v1/projects/:ref/log-drain', async (request, reply) => {
    await removeLogDrain(p, (await gate(request)).id);
    return reply.code(204).send();
  });
}
