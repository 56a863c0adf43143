// Back-channel logout (OpenID Connect Back-Channel Logout 1.0): when a person signs out (the cabinet's sign-out, the
// logout endpoint, "sign out everywhere", a password change or reset), every client with a backchannel_logout_uri that
// the person has a live grant with is sent a signed logout_token (iss, aud, iat, exp, jti, sub, events; never a nonce),
// POSTed form-encoded. The sign-out writes one row per client in its own transaction (sso_logout_deliveries) and this
// drainer, beside each worker as the deal notices' is (src/deals/notice-outbox.ts), signs and posts them afterwards,
// claiming rows with FOR UPDATE SKIP LOCKED and retrying failures with the webhooks' backoff
// (WEBHOOK_RETRY_BASE_SECONDS), so a delivery outlives any crash. Where the URI resolves is checked against the
// webhooks' SSRF rules (src/webhooks/ssrf.ts) at every attempt and the connection pinned to the checked addresses.
import { SignJWT } from 'jose';
import { startDrainLoop, type Drainer } from '../outbox-drainer.ts';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import { hashSecret } from '../secrets.ts';
import type { Services } from '../services.ts';
import { postWebhook, retryDelayMs } from '../webhooks/delivery.ts';
import { AddressNotAllowed, resolveWebhookAddresses } from '../webhooks/ssrf.ts';
import { SIGNING_ALG, currentSigningKey } from './signing-keys.ts';
import { subjectFor, type SubjectClient } from './subjects.ts';

export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How long a logout_token is valid: long enough for a slow receiver, short against replay (the jti helps too). */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;
/** How long one drainer holds a claimed delivery before another may take it. */
const CLAIM_SECONDS = 60;
/** A delivery that failed this many times is logged and dropped. */
export const MAX_LOGOUT_ATTEMPTS = 12;
const BATCH = 20;
const CHANNEL = 'sso_logout_deliveries';

/**
 * Queues a logout_token for every client with a backchannel_logout_uri the user has a live grant with (but `except`),
 * in the caller's transaction; answers how many.
 */
export async function queueBackchannelLogout(
  client: DbClient,
  userId: string,
  options: { except?: string; issuer?: string } = {},
): Promise<number> {
  const queued = await client.query(
    `INSERT INTO sso_logout_deliveries (id, client_id, user_id, issuer)
     SELECT gen_random_uuid(), g.client_id, g.user_id, $3 FROM sso_grants g JOIN sso_clients c USING (client_id)
      WHERE g.user_id = $1 AND g.revoked_at IS NULL AND c.backchannel_logout_uri IS NOT NULL
        AND ($2::text IS NULL OR g.client_id <> $2)`,
    [userId, options.except ?? null, options.issuer ?? null],
  );
  if (queued.rowCount) await client.query(`SELECT pg_notify('${CHANNEL}', '')`);
  return queued.rowCount ?? 0;
}

/** The logout_token for one client and user (Back-Channel Logout 1.0 §2.4). */
export async function signLogoutToken(
  services: Pick<Services, 'db' | 'masterKey'>,
  claims: { issuer: string; client: SubjectClient; userId: string; jti: string },
): Promise<string> {
  const key = await currentSigningKey(services.db, services.masterKey);
  return new SignJWT({ events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'logout+jwt' })
    .setIssuer(claims.issuer)
    .setAudience(claims.client.client_id)
    .setSubject(subjectFor(services.masterKey, claims.client, claims.userId))
    .setJti(claims.jti)
    .setIssuedAt()
    .setExpirationTime(`${LOGOUT_TOKEN_TTL_SECONDS}s`)
    .sign(key.privateKey);
}

/** drain() answers how many deliveries succeeded. */
export type LogoutDrainer = Drainer;

interface Due {
  id: string;
  user_id: string;
  issuer: string | null;
  attempts: number;
  client_id: string;
  subject_type: 'public' | 'pairwise';
  redirect_uris: string[];
  backchannel_logout_uri: string | null;
}

export function startLogoutDrainer(services: Services): LogoutDrainer {
  const { db, logger } = services;
  async function attempt(due: Due): Promise<string | null> {
    if (!due.backchannel_logout_uri) return null; // the client dropped its URI since: nothing to tell
    const url = new URL(due.backchannel_logout_uri);
    let pinned;
    try {
      pinned = await resolveWebhookAddresses(url.hostname, { allowLoopback: services.config.WEBHOOK_ALLOW_LOOPBACK });
    } catch (error) {
      if (error instanceof AddressNotAllowed) return error.message;
      throw error;
    }
    const token = await signLogoutToken(services, {
      issuer: due.issuer ?? services.config.BASE_URL,
      client: due,
      userId: due.user_id,
      jti: due.id,
    });
    const result = await postWebhook(
      url,
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Cache-Control': 'no-store' },
      Buffer.from(new URLSearchParams({ logout_token: token }).toString()),
      { pinned, timeoutMs: services.config.WEBHOOK_TIMEOUT_SECONDS * 1000 },
    );
    return result.error;
  }

  async function drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      const claimed = await db.query<Due>(
        `WITH due AS (
           UPDATE sso_logout_deliveries SET claimed_until = now() + make_interval(secs => $1), attempts = attempts + 1
            WHERE id IN (SELECT id FROM sso_logout_deliveries
                          WHERE next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
                            AND (issuer IS NULL OR issuer = $3)
                          ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING id, client_id, user_id, issuer, attempts
         )
         SELECT d.id, d.user_id, d.issuer, d.attempts, c.client_id, c.subject_type, c.redirect_uris, c.backchannel_logout_uri
           FROM due d JOIN sso_clients c USING (client_id)`,
        [CLAIM_SECONDS, BATCH, services.config.BASE_URL],
      );
      if (claimed.rows.length === 0) return sent;
      for (const due of claimed.rows) {
        let error: string | null;
        try {
          error = await attempt(due);
        } catch (thrown) {
          error = thrown instanceof Error ? thrown.message.slice(0, 200) : 'error';
        }
        if (error === null) {
          await db.query('DELETE FROM sso_logout_deliveries WHERE id = $1', [due.id]);
          sent++;
          continue;
        }
        const dropped = due.attempts >= MAX_LOGOUT_ATTEMPTS;
        logger.warn(
          { client_id: due.client_id, delivery_id: due.id, attempts: due.attempts, dropped, error },
          'a back-channel logout could not be delivered',
        );
        if (dropped) await db.query('DELETE FROM sso_logout_deliveries WHERE id = $1', [due.id]);
        else
          await db.query(
            `UPDATE sso_logout_deliveries SET claimed_until = NULL, last_error = $2,
                    next_attempt_at = now() + make_interval(secs => $3) WHERE id = $1`,
            [due.id, error, retryDelayMs(due.attempts, services.config.WEBHOOK_RETRY_BASE_SECONDS) / 1000],
          );
      }
    }
  }

  return startDrainLoop(db, logger, { channel: CHANNEL, what: 'back-channel logout', drain });
}

/** Ends one cabinet session by its token (a sign-out) and tells its person's sites, in one transaction. */
export async function endSessionTellingSites(db: Db, token: string, issuer: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const ended = await tx.query<{ user_id: string }>(
      'DELETE FROM cabinet_sessions WHERE token_hash = $1 RETURNING user_id',
      [hashSecret(token)],
    );
    const userId = ended.rows[0]?.user_id;
    if (userId) await queueBackchannelLogout(tx, userId, { issuer });
  });
}
