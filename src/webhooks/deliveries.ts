// Deliveries and their attempts in PostgreSQL: what the activity loads and records, what administrators read,
// replay and test. A delivery is one run of sending an event (X-Svc-Delivery); an attempt is one HTTP request of it.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db.ts';
import { problem } from '../http/problem.ts';
import type { Services } from '../services.ts';
import type { webhookReplayWorkflow } from '../../workflows/webhooks/webhook-replay.ts';

/** The event an administrator sends to check a marketplace's endpoint; it belongs to no deal. */
export const TEST_EVENT = 'webhook.test';

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
  responseExcerpt: string | null;
}

/**
 * Logs the attempt and moves the delivery to the same status, in one statement. A re-run attempt overwrites. A
 * delivery skipped while this attempt was under way (the webhook was unregistered) stays skipped unless the attempt
 * settled it, so no later attempt revives it.
 */
export async function recordAttempt(db: Db, deliveryId: string, record: AttemptRecord): Promise<void> {
  await db.query(
    `WITH logged AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, status, http_status, error, duration_ms, response_excerpt)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (delivery_id, attempt) DO UPDATE
         SET status = EXCLUDED.status, http_status = EXCLUDED.http_status, error = EXCLUDED.error,
             duration_ms = EXCLUDED.duration_ms, response_excerpt = EXCLUDED.response_excerpt, attempted_at = now())
     UPDATE webhook_deliveries SET status = CASE WHEN status = 'skipped' AND $3 = 'retrying' THEN status ELSE $3 END, updated_at = now()
      WHERE id = $1`,
    [
      deliveryId,
      record.attempt,
      record.status,
      record.httpStatus,
      record.error,
      record.durationMs,
      record.responseExcerpt,
    ],
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
  /** null for a test event. */
  deal_id: string | null;
  attempt: number;
  status: AttemptStatus;
  http_status: number | null;
  error: string | null;
  duration_ms: number;
  /** The bytes the attempt sent (every attempt of an event sends the same). */
  request_body: string;
  response_excerpt: string | null;
}

export interface AttemptFilter {
  limit: number;
  /** An attempt id: the page continues with older attempts. */
  startingAfter?: string;
  status?: AttemptStatus;
  event?: string;
  dealId?: string;
}

/**
 * The marketplace's webhook log, newest first, filtered. Undefined when `startingAfter` is not an attempt of this
 * marketplace.
 */
export async function listAttempts(
  db: Db,
  marketplaceId: string,
  filter: AttemptFilter,
): Promise<{ items: AttemptLogItem[]; has_more: boolean } | undefined> {
  const cursor = filter.startingAfter ?? null;
  if (cursor !== null) {
    const known = await db.query(
      `SELECT 1 FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_events e ON e.id = d.event_id
        WHERE a.id = $1 AND e.marketplace_id = $2`,
      [cursor, marketplaceId],
    );
    if (known.rowCount === 0) return undefined;
  }
  const result = await db.query<AttemptLogItem>(
    `SELECT a.id, a.delivery_id, e.id AS event_id, a.attempted_at, e.event, e.deal_id, a.attempt, a.status,
            a.http_status, a.error, a.duration_ms, convert_from(e.body, 'UTF8') AS request_body, a.response_excerpt
       FROM webhook_attempts a
       JOIN webhook_deliveries d ON d.id = a.delivery_id
       JOIN webhook_events e ON e.id = d.event_id
      WHERE e.marketplace_id = $1
        AND ($2::text IS NULL OR a.status = $2) AND ($3::text IS NULL OR e.event = $3) AND ($4::uuid IS NULL OR e.deal_id = $4)
        AND ($5::uuid IS NULL OR (a.attempted_at, a.id) < (SELECT attempted_at, id FROM webhook_attempts WHERE id = $5))
      ORDER BY a.attempted_at DESC, a.id DESC
      LIMIT $6`,
    [marketplaceId, filter.status ?? null, filter.event ?? null, filter.dealId ?? null, cursor, filter.limit + 1],
  );
  return { items: result.rows.slice(0, filter.limit), has_more: result.rows.length > filter.limit };
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
  await db.query(
    'DELETE FROM webhook_deliveries WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM webhook_attempts WHERE delivery_id = $1)',
    [deliveryId],
  );
}

export interface StartedDelivery {
  delivery_id: string;
  event_id: string;
  status: 'pending';
}

/**
 * A new delivery of a stored event, sent by the replay workflow with the deal workflows' schedule and signing: the
 * same event id and body, a new X-Svc-Delivery. 503 temporal_unavailable when the workflow cannot be started.
 */
export async function startDelivery(services: Services, eventId: string): Promise<StartedDelivery> {
  const deliveryId = randomUUID();
  await createDelivery(services.db, deliveryId, eventId);
  try {
    await services.temporal.workflow.start<typeof webhookReplayWorkflow>('webhookReplayWorkflow', {
      args: [deliveryId],
      workflowId: `webhook-replay/${deliveryId}`,
      taskQueue: services.config.TEMPORAL_TASK_QUEUE,
    });
  } catch (error) {
    await deleteDelivery(services.db, deliveryId).catch(() => {}); // no orphan pending delivery
    services.logger.error({ err: error, delivery_id: deliveryId }, 'could not start a webhook delivery');
    throw problem('temporal_unavailable', 'The delivery could not be started; retry shortly.', {
      headers: { 'Retry-After': '5' },
    });
  }
  return { delivery_id: deliveryId, event_id: eventId, status: 'pending' };
}

/** At most this many events are replayed by one "replay every failed delivery"; a repeat takes the next ones. */
export const REPLAY_BATCH = 500;

/**
 * The events of the marketplace whose delivery failed at or after `since` and that no other delivery has delivered or
 * is still sending, oldest first: what "replay every failed delivery since" sends again, so a repeat sends nothing twice.
 */
export async function failedEventsSince(db: Db, marketplaceId: string, since: Date): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT e.id FROM webhook_events e
      WHERE e.marketplace_id = $1
        AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'failed' AND d.updated_at >= $2)
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'retrying', 'delivered'))
      ORDER BY e.occurred_at, e.seq
      LIMIT $3`,
    [marketplaceId, since, REPLAY_BATCH],
  );
  return result.rows.map((row) => row.id);
}

/** Replays them one after another; the count of those started. */
export async function replayFailedSince(services: Services, marketplaceId: string, since: Date): Promise<number> {
  const events = await failedEventsSince(services.db, marketplaceId, since);
  for (const eventId of events) await startDelivery(services, eventId);
  return events.length;
}

/** Stores a `webhook.test` event of the marketplace and sends it to its endpoint like any event. */
export async function sendTestEvent(services: Services, marketplaceId: string): Promise<StartedDelivery> {
  const eventId = randomUUID();
  const occurredAt = new Date().toISOString();
  const body = Buffer.from(
    JSON.stringify({ event: TEST_EVENT, marketplace_id: marketplaceId, event_id: eventId, occurred_at: occurredAt }),
    'utf8',
  );
  await services.db.query(
    'INSERT INTO webhook_events (id, marketplace_id, deal_id, event, body, occurred_at) VALUES ($1, $2, NULL, $3, $4, $5)',
    [eventId, marketplaceId, TEST_EVENT, body, occurredAt],
  );
  return startDelivery(services, eventId);
}
