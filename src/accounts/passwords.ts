// Password hashing with argon2id (OWASP's first choice), via the maintained @node-rs/argon2 binding.
import { hash, verify } from '@node-rs/argon2';

export const MIN_PASSWORD_LENGTH = 8;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  // Without a hash (an invited user who has not set a password) we still spend the same time, so timing does not
  // reveal which accounts exist.
  const stored = passwordHash ?? (await (dummyHash ??= hash('not the password of anyone')));
  const matches = await verify(stored, password).catch(() => false);
  return matches && passwordHash !== null;
}

let dummyHash: Promise<string> | undefined;
