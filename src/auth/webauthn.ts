/**
 * Passkeys (SPEC 4.1, 5) with @simplewebauthn/server: passkey factors
 * (registration, then assertions as a second factor) and passkey-only
 * sign-in with discoverable credentials. The relying party comes from
 * config/auth (webauthn_rp_id, webauthn_rp_display_name,
 * webauthn_rp_origins); until rp id and origins are set every passkey route
 * answers 422 webauthn_not_configured. User verification is required on
 * every ceremony; the sign counter must grow (a cloned authenticator shows
 * up as a counter that did not). Credentials live in the project's own
 * database, so a passkey of one project is unknown to every other.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { lazy } from '../lazy.ts';
import type postgres from 'postgres';
import { fail } from '../errors.ts';
import type { Settings } from '../platform/settings-schema.ts';
import { now, type AuthContext } from './context.ts';
import {
  consumeChallenge,
  createChallenge,
  lockChallenge,
  stepUpSession,
  userFactor,
  type ChallengeRow,
  type FactorRow,
  type StoredCredential,
} from './factors.ts';
import type { UserClaims } from './http.ts';
import { issueSession, type SessionPayload } from './sessions.ts';
import { findUserById, signedInUser, type UserRow } from './users.ts';
import { invalid } from './validate.ts';

const simpleWebauthn = lazy(() => import('@simplewebauthn/server'));

type Db = postgres.Sql | postgres.TransactionSql;

export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

const TIMEOUT_MS = 60_000;

/** The project's relying party, or 422 webauthn_not_configured. */
export function relyingParty(settings: Settings): RelyingParty {
  const id = settings.webauthn_rp_id ? String(settings.webauthn_rp_id) : '';
  const origins = String(settings.webauthn_rp_origins ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!id || origins.length === 0) {
    throw fail('webauthn_not_configured');
  }
  return { id, name: settings.webauthn_rp_display_name ? String(settings.webauthn_rp_display_name) : id, origins };
}

/** A uuid as the 16 bytes WebAuthn carries as the user handle. */
const userHandle = (userId: string): Uint8Array => Buffer.from(userId.replace(/-/g, ''), 'hex');

async function verifiedCredentials(db: Db, userId: string): Promise<StoredCredential[]> {
  const rows = await db`select web_authn_credential from auth.mfa_factors
    where user_id = ${userId} and factor_type = 'webauthn' and status = 'verified'`;
  return rows.map((r) => r.web_authn_credential as StoredCredential);
}

/** POST /factors/{id}/challenge of a passkey factor: creation options until it is registered, then request options. */
export async function challengeWebauthn(ctx: AuthContext, user: UserRow, factor: FactorRow) {
  const rp = relyingParty(ctx.settings);
  if (factor.status === 'unverified') {
    const existing = await verifiedCredentials(ctx.project.sql, user.id);
    const name = user.email ?? factor.friendly_name ?? user.id;
    const options = await (await simpleWebauthn()).generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: name,
      userDisplayName: name,
      userID: userHandle(user.id) as Uint8Array<ArrayBuffer>,
      attestationType: 'none',
      timeout: TIMEOUT_MS,
      excludeCredentials: existing.map((c) => ({ id: c.id, transports: c.transports })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    const c = await createChallenge(ctx, ctx.project.sql, {
      factorId: factor.id,
      kind: 'webauthn_create',
      webAuthnChallenge: options.challenge,
    });
    // SPEC names the options credential_creation_options; supabase-js reads webauthn.credential_options.publicKey.
    return {
      id: c.id,
      type: 'webauthn' as const,
      expires_at: c.expires_at,
      credential_creation_options: options,
      webauthn: { type: 'create', credential_options: { publicKey: options } },
    };
  }
  const credential = factor.web_authn_credential!;
  const options = await (await simpleWebauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: [{ id: credential.id, transports: credential.transports as never }],
  });
  const c = await createChallenge(ctx, ctx.project.sql, {
    factorId: factor.id,
    kind: 'webauthn_request',
    webAuthnChallenge: options.challenge,
  });
  return {
    id: c.id,
    type: 'webauthn' as const,
    expires_at: c.expires_at,
    credential_request_options: options,
    webauthn: { type: 'request', credential_options: { publicKey: options } },
  };
}

const ceremonyFailed = (err: unknown) =>
  fail(
    'mfa_verification_failed',
    `The passkey ceremony did not verify: ${err instanceof Error ? err.message : String(err)}`,
  );

function asObject<T>(credential: unknown): T {
  if (!credential || typeof credential !== 'object' || Array.isArray(credential)) {
    throw invalid('credential must be the JSON of the PublicKeyCredential (id, rawId, type, response).');
  }
  const c = credential as { id?: unknown; response?: unknown };
  if (typeof c.id !== 'string' || !c.response || typeof c.response !== 'object')
    throw invalid('credential must have an id and a response.');
  return credential as T;
}

/** Checks an assertion against a stored credential and advances its counter (only if nobody advanced it meanwhile). */
async function checkAssertion(
  tx: Db,
  rp: RelyingParty,
  challenge: ChallengeRow,
  factor: FactorRow,
  response: AuthenticationResponseJSON,
): Promise<void> {
  const stored = factor.web_authn_credential!;
  let newCounter: number;
  try {
    const result = await (await simpleWebauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.web_authn_challenge!,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: {
        id: stored.id,
        publicKey: Buffer.from(stored.public_key, 'base64url'),
        counter: stored.counter,
        transports: stored.transports as never,
      },
    });
    if (!result.verified) throw new Error('the signature does not verify with the registered public key');
    if (!result.authenticationInfo.userVerified) throw new Error('user verification was not performed');
    newCounter = result.authenticationInfo.newCounter;
  } catch (err) {
    throw ceremonyFailed(err);
  }
  const [moved] = await tx`update auth.mfa_factors
    set web_authn_credential = jsonb_set(web_authn_credential, '{counter}', ${tx.json(newCounter)}), updated_at = now()
    where id = ${factor.id} and (web_authn_credential->>'counter')::bigint = ${stored.counter} returning id`;
  if (!moved) throw ceremonyFailed(new Error('the sign counter was used concurrently'));
}

/**
 * POST /factors/{id}/verify for a passkey factor: an attestation registers
 * the credential (the factor becomes verified), an assertion proves it; either
 * answers a new aal2 session. The challenge is spent whatever the outcome.
 */
export async function verifyWebauthn(
  ctx: AuthContext,
  claims: UserClaims,
  factorId: string,
  challengeId: string,
  credential: unknown,
): Promise<SessionPayload> {
  const rp = relyingParty(ctx.settings);
  const spent = await ctx.project.sql.begin(async (tx) => {
    const factor = await userFactor(tx, claims.sub, factorId, true);
    if (factor.factor_type !== 'webauthn') throw invalid('This factor is not a passkey; send its TOTP code instead.');
    const challenge = await lockChallenge(ctx, tx, challengeId, factor.id, ['webauthn_create', 'webauthn_request']);
    await consumeChallenge(ctx, tx, challenge.id);
    return { factor, challenge };
  });
  const { factor, challenge } = spent;
  return ctx.project.sql.begin(async (tx) => {
    const user = await signedInUser(tx, claims.sub);
    if (challenge.kind === 'webauthn_create') {
      await register(ctx, tx, rp, challenge, factor, asObject<RegistrationResponseJSON>(credential));
    } else {
      const [fresh] = await tx`select * from auth.mfa_factors where id = ${factor.id} for update`;
      if (!fresh) throw fail('mfa_factor_not_found', 'The factor was removed.');
      await checkAssertion(tx, rp, challenge, fresh as FactorRow, asObject<AuthenticationResponseJSON>(credential));
    }
    return stepUpSession(ctx, tx, user, claims, factor);
  });
}

async function register(
  ctx: AuthContext,
  tx: Db,
  rp: RelyingParty,
  challenge: ChallengeRow,
  factor: FactorRow,
  response: RegistrationResponseJSON,
) {
  if (factor.status !== 'unverified') throw invalid('This passkey is already registered; verify it with an assertion.');
  let stored: StoredCredential;
  try {
    const result = await (await simpleWebauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.web_authn_challenge!,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!result.verified) throw new Error('the attestation was not verified');
    const c = result.registrationInfo.credential;
    stored = {
      id: c.id,
      public_key: Buffer.from(c.publicKey).toString('base64url'),
      counter: c.counter,
      transports: c.transports ?? [],
    };
  } catch (err) {
    throw ceremonyFailed(err);
  }
  try {
    await tx`update auth.mfa_factors set status = 'verified', web_authn_credential = ${tx.json(stored as never)},
        web_authn_credential_id = ${stored.id}, updated_at = ${now(ctx)}
      where id = ${factor.id}`;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw fail('webauthn_credential_exists');
    throw err;
  }
}

/** POST /webauthn/authenticate/options: a challenge for any discoverable passkey of this project. */
export async function passkeySignInOptions(ctx: AuthContext) {
  const rp = relyingParty(ctx.settings);
  const options = await (await simpleWebauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    timeout: TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: [],
  });
  const c = await createChallenge(ctx, ctx.project.sql, {
    factorId: null,
    kind: 'passkey_signin',
    webAuthnChallenge: options.challenge,
  });
  return { id: c.id, expires_at: c.expires_at, credential_request_options: { ...options, allowCredentials: [] } };
}

const signInRefused = (why: string) => fail('invalid_credentials', `Passkey sign-in refused: ${why}`);

/** POST /webauthn/authenticate: the user is the owner of the presented credential; answers an aal1 session. */
export async function passkeySignIn(
  ctx: AuthContext,
  challengeId: string,
  credential: unknown,
): Promise<SessionPayload> {
  const rp = relyingParty(ctx.settings);
  const response = asObject<AuthenticationResponseJSON>(credential);
  const challenge = await ctx.project.sql.begin(async (tx) => {
    const c = await lockChallenge(ctx, tx, challengeId, null, ['passkey_signin']);
    await consumeChallenge(ctx, tx, c.id);
    return c;
  });
  return ctx.project.sql.begin(async (tx) => {
    const [row] = await tx`select * from auth.mfa_factors
      where web_authn_credential_id = ${response.id} and factor_type = 'webauthn' and status = 'verified' for update`;
    if (!row) throw signInRefused('this passkey is not registered with this project.');
    const factor = row as FactorRow;
    const handle = response.response?.userHandle;
    if (handle && !Buffer.from(handle, 'base64url').equals(Buffer.from(userHandle(factor.user_id)))) {
      throw signInRefused('the passkey belongs to a different user than it claims.');
    }
    await checkAssertion(tx, rp, challenge, factor, response);
    const user = await findUserById(tx, factor.user_id);
    if (!user) throw signInRefused('its user no longer exists.');
    return issueSession(ctx, user, { amr: 'webauthn', aal: 'aal1' }, tx);
  });
}
