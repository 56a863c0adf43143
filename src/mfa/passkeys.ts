// Passkeys (WebAuthn) with @simplewebauthn/server: registering one for a signed-in account, and signing in with one,
// alone (a discoverable credential: the passkey names its account) or as the second step after a password. The relying
// party is this service's host (BASE_URL, read per request), its origin the only one accepted. Challenges live in
// PostgreSQL, each spent by the one response that answers it, so a replayed response is refused.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Db } from '../db.ts';
import type { Services } from '../services.ts';
import type { User } from '../accounts/users.ts';
import { problem } from '../http/problem.ts';

const CHALLENGE_SECONDS = 300;
export const PASSKEY_NAME_MAX = 100;

const relyingParty = (services: Services) => {
  const base = new URL(services.config.BASE_URL);
  return { id: base.hostname, origin: base.origin };
};

const refused = (detail: string) => problem('invalid_passkey_response', detail);

async function keepChallenge(db: Db, challenge: string, purpose: 'register' | 'sign_in', userId: string | null) {
  await db.query(
    `INSERT INTO webauthn_challenges (challenge, purpose, user_id, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [challenge, purpose, userId, CHALLENGE_SECONDS],
  );
  // Now and then, forget challenges long past.
  if (Math.random() < 0.01)
    await db.query(`DELETE FROM webauthn_challenges WHERE expires_at < now() - interval '1 day'`).catch(() => {});
}

/** Spends a live challenge of this purpose (and user, when one is named): true once, false ever after. */
async function spendChallenge(
  db: Db,
  challenge: string,
  purpose: 'register' | 'sign_in',
  userId: string | null,
): Promise<boolean> {
  const spent = await db.query(
    `UPDATE webauthn_challenges SET used_at = now()
      WHERE challenge = $1 AND purpose = $2 AND user_id IS NOT DISTINCT FROM $3 AND used_at IS NULL AND expires_at > now()`,
    [challenge, purpose, userId],
  );
  return spent.rowCount === 1;
}

const userHandle = (user: User) => new Uint8Array(Buffer.from(user.id.replace(/-/g, ''), 'hex'));

export async function registrationOptions(
  services: Services,
  user: User,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await services.db.query<{ credential_id: string; transports: string[] }>(
    'SELECT credential_id, transports FROM user_passkeys WHERE user_id = $1',
    [user.id],
  );
  const options = await generateRegistrationOptions({
    rpName: 'svc',
    rpID: relyingParty(services).id,
    userName: user.email,
    userDisplayName: user.name || user.email,
    userID: userHandle(user),
    attestationType: 'none',
    // The same authenticator twice would be one factor listed twice.
    excludeCredentials: existing.rows.map((row) => ({
      id: row.credential_id,
      transports: row.transports as AuthenticatorTransportFuture[],
    })),
    // Discoverable, so that the passkey alone can sign in; verified on the device, so that it is two factors.
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  await keepChallenge(services.db, options.challenge, 'register', user.id);
  return options;
}

/** Verifies the browser's answer to registrationOptions and keeps the passkey under its name. */
export async function registerPasskey(
  services: Services,
  user: User,
  response: RegistrationResponseJSON,
  name: string,
): Promise<{ id: string; name: string; created_at: string }> {
  const rp = relyingParty(services);
  const verified = await verifyRegistrationResponse({
    response,
    expectedChallenge: (challenge) => spendChallenge(services.db, challenge, 'register', user.id),
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: true,
  }).catch(() => undefined);
  if (!verified?.verified) throw refused('The passkey could not be registered: ask for new options and try again.');
  const { credential } = verified.registrationInfo;
  const inserted = await services.db.query<{ id: string; name: string; created_at: Date }>(
    `INSERT INTO user_passkeys (user_id, credential_id, public_key, counter, transports, name)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (credential_id) DO NOTHING RETURNING id, name, created_at`,
    [
      user.id,
      credential.id,
      Buffer.from(credential.publicKey),
      credential.counter,
      credential.transports ?? [],
      name.trim().slice(0, PASSKEY_NAME_MAX) || 'Passkey',
    ],
  );
  const row = inserted.rows[0];
  if (!row) throw refused('This passkey is registered already.');
  return { id: row.id, name: row.name, created_at: row.created_at.toISOString() };
}

/**
 * Options to sign in with a passkey: any of this service's (userId null: the passkey names its account), or one of
 * the account's own (the second step after its password).
 */
export async function signInOptions(
  services: Services,
  userId: string | null,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const own = userId
    ? (
        await services.db.query<{ credential_id: string; transports: string[] }>(
          'SELECT credential_id, transports FROM user_passkeys WHERE user_id = $1',
          [userId],
        )
      ).rows
    : [];
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(services).id,
    userVerification: userId ? 'preferred' : 'required',
    allowCredentials: own.map((row) => ({
      id: row.credential_id,
      transports: row.transports as AuthenticatorTransportFuture[],
    })),
  });
  await keepChallenge(services.db, options.challenge, 'sign_in', userId);
  return options;
}

/**
 * Verifies a passkey's answer to signInOptions: the account it signs in, and whether the person was verified on the
 * device. With userId (the second step) the passkey must be that account's.
 */
export async function verifyPasskeySignIn(
  services: Services,
  response: AuthenticationResponseJSON,
  userId: string | null,
): Promise<{ userId: string; userVerified: boolean }> {
  const found = await services.db.query<{
    id: string;
    user_id: string;
    public_key: Buffer;
    counter: string;
    transports: string[];
  }>('SELECT id, user_id, public_key, counter, transports FROM user_passkeys WHERE credential_id = $1', [
    typeof response.id === 'string' ? response.id : '',
  ]);
  const passkey = found.rows[0];
  if (!passkey || (userId !== null && passkey.user_id !== userId))
    throw refused('This passkey is not one of the account’s.');
  const rp = relyingParty(services);
  const verified = await verifyAuthenticationResponse({
    response,
    expectedChallenge: (challenge) => spendChallenge(services.db, challenge, 'sign_in', userId),
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    credential: {
      id: response.id,
      publicKey: new Uint8Array(passkey.public_key),
      counter: Number(passkey.counter),
      transports: passkey.transports as AuthenticatorTransportFuture[],
    },
    // Alone, the passkey is both factors only when the device verified the person.
    requireUserVerification: userId === null,
  }).catch(() => undefined);
  if (!verified?.verified) throw refused('The passkey’s answer does not check out: ask for new options and try again.');
  await services.db.query('UPDATE user_passkeys SET counter = $2, last_used_at = now() WHERE id = $1', [
    passkey.id,
    verified.authenticationInfo.newCounter,
  ]);
  return { userId: passkey.user_id, userVerified: verified.authenticationInfo.userVerified };
}
