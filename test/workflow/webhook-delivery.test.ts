// Two pieces of webhook delivery that need no server. The outbox's delay before its next attempt (retryDelayMs in
// src/webhooks/delivery.ts: doubling from WEBHOOK_RETRY_BASE_SECONDS with jitter, or the receiver's Retry-After, at most
// 12 hours). And the deliverWebhook activity of the runs from before the outbox (activities/webhooks/delivery.ts), in
// Temporal's mock activity context over a PostgreSQL double that answers its one SELECT: it sends nothing, it answers
// as the outbox left the delivery (returns when delivered or skipped, fails for good when failed or unknown, and asks
// to be tried again when the delivery is due while it is still to send). How a workflow waits on those answers is in
// deal-webhooks.test.ts; the outbox's sending (HTTP, SSRF, the attempt log, its retries) is tested end to end in
// test/e2e.
import { describe, expect, it } from 'vitest';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { createWebhookActivities } from '../../activities/webhooks/delivery.ts';
import type { Db } from '../../src/db.ts';
import type { Services } from '../../src/services.ts';
import { MAX_RETRY_DELAY_MS, retryDelayMs } from '../../src/webhooks/delivery.ts';
import {
  WEBHOOK_ACTIVITY_OPTIONS,
  WEBHOOK_DELIVERY_NOT_FOUND,
  WEBHOOK_GONE,
} from '../../workflows/webhooks/webhook-options.ts';

const BASE_SECONDS = 30;

describe('the delay before the outbox’s next attempt', () => {
  it('is the base doubled for each attempt before, with jitter of a fifth', () => {
    for (const attempt of [1, 4, 8]) {
      const doubled = BASE_SECONDS * 1000 * 2 ** (attempt - 1);
      const delays = Array.from({ length: 50 }, () =>
        retryDelayMs(attempt, BASE_SECONDS, { httpStatus: 500, retryAfter: null }),
      );
      for (const delay of delays) {
        expect(delay).toBeGreaterThanOrEqual(doubled * 0.8);
        expect(delay).toBeLessThanOrEqual(doubled * 1.2);
      }
      // Jittered: receivers that failed together are not all tried again at the same moment.
      expect(new Set(delays).size).toBeGreaterThan(1);
    }
  });

  it('is at most 12 hours, however many attempts failed', () => {
    expect(MAX_RETRY_DELAY_MS).toBe(12 * 3600 * 1000);
    expect(retryDelayMs(30, BASE_SECONDS, { httpStatus: 502, retryAfter: null })).toBe(MAX_RETRY_DELAY_MS);
  });

  it('is as long as a 503 or 429 asks in Retry-After, within the same 12 hours', () => {
    expect(retryDelayMs(1, BASE_SECONDS, { httpStatus: 503, retryAfter: '120' })).toBe(120_000);
    expect(retryDelayMs(2, BASE_SECONDS, { httpStatus: 429, retryAfter: String(3 * 24 * 3600) })).toBe(
      MAX_RETRY_DELAY_MS,
    );
  });
});

/** The row the activity's SELECT reads: the delivery's status and how long until the outbox has it due (ms, ≥ 0). */
interface DeliveryRow {
  status: 'pending' | 'retrying' | 'delivered' | 'failed' | 'skipped';
  wait_ms: number | null;
}

/** The activity over a database holding `rows`; `queries` gets what it asked. */
function deliverWebhookOver(rows: Record<string, DeliveryRow>) {
  const queries: Array<{ sql: string; params: unknown[] }> = [];
  const db = {
    query: async (sql: string, params: unknown[]) => {
      queries.push({ sql, params });
      const row = rows[params[0] as string];
      return { rows: row ? [row] : [] };
    },
  };
  // The webhook activities read only the database.
  const services = { db: db as unknown as Db } as Pick<Services, 'db'> as Services;
  return { deliverWebhook: createWebhookActivities(services).deliverWebhook, queries };
}

/** What the SDK logged of the activity's failures (kept out of the output). */
const logged: LogEntry[] = [];
const logger = new DefaultLogger('DEBUG', (entry) => logged.push(entry));

/** Runs one attempt of the activity for the delivery; the failure it throws, if any. */
async function ask(rows: Record<string, DeliveryRow>, deliveryId: string, attempt = 1) {
  const { deliverWebhook, queries } = deliverWebhookOver(rows);
  const env = new MockActivityEnvironment({ attempt }, { logger });
  try {
    await env.run(deliverWebhook, deliveryId);
    return { failure: undefined, queries };
  } catch (error) {
    expect(error).toBeInstanceOf(ApplicationFailure);
    return { failure: error as ApplicationFailure, queries };
  }
}

describe('deliverWebhook, for a run from before the outbox', () => {
  it('answers at once for a delivery the outbox delivered or skipped, reading that delivery’s row', async () => {
    for (const status of ['delivered', 'skipped'] as const) {
      const id = crypto.randomUUID();
      const { failure, queries } = await ask({ [id]: { status, wait_ms: null } }, id);
      expect(failure).toBeUndefined();
      expect(queries).toEqual([{ sql: expect.stringContaining('webhook_deliveries'), params: [id] }]);
    }
  });

  it('fails for good a delivery the outbox failed: WebhookGone, a type the retry policy does not retry', async () => {
    const id = crypto.randomUUID();
    const { failure } = await ask({ [id]: { status: 'failed', wait_ms: null } }, id);
    expect(failure).toMatchObject({ type: WEBHOOK_GONE, nonRetryable: true });
    expect(WEBHOOK_ACTIVITY_OPTIONS.retry?.nonRetryableErrorTypes).toContain(WEBHOOK_GONE);
  });

  it('fails for good a delivery that does not exist: WebhookDeliveryNotFound, not retried either', async () => {
    const { failure } = await ask({}, crypto.randomUUID());
    expect(failure).toMatchObject({ type: WEBHOOK_DELIVERY_NOT_FOUND, nonRetryable: true });
    expect(WEBHOOK_ACTIVITY_OPTIONS.retry?.nonRetryableErrorTypes).toContain(WEBHOOK_DELIVERY_NOT_FOUND);
  });

  it('asks again a second after the outbox has the delivery due: due now, in 5 s, in 10 minutes', async () => {
    const cases: Array<[DeliveryRow, number]> = [
      [{ status: 'pending', wait_ms: 0 }, 1000],
      [{ status: 'retrying', wait_ms: 5000 }, 6000],
      [{ status: 'retrying', wait_ms: 10 * 60_000 }, 10 * 60_000 + 1000],
      [{ status: 'pending', wait_ms: null }, 1000],
    ];
    for (const [row, expected] of cases) {
      const id = crypto.randomUUID();
      const { failure } = await ask({ [id]: row }, id);
      expect(failure).toMatchObject({ nonRetryable: false, nextRetryDelay: expected });
      expect(WEBHOOK_ACTIVITY_OPTIONS.retry?.nonRetryableErrorTypes).not.toContain(failure!.type);
    }
  });

  it('asks less often each time a due delivery is still not sent (it waits behind its deal’s earlier events): 1 s, 2 s, 4 s … at most 10 minutes', async () => {
    const id = crypto.randomUUID();
    const delays: unknown[] = [];
    for (const attempt of [1, 2, 3, 10, 11, 40]) {
      const { failure } = await ask({ [id]: { status: 'pending', wait_ms: 0 } }, id, attempt);
      delays.push(failure!.nextRetryDelay);
    }
    expect(delays).toEqual([1000, 2000, 4000, 512_000, 600_000, 600_000]);
  });

  it('treats the wait as expected, not as the worker’s trouble: the SDK logs it at DEBUG, never as a warning', async () => {
    logged.length = 0;
    const id = crypto.randomUUID();
    const { failure } = await ask({ [id]: { status: 'retrying', wait_ms: 30_000 } }, id);
    expect(failure!.category).toBe(ApplicationFailureCategory.BENIGN);
    expect(logged.filter((entry) => entry.message === 'Activity failed').map((entry) => entry.level)).toEqual([
      'DEBUG',
    ]);
  });
});
