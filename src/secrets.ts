// Random credentials, their hashes and constant-time comparison. Credentials are high-entropy random strings, so a
// single SHA-256 is the right hash for lookup; passwords (low entropy) use argon2 in accounts/passwords.ts.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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

/**
 * The master key encrypts secrets that must stay viewable (webhook and SSO client secrets) and signs invitation
 * links. SVC_MASTER_KEY in production; on one machine it is generated once into DATA_DIR.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'base64');
  const file = path.join(dataDir, 'master.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another process made it first
    }
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

/** AES-256-GCM; the result is `v1.` and base64url of iv, tag and ciphertext. */
export function encryptSecret(masterKey: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

export function decryptSecret(masterKey: Buffer, sealed: string): string {
  if (!sealed.startsWith('v1.')) throw new Error('unknown secret format');
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', masterKey, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** A keyed digest, for tokens we can re-derive instead of storing (invitation links). */
export function keyedDigest(masterKey: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', masterKey).update(`${purpose}:${value}`).digest('base64url');
}
