// How deal workflow runs from before the webhook outbox (and replays an administrator started then) wait for their
// deliveries; the outbox (src/webhooks/outbox.ts) sends them. Workflow-safe: only @temporalio/workflow and type
// imports. The activity chooses when to ask again (nextRetryDelay, from the delivery's next attempt); the policy below
// is the fallback for failures it did not choose (worker lost, database down) and the outer bound of 4 days.
import { ActivityFailure, isCancellation, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/webhooks/delivery.ts';

/** Failure types that end the wait at once: the outbox failed the delivery, or the delivery does not exist. */
export const WEBHOOK_GONE = 'WebhookGone';
export const WEBHOOK_DELIVERY_NOT_FOUND = 'WebhookDeliveryNotFound';

export const WEBHOOK_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30s', // one look at the delivery's row
  scheduleToCloseTimeout: '4 days', // all attempts together; then the delivery is marked failed
  retry: {
    initialInterval: '30s',
    backoffCoefficient: 2,
    maximumInterval: '12h',
    // No maximumAttempts: unlimited, the schedule-to-close bounds it.
    nonRetryableErrorTypes: [WEBHOOK_GONE, WEBHOOK_DELIVERY_NOT_FOUND],
  },
};

/** For markWebhookDeliveryFailed: a quick database write, retried until it lands. */
export const markWebhookFailedOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1m' },
};

/**
 * Waits for the outbox to settle one delivery, with the options above, and, when it failed or Temporal gives up (4
 * days), marks it failed. Cancellation passes through. Call it from workflow code, one event after another for one deal.
 */
export async function deliverWebhookOrMarkFailed(deliveryId: string): Promise<'delivered' | 'failed'> {
  const { deliverWebhook } = proxyActivities<WebhookActivities>(WEBHOOK_ACTIVITY_OPTIONS);
  const { markWebhookDeliveryFailed } = proxyActivities<WebhookActivities>(markWebhookFailedOptions);
  try {
    await deliverWebhook(deliveryId);
    return 'delivered';
  } catch (error) {
    if (!(error instanceof ActivityFailure) || isCancellation(error)) throw error;
    await markWebhookDeliveryFailed(deliveryId);
    return 'failed';
  }
}
