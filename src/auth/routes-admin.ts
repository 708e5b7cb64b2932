/**
 * GoTrue routes beyond SPEC 4.1 that supabase-js calls: the admin API
 * (`auth.admin.*`, secret key only), /invite, /resend, /reauthenticate,
 * /settings and /health. Registered inside authRoutes, so the empty-JSON
 * body parser and the mail queue are shared.
 */
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import {
  adminCreateUser,
  adminDeleteFactor,
  adminDeleteUser,
  adminGetUser,
  adminListFactors,
  adminSignOut,
  adminUpdateUser,
  generateLink,
  inviteUser,
  LINK_TYPES,
  listUsers,
  parseBanDuration,
  PER_PAGE_MAX,
  resendMail,
  type AdminAttributes,
  type GenerateLinkType,
} from './admin.ts';
import type { Background } from './background.ts';
import { authContext, type AuthContext } from './context.ts';
import { idParam, queryOf, userClaims, UUID } from './http.ts';
import { deliver, mailerConfigured } from './mailer.ts';
import { reauthenticationMail } from './messages.ts';
import { issueOneTime } from './one-time.ts';
import { PROVIDERS } from './oauth-providers.ts';
import { spendRateLimit } from './rate-limit.ts';
import { redirectTarget } from './redirects.ts';
import { signedInUser } from './users.ts';
import {
  invalid,
  metadata,
  normaliseEmail,
  objectBody,
  optionalBoolean,
  optionalString,
  requiredString,
  storableQueryValue,
} from './validate.ts';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

type IdParams = { Params: { id: string } };

/** The admin API needs the secret key (role service_role); the publishable key or a user's token is GoTrue's 403 not_admin. */
function requireAdmin(request: FastifyRequest): void {
  if (request.hearth.auth?.caller.role !== 'service_role') {
    throw fail('not_admin', 'User not allowed: the admin API needs the secret key (service_role).');
  }
}

function objectField(body: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid(`${name} must be a JSON object.`);
  if (JSON.stringify(v).length > 16_384) throw invalid(`${name} must be at most 16 KiB of JSON.`);
  return v as Record<string, unknown>;
}

/** The AdminUserAttributes of supabase-js, checked; phone sign-in does not exist in Hearth and is refused. */
function adminAttributes(body: Record<string, unknown>): AdminAttributes {
  if (optionalString(body, 'phone') !== undefined || body.phone_confirm === true) {
    throw fail('phone_provider_disabled', 'Hearth has no phone sign-in: users are identified by e-mail address.');
  }
  const role = optionalString(body, 'role');
  if (role !== undefined && role !== 'authenticated') {
    throw invalid('role: Hearth access tokens always carry role authenticated; other roles are not supported.');
  }
  const passwordHash = optionalString(body, 'password_hash');
  if (passwordHash !== undefined && !/^\$argon2(id|i|d)\$/.test(passwordHash)) {
    throw invalid('password_hash must be an argon2 hash ($argon2id$...); bcrypt and scrypt hashes are not supported.');
  }
  const password = optionalString(body, 'password');
  if (password !== undefined && passwordHash !== undefined) throw invalid('Send password or password_hash, not both.');
  const email = optionalString(body, 'email');
  const ban = optionalString(body, 'ban_duration');
  const id = optionalString(body, 'id');
  if (id !== undefined && !UUID.test(id)) throw invalid('id must be a UUID.');
  return {
    email: email === undefined ? undefined : normaliseEmail(email),
    password,
    passwordHash,
    emailConfirm: optionalBoolean(body, 'email_confirm'),
    userMetadata: objectField(body, 'user_metadata'),
    appMetadata: objectField(body, 'app_metadata'),
    banMs: ban === undefined ? undefined : parseBanDuration(ban),
    id,
  };
}

function positiveInt(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) throw invalid(`${name} must be an integer from 1 to ${max}.`);
  return n;
}

export async function adminRoutes(app: FastifyInstance, opts: { p: Platform; background: Background }) {
  const { p, background } = opts;
  const ctxOf = (request: FastifyRequest): Promise<AuthContext> => authContext(p, request.hearth.project);
  const redirectOf = (ctx: AuthContext, request: FastifyRequest, body: Record<string, unknown>) =>
    redirectTarget(ctx.settings, queryOf(request).redirect_to ?? optionalString(body, 'redirect_to'));

  app.get('/auth/v1/admin/users', async (request, reply) => {
    requireAdmin(request);
    const q = queryOf(request);
    const page = positiveInt(q.page, 'page', 1, 1_000_000);
    const perPage = positiveInt(q.per_page, 'per_page', 50, PER_PAGE_MAX);
    const { users, total } = await listUsers(
      await ctxOf(request),
      page,
      perPage,
      q.filter === undefined ? undefined : storableQueryValue('filter', q.filter),
    );
    // GoTrue's pagination headers, which supabase-js reads into nextPage, lastPage and total.
    const last = Math.max(1, Math.ceil(total / perPage));
    const link = (n: number, rel: string) => `</auth/v1/admin/users?page=${n}&per_page=${perPage}>; rel="${rel}"`;
    const links = [...(page < last ? [link(page + 1, 'next')] : []), link(last, 'last')];
    reply.header('x-total-count', String(total));
    reply.header('link', links.join(', '));
    return { users, aud: 'authenticated' };
  });

  app.post('/auth/v1/admin/users', async (request) => {
    requireAdmin(request);
    const a = adminAttributes(objectBody(request.body));
    if (a.email === undefined) throw invalid('email is required (Hearth users are identified by e-mail address).');
    return adminCreateUser(await ctxOf(request), { ...a, email: a.email });
  });

  app.get<IdParams>('/auth/v1/admin/users/:id', async (request) => {
    requireAdmin(request);
    return adminGetUser(await ctxOf(request), idParam(request.params.id, 'user'));
  });

  app.put<IdParams>('/auth/v1/admin/users/:id', async (request) => {
    requireAdmin(request);
    const id = idParam(request.params.id, 'user');
    const a = adminAttributes(objectBody(request.body));
    if (a.id !== undefined && a.id !== id) throw invalid('A user id cannot be changed.');
    return adminUpdateUser(await ctxOf(request), id, a);
  });

  app.delete<IdParams>('/auth/v1/admin/users/:id', async (request) => {
    requireAdmin(request);
    const id = idParam(request.params.id, 'user');
    const soft = optionalBoolean(objectBody(request.body), 'should_soft_delete') ?? false;
    await adminDeleteUser(await ctxOf(request), id, soft);
    return {};
  });

  // Hearth's own route: GoTrue signs a user out only with that user's access token (auth.admin.signOut(jwt)).
  app.post<IdParams>('/auth/v1/admin/users/:id/logout', async (request, reply) => {
    requireAdmin(request);
    await adminSignOut(await ctxOf(request), idParam(request.params.id, 'user'));
    return reply.code(204).send();
  });

  app.get<IdParams>('/auth/v1/admin/users/:id/factors', async (request) => {
    requireAdmin(request);
    return adminListFactors(await ctxOf(request), idParam(request.params.id, 'user'));
  });

  app.delete<{ Params: { id: string; factorId: string } }>(
    '/auth/v1/admin/users/:id/factors/:factorId',
    async (request) => {
      requireAdmin(request);
      const userId = idParam(request.params.id, 'user');
      const factorId = idParam(request.params.factorId, 'factor');
      return adminDeleteFactor(await ctxOf(request), userId, factorId);
    },
  );

  app.post('/auth/v1/admin/generate_link', async (request) => {
    requireAdmin(request);
    const body = objectBody(request.body);
    const type = requiredString(body, 'type');
    if (!(LINK_TYPES as readonly string[]).includes(type))
      throw invalid(`type must be one of ${LINK_TYPES.join(', ')}.`);
    const ctx = await ctxOf(request);
    const newEmail = optionalString(body, 'new_email');
    return generateLink(ctx, {
      type: type as GenerateLinkType,
      email: normaliseEmail(requiredString(body, 'email')),
      newEmail: newEmail === undefined ? undefined : normaliseEmail(newEmail),
      password: optionalString(body, 'password'),
      data: metadata(body),
      redirectTo: redirectOf(ctx, request, body),
    });
  });

  app.post('/auth/v1/invite', async (request) => {
    requireAdmin(request);
    const body = objectBody(request.body);
    const ctx = await ctxOf(request);
    return inviteUser(ctx, {
      email: normaliseEmail(requiredString(body, 'email')),
      data: metadata(body),
      redirectTo: redirectOf(ctx, request, body),
    });
  });

  app.post('/auth/v1/resend', async (request) => {
    const body = objectBody(request.body);
    const type = requiredString(body, 'type');
    if (type === 'sms' || type === 'phone_change') {
      throw fail('phone_provider_disabled', 'Hearth has no phone sign-in: there is nothing to resend by SMS.');
    }
    if (type !== 'signup' && type !== 'email_change') throw invalid('type must be signup or email_change.');
    const ctx = await ctxOf(request);
    const req = {
      type: type as 'signup' | 'email_change',
      email: normaliseEmail(requiredString(body, 'email')),
      redirectTo: redirectOf(ctx, request, body),
    };
    await spendRateLimit(ctx, 'email_sent', request.ip);
    // Whether the address exists (and needs a message) is decided after the answer, as for /otp.
    background.run('auth resend mail', () => resendMail(ctx, req));
    return {};
  });

  app.get('/auth/v1/reauthenticate', async (request) => {
    const claims = userClaims(request);
    const ctx = await ctxOf(request);
    const user = await signedInUser(ctx.project.sql, claims.sub);
    if (!user.email)
      throw invalid('Reauthentication requires the user to have an email or a phone number (a guest has neither).');
    await spendRateLimit(ctx, 'email_sent', request.ip);
    const secrets = await issueOneTime(ctx, ctx.project.sql, {
      userId: user.id,
      purpose: 'reauthentication',
      email: user.email,
    });
    await deliver(ctx, reauthenticationMail(user.email, secrets));
    return {};
  });

  app.get('/auth/v1/settings', async (request) => {
    const s = (await ctxOf(request)).settings;
    const external: Record<string, boolean> = {
      email: true,
      phone: false,
      anonymous_users: s.external_anonymous_users_enabled !== false,
    };
    // A provider counts as on when it would actually work (enabled and given its credentials), as GET /authorize decides.
    for (const name of PROVIDERS) {
      external[name] =
        s[`external_${name}_enabled`] === true &&
        !!s[`external_${name}_client_id`] &&
        !!s[`external_${name}_secret`] &&
        (name !== 'oidc' || !!s.external_oidc_url);
    }
    return {
      external,
      disable_signup: s.disable_signup === true,
      // config/auth's: false means a password sign-up waits for its confirmation mail.
      mailer_autoconfirm: s.mailer_autoconfirm !== false,
      phone_autoconfirm: false,
      sms_provider: '',
      saml_enabled: false,
      mailer_configured: mailerConfigured(s),
    };
  });

  app.get('/auth/v1/health', async () => ({
    version: VERSION,
    name: 'Hearth Auth',
    description: 'Hearth Auth is a GoTrue-compatible user and session API.',
  }));
}
