// Webhook events: the body bytes are fixed once, when the event happens, so every retry and replay sends the same
// bytes and the same X-Svc-Signature. Written inside the deal workflow's persistence transaction.
import type { DbClient } from '../db.ts';

export const WEBHOOK_EVENTS = [
  'deal.approved',
  'deal.rejected',
  'deal.escrow_hold',
  'deal.paid',
  'deal.refunded',
  'deal.disputed',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookEventInput {
  /** Chosen by the workflow (uuid), so an activity retry writes nothing twice. */
  eventId: string;
  /** Chosen by the workflow (uuid): the first delivery of this event, X-Svc-Delivery. */
  deliveryId: string;
  event: string;
  /** ISO 8601. */
  occurredAt: string;
  /** The deal's status after the change. */
  status: string;
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
export function webhookBody(input: WebhookEventInput): Buffer {
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
      buyer_email: deal.buyer_email,
      seller_email: deal.seller_email,
      event_id: input.eventId,
      occurred_at: input.occurredAt,
    }),
    'utf8',
  );
}

/**
 * Stores the event and, when the marketplace has a webhook endpoint, its first delivery. Returns the delivery id to
 * hand to deliverWebhook, or null when there is nothing to deliver (no endpoint; the event is kept all the same).
 * Idempotent: a repeat with the same ids changes nothing and returns the same answer.
 */
export async function insertWebhookEvent(client: DbClient, input: WebhookEventInput): Promise<string | null> {
  await client.query(
    `INSERT INTO webhook_events (id, marketplace_id, deal_id, event, body, occurred_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
    [input.eventId, input.deal.marketplace_id, input.deal.id, input.event, webhookBody(input), input.occurredAt],
  );
  // A delivery made by an earlier try stays, even if the endpoint went away since.
  const delivery = await client.query<{ id: string }>(
    `WITH made AS (
       INSERT INTO webhook_deliveries (id, event_id)
       SELECT $1::uuid, $2::uuid WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE marketplace_id = $3::uuid)
       ON CONFLICT (id) DO NOTHING RETURNING id)
     SELECT id FROM made UNION SELECT id FROM webhook_deliveries WHERE id = $1::uuid`,
    [input.deliveryId, input.eventId, input.deal.marketplace_id],
  );
  return delivery.rows[0]?.id ?? null;
}
