// Second factors of every account (issue 25): an authenticator app (TOTP, the administrators' code in src/admin/totp.ts,
// its secret sealed with the master key), passkeys (src/mfa/passkeys.ts) and recovery codes (src/mfa/recovery-codes.ts).
// Also how a session signed in (RFC 8176 amr values) and whether it gave a second factor recently: removing a factor,
// listing passkeys and new recovery codes need that, and so do money moves where a marketplace or the operator asks.
import { inTransaction, type Db } from '../db.ts';
import type { Services } from '../services.ts';
import type { User } from '../accounts/users.ts';
import { problem } from '../http/problem.ts';
import { decryptSecret, encryptSecret } from '../secrets.ts';
import { matchingStep, newTotpSecret, otpauthUri } from '../admin/totp.ts';
import { isUuid } from '../uuid.ts';
import { endAccessIn } from '../accounts/sessions.ts';
import { newRecoveryCodes, spendRecoveryCode } from './recovery-codes.ts';

/** The name authenticator apps show beside the account (the console's own is 'svc console'). */
const TOTP_ISSUER = 'svc';

/** How long after a sign-in (or a second factor given) its session may remove factors and see passkeys' names. */
export const RECENT_SECONDS = 15 * 60;

/** RFC 8176 amr of each way to sign in; `mfa` marks the two-factor ones. */
export const AMR = {
  password: ['pwd'],
  passwordAndTotp: ['pwd', 'otp', 'mfa'],
  // A recovery code is a one-time password written down beforehand.
  passwordAndRecovery: ['pwd', 'otp', 'mfa'],
  passwordAndPasskey: ['pwd', 'hwk', 'mfa'],
  // A passkey alone: the key held (hwk) and the person verified on the device (user), two factors in one gesture.
  passkey: ['hwk', 'user', 'mfa'],
} as const satisfies Record<string, readonly string[]>;

export type SecondFactorMethod = 'totp' | 'recovery' | 'passkey';

export interface SignInFacts {
  amr: readonly string[];
  signedInAt: Date;
  secondFactorAt: Date | null;
}

export const hadSecondFactor = (facts: Pick<SignInFacts, 'amr' | 'secondFactorAt'>): boolean =>
  facts.amr.includes('mfa') || facts.secondFactorAt !== null;

/** Signed in, or gave a second factor, within RECENT_SECONDS of `now`. */
export function isRecent(facts: Pick<SignInFacts, 'signedInAt' | 'secondFactorAt'>, now = Date.now()): boolean {
  const latest = Math.max(facts.signedInAt.getTime(), facts.secondFactorAt?.getTime() ?? 0);
  return now - latest < RECENT_SECONDS * 1000;
}

export function requireRecent(facts: SignInFacts | undefined): void {
  if (!facts || !isRecent(facts))
    throw problem(
      'recent_sign_in_required',
      'This needs a sign-in, or a second factor given, in the last 15 minutes: sign in again and repeat it.',
    );
}

export interface PasskeyItem {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface FactorsSummary {
  totp: boolean;
  passkeys: number;
  recovery_codes_left: number;
}

export async function factorsOf(db: Db, userId: string): Promise<FactorsSummary> {
  const result = await db.query<{ totp: boolean; passkeys: number; recovery: number }>(
    `SELECT EXISTS (SELECT 1 FROM user_totp WHERE user_id = $1 AND confirmed_at IS NOT NULL) AS totp,
            (SELECT count(*) FROM user_passkeys WHERE user_id = $1)::int AS passkeys,
            (SELECT count(*) FROM user_recovery_codes WHERE user_id = $1 AND used_at IS NULL)::int AS recovery`,
    [userId],
  );
  const row = result.rows[0];
  return { totp: row.totp, passkeys: row.passkeys, recovery_codes_left: row.recovery };
}

export async function hasSecondFactor(db: Db, userId: string): Promise<boolean> {
  const factors = await factorsOf(db, userId);
  return factors.totp || factors.passkeys > 0;
}

export async function passkeysOf(db: Db, userId: string): Promise<PasskeyItem[]> {
  const result = await db.query<{ id: string; name: string; created_at: Date; last_used_at: Date | null }>(
    'SELECT id, name, created_at, last_used_at FROM user_passkeys WHERE user_id = $1 ORDER BY created_at',
    [userId],
  );
  return result.rows.map((row) => ({
    id: row.id,
    name: row.name,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  }));
}

/**
 * A new secret for the authenticator app, replacing one never confirmed; 409 totp_already_enabled while a confirmed
 * one exists (a new secret would replace it unnoticed: removing it needs a recent sign-in).
 */
export async function startTotp(services: Services, user: User): Promise<{ secret: string; otpauth_uri: string }> {
  const secret = newTotpSecret();
  const result = await services.db.query(
    `INSERT INTO user_totp (user_id, secret_sealed) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed, created_at = now(), last_step = 0
      WHERE user_totp.confirmed_at IS NULL`,
    [user.id, encryptSecret(services.masterKey, secret)],
  );
  if (!result.rowCount)
    throw problem('totp_already_enabled', 'An authenticator app is already set up; remove it first.');
  return { secret, otpauth_uri: otpauthUri(secret, user.email, TOTP_ISSUER) };
}

/** The secret being set up (never confirmed yet), to show again after a mistyped code; undefined when none. */
export async function pendingTotp(
  services: Services,
  user: User,
): Promise<{ secret: string; otpauth_uri: string } | undefined> {
  const row = (
    await services.db.query<{ sealed: string }>(
      'SELECT secret_sealed AS sealed FROM user_totp WHERE user_id = $1 AND confirmed_at IS NULL',
      [user.id],
    )
  ).rows[0];
  if (!row) return undefined;
  const secret = decryptSecret(services.masterKey, row.sealed);
  return { secret, otpauth_uri: otpauthUri(secret, user.email, TOTP_ISSUER) };
}

/**
 * Confirms the app with its first code. The first second factor of the account comes with recovery codes (shown
 * once); a later one keeps the codes the person has.
 */
export async function confirmTotp(
  services: Services,
  userId: string,
  code: string,
): Promise<{ recovery_codes: string[] | null }> {
  const { db } = services;
  const hadFactor = await hasSecondFactor(db, userId);
  const row = (
    await db.query<{ sealed: string }>(
      'SELECT secret_sealed AS sealed FROM user_totp WHERE user_id = $1 AND confirmed_at IS NULL',
      [userId],
    )
  ).rows[0];
  const step = row ? matchingStep(decryptSecret(services.masterKey, row.sealed), normaliseDigits(code)) : undefined;
  if (step === undefined)
    throw problem('wrong_second_factor', 'The code is not the one the app shows now; type the current one.', {
      status: 400,
    });
  const confirmed = await db.query(
    'UPDATE user_totp SET confirmed_at = now(), last_step = $2 WHERE user_id = $1 AND confirmed_at IS NULL',
    [userId, step],
  );
  if (!confirmed.rowCount) throw problem('totp_already_enabled', 'The app was confirmed meanwhile.');
  return { recovery_codes: hadFactor ? null : await newRecoveryCodes(services, userId) };
}

/** Whether this is the app's current code for the account, used once: the step is stored and never accepted again. */
export async function checkTotp(services: Services, userId: string, code: string): Promise<boolean> {
  const row = (
    await services.db.query<{ sealed: string }>(
      'SELECT secret_sealed AS sealed FROM user_totp WHERE user_id = $1 AND confirmed_at IS NOT NULL',
      [userId],
    )
  ).rows[0];
  const step = row ? matchingStep(decryptSecret(services.masterKey, row.sealed), normaliseDigits(code)) : undefined;
  if (step === undefined) return false;
  // One conditional UPDATE: of two concurrent uses of one code, one wins.
  const spent = await services.db.query(
    'UPDATE user_totp SET last_step = $2 WHERE user_id = $1 AND last_step < $2 AND confirmed_at IS NOT NULL',
    [userId, step],
  );
  return spent.rowCount === 1;
}

const normaliseDigits = (code: string) => code.replace(/\s/g, '');

/**
 * A typed code as a second factor: six digits are the app's code, anything else a recovery code. The amr of the
 * sign-in it completes, or undefined when it is neither.
 */
export async function checkTypedCode(
  services: Services,
  userId: string,
  code: string,
): Promise<{ method: SecondFactorMethod; amr: readonly string[] } | undefined> {
  if (/^[0-9]{6}$/.test(normaliseDigits(code)))
    return (await checkTotp(services, userId, code)) ? { method: 'totp', amr: AMR.passwordAndTotp } : undefined;
  return (await spendRecoveryCode(services, userId, code))
    ? { method: 'recovery', amr: AMR.passwordAndRecovery }
    : undefined;
}

/** Removing the app; the recovery codes go too when no other factor is left. */
export async function removeTotp(db: Db, userId: string): Promise<boolean> {
  const removed = await db.query('DELETE FROM user_totp WHERE user_id = $1', [userId]);
  await dropRecoveryCodesWhenNoFactor(db, userId);
  return (removed.rowCount ?? 0) > 0;
}

export async function removePasskey(db: Db, userId: string, id: string): Promise<boolean> {
  const removed = isUuid(id)
    ? await db.query('DELETE FROM user_passkeys WHERE id = $1 AND user_id = $2', [id, userId])
    : undefined;
  await dropRecoveryCodesWhenNoFactor(db, userId);
  return (removed?.rowCount ?? 0) > 0;
}

/** Recovery codes stand in for a second factor: without any, they would be a second password nobody asks for. */
async function dropRecoveryCodesWhenNoFactor(db: Db, userId: string): Promise<void> {
  if (!(await hasSecondFactor(db, userId)))
    await db.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
}

/**
 * An operator's reset for a person who lost every factor and every recovery code: the app, the passkeys, the recovery
 * codes and sign-ins waiting for a factor go, and so does all access (sessions, SSO tokens), in one transaction, so
 * nothing signed in with a lost factor outlives it. Answers the factors as they were, for the audit log.
 */
export async function resetSecondFactors(db: Db, userId: string): Promise<FactorsSummary & { sessions: number }> {
  return inTransaction(db, async (client) => {
    // The user's row first: a factor being added at the same moment commits before, and is removed, or after.
    await client.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
    // An unconfirmed app setup goes too, but only a confirmed app was a factor.
    const totp = await client.query<{ confirmed: boolean }>(
      'DELETE FROM user_totp WHERE user_id = $1 RETURNING confirmed_at IS NOT NULL AS confirmed',
      [userId],
    );
    const passkeys = await client.query('DELETE FROM user_passkeys WHERE user_id = $1', [userId]);
    const codes = await client.query<{ unused: boolean }>(
      'DELETE FROM user_recovery_codes WHERE user_id = $1 RETURNING used_at IS NULL AS unused',
      [userId],
    );
    await client.query('DELETE FROM pending_sign_ins WHERE user_id = $1', [userId]);
    const sessions = await endAccessIn(client, userId);
    return {
      totp: totp.rows.some((row) => row.confirmed),
      passkeys: passkeys.rowCount ?? 0,
      recovery_codes_left: codes.rows.filter((row) => row.unused).length,
      sessions,
    };
  });
}

/** The session gave a second factor now (a step-up): its amr gains the method's values and `mfa`. */
export async function markSecondFactor(db: Db, sessionId: string, amr: readonly string[]): Promise<void> {
  await db.query(
    `UPDATE cabinet_sessions SET second_factor_at = now(),
            amr = ARRAY(SELECT DISTINCT unnest(amr || $2::text[]) ORDER BY 1)
      WHERE id = $1`,
    [sessionId, amr.filter((value) => value !== 'pwd')],
  );
}
