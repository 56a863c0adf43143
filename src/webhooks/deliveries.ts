// Deliveries and their attempts in PostgreSQL: what the activity loads and records, what administrators read and
// replay. A delivery is one run of sending an event (X-Svc-Delivery); an attempt is one HTTP request of it.
import type { Db } from '../db.ts';

export type AttemptStatus = 'delivered' | 'retrying' | 'failed';

export interface DeliveryToSend {
  id: string;
  status: 'pending' | 'delivered' | 'retrying' | 'failed' | 'skipped';
  event_id: string;
  event: string;
  body: Buffer;
  /** The endpoint as it is now (null when none): a changed URL or a rotated secret applies to the retries. */
  url: string | null;
  secret_encrypted: string | null;
  /** The secret a rotation replaced, while its overlap lasts (by the database's clock); null otherwise. */
  previous_secret_encrypted: string | null;
}

export async function loadDelivery(db: Db, deliveryId: string): Promise<DeliveryToSend | undefined> {
  const result = await db.query<DeliveryToSend>(
    `SELECT d.id, d.status, e.id AS event_id, e.event, e.body, w.url, w.secret_encrypted,
            CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END AS previous_secret_encrypted
       FROM webhook_deliveries d
       JOIN webhook_events e ON e.id = d.event_id
       LEFT JOIN webhook_endpoints w ON w.marketplace_id = e.marketplace_id
      WHERE d.id = $1`,
    [deliveryId],
  );
  return result.rows[0];
}

export interface AttemptRecord {
  attempt: number;
  status: AttemptStatus;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Logs the attempt and moves the delivery to the same status, in one statement. A re-run attempt overwrites. A
 * delivery skipped while this attempt was under way (the webhook was unregistered) stays skipped unless the attempt
 * settled it, so no later attempt revives it.
 */
export async function recordAttempt(db: Db, deliveryId: string, record: AttemptRecord): Promise<void> {
  await db.query(
    `WITH logged AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, status, http_status, error, duration_ms)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (delivery_id, attempt) DO UPDATE
         SET status = EXCLUDED.status, http_status = EXCLUDED.http_status, error = EXCLUDED.error,
             duration_ms = EXCLUDED.duration_ms, attempted_at = now())
     UPDATE webhook_deliveries SET status = CASE WHEN status = 'skipped' AND $3 = 'retrying' THEN status ELSE $3 END, updated_at = now()
      WHERE id = $1`,
    [deliveryId, record.attempt, record.status, record.httpStatus, record.error, record.durationMs],
  );
}

export async function setDeliveryStatus(db: Db, deliveryId: string, status: DeliveryToSend['status']): Promise<void> {
  await db.query('UPDATE webhook_deliveries SET status = $2, updated_at = now() WHERE id = $1', [deliveryId, status]);
}

/** Temporal gave up: the delivery and its last attempt become failed (a delivered one stays delivered). */
export async function markDeliveryFailed(db: Db, deliveryId: string): Promise<void> {
  await db.query(
    `WITH last AS (
       UPDATE webhook_attempts SET status = 'failed'
        WHERE id = (SELECT id FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt DESC LIMIT 1)
          AND status = 'retrying')
     UPDATE webhook_deliveries SET status = 'failed', updated_at = now() WHERE id = $1 AND status <> 'delivered'`,
    [deliveryId],
  );
}

export interface AttemptLogItem {
  id: string;
  delivery_id: string;
  event_id: string;
  attempted_at: Date;
  event: string;
  deal_id: string;
  attempt: number;
  status: AttemptStatus;
  http_status: number | null;
  error: string | null;
  duration_ms: number;
}

/** The marketplace's webhook log, newest first. */
export async function listAttempts(db: Db, marketplaceId: string, limit: number): Promise<AttemptLogItem[]> {
  const result = await db.query<AttemptLogItem>(
    `SELECT a.id, a.delivery_id, e.id AS event_id, a.attempted_at, e.event, e.deal_id, a.attempt, a.status,
            a.http_status, a.error, a.duration_ms
       FROM webhook_attempts a
       JOIN webhook_deliveries d ON d.id = a.delivery_id
       JOIN webhook_events e ON e.id = d.event_id
      WHERE e.marketplace_id = $1
      ORDER BY a.attempted_at DESC, a.attempt DESC
      LIMIT $2`,
    [marketplaceId, limit],
  );
  return result.rows;
}

/** The event behind a delivery id or an attempt id, or undefined. */
export async function eventOfDeliveryOrAttempt(db: Db, id: string): Promise<{ event_id: string } | undefined> {
  const result = await db.query<{ event_id: string }>(
    `SELECT event_id FROM webhook_deliveries WHERE id = $1
     UNION ALL
     SELECT d.event_id FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE a.id = $1
     LIMIT 1`,
    [id],
  );
  return result.rows[0];
}

export async function createDelivery(db: Db, deliveryId: string, eventId: string): Promise<void> {
  await db.query('INSERT INTO webhook_deliveries (id, event_id) VALUES ($1, $2)', [deliveryId, eventId]);
}

export async function deleteDelivery(db: Db, deliveryId: string): Promise<void> {
  await db.query('DELETE FROM webhook_deliveries WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM webhook_attempts WHERE delivery_id = $1)', [deliveryId]);
}
