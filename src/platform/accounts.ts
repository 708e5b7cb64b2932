/**
 * Platform accounts (the people who run projects), organizations, members and
 * management sessions. Sessions are opaque bearer tokens stored as hashes.
 */
import { fail } from '../errors.ts';
import type { Platform } from '../context.ts';
import type { Sql } from '../db/pools.ts';
import { throttledLogin } from './login-throttle.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { randomToken, sha256 } from '../secrets.ts';
import { unstorableText } from './text.ts';

export type MemberRole = 'owner' | 'admin' | 'developer';
export const MEMBER_ROLES: MemberRole[] = ['owner', 'admin', 'developer'];
export const SESSION_SECONDS = 24 * 3600;
export const CLI_SESSION_SECONDS = 30 * 24 * 3600;

export interface Account {
  id: string;
  email: string;
}

// No white space or control characters (U+0000 included, which a text column refuses).
const EMAIL = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]{1,255}$/u;

export function checkEmail(email: unknown): string {
  if (typeof email !== 'string' || !EMAIL.test(email) || email.length > 320 || unstorableText(email)) {
    throw fail('invalid_email');
  }
  return email.trim();
}

export function checkNewPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < 10 || password.length > 128) {
    throw fail('invalid_password');
  }
  return password;
}

export async function createAccount(sql: Sql, email: string, password: string): Promise<Account> {
  const hash = await hashPassword(password);
  try {
    const [row] =
      await sql`insert into platform.accounts (email, password_hash) values (${email}, ${hash}) returning id, email`;
    return row as Account;
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw fail('email_taken', `An account with e-mail ${email} already exists.`);
    throw err;
  }
}

export async function findAccountByEmail(
  sql: Sql,
  email: string,
): Promise<(Account & { password_hash: string }) | undefined> {
  const [row] = await sql`select id, email, password_hash from platform.accounts where lower(email) = lower(${email})`;
  return row as (Account & { password_hash: string }) | undefined;
}

export async function createSession(
  p: Platform,
  accountId: string,
  seconds = SESSION_SECONDS,
): Promise<{ access_token: string; token_type: 'bearer'; expires_in: number }> {
  const token = `hearth_mgmt_${randomToken(40)}`;
  const expires = new Date(p.clock.now().getTime() + seconds * 1000);
  await p.dbs.control`insert into platform.sessions (account_id, token_hash, expires_at)
    values (${accountId}, ${sha256(token)}, ${expires})`;
  return { access_token: token, token_type: 'bearer', expires_in: seconds };
}

/** POST /v1/login: a management session for the right e-mail and password, under the sign-in throttle. */
export async function login(p: Platform, email: unknown, password: unknown, clientIp: string) {
  if (typeof email !== 'string' || typeof password !== 'string') {
    throw fail('invalid_request', 'Send {"email": "...", "password": "..."}.');
  }
  const account = await throttledLogin(p, email, clientIp, async () => {
    // An address the database cannot hold has no account; the dummy verify below still runs.
    const found = unstorableText(email) ? undefined : await findAccountByEmail(p.dbs.control, email);
    const ok = await verifyPassword(found?.password_hash, password);
    if (!found || !ok) throw fail('unauthorized', 'Wrong e-mail or password.');
    return found;
  });
  return createSession(p, account.id);
}

/** The account behind a management bearer token, or null when it is unknown or expired. */
export async function accountForToken(p: Platform, token: string): Promise<Account | null> {
  const [row] = await p.dbs.control`select a.id, a.email from platform.sessions s
    join platform.accounts a on a.id = s.account_id
    where s.token_hash = ${sha256(token)} and s.expires_at > ${p.clock.now()}`;
  return (row as Account | undefined) ?? null;
}

export async function createOrganization(
  sql: Sql,
  name: string,
  ownerId: string,
): Promise<{ id: string; name: string }> {
  return sql.begin(async (tx) => {
    const [org] = await tx`insert into platform.organizations (name) values (${name}) returning id, name`;
    await tx`insert into platform.members (organization_id, account_id, role) values (${org!.id}, ${ownerId}, 'owner')`;
    return org as { id: string; name: string };
  }) as Promise<{ id: string; name: string }>;
}

export async function memberRole(sql: Sql, organizationId: string, accountId: string): Promise<MemberRole | null> {
  const [row] =
    await sql`select role from platform.members where organization_id = ${organizationId} and account_id = ${accountId}`;
  return (row?.role as MemberRole | undefined) ?? null;
}

export async function organizationExists(sql: Sql, organizationId: string): Promise<boolean> {
  const [row] = await sql`select 1 from platform.organizations where id = ${organizationId}`;
  return Boolean(row);
}

/** The organization's first owner: whom `hearth status` signs in. */
export async function firstOwner(sql: Sql, organizationId: string): Promise<{ id: string; email: string }> {
  const [row] = await sql`select a.id, a.email from platform.members m join platform.accounts a on a.id = m.account_id
    where m.organization_id = ${organizationId} and m.role = 'owner' order by m.created_at limit 1`;
  return row as { id: string; email: string };
}

/** Removes management sessions past their expiry (the hourly cleanup). */
export async function pruneSessions(p: Platform): Promise<void> {
  await p.dbs.control`delete from platform.sessions where expires_at < ${p.clock.now()}`;
}

export async function listOrganizations(sql: Sql, accountId: string) {
  return sql`select o.id, o.name, m.role, o.created_at from platform.organizations o
    join platform.members m on m.organization_id = o.id where m.account_id = ${accountId} order by o.created_at`;
}

export async function listMembers(sql: Sql, organizationId: string) {
  return sql`select a.id as account_id, a.email, m.role, m.created_at from platform.members m
    join platform.accounts a on a.id = m.account_id where m.organization_id = ${organizationId} order by m.created_at`;
}

/**
 * Adds a member: an existing account by e-mail (password ignored) or a new one,
 * in one transaction. Concurrent adds of the same address end in one member
 * and 409 already_member for the others, never a constraint error.
 */
export async function addMember(sql: Sql, organizationId: string, email: string, password: unknown, role: MemberRole) {
  const existing = await findAccountByEmail(sql, email);
  const newPassword = existing ? null : checkNewPassword(password);
  const hash = newPassword === null ? null : await hashPassword(newPassword);
  return sql.begin(async (tx) => {
    let id = existing?.id as string | undefined;
    let created = false;
    if (!id) {
      const [made] = await tx`insert into platform.accounts (email, password_hash) values (${email}, ${hash})
        on conflict ((lower(email))) do nothing returning id`;
      // Lost a race with another add of the same address: that account is the one to add.
      id = (made?.id ?? (await findAccountByEmail(tx as unknown as Sql, email))!.id) as string;
      created = Boolean(made);
    }
    const [added] = await tx`insert into platform.members (organization_id, account_id, role)
      values (${organizationId}, ${id}, ${role}) on conflict do nothing returning account_id`;
    if (!added) throw fail('already_member', `${email} is already a member of this organization.`);
    return { account_id: id, email, role, created };
  });
}
