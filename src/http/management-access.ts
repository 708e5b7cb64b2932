/**
 * What every management (/v1) route needs, whichever area serves it: the
 * session check, the caller's access to a project, and the body rules SPEC 7
 * sets for JSON routes. The management area and the areas with /v1 routes of
 * their own (cron, workflows, functions, the auth mailbox) share it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import { MEMBER_ROLES, accountForToken, memberRole, type Account, type MemberRole } from '../platform/accounts.ts';
import { findProject, type ProjectRow } from '../platform/projects.ts';

declare module 'fastify' {
  interface FastifyRequest {
    account: Account | null;
  }
}

export function objectBody(request: FastifyRequest): Record<string, unknown> {
  const b = request.body;
  if (typeof b !== 'object' || b === null || Array.isArray(b))
    throw fail('invalid_request', 'The body must be a JSON object.');
  return b as Record<string, unknown>;
}

export interface ManagementAccess {
  /** The signed-in account; throws 401 without a valid session. */
  account(request: FastifyRequest): Account;
  /** The project and the caller's role in its organization; 404 unknown, 403 not a member or role too low. */
  project(
    request: FastifyRequest,
    ref: string,
    roles?: readonly MemberRole[],
  ): Promise<{ project: ProjectRow; role: MemberRole }>;
}

export function managementAccess(p: Platform): ManagementAccess {
  return {
    account(request) {
      if (!request.account)
        throw fail('unauthorized', 'Sign in first: send Authorization: Bearer <management session token>.');
      return request.account;
    },
    async project(request, ref, roles = MEMBER_ROLES) {
      const account = this.account(request);
      const project = await findProject(p.dbs.control, ref);
      if (!project) throw fail('not_found', `There is no project with ref "${ref}".`);
      const role = await memberRole(p.dbs.control, project.organization_id, account.id);
      if (!role) throw fail('forbidden', 'This project belongs to an organization you are not a member of.');
      if (!roles.includes(role)) throw fail('forbidden', `This needs the ${roles.join(' or ')} role; you are ${role}.`);
      return { project, role };
    },
  };
}

/**
 * SPEC 7: a body that is not JSON is 400 invalid_request. Without this,
 * Fastify answers a Content-Type it has no parser for (a form post, such as
 * `curl -d` sends by default) with 415, and hands a text/plain body over as
 * a string. Every /v1 plugin calls it, so all management routes answer a
 * non-JSON body alike. Empty bodies stay bodiless, so a cancel sent with any
 * Content-Type still works.
 */
export function refuseNonJsonBodies(app: FastifyInstance): void {
  const refuse = (
    request: FastifyRequest,
    body: string | Buffer,
    done: (err: Error | null, body?: unknown) => void,
  ) => {
    if ((body as string).trim() === '') return done(null, undefined);
    const type = request.headers['content-type'] ?? 'none';
    done(
      fail(
        'invalid_request',
        `The body must be JSON sent with Content-Type: application/json (got Content-Type: ${type}).`,
      ),
    );
  };
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, refuse);
  app.addContentTypeParser('*', { parseAs: 'string' }, refuse);
}

/**
 * The onRequest hook every management plugin adds: a valid management session
 * in `Authorization: Bearer`, else 401 (project API keys are not sessions).
 */
export function requireSession(p: Platform) {
  return async (request: FastifyRequest) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!m) throw fail('unauthorized', 'Missing bearer token: send Authorization: Bearer <management session token>.');
    const account = await accountForToken(p, m[1]!);
    if (!account)
      throw fail('unauthorized', 'The session token is invalid or expired (project API keys are not accepted here).');
    request.account = account;
  };
}
