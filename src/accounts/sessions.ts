// Cabinet tokens (ct_…): the spec's cabinet token, stored as a hash with an expiry. SSO accepts the same token.
import type { Middleware } from 'koa';
import type { Db } from '../db.ts';
import { bearerToken } from './admin.ts';
import { unauthorized } from '../http/problem.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { findUserById, type User } from './users.ts';

export const CABINET_TOKEN_PREFIX = 'ct_';

export async function createSession(db: Db, userId: string, ttlSeconds: number): Promise<{ token: string; expires_at: string }> {
  const token = newSecret(CABINET_TOKEN_PREFIX);
  const result = await db.query<{ expires_at: Date }>(
    `INSERT INTO cabinet_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
     RETURNING expires_at`,
    [hashSecret(token), userId, ttlSeconds],
  );
  return { token, expires_at: result.rows[0]!.expires_at.toISOString() };
}

export async function userForToken(db: Db, token: string): Promise<User | undefined> {
  const presented = hashSecret(token);
  const result = await db.query<{ user_id: string; token_hash: Buffer }>(
    'SELECT user_id, token_hash FROM cabinet_sessions WHERE token_hash = $1 AND expires_at > now()',
    [presented],
  );
  const row = result.rows[0];
  if (!row || !safeEqual(presented, row.token_hash)) return undefined;
  return findUserById(db, row.user_id);
}

/** `Authorization: Bearer ct_…` → `ctx.state.user`, or 401. */
export function requireCabinetUser(db: Db): Middleware {
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('Authorization'));
    if (!token) throw unauthorized('Sign in (POST /cabinet/login) and send the token as Authorization: Bearer <token>.', 'Bearer realm="cabinet"');
    const user = await userForToken(db, token);
    if (!user) throw unauthorized('The cabinet token is not valid or has expired; sign in again.', 'Bearer realm="cabinet", error="invalid_token"');
    ctx.state.user = user;
    await next();
  };
}

/** Signing out: the token stops working at once, wherever it was copied. */
export async function revokeSession(db: Db, token: string): Promise<void> {
  await db.query('DELETE FROM cabinet_sessions WHERE token_hash = $1', [hashSecret(token)]);
}
