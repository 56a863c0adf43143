// The webhook outbox (docs/decisions/0026-webhooks-leave-through-an-outbox.md). A change of a deal writes its webhook
// events and their deliveries in its own transaction (src/webhooks/events.ts); this drainer, beside each worker, sends
// them after the commit, woken by NOTIFY. So the webhook leaves as soon as the change is durable, with no workflow task
// or activity task in between, and Temporal does no work for it.
//
// What the contract asks of delivery holds here:
// - Events of one deal arrive in the order they happened: a delivery is claimed only when no earlier event of its deal
//   has a delivery still to send (retrying ones included), so a receiver that is down delays the deal's later events.
//   "Earlier" is the order the events were written in (webhook_events.seq): a deal has one writer at a time (the API's
//   creation, then its workflow), so that is the order they happened in, whatever the writers' clocks say.
// - Retries back off exponentially with jitter from WEBHOOK_RETRY_BASE_SECONDS, or as the receiver's Retry-After asks;
//   410 stops the delivery; after GIVE_UP_SECONDS of failures it is failed. Every attempt is logged.
// - Nothing is lost when a process dies: a drainer holds a claimed delivery for CLAIM_SECONDS, and one that died while
//   sending leaves the claim to lapse; another drainer (or the same one, restarted) makes the next attempt. Delivery is
//   at least once: a drainer that dies between the receiver's answer and its record sends that attempt again.
// - Several drainers share the table through claims (FOR UPDATE SKIP LOCKED), never through memory. A drainer sends
//   the deliveries written for its worker's task queue (TEMPORAL_TASK_QUEUE), as that queue's workers alone ran their
//   delivery activities before: deployments that share a database keep their own.
import type { LookupFunction } from 'node:net';
import type { Services } from '../services.ts';
import { startDrainLoop } from '../outbox-drainer.ts';
import { decryptSecret } from '../secrets.ts';
import { postWebhook, retryDelayMs, type AttemptResult } from './delivery.ts';
import { webhookHeaders } from './signing.ts';
import { AddressNotAllowed, resolveWebhookAddresses } from './ssrf.ts';
import type { AttemptStatus } from './deliveries.ts';

/** Longer than one attempt (WEBHOOK_TIMEOUT_SECONDS, 15 s) and its record, so a live drainer never loses its claim. */
export const CLAIM_SECONDS = 60;
/**
 * Attempts one drainer has on the wire at once. Each waits on a receiver, not on this process's CPU; a receiver that
 * hangs holds one slot for at most the attempt's timeout.
 */
const CONCURRENCY = 32;
/**
 * After this long of failed attempts, from its first, a delivery is failed (the contract: at least 3 days of trying). From
 * the first attempt, not the row's making: an event that waited behind its deal's earlier ones gets its own days.
 */
export const GIVE_UP_SECONDS = 4 * 86_400;

/**
 * A claim's candidates among deliveries `whose` ($3 is the drainer's task queue): due, not claimed, and with no earlier
 * event of their deal still to send; the first `$2` in due order, locked.
 */
const candidates = (
  whose: string,
) => `SELECT c.id, c.due_at FROM webhook_deliveries c JOIN webhook_events e ON e.id = c.event_id
   WHERE ${whose} AND c.due_at <= now() AND c.status IN ('pending', 'retrying')
     AND (c.claimed_until IS NULL OR c.claimed_until < now())
     AND NOT EXISTS (
       SELECT 1 FROM webhook_deliveries p JOIN webhook_events pe ON pe.id = p.event_id
        WHERE p.deal_id = c.deal_id AND p.due_at IS NOT NULL AND p.status IN ('pending', 'retrying')
          AND p.event_id <> c.event_id
          AND pe.seq < e.seq)
   ORDER BY c.due_at
   LIMIT $2
   FOR UPDATE OF c SKIP LOCKED`;

/**
 * The claim: $1 CLAIM_SECONDS, $2 how many at most, $3 the drainer's task queue. It reads only what it may send. Its own
 * queue's deliveries and those written before the outbox (no queue: any drainer's) are each read straight from the
 * index on (task_queue, due_at), in due order, so other queues' deliveries are never in its way; and a delivery held
 * behind an earlier one of its deal is not due before that one (triggers move its due time: migration
 * 1767400000000_webhook_claims_read_what_they_may_send.sql). The order check in `candidates` still decides.
 */
export const CLAIM_SQL = `WITH own AS (${candidates('c.task_queue = $3')}),
   unqueued AS (${candidates('c.task_queue IS NULL')}),
   picked AS (SELECT id FROM (SELECT * FROM own UNION ALL SELECT * FROM unqueued) u ORDER BY due_at LIMIT $2),
   claimed AS (
     UPDATE webhook_deliveries d SET claimed_until = now() + make_interval(secs => $1), attempts = d.attempts + 1
      WHERE d.id IN (SELECT id FROM picked)
     RETURNING d.id, d.attempts, d.event_id)
 SELECT c.id, c.attempts, e.id AS event_id, e.event, e.body, w.url, w.secret_encrypted,
        CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END AS previous_secret_encrypted
   FROM claimed c
   JOIN webhook_events e ON e.id = c.event_id
   LEFT JOIN webhook_endpoints w ON w.marketplace_id = e.marketplace_id`;

export interface WebhookDrainerOptions {
  /** Resolves host names for the SSRF check; node's dns.lookup unless a test plays the DNS server. */
  lookup?: LookupFunction;
}

export interface WebhookDrainer {
  /** Sends every delivery due now and waits for their attempts (the tests' step); answers how many it attempted. */
  drain(): Promise<number>;
  /** Stops claiming, lets the attempts on the wire finish. Idempotent. */
  stop(): Promise<void>;
}

interface ClaimedDelivery {
  id: string;
  /** This attempt's number: the attempts made before it, plus one. */
  attempts: number;
  event_id: string;
  event: string;
  body: Buffer;
  url: string | null;
  secret_encrypted: string | null;
  previous_secret_encrypted: string | null;
}

export function startWebhookDrainer(services: Services, options: WebhookDrainerOptions = {}): WebhookDrainer {
  const { db, logger, config } = services;
  const onTheWire = new Set<Promise<void>>();

  /** Claims up to `limit` deliveries that are due and whose deal has no earlier event still to send. */
  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    const claimed = await db.query<ClaimedDelivery>(CLAIM_SQL, [CLAIM_SECONDS, limit, config.TEMPORAL_TASK_QUEUE]);
    return claimed.rows;
  }

  /** One HTTP attempt; never throws for the receiver's or the network's faults, which are the attempt's result. */
  async function attempt(delivery: ClaimedDelivery, url: URL, secret: string): Promise<AttemptResult> {
    try {
      // Check the address now (DNS may have changed since registration) and connect to exactly what passed.
      const pinned = await resolveWebhookAddresses(url.hostname, {
        allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
        lookup: options.lookup,
      });
      const headers = webhookHeaders({
        body: delivery.body,
        secret,
        ...(delivery.previous_secret_encrypted
          ? { previousSecret: decryptSecret(services.masterKey, delivery.previous_secret_encrypted) }
          : {}),
        event: delivery.event,
        eventId: delivery.event_id,
        deliveryId: delivery.id,
        timestamp: Math.floor(Date.now() / 1000),
      });
      return await postWebhook(url, headers, delivery.body, {
        pinned,
        timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
      });
    } catch (error) {
      // A refused address or a name that does not resolve is a failed attempt like any other, logged and retried.
      const reason = error instanceof Error ? error.message : String(error);
      return {
        httpStatus: null,
        retryAfter: null,
        error: error instanceof AddressNotAllowed ? `address not allowed: ${reason}` : reason,
        durationMs: 0,
        responseExcerpt: null,
      };
    }
  }

  async function send(delivery: ClaimedDelivery): Promise<void> {
    if (!delivery.url || !delivery.secret_encrypted) {
      // The endpoint was removed: nobody to tell.
      await db.query(
        `UPDATE webhook_deliveries SET status = 'skipped', due_at = NULL, claimed_until = NULL, updated_at = now() WHERE id = $1`,
        [delivery.id],
      );
      return;
    }
    const result = await attempt(
      delivery,
      new URL(delivery.url),
      decryptSecret(services.masterKey, delivery.secret_encrypted),
    );
    const delivered = result.httpStatus !== null && result.httpStatus >= 200 && result.httpStatus < 300;
    const status: AttemptStatus = delivered ? 'delivered' : result.httpStatus === 410 ? 'failed' : 'retrying';
    const recorded = await recordOutboxAttempt(services, delivery.id, {
      attempt: delivery.attempts,
      status,
      result,
      retryInMs: status === 'retrying' ? retryDelayMs(delivery.attempts, config.WEBHOOK_RETRY_BASE_SECONDS, result) : 0,
    });
    logger.info(
      {
        delivery_id: delivery.id,
        event: delivery.event,
        attempt: delivery.attempts,
        status: recorded,
        http_status: result.httpStatus,
      },
      'webhook attempt',
    );
  }

  /**
   * Puts what is due on the wire, up to the free slots; each attempt that ends wakes the loop for the next. One launch
   * at a time (the loop's and a test's drain()), so the slots are counted after the last claim came back.
   */
  let launching: Promise<number> = Promise.resolve(0);
  function launch(): Promise<number> {
    launching = launching.catch(() => 0).then(claimAndSend);
    return launching;
  }

  async function claimAndSend(): Promise<number> {
    const room = CONCURRENCY - onTheWire.size;
    if (room <= 0) return 0;
    const claimed = await claim(room);
    for (const delivery of claimed) {
      const sending: Promise<void> = send(delivery)
        .catch((error: unknown) =>
          // The claim lapses and the attempt is made again: at least once, never lost.
          logger.warn(
            { err: error, delivery_id: delivery.id },
            'a webhook attempt could not be recorded; it is retried',
          ),
        )
        .finally(() => {
          onTheWire.delete(sending);
          loop.wake(); // the deal's next event may be due now
        });
      onTheWire.add(sending);
    }
    return claimed.length;
  }

  const loop = startDrainLoop(db, logger, { channel: 'webhook_deliveries', what: 'webhook', drain: launch });

  return {
    async drain() {
      let attempted = 0;
      for (;;) {
        const launched = await launch();
        attempted += launched;
        if (launched === 0 && onTheWire.size === 0) return attempted;
        await Promise.allSettled([...onTheWire]);
      }
    },
    async stop() {
      await loop.stop();
      await Promise.allSettled([...onTheWire]);
    },
  };
}

/**
 * Logs the attempt and settles or reschedules the delivery, in one statement, and answers the delivery's status. A
 * delivery still failing GIVE_UP_SECONDS after its first attempt is failed. One settled while this attempt was on the
 * wire (skipped: its endpoint was removed; failed: a run from before the outbox gave it up) stays so unless the attempt
 * delivered it: no record revives it.
 */
export async function recordOutboxAttempt(
  services: Pick<Services, 'db'>,
  deliveryId: string,
  record: { attempt: number; status: AttemptStatus; result: AttemptResult; retryInMs: number },
): Promise<string> {
  const { result } = record;
  const written = await services.db.query<{ status: string }>(
    `WITH outcome AS (
       SELECT CASE WHEN $3 = 'retrying'
                    AND coalesce((SELECT min(a.attempted_at) FROM webhook_attempts a WHERE a.delivery_id = d.id), now())
                        < now() - make_interval(secs => $9)
                   THEN 'failed' ELSE $3 END AS attempt,
              d.status AS was
         FROM webhook_deliveries d WHERE d.id = $1),
     logged AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, status, http_status, error, duration_ms, response_excerpt)
       SELECT $1, $2, attempt, $4, $5, $6, $7 FROM outcome
       ON CONFLICT (delivery_id, attempt) DO UPDATE
         SET status = EXCLUDED.status, http_status = EXCLUDED.http_status, error = EXCLUDED.error,
             duration_ms = EXCLUDED.duration_ms, response_excerpt = EXCLUDED.response_excerpt, attempted_at = now()),
     next AS (
       SELECT CASE WHEN was IN ('skipped', 'failed') AND attempt <> 'delivered' THEN was ELSE attempt END AS status
         FROM outcome)
     UPDATE webhook_deliveries d
        SET status = next.status,
            due_at = CASE WHEN next.status = 'retrying' THEN now() + make_interval(secs => $8::double precision / 1000) END,
            claimed_until = NULL, updated_at = now()
       FROM next
      WHERE d.id = $1
      RETURNING d.status`,
    [
      deliveryId,
      record.attempt,
      record.status,
      result.httpStatus,
      result.error,
      result.durationMs,
      result.responseExcerpt,
      record.retryInMs,
      GIVE_UP_SECONDS,
    ],
  );
  return written.rows[0]?.status ?? 'gone';
}
