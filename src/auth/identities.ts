/**
 * Linked social identities (SPEC 2.2, 3.1, 5). A provider identity
 * (provider, subject) belongs to one user. Signing in with it:
 * - an identity already recorded signs its user in;
 * - otherwise a provider-verified e-mail that matches an account links the
 *   identity to that account;
 * - otherwise a new user is created (with the provider's e-mail when no
 *   account holds it, confirmed only if the provider verified it; an
 *   unverified address already in use is left off the new account).
 * A signed-in user linking an identity bound to another account is refused
 * (never moved); a guest who links one becomes permanent with the same id.
 * Unlinking the last sign-in method (no other identity, no password and no
 * passkey) is refused.
 */
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import { now, type AuthContext } from './context.ts';
import { userGone } from './http.ts';
import {
  createUser,
  emailIdentityId,
  findUserByEmail,
  findUserById,
  refuseSignupWhenDisabled,
  type UserRow,
} from './users.ts';

type Db = postgres.Sql | postgres.TransactionSql;

export interface ProviderProfile {
  provider: string;
  /** The provider's stable subject for the person. */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** identity_data as shown in GET /user (and copied into a new user's user_metadata). */
  data: Record<string, unknown>;
}

interface IdentityRow {
  id: string;
  user_id: string;
  provider: string;
}

async function withProvider(ctx: AuthContext, db: Db, user: UserRow, provider: string): Promise<UserRow> {
  const providers = new Set<string>(
    Array.isArray(user.raw_app_meta_data.providers) ? (user.raw_app_meta_data.providers as string[]) : [],
  );
  providers.delete('anonymous');
  providers.add(provider);
  const app = {
    ...user.raw_app_meta_data,
    provider:
      user.raw_app_meta_data.provider === 'anonymous' ? provider : (user.raw_app_meta_data.provider ?? provider),
    providers: [...providers],
  };
  const [row] =
    await db`update auth.users set raw_app_meta_data = ${db.json(app as never)}, updated_at = ${now(ctx)} where id = ${user.id} returning *`;
  return row as UserRow;
}

async function insertIdentity(ctx: AuthContext, db: Db, userId: string, p: ProviderProfile): Promise<void> {
  const t = now(ctx);
  await db`insert into auth.identities (user_id, provider, provider_id, identity_data, email, last_sign_in_at, created_at, updated_at)
    values (${userId}, ${p.provider}, ${p.subject}, ${db.json(p.data as never)}, ${p.email}, ${t}, ${t}, ${t})`;
}

/** A guest who links an identity becomes permanent, keeping its id; it takes a verified e-mail nobody else holds. */
async function makePermanent(ctx: AuthContext, db: Db, user: UserRow, p: ProviderProfile): Promise<UserRow> {
  const free = p.email && p.emailVerified && !user.email && !(await findUserByEmail(db, p.email));
  const [row] = await db`update auth.users set is_anonymous = false,
      email = coalesce(email, ${free ? p.email : null}),
      email_confirmed_at = case when ${!!free} then ${now(ctx)} else email_confirmed_at end,
      updated_at = ${now(ctx)}
    where id = ${user.id} returning *`;
  return row as UserRow;
}

export const identityTaken = () => fail('identity_already_exists');

/** Finds, links or creates the user of a provider identity (one transaction, the identity row locked). */
export async function userForIdentity(
  ctx: AuthContext,
  tx: Db,
  p: ProviderProfile,
  linkUserId: string | null,
): Promise<UserRow> {
  const t = now(ctx);
  const [existing] =
    await tx`select id, user_id, provider from auth.identities where provider = ${p.provider} and provider_id = ${p.subject} for update`;
  const identity = existing as IdentityRow | undefined;
  if (identity) {
    if (linkUserId && identity.user_id !== linkUserId) throw identityTaken();
    await tx`update auth.identities set identity_data = ${tx.json(p.data as never)}, email = ${p.email}, last_sign_in_at = ${t}, updated_at = ${t}
      where id = ${identity.id}`;
    const user = await findUserById(tx, identity.user_id);
    if (!user) throw fail('user_not_found', 'The account of this identity no longer exists.');
    return user;
  }
  if (linkUserId) {
    const [locked] = await tx`select * from auth.users where id = ${linkUserId} for update`;
    if (!locked) throw fail('user_not_found', 'The user linking this identity no longer exists.');
    await insertIdentity(ctx, tx, linkUserId, p);
    const user = (locked as UserRow).is_anonymous
      ? await makePermanent(ctx, tx, locked as UserRow, p)
      : (locked as UserRow);
    return withProvider(ctx, tx, user, p.provider);
  }
  const holder = p.email ? await findUserByEmail(tx, p.email) : null;
  if (holder && p.emailVerified) {
    await insertIdentity(ctx, tx, holder.id, p);
    return withProvider(ctx, tx, holder, p.provider);
  }
  refuseSignupWhenDisabled(ctx); // as GoTrue: linking and signing in go on, a new account does not
  const created = await createUser(ctx, tx, {
    email: holder ? null : p.email,
    passwordHash: null,
    metadata: p.data,
    confirmed: p.emailVerified,
  });
  const [user] = await tx`update auth.users set is_anonymous = false,
      raw_app_meta_data = ${tx.json({ provider: p.provider, providers: [p.provider] })}
    where id = ${created.id} returning *`;
  await insertIdentity(ctx, tx, created.id, p);
  return user as UserRow;
}

/** DELETE /user/identities/{id}: removes one of the caller's identities unless it is their last way to sign in. */
export async function unlinkIdentity(ctx: AuthContext, userId: string, identityId: string): Promise<void> {
  await ctx.project.sql.begin(async (tx) => {
    const [user] = await tx`select * from auth.users where id = ${userId} for update`;
    if (!user || user.deleted_at) throw userGone();
    const identities =
      (await tx`select id, user_id, provider, provider_id from auth.identities where user_id = ${userId}`) as unknown as (IdentityRow & {
        provider_id: string;
      })[];
    // SPEC 4.1 names the path segment {id}: the identity's identity_id (what supabase-js sends) or, when it names
    // exactly one of the caller's identities, the `id` field GET /user shows (the provider's subject).
    const bySubject = identities.filter((i) => i.provider_id === identityId);
    const target = identities.find((i) => i.id === identityId) ?? (bySubject.length === 1 ? bySubject[0] : undefined);
    if (!target && identityId === emailIdentityId(userId)) {
      throw fail(
        'single_identity_not_deletable',
        "The email identity stands for the account's own address and password, and cannot be unlinked; change the address with PUT /user instead.",
      );
    }
    // 422, GoTrue's status for an identity the user does not have.
    if (!target) throw fail('identity_not_found');
    const [passkey] =
      await tx`select 1 from auth.mfa_factors where user_id = ${userId} and factor_type = 'webauthn' and status = 'verified' limit 1`;
    if (identities.length === 1 && !user.encrypted_password && !passkey) {
      throw fail('single_identity_not_deletable');
    }
    await tx`delete from auth.identities where id = ${target.id}`;
    const remaining = new Set(identities.filter((i) => i.id !== target.id).map((i) => i.provider));
    const app = user.raw_app_meta_data as Record<string, unknown>;
    const providers = (Array.isArray(app.providers) ? (app.providers as string[]) : []).filter(
      (p) => p !== target.provider || remaining.has(p),
    );
    await tx`update auth.users set raw_app_meta_data = ${tx.json({ ...app, providers } as never)}, updated_at = ${now(ctx)} where id = ${userId}`;
  });
}
