// An administrator's replay of a webhook as it was started before the outbox: it waits for the outbox to settle the
// delivery. Replays are rows of the outbox now (src/webhooks/deliveries.ts startDelivery); this stays registered for the
// replays started before. Deterministic: only @temporalio/workflow and type imports (via webhook-options.ts).
import { deliverWebhookOrMarkFailed } from './webhook-options.ts';

/** Started as `webhook-replay/<deliveryId>`; its result says how the delivery ended. */
export async function webhookReplayWorkflow(deliveryId: string): Promise<'delivered' | 'failed'> {
  return await deliverWebhookOrMarkFailed(deliveryId);
}
