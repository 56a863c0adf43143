// Deliveries and their attempts in PostgreSQL: what administrators read, replay and test. The outbox
// (src/webhooks/outbox.ts) sends them and records each attempt. A delivery is one run of sending an event (X-Svc-Delivery); an attempt is one HTTP request of it.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db.ts';
import type { Services } from '../services.ts';

/** The event an administrator sends to check a marketplace's endpoint; it belongs to no deal. */
export const TEST_EVENT = 'webhook.test';

export type AttemptStatus = 'delivered' | 'retrying' | 'failed';

/**
 * A run from before the outbox stopped waiting for the delivery (workflows/webhooks/webhook-options.ts): the delivery and
 * its last attempt become failed, and the outbox sends it no more (a delivered one stays delivered).
 */
export async function markDeliveryFailed(db: Db, deliveryId: string): Promise<void> {
  await db.query(
    `WITH last AS (
       UPDATE webhook_attempts SET status = 'failed'
        WHERE id = (SELECT id FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt DESC LIMIT 1)
          AND status = 'retrying')
     UPDATE webhook_deliveries SET status = 'failed', due_at = NULL, updated_at = now()
      WHERE id = $1 AND status NOT IN ('delivered', 'skipped')`,
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

export interface StartedDelivery {
  delivery_id: string;
  event_id: string;
  status: 'pending';
}

/**
 * A new delivery of a stored event, sent by the outbox (src/webhooks/outbox.ts) with the deals' schedule and signing:
 * the same event id and body, a new X-Svc-Delivery. It waits behind its deal's earlier events still to send.
 */
export async function startDelivery(
  services: Pick<Services, 'db' | 'config'>,
  eventId: string,
): Promise<StartedDelivery> {
  const deliveryId = randomUUID();
  await services.db.query(
    `INSERT INTO webhook_deliveries (id, event_id, deal_id, task_queue)
     SELECT $1, id, deal_id, $3 FROM webhook_events WHERE id = $2`,
    [deliveryId, eventId, services.config.TEMPORAL_TASK_QUEUE],
  );
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
export async function replayFailedSince(
  services: Pick<Services, 'db' | 'config'>,
  marketplaceId: string,
  since: Date,
): Promise<number> {
  const events = await failedEventsSince(services.db, marketplaceId, since);
  for (const eventId of events) await startDelivery(services, eventId);
  return events.length;
}

/** Stores a `webhook.test` event of the marketplace and sends it to its endpoint like any event. */
export async function sendTestEvent(
  services: Pick<Services, 'db' | 'config'>,
  marketplaceId: string,
): Promise<StartedDelivery> {
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
