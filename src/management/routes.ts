/**
 * The management API (/v1): sign-in, organizations, members, projects, API
 * keys and per-project configuration. Every route but /v1/login needs a
 * management session (`Authorization: Bearer <token>` from /v1/login or
 * `hearth status`); project API keys are refused with 401.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { managementAccess, objectBody, refuseNonJsonBodies, requireSession } from '../http/management-access.ts';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import {
  MEMBER_ROLES,
  addMember,
  checkEmail,
  createOrganization,
  listMembers,
  listOrganizations,
  login,
  memberRole,
  organizationExists,
  type MemberRole,
} from '../platform/accounts.ts';
import { auditQuery, checkQueryInput, runOwnerQuery, SqlError } from '../platform/database-query.ts';
import { envelope } from '../http/envelopes.ts';
import { parseAllowList } from '../outbound/address.ts';
import { RateLimited } from '../db/rate-limit.ts';
import { configAudit, patchSettings, projectSchemas, readSettings, redact } from '../platform/project-config.ts';
import { createApiKey, projectApiKey, projectApiKeys, revokeApiKey, updateApiKey } from '../platform/api-keys.ts';
import { createProject, deleteProject, projectsOfAccount, type ProjectRow } from '../platform/projects.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { removeDeletedProjectBytes } from '../storage/deleted-project.ts';
import { usageOf } from '../platform/request-usage.ts';
import { checkDisplayName, refuseUnknownFields } from '../platform/text.ts';
import { projectBaseUrl, serverUrl } from '../platform/urls.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function projectJson(p: Platform, row: ProjectRow) {
  return {
    id: row.id,
    ref: row.ref,
    name: row.name,
    organization_id: row.organization_id,
    is_default: row.is_default,
    base_url: projectBaseUrl(p.config, row),
    api_url: serverUrl(p.config),
    status: 'ACTIVE_HEALTHY',
    created_at: row.created_at,
  };
}

export async function managementRoutes(app: FastifyInstance, opts: { p: Platform; registry: ProjectRegistry }) {
  const { p, registry } = opts;
  const access = managementAccess(p);
  const ADMINS = ['owner', 'admin'] as const;

  refuseNonJsonBodies(app);
  const session = requireSession(p);
  app.addHook('onRequest', async (request) => {
    if (request.url === '/v1/login' || request.url.startsWith('/v1/login?')) return;
    await session(request);
  });

  app.post('/v1/login', async (request, reply) => {
    const body = objectBody(request);
    try {
      return await login(p, body.email, body.password, request.ip);
    } catch (err) {
      if (err instanceof RateLimited) reply.header('retry-after', String(err.retryAfterSeconds));
      throw err;
    }
  });

  app.get('/v1/organizations', async (request) => listOrganizations(p.dbs.control, access.account(request).id));

  app.post('/v1/organizations', async (request, reply) => {
    const body = objectBody(request);
    refuseUnknownFields(body, ['name'], 'A new organization');
    const name = checkDisplayName(body.name);
    return reply.code(201).send(await createOrganization(p.dbs.control, name, access.account(request).id));
  });

  async function orgRole(request: FastifyRequest, id: string): Promise<MemberRole> {
    if (!UUID.test(id)) throw fail('not_found', `There is no organization with id "${id}".`);
    const role = await memberRole(p.dbs.control, id, access.account(request).id);
    if (!role) {
      const exists = await organizationExists(p.dbs.control, id);
      throw exists
        ? fail('forbidden', 'You are not a member of this organization.')
        : fail('not_found', `There is no organization with id "${id}".`);
    }
    return role;
  }

  app.get<{ Params: { id: string } }>('/v1/organizations/:id/members', async (request) => {
    await orgRole(request, request.params.id);
    return listMembers(p.dbs.control, request.params.id);
  });

  app.post<{ Params: { id: string } }>('/v1/organizations/:id/members', async (request, reply) => {
    const role = await orgRole(request, request.params.id);
    if (role === 'developer') throw fail('forbidden', 'Only owners and admins add members.');
    const body = objectBody(request);
    refuseUnknownFields(body, ['email', 'password', 'role'], 'A new member');
    // Required (issue #2: `{email, password, role}`): a missing role must not quietly make a developer.
    const newRole = body.role;
    if (!MEMBER_ROLES.includes(newRole as MemberRole))
      throw fail('invalid_role', 'role is required and must be "owner", "admin" or "developer".');
    if (newRole === 'owner' && role !== 'owner') throw fail('forbidden', 'Only an owner can add another owner.');
    const member = await addMember(
      p.dbs.control,
      request.params.id,
      checkEmail(body.email),
      body.password,
      newRole as MemberRole,
    );
    return reply.code(201).send(member);
  });

  app.get('/v1/projects', async (request) => {
    const rows = await projectsOfAccount(p.dbs.control, access.account(request).id);
    return rows.map((r) => projectJson(p, r));
  });

  app.post('/v1/projects', async (request, reply) => {
    const body = objectBody(request);
    refuseUnknownFields(body, ['name', 'organization_id'], 'A new project');
    const name = checkDisplayName(body.name);
    const orgId = body.organization_id;
    if (typeof orgId !== 'string' || !UUID.test(orgId)) throw fail('invalid_organization');
    const role = await orgRole(request, orgId);
    if (role === 'developer') throw fail('forbidden', 'Only owners and admins create projects.');
    const row = await createProject(p, { name, organizationId: orgId });
    return reply.code(201).send(projectJson(p, row));
  });

  app.get<{ Params: { ref: string } }>('/v1/projects/:ref', async (request) => {
    const { project } = await access.project(request, request.params.ref);
    return projectJson(p, project);
  });

  app.delete<{ Params: { ref: string } }>('/v1/projects/:ref', async (request, reply) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const body = (request.body ?? {}) as Record<string, unknown>;
    // A misspelt field would otherwise pass unnoticed on the one call that cannot be undone.
    refuseUnknownFields(body, ['confirm'], 'A project deletion');
    if (body.confirm !== project.ref) {
      throw fail(
        'confirmation_required',
        `Deleting drops the project's database. Send {"confirm": "${project.ref}"} to confirm.`,
      );
    }
    await deleteProject(p, project);
    registry.onChange({ kind: 'project', projectId: project.id });
    await removeDeletedProjectBytes(p, project.ref);
    return reply.code(200).send({ id: project.id, ref: project.ref, deleted: true });
  });

  app.get<{ Params: { ref: string } }>('/v1/projects/:ref/api-keys', async (request) => {
    const { project } = await access.project(request, request.params.ref);
    return projectApiKeys(p, project.id);
  });

  // Keys are replaced by creating a new one and revoking the old (docs/management-api.md "API keys").
  app.post<{ Params: { ref: string } }>('/v1/projects/:ref/api-keys', async (request, reply) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const created = await createApiKey(p, project.id, objectBody(request));
    // The NOTIFY reaches this process too, but a moment later: what it built from the keys (functions'
    // key dictionaries, a revoked key's access) is rebuilt here at once, for the very next request.
    registry.onChange({ kind: 'keys', projectId: project.id });
    return reply.code(201).send(created);
  });

  app.get<{ Params: { ref: string; id: string } }>('/v1/projects/:ref/api-keys/:id', async (request) => {
    const { project } = await access.project(request, request.params.ref);
    return projectApiKey(p, project.id, request.params.id);
  });

  app.patch<{ Params: { ref: string; id: string } }>('/v1/projects/:ref/api-keys/:id', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const updated = await updateApiKey(p, project.id, request.params.id, objectBody(request));
    registry.onChange({ kind: 'keys', projectId: project.id });
    return updated;
  });

  app.delete<{ Params: { ref: string; id: string } }>('/v1/projects/:ref/api-keys/:id', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const revoked = await revokeApiKey(p, project.id, request.params.id);
    registry.onChange({ kind: 'keys', projectId: project.id });
    return revoked;
  });

  app.get<{ Params: { ref: string } }>('/v1/projects/:ref/config/audit', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    return configAudit(p.dbs.control, project.id);
  });

  app.get<{ Params: { ref: string } }>('/v1/projects/:ref/usage', async (request) => {
    const { project } = await access.project(request, request.params.ref);
    const { daily_request_quota } = await readSettings(p.dbs.control, project.id, 'limits');
    return { daily_request_quota, days: await usageOf(p, project.id) };
  });

  app.get<{ Params: { ref: string; area: string } }>('/v1/projects/:ref/config/:area', async (request) => {
    const { project } = await access.project(request, request.params.ref);
    return redact(request.params.area, await readSettings(p.dbs.control, project.id, request.params.area));
  });

  app.patch<{ Params: { ref: string; area: string } }>('/v1/projects/:ref/config/:area', async (request) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const setsSchemas =
      request.params.area === 'api' && typeof (request.body as { db_schema?: unknown })?.db_schema === 'string';
    const settings = await patchSettings(
      p.dbs.control,
      project.id,
      request.params.area,
      request.body,
      access.account(request).id,
      {
        outboundAllow: parseAllowList(p.config.outboundAllow),
        projectSchemas: setsSchemas ? await projectSchemas(p.dbs.project(project.db_name)) : undefined,
      },
    );
    registry.onChange({ kind: 'config', projectId: project.id, area: request.params.area });
    return redact(request.params.area, settings);
  });

  // SQL as the project's owner role (docs/management-api.md "Running SQL"):
  // owners and admins only, since the owner role may drop every table.
  app.post<{ Params: { ref: string } }>('/v1/projects/:ref/database/query', async (request, reply) => {
    const { project } = await access.project(request, request.params.ref, ADMINS);
    const input = checkQueryInput(objectBody(request));
    const accountId = access.account(request).id;
    try {
      const out = await runOwnerQuery(p, project, input);
      await auditQuery(p, project.id, accountId, input.query, null);
      return reply.code(201).send(input.format !== 'rows' ? out : (out.results.at(-1)?.rows ?? []));
    } catch (err) {
      if (!(err instanceof SqlError)) throw err;
      await auditQuery(p, project.id, accountId, input.query, err.sql.sqlstate);
      return reply
        .code(400)
        .type('application/json; charset=utf-8')
        .send({ ...(envelope('management', err) as object), ...err.sql });
    }
  });
}
