// Administrator tokens: stored as SHA-256 hashes, compared in constant time; SVC_BOOTSTRAP_ADMIN_TOKEN when set.
import type { Middleware } from 'koa';
import type { Db } from '../db.ts';
import { unauthorized } from '../http/problem.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';

export const ADMIN_TOKEN_PREFIX = 'adm_';

export async function createAdminToken(db: Db, name: string): Promise<string> {
  const token = newSecret(ADMIN_TOKEN_PREFIX);
  await db.query('INSERT INTO admin_tokens (name, token_hash) VALUES ($1, $2)', [name, hashSecret(token)]);
  return token;
}

export async function isAdminToken(db: Db, token: string, bootstrapToken: string | undefined): Promise<boolean> {
  const presented = hashSecret(token);
  if (bootstrapToken !== undefined && safeEqual(presented, hashSecret(bootstrapToken))) return true;
  const result = await db.query<{ token_hash: Buffer }>(
    'SELECT token_hash FROM admin_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
    [presented],
  );
  const stored = result.rows[0]?.token_hash;
  return stored !== undefined && safeEqual(presented, stored);
}

/** `Authorization: Bearer <admin token>`, or 401 with a bearer challenge. */
export function requireAdmin(db: Db, bootstrapToken: string | undefined): Middleware {
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('Authorization'));
    if (!token) {
      throw unauthorized('Send an administrator token as Authorization: Bearer <token>.', 'Bearer realm="admin"');
    }
    if (!(await isAdminToken(db, token, bootstrapToken))) {
      throw unauthorized('The administrator token is not valid.', 'Bearer realm="admin", error="invalid_token"');
    }
    await next();
  };
}

export function bearerToken(header: string): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
