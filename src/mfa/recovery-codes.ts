// Recovery codes: ten random codes shown once when the first second factor is set up (and when the person asks for new
// ones), each good for one sign-in in place of the factor. Stored as HMACs with the master key, never as typed.
import { randomBytes } from 'node:crypto';
import type { Services } from '../services.ts';
import { inTransaction } from '../db.ts';
import { keyedDigest } from '../secrets.ts';

export const RECOVERY_CODE_COUNT = 10;
// Without 0/O and 1/I/L: codes are read off paper and typed by hand.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten groups of five, like `k7m2q-x9pta`: 50 bits each, far beyond guessing under the sign-in limits. */
export function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((byte) => ALPHABET[byte % ALPHABET.length]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

/** What people type, as stored: case, spaces and dashes do not matter. */
export function normaliseRecoveryCode(typed: string): string {
  return typed.toLowerCase().replace(/[\s-]/g, '');
}

const digest = (services: Services, code: string) =>
  keyedDigest(services.masterKey, 'recovery-code', normaliseRecoveryCode(code));

/** Replaces the account's recovery codes with ten new ones, answered once and kept only as digests. */
export async function newRecoveryCodes(services: Services, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await inTransaction(services.db, async (client) => {
    await client.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
    await client.query('INSERT INTO user_recovery_codes (code_hash, user_id) SELECT unnest($2::text[]), $1', [
      userId,
      codes.map((code) => digest(services, code)),
    ]);
  });
  return codes;
}

/**
 * Spends one unused code of the account: one conditional UPDATE, so a code works once even when sent twice at the same
 * time. The digest is the row's key, so the lookup compares digests, not the typed code.
 */
export async function spendRecoveryCode(services: Services, userId: string, typed: string): Promise<boolean> {
  const normalised = normaliseRecoveryCode(typed);
  if (normalised.length !== 10) return false;
  const spent = await services.db.query(
    'UPDATE user_recovery_codes SET used_at = now() WHERE code_hash = $1 AND user_id = $2 AND used_at IS NULL',
    [digest(services, normalised), userId],
  );
  return spent.rowCount === 1;
}
