// Webhook delivery for deal workflow runs from before the outbox, and for replays an administrator started then. The
// outbox (src/webhooks/outbox.ts) sends every delivery now, those included; such a run still schedules this activity
// for each of its deliveries, in order, and it answers once the outbox has settled the delivery. Its retry policy
// (workflows/webhooks/webhook-options.ts) keeps it asking until then.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { Services } from '../../src/services.ts';
import { markDeliveryFailed } from '../../src/webhooks/deliveries.ts';
// Constants only (the failure types the retry policy stops on); nothing of the workflow runtime runs here.
import { WEBHOOK_DELIVERY_NOT_FOUND, WEBHOOK_GONE } from '../../workflows/webhooks/webhook-options.ts';

/**
 * When a waiting run asks again: just after the delivery's next attempt is due, and never sooner than a floor that
 * doubles with each ask (1 s, 2 s, … at most 10 minutes), so a delivery that is due but waits behind its deal's earlier
 * events costs a few asks an hour, not one a second.
 */
function askAgainInMs(untilDueMs: number, ask: number): number {
  const floor = Math.min(1000 * 2 ** Math.min(ask - 1, 20), 10 * 60_000);
  return Math.max(untilDueMs + 1000, floor);
}

export function createWebhookActivities(services: Services) {
  const { db } = services;
  return {
    /** Answers once the outbox delivered (or skipped) the delivery; fails for good when it failed. */
    async deliverWebhook(deliveryId: string): Promise<void> {
      const found = await db.query<{ status: string; wait_ms: number | null }>(
        `SELECT status, greatest(extract(epoch FROM due_at - now()) * 1000, 0)::float8 AS wait_ms
           FROM webhook_deliveries WHERE id = $1`,
        [deliveryId],
      );
      const delivery = found.rows[0];
      if (!delivery) {
        throw ApplicationFailure.create({
          message: `no webhook delivery ${deliveryId}`,
          type: WEBHOOK_DELIVERY_NOT_FOUND,
          nonRetryable: true,
        });
      }
      if (delivery.status === 'delivered' || delivery.status === 'skipped') return;
      if (delivery.status === 'failed') {
        throw ApplicationFailure.create({
          message: 'the outbox gave the delivery up',
          type: WEBHOOK_GONE,
          nonRetryable: true,
        });
      }
      throw ApplicationFailure.create({
        message: 'the outbox has not settled the delivery yet',
        type: 'WebhookNotSettled',
        nextRetryDelay: askAgainInMs(delivery.wait_ms ?? 0, Context.current().info.attempt),
        category: ApplicationFailureCategory.BENIGN, // expected: the run waits for the outbox
      });
    },

    /** Called by such a run once Temporal stops asking: the delivery and its last attempt become failed. */
    async markWebhookDeliveryFailed(deliveryId: string): Promise<void> {
      await markDeliveryFailed(db, deliveryId);
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
