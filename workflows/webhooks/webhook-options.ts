// How deal workflows (and the replay workflow) run webhook delivery. Workflow-safe: only @temporalio/workflow and
// type imports. The activity chooses each retry delay itself (nextRetryDelay); the policy below is the fallback for
// failures it did not choose (worker lost, database down) and the outer bound: at least 3 days of trying.
import { ActivityFailure, isCancellation, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { WebhookActivities } from '../../activities/webhooks/delivery.ts';

/** Failure types that end a delivery at once: the receiver answered 410, or the delivery does not exist. */
export const WEBHOOK_GONE = 'WebhookGone';
export const WEBHOOK_DELIVERY_NOT_FOUND = 'WebhookDeliveryNotFound';

export const WEBHOOK_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30s', // one HTTP attempt (15 s) plus its bookkeeping
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
 * Delivers one delivery with the options above and, when Temporal gives up (410, or 4 days of failures), marks it
 * failed. Cancellation passes through. Call it from workflow code, one event after another for one deal.
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
