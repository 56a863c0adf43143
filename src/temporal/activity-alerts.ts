// An activity that keeps failing is never silent. Temporal retries our activities for as long as it takes (a database
// that restarts comes back), so a failure that does not pass would otherwise only show as a deal that stopped moving.
// From attempt ACTIVITY_ALERT_ATTEMPTS on, each failed attempt is an error log line naming the workflow (a deal's
// workflow id names its marketplace and external id) and the activity, and counts in the worker's metric
// `activity_failures_after_retries_total` (served at WORKER_METRICS_ADDRESS, labelled by activity and workflow type).
import { CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Logger } from '../log.ts';

/**
 * A deal run from before the webhook outbox asks deliverWebhook again and again while the outbox retries a delivery
 * (for days while a marketplace's receiver is down); the delivery log shows every attempt.
 */
const FAILING_BY_DESIGN = new Set(['deliverWebhook']);

export function activityAlerts(logger: Logger, attempts: number): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        try {
          return await next(input);
        } catch (error) {
          const { attempt, activityType, workflowExecution, workflowType, isLocal } = ctx.info;
          if (attempt >= attempts && !FAILING_BY_DESIGN.has(activityType) && !(error instanceof CancelledFailure)) {
            logger.error(
              {
                err: error,
                workflowId: workflowExecution?.workflowId,
                runId: workflowExecution?.runId,
                workflowType,
                activityType,
                attempt,
                local: isLocal,
              },
              `Activity ${activityType} of workflow ${workflowExecution?.workflowId} still fails after ${attempt} attempts`,
            );
            ctx.metricMeter
              .createCounter(
                'activity_failures_after_retries_total',
                'attempts',
                'Failed activity attempts from ACTIVITY_ALERT_ATTEMPTS on',
              )
              .add(1, { workflow_type: workflowType ?? '' });
          }
          throw error;
        }
      },
    },
  });
}
