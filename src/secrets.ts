// Random credentials, their hashes and constant-time comparison. Credentials are high-entropy random strings, so a
// single SHA-256 is the right hash for lookup; passwords (low entropy) use argon2 in accounts/passwords.ts.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new credential: the prefix, then 32 random bytes in base64url. */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time equality of two byte strings (false when lengths differ). */
export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
