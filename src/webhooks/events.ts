// Webhook events: the body bytes are fixed once, when the event happens, so every retry and replay sends the same
// bytes and the same X-Svc-Signature. Written inside the deal workflow's persistence transaction.
import type { Db, DbClient } from '../db.ts';
import { DEAL_EVENTS, type ActorKind, type DealEvent } from '../deals/model.ts';

/** `deal.<status>` for every status a deal can enter, and the events of money and delivery. */
export const WEBHOOK_EVENTS = DEAL_EVENTS as [DealEvent, ...DealEvent[]];
export type WebhookEvent = DealEvent;

export interface WebhookEventInput {
  /** Chosen by the workflow (uuid), so an activity retry writes nothing twice. */
  eventId: string;
  /** Chosen by the workflow (uuid): the first delivery of this event, X-Svc-Delivery. */
  deliveryId: string;
  /** The task queue whose workers' drainers send the delivery (TEMPORAL_TASK_QUEUE: src/webhooks/outbox.ts). */
  taskQueue: string;
  event: string;
  /** ISO 8601. */
  occurredAt: string;
  /** The deal's status after the change. */
  status: string;
  /** Who made the change; absent in events of workflows from before actors were told. */
  actor?: ActorKind;
  /** The reason given with the change (a rejection's comment, a dispute's or a cancellation's reason), if any. */
  reason?: string;
  /** What an event of money or delivery tells besides the deal: the payout, the refunded amount, the tracking number. */
  data?: Record<string, unknown>;
  deal: {
    id: string;
    marketplace_id: string;
    external_id: string;
    title: string;
    amount: number;
    currency: string;
    buyer_email: string;
    seller_email: string;
  };
}

/** The body bytes, fields in the documented order. */
export function webhookBody(input: Omit<WebhookEventInput, 'deliveryId' | 'taskQueue'>): Buffer {
  const { deal } = input;
  return Buffer.from(
    JSON.stringify({
      event: input.event,
      id: deal.id,
      external_id: deal.external_id,
      title: deal.title,
      amount: deal.amount,
      currency: deal.currency,
      status: input.status,
      ...(input.actor ? { actor: input.actor } : {}),
      ...(input.reason ? { reason: input.reason } : {}),
      ...(input.data ? { data: input.data } : {}),
      buyer_email: deal.buyer_email,
      seller_email: deal.seller_email,
      event_id: input.eventId,
      occurred_at: input.occurredAt,
    }),
    'utf8',
  );
}

/**
 * Stores the event and, when the marketplace has a webhook endpoint sent this type, its first delivery, which the
 * outbox sends once the transaction commits (src/webhooks/outbox.ts). Returns the delivery id, or null when there is
 * nothing to deliver (no endpoint, or one that did not choose this type; the event is kept all the same, for
 * GET /api/mkt/events). One statement (the delivery's reference to the event is checked at its end). Idempotent: a
 * repeat with the same ids changes nothing and returns the same answer; a delivery made by an earlier try stays, even
 * if the endpoint went away since.
 */
export async function insertWebhookEvent(client: DbClient, input: WebhookEventInput): Promise<string | null> {
  const delivery = await client.query<{ id: string }>(
    `WITH told AS (
       INSERT INTO webhook_events (id, marketplace_id, deal_id, event, body, occurred_at)
       VALUES ($2, $3, $5, $4, $7, $8) ON CONFLICT (id) DO NOTHING),
     made AS (
       INSERT INTO webhook_deliveries (id, event_id, deal_id, task_queue)
       SELECT $1::uuid, $2::uuid, $5::uuid, $6 WHERE EXISTS (
         SELECT 1 FROM webhook_endpoints WHERE marketplace_id = $3::uuid AND (events IS NULL OR $4::text = ANY (events)))
       ON CONFLICT (id) DO NOTHING RETURNING id)
     SELECT id FROM made UNION SELECT id FROM webhook_deliveries WHERE id = $1::uuid`,
    [
      input.deliveryId,
      input.eventId,
      input.deal.marketplace_id,
      input.event,
      input.deal.id,
      input.taskQueue,
      webhookBody(input),
      input.occurredAt,
    ],
  );
  return delivery.rows[0]?.id ?? null;
}

export interface StoredEvent {
  event_id: string;
  type: WebhookEvent;
  occurred_at: Date;
  deal_id: string;
  /** The bytes every delivery of the event carried. */
  body: Buffer;
}

export interface EventListQuery {
  limit: number;
  /** Event ids: the page after (older than) or before (newer than) this event; at most one of them. */
  startingAfter?: string;
  endingBefore?: string;
  dealId?: string;
  type?: WebhookEvent;
}

/**
 * A page of the marketplace's events, newest first (occurred_at, then the order they were written in), and whether
 * there are more beyond it in the direction of the cursor. A cursor may be any event of the marketplace, matching the
 * filters or not: it only marks a place. Undefined when the cursor is not an event of this marketplace.
 */
export async function listWebhookEvents(
  db: Db,
  marketplaceId: string,
  query: EventListQuery,
): Promise<{ items: StoredEvent[]; hasMore: boolean } | undefined> {
  const cursor = query.startingAfter ?? query.endingBefore ?? null;
  // Before the cursor in the list is newer: that page is read oldest first from the cursor, then turned round.
  const newer = query.endingBefore !== undefined;
  const result = await db.query<StoredEvent>(
    `SELECT id AS event_id, event AS type, occurred_at, deal_id, body
       FROM webhook_events
      WHERE marketplace_id = $1 AND deal_id IS NOT NULL -- an administrator's test events are no deal's history
        AND ($2::uuid IS NULL OR (occurred_at, seq) ${newer ? '>' : '<'}
             (SELECT occurred_at, seq FROM webhook_events WHERE id = $2::uuid AND marketplace_id = $1))
        AND ($3::uuid IS NULL OR deal_id = $3::uuid)
        AND ($4::text IS NULL OR event = $4::text)
      ORDER BY occurred_at ${newer ? 'ASC' : 'DESC'}, seq ${newer ? 'ASC' : 'DESC'}
      LIMIT $5`,
    [marketplaceId, cursor, query.dealId ?? null, query.type ?? null, query.limit + 1],
  );
  // An unknown cursor compares as NULL and yields no row; only then is it worth a second look.
  if (cursor && result.rows.length === 0) {
    const known = await db.query('SELECT 1 FROM webhook_events WHERE id = $1 AND marketplace_id = $2', [
      cursor,
      marketplaceId,
    ]);
    if (known.rowCount === 0) return undefined;
  }
  const items = result.rows.slice(0, query.limit);
  return { items: newer ? items.reverse() : items, hasMore: result.rows.length > query.limit };
}
