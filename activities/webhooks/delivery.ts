// Webhook delivery: one HTTP attempt per activity attempt. Temporal keeps the schedule (workflows/webhooks/webhook-options.ts);
// this activity picks each next delay itself (exponential with jitter from WEBHOOK_RETRY_BASE_SECONDS, or the
// receiver's Retry-After) and logs every attempt for the administrators' webhook log.
import type { LookupFunction } from 'node:net';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { Services } from '../../src/services.ts';
import { decryptSecret } from '../../src/secrets.ts';
import { loadDelivery, markDeliveryFailed, recordAttempt, setDeliveryStatus } from '../../src/webhooks/deliveries.ts';
import { postWebhook, retryDelayMs, type AttemptResult } from '../../src/webhooks/delivery.ts';
import { webhookHeaders } from '../../src/webhooks/signing.ts';
import { AddressNotAllowed, resolveWebhookAddresses } from '../../src/webhooks/ssrf.ts';
// Constants only (the failure types the retry policy stops on); nothing of the workflow runtime runs here.
import { WEBHOOK_DELIVERY_NOT_FOUND, WEBHOOK_GONE } from '../../workflows/webhooks/webhook-options.ts';

export interface WebhookActivityOptions {
  /** Resolves host names for the SSRF check; node's dns.lookup unless a test plays the DNS server. */
  lookup?: LookupFunction;
}

export function createWebhookActivities(services: Services, options: WebhookActivityOptions = {}) {
  const { db, logger } = services;
  return {
    /** Sends the delivery's stored bytes once; throws a retryable failure with the next delay unless 2xx or 410. */
    async deliverWebhook(deliveryId: string): Promise<void> {
      const delivery = await loadDelivery(db, deliveryId);
      if (!delivery) {
        throw ApplicationFailure.create({
          message: `no webhook delivery ${deliveryId}`,
          type: WEBHOOK_DELIVERY_NOT_FOUND,
          nonRetryable: true,
        });
      }
      if (delivery.status === 'delivered' || delivery.status === 'failed' || delivery.status === 'skipped') return; // settled
      if (!delivery.url || !delivery.secret_encrypted) {
        await setDeliveryStatus(db, deliveryId, 'skipped'); // the endpoint was removed: nobody to tell
        return;
      }
      const attempt = Context.current().info.attempt;
      const url = new URL(delivery.url);
      let result: AttemptResult;
      try {
        // Check the address now (DNS may have changed since registration) and connect to exactly what passed.
        const pinned = await resolveWebhookAddresses(url.hostname, {
          allowLoopback: services.config.WEBHOOK_ALLOW_LOOPBACK,
          lookup: options.lookup,
        });
        const headers = webhookHeaders({
          body: delivery.body,
          secret: decryptSecret(services.masterKey, delivery.secret_encrypted),
          ...(delivery.previous_secret_encrypted
            ? { previousSecret: decryptSecret(services.masterKey, delivery.previous_secret_encrypted) }
            : {}),
          event: delivery.event,
          eventId: delivery.event_id,
          deliveryId,
          timestamp: Math.floor(Date.now() / 1000),
        });
        result = await postWebhook(url, headers, delivery.body, {
          pinned,
          timeoutMs: services.config.WEBHOOK_TIMEOUT_SECONDS * 1000,
        });
      } catch (error) {
        if (!(error instanceof AddressNotAllowed)) throw error;
        result = {
          httpStatus: null,
          retryAfter: null,
          error: `address not allowed: ${error.message}`,
          durationMs: 0,
          responseExcerpt: null,
        };
      }

      const delivered = result.httpStatus !== null && result.httpStatus >= 200 && result.httpStatus < 300;
      const gone = result.httpStatus === 410;
      const status = delivered ? 'delivered' : gone ? 'failed' : 'retrying';
      await recordAttempt(db, deliveryId, {
        attempt,
        status,
        httpStatus: result.httpStatus,
        error: result.error,
        durationMs: result.durationMs,
        responseExcerpt: result.responseExcerpt,
      });
      logger.info(
        { delivery_id: deliveryId, event: delivery.event, attempt, status, http_status: result.httpStatus },
        'webhook attempt',
      );
      if (delivered) return;
      if (gone) {
        throw ApplicationFailure.create({
          message: 'the receiver answered 410 Gone',
          type: WEBHOOK_GONE,
          nonRetryable: true,
        });
      }
      throw ApplicationFailure.create({
        message: `webhook attempt ${attempt} failed: ${result.error}`,
        type: 'WebhookAttemptFailed',
        nextRetryDelay: retryDelayMs(attempt, services.config.WEBHOOK_RETRY_BASE_SECONDS, result),
        category: ApplicationFailureCategory.BENIGN, // an expected outcome, not a worker problem to alert on
      });
    },

    /** Called by the workflow once Temporal stops retrying: the delivery and its last attempt become failed. */
    async markWebhookDeliveryFailed(deliveryId: string): Promise<void> {
      await markDeliveryFailed(db, deliveryId);
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
