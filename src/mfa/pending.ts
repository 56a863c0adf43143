// Between the password and the second factor: the browser holds a random token in an HttpOnly cookie whose hash names
// the account in pending_sign_ins for ten minutes. Nothing signs in with it alone; the second page spends it when the
// factor checks out and starts the session.
import type { Context } from 'koa';
import type { Services } from '../services.ts';
import { hashSecret, newSecret, safeEqual } from '../secrets.ts';
import { readCookie, setCookie, startPageSession } from '../web/session.ts';
import { createSession } from '../accounts/sessions.ts';

const PENDING_COOKIE = 'svc_pending';
const PENDING_SECONDS = 600;
const PENDING_PREFIX = 'ps_';
export const SECOND_FACTOR_PATH = '/cabinet/sign-in/second-factor';

/** Keeps the account whose password was right; the second page takes it from here. */
export async function startPendingSignIn(
  ctx: Context,
  services: Services,
  userId: string,
  userAgent: string,
): Promise<void> {
  const token = newSecret(PENDING_PREFIX);
  await services.db.query(
    `INSERT INTO pending_sign_ins (token_hash, user_id, user_agent, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [hashSecret(token), userId, userAgent.slice(0, 512), PENDING_SECONDS],
  );
  if (Math.random() < 0.01)
    await services.db.query(`DELETE FROM pending_sign_ins WHERE expires_at < now()`).catch(() => {});
  setCookie(ctx, services, PENDING_COOKIE, token, PENDING_SECONDS);
}

/** The second page's address, going on to `next` afterwards. */
export const secondFactorHref = (next: string) =>
  next === '/cabinet' ? SECOND_FACTOR_PATH : `${SECOND_FACTOR_PATH}?next=${encodeURIComponent(next)}`;

/** The account waiting for its second factor in this browser, with its e-mail (for the attempt limits). */
export async function pendingSignIn(
  ctx: Context,
  services: Services,
): Promise<{ userId: string; email: string } | undefined> {
  const token = readCookie(ctx, PENDING_COOKIE);
  if (!token?.startsWith(PENDING_PREFIX)) return undefined;
  const presented = hashSecret(token);
  const result = await services.db.query<{ token_hash: Buffer; user_id: string; email: string }>(
    `SELECT p.token_hash, p.user_id, u.email FROM pending_sign_ins p JOIN users u ON u.id = p.user_id
      WHERE p.token_hash = $1 AND p.expires_at > now()`,
    [presented],
  );
  const row = result.rows[0];
  return row && safeEqual(presented, row.token_hash) ? { userId: row.user_id, email: row.email } : undefined;
}

/**
 * The second factor checked out: the pending sign-in is spent (one DELETE, so two tabs cannot both use it) and this
 * browser's session starts with the sign-in's amr. False when it was spent meanwhile.
 */
export async function finishPendingSignIn(
  ctx: Context,
  services: Services,
  userId: string,
  amr: readonly string[],
): Promise<boolean> {
  const token = readCookie(ctx, PENDING_COOKIE) ?? '';
  const spent = await services.db.query<{ user_agent: string }>(
    'DELETE FROM pending_sign_ins WHERE token_hash = $1 AND user_id = $2 AND expires_at > now() RETURNING user_agent',
    [hashSecret(token), userId],
  );
  setCookie(ctx, services, PENDING_COOKIE, '', 0);
  const row = spent.rows[0];
  if (!row) return false;
  await startSession(ctx, services, userId, amr, row.user_agent);
  return true;
}

/** This browser's session for the account, signed in as `amr` says (a passkey alone needs no pending sign-in). */
export async function startSession(
  ctx: Context,
  services: Services,
  userId: string,
  amr: readonly string[],
  userAgent: string,
): Promise<void> {
  const session = await createSession(services.db, userId, services.config.CABINET_TOKEN_TTL_SECONDS, userAgent, amr);
  await startPageSession(ctx, services, session);
}
