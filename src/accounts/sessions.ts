// Cabinet tokens (ct_…): the API's cabinet token, stored as a hash with an expiry. SSO accepts the same token. Each
// session also has a public id, the browser it was started in and when it was last used, for its owner's list.
import type { Middleware } from 'koa';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import { bearerToken } from '../admin/auth.ts';
import { notFound, unauthorized } from '../http/problem.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { isUuid } from '../uuid.ts';
import { findUserById, type User } from './users.ts';
import { queueBackchannelLogout } from '../sso/backchannel.ts';
import { endRefreshTokens } from '../sso/refresh-tokens.ts';

export const CABINET_TOKEN_PREFIX = 'ct_';
/** Last use is written at most this often, not on every request. */
const LAST_USE_RESOLUTION_SECONDS = 300;
const USER_AGENT_MAX = 512;

/**
 * A new session. `amr` says how it signed in (RFC 8176: `pwd`, `otp`, `hwk`, `user`, `mfa`); one whose sign-in had a
 * second factor (`mfa`) counts as having given it now (second_factor_at).
 */
export async function createSession(
  db: Db,
  userId: string,
  ttlSeconds: number,
  userAgent = '',
  amr: readonly string[] = ['pwd'],
): Promise<{ token: string; expires_at: string }> {
  const token = newSecret(CABINET_TOKEN_PREFIX);
  const result = await db.query<{ expires_at: Date }>(
    `INSERT INTO cabinet_sessions (token_hash, user_id, expires_at, user_agent, amr, second_factor_at)
     VALUES ($1, $2, now() + make_interval(secs => $3), $4, $5, CASE WHEN 'mfa' = ANY($5::text[]) THEN now() END)
     RETURNING expires_at`,
    [hashSecret(token), userId, ttlSeconds, userAgent.slice(0, USER_AGENT_MAX), amr],
  );
  return { token, expires_at: result.rows[0].expires_at.toISOString() };
}

/** How a session signed in: its amr, when it began, and when a second factor was last given in it. */
export interface SignInFacts {
  amr: string[];
  signedInAt: Date;
  secondFactorAt: Date | null;
}

/** The live session of this token and its user; its last use is brought up to date when it is older than a few minutes. */
export async function sessionForToken(
  db: Db,
  token: string,
): Promise<({ user: User; sessionId: string } & SignInFacts) | undefined> {
  const presented = hashSecret(token);
  const result = await db.query<{
    id: string;
    user_id: string;
    token_hash: Buffer;
    amr: string[];
    created_at: Date;
    second_factor_at: Date | null;
  }>(
    `WITH touched AS (
       UPDATE cabinet_sessions SET last_used_at = now()
        WHERE token_hash = $1 AND expires_at > now() AND last_used_at < now() - make_interval(secs => $2)
     )
     SELECT id, user_id, token_hash, amr, created_at, second_factor_at FROM cabinet_sessions WHERE token_hash = $1 AND expires_at > now()`,
    [presented, LAST_USE_RESOLUTION_SECONDS],
  );
  const row = result.rows[0];
  if (!row || !safeEqual(presented, row.token_hash)) return undefined;
  const user = await findUserById(db, row.user_id);
  return (
    user && {
      user,
      sessionId: row.id,
      amr: row.amr,
      signedInAt: row.created_at,
      secondFactorAt: row.second_factor_at,
    }
  );
}

export async function userForToken(db: Db, token: string): Promise<User | undefined> {
  return (await sessionForToken(db, token))?.user;
}

/** `Authorization: Bearer ct_…` → `ctx.state.user` (and `ctx.state.sessionId`), or 401. */
export function requireCabinetUser(db: Db): Middleware {
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('Authorization'));
    if (!token)
      throw unauthorized(
        'Sign in (POST /cabinet/login) and send the token as Authorization: Bearer <token>.',
        'Bearer realm="cabinet"',
      );
    const session = await sessionForToken(db, token);
    if (!session)
      throw unauthorized(
        'The cabinet token is not valid or has expired; sign in again.',
        'Bearer realm="cabinet", error="invalid_token"',
      );
    ctx.state.user = session.user;
    ctx.state.sessionId = session.sessionId;
    ctx.state.signIn = { amr: session.amr, signedInAt: session.signedInAt, secondFactorAt: session.secondFactorAt };
    await next();
  };
}

/** Signing out: the token stops working at once, wherever it was copied. */
export async function revokeSession(db: Db, token: string): Promise<void> {
  await db.query('DELETE FROM cabinet_sessions WHERE token_hash = $1', [hashSecret(token)]);
}

export interface SessionItem {
  id: string;
  created_at: string;
  last_used_at: string;
  user_agent: string;
  current: boolean;
}

/** The user's live sessions, the most recently used first; `current` marks the one asking. */
export async function sessionsOfUser(db: Db, userId: string, currentId: string | undefined): Promise<SessionItem[]> {
  const result = await db.query<{ id: string; created_at: Date; last_used_at: Date; user_agent: string }>(
    `SELECT id, created_at, last_used_at, user_agent FROM cabinet_sessions
      WHERE user_id = $1 AND expires_at > now() ORDER BY last_used_at DESC, created_at DESC`,
    [userId],
  );
  return result.rows.map((row) => ({
    id: row.id,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at.toISOString(),
    user_agent: row.user_agent,
    current: row.id === currentId,
  }));
}

/** Ends one of the user's sessions by its public id; 404 for an id that is not theirs (or not an id at all). */
export async function revokeSessionOfUser(db: Db, userId: string, sessionId: string): Promise<void> {
  const result = isUuid(sessionId)
    ? await db.query('DELETE FROM cabinet_sessions WHERE id = $1 AND user_id = $2', [sessionId, userId])
    : undefined;
  if (!result?.rowCount) throw notFound('No such session.');
}

/**
 * Ends everything that lets the account in, but the cabinet session `keep` (none when undefined): its cabinet sessions,
 * its administrator sign-ins and the SSO access of every site (tokens, and codes not yet exchanged). Used by a password
 * change or reset and by "sign out everywhere"; answers how many cabinet sessions ended.
 *
 * A code exchange holds its grant row shared while it issues a token (src/sso/codes.ts); locking the user's grants first
 * makes the exchange either finish before the tokens are revoked here (so they are revoked with the rest) or find its
 * code dead. The two revoking statements run after the lock, so they see every token an exchange committed.
 */
export async function endAccess(db: Db, userId: string, keep?: string): Promise<number> {
  return inTransaction(db, (client) => endAccessIn(client, userId, keep));
}

/** endAccess inside the caller's transaction (a password reset writes the password in the same one). */
export async function endAccessIn(client: DbClient, userId: string, keep?: string): Promise<number> {
  await client.query('SELECT 1 FROM sso_grants WHERE user_id = $1 ORDER BY client_id FOR UPDATE', [userId]);
  const sessions = await client.query(
    'DELETE FROM cabinet_sessions WHERE user_id = $1 AND ($2::uuid IS NULL OR id <> $2)',
    [userId, keep ?? null],
  );
  await client.query('UPDATE admin_tokens SET revoked_at = now() WHERE administrator_id = $1 AND revoked_at IS NULL', [
    userId,
  ]);
  await endRefreshTokens(client, userId);
  await client.query('UPDATE sso_access_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [
    userId,
  ]);
  // '-infinity', not now(): an exchange that waited for this transaction compares with its own, earlier now().
  await client.query(
    `UPDATE sso_codes SET expires_at = '-infinity' WHERE user_id = $1 AND consumed_at IS NULL AND expires_at > now()`,
    [userId],
  );
  await queueBackchannelLogout(client, userId); // the sites with a back-channel logout URI hear of it
  return sessions.rowCount ?? 0;
}
