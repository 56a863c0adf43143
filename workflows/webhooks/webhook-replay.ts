// An administrator's replay of a webhook: a new delivery of a stored event, sent with the same schedule as the
// deal workflow's deliveries. Deterministic: only @temporalio/workflow and type imports (via webhook-options.ts).
import { deliverWebhookOrMarkFailed } from './webhook-options.ts';

/** Started as `webhook-replay/<deliveryId>`; its result says how the delivery ended. */
export async function webhookReplayWorkflow(deliveryId: string): Promise<'delivered' | 'failed'> {
  return await deliverWebhookOrMarkFailed(deliveryId);
}
