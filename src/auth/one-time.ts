/**
 * E-mailed secrets (SPEC 3.1, 8). Each message carries a 6-digit code and a
 * link token, stored hashed in one auth.one_time_tokens row that either of
 * them consumes. Codes and links live 10 minutes; 5 wrong tries lock the
 * code and with it the link; a newer message for the same user and purpose supersedes the
 * older one. A 6-digit code has only a million values, so its hash is salted
 * with the row id: a leaked table row alone does not give the code away
 * without a per-row search, and the 10-minute life bounds that search.
 *
 * Decoys: /otp with create_user false and /recover answer alike whether the
 * address has an account, but the code sent to an existing one locks after
 * MAX_CODE_ATTEMPTS wrong tries, while an unknown address would answer
 * otp_expired forever: a guesser would learn who has an account. So when
 * such a request finds no account, a decoy (auth.code_decoys) stands in for
 * the code it would have sent: no secret, only the tries it takes, locked,
 * expired and replaced by a newer request exactly as the code would be.
 * Decoys sit in DECOY_SLOTS slots picked by a hash of purpose and address, a
 * newer one taking over its slot, so spraying addresses cannot grow the
 * table; a decoy pushed out early only gives back the plain 403 answers.
 */
import { randomInt } from 'node:crypto';
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import { randomToken, safeEqual, sha256 } from '../secrets.ts';
import { later, now, type AuthContext } from './context.ts';

type Db = postgres.Sql | postgres.TransactionSql;

export const CODE_MS = 10 * 60_000;
export const MAX_CODE_ATTEMPTS = 5;

export type Purpose = 'email' | 'recovery' | 'email_change' | 'reauthentication';

export interface IssuedSecrets {
  code: string;
  linkToken: string;
}

export interface RedeemedToken {
  id: string;
  user_id: string;
  purpose: Purpose;
  email: string;
  flow_state_id: string | null;
}

const codeHash = (rowId: string, code: string) => sha256(`${rowId}:${code}`);

export async function issueOneTime(
  ctx: AuthContext,
  db: Db,
  input: { userId: string; purpose: Purpose; email: string; flowStateId?: string | null },
): Promise<IssuedSecrets> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const linkToken = randomToken(48);
  const t = now(ctx);
  await db`update auth.one_time_tokens set consumed_at = ${t}
    where user_id = ${input.userId} and purpose = ${input.purpose} and consumed_at is null`;
  const [row] = await db`insert into auth.one_time_tokens
      (user_id, purpose, email, code_hash, link_hash, flow_state_id, created_at, expires_at)
    values (${input.userId}, ${input.purpose}, ${input.email}, ${Buffer.alloc(32)}, ${sha256(linkToken)},
      ${input.flowStateId ?? null}, ${t}, ${later(ctx, CODE_MS)})
    returning id`;
  await db`update auth.one_time_tokens set code_hash = ${codeHash(row!.id as string, code)} where id = ${row!.id}`;
  return { code, linkToken };
}

/** The table's bound (its check constraint, migration 081). */
export const DECOY_SLOTS = 65_536;

const decoyKey = (purpose: Purpose, email: string) => sha256(`${purpose}:${email}`);
const decoySlot = (key: Buffer) => key.readUInt32BE(0) % DECOY_SLOTS;

/** Stands in for the code a request for an address without an account did not send. */
export async function issueDecoy(ctx: AuthContext, db: Db, input: { purpose: Purpose; email: string }): Promise<void> {
  const key = decoyKey(input.purpose, input.email);
  await db`insert into auth.code_decoys (slot, key, attempts, expires_at)
    values (${decoySlot(key)}, ${key}, 0, ${later(ctx, CODE_MS)})
    on conflict (slot) do update set key = excluded.key, attempts = 0, expires_at = excluded.expires_at`;
}

const expired = () => fail('otp_expired');

/**
 * Redeems a typed code for the address. An attempt is reserved before the
 * comparison (so parallel guesses cannot exceed the budget); the fifth wrong
 * try locks the code (429 otp_locked). Without a live code the address's
 * decoy, if any, takes the try in the same statement, so an unknown address
 * answers as an existing one, at the same pace: 403 otp_expired until it
 * locks, then 429.
 */
export async function redeemCode(
  ctx: AuthContext,
  input: { email: string; purposes: Purpose[]; code: string },
): Promise<RedeemedToken> {
  const t = now(ctx);
  const code = input.code.trim();
  const sql = ctx.project.sql;
  const keys = input.purposes.map((purpose) => decoyKey(purpose, input.email));
  const [row] = await sql`with code as (
      update auth.one_time_tokens set attempts = attempts + 1
      where id = (select id from auth.one_time_tokens
        where email = ${input.email} and purpose in ${sql(input.purposes)} and consumed_at is null and expires_at > ${t}
        order by created_at desc limit 1)
      returning id, user_id, purpose, email, flow_state_id, code_hash, attempts
    ), decoy as (
      update auth.code_decoys set attempts = attempts + 1
      where slot in ${sql(keys.map(decoySlot))} and key in ${sql(keys)} and expires_at > ${t}
        and not exists (select from code)
      returning attempts
    )
    select code.id, code.user_id, code.purpose, code.email, code.flow_state_id, code.code_hash,
      coalesce(code.attempts, decoy.attempts) as attempts
    from (select) one left join code on true left join decoy on true`;
  if (!row || row.attempts === null) throw expired();
  if ((row.attempts as number) > MAX_CODE_ATTEMPTS) {
    throw fail('otp_locked', `This code is locked after ${MAX_CODE_ATTEMPTS} wrong attempts; request a new one.`);
  }
  if (row.id === null) throw expired(); // a decoy: no code to match
  if (!/^\d{6}$/.test(code) || !safeEqual(codeHash(row.id as string, code), row.code_hash as Buffer)) throw expired();
  const [consumed] = await sql`update auth.one_time_tokens set consumed_at = ${t}
    where id = ${row.id} and consumed_at is null returning id`;
  if (!consumed) throw expired();
  return row as unknown as RedeemedToken;
}

/**
 * Redeems a link token (single use, 10 minutes); null when bad, used, expired
 * or locked. The lock of the mail's code covers its link too: five wrong
 * codes mean someone is guessing at this mail, so none of it signs in.
 */
export async function redeemLink(ctx: AuthContext, token: string, purposes: Purpose[]): Promise<RedeemedToken | null> {
  const sql = ctx.project.sql;
  const t = now(ctx);
  const [row] = await sql`update auth.one_time_tokens set consumed_at = ${t}
    where link_hash = ${sha256(token)} and purpose in ${sql(purposes)} and consumed_at is null and expires_at > ${t}
      and attempts < ${MAX_CODE_ATTEMPTS}
    returning id, user_id, purpose, email, flow_state_id`;
  return (row as unknown as RedeemedToken | undefined) ?? null;
}
