// The webhook activity's own part of the retries (activities/webhooks/delivery.ts), in Temporal's mock activity
// context: which attempt it is comes from Temporal, and the activity answers with the delay before the next one
// (doubling from WEBHOOK_RETRY_BASE_SECONDS, or the receiver's Retry-After, at most 12 hours), or a failure the retry
// policy does not retry. The giving up after 4 days is Temporal's (deal-webhooks.test.ts). Real HTTP to a receiver on
// 127.0.0.1; the deliveries' rows are held in memory instead of PostgreSQL.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { createWebhookActivities } from '../../activities/webhooks/delivery.ts';
import { parseConfig } from '../../src/config.ts';
import type { Db } from '../../src/db.ts';
import { createLogger } from '../../src/log.ts';
import { encryptSecret } from '../../src/secrets.ts';
import type { Services } from '../../src/services.ts';
import type { AttemptRecord, DeliveryToSend } from '../../src/webhooks/deliveries.ts';
import { MAX_RETRY_DELAY_MS } from '../../src/webhooks/delivery.ts';
import { WEBHOOK_ACTIVITY_OPTIONS } from '../../workflows/webhooks/webhook-options.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';

/** The deliveries' rows: what loadDelivery reads, and what the activity records of each attempt. */
const rows = vi.hoisted(() => ({
  deliveries: new Map<string, DeliveryToSend>(),
  attempts: [] as Array<{ deliveryId: string } & AttemptRecord>,
  statuses: [] as Array<{ deliveryId: string; status: string }>,
}));
vi.mock('../../src/webhooks/deliveries.ts', () => ({
  loadDelivery: async (_db: unknown, id: string) => rows.deliveries.get(id),
  recordAttempt: async (_db: unknown, deliveryId: string, record: AttemptRecord) => {
    rows.attempts.push({ deliveryId, ...record });
  },
  setDeliveryStatus: async (_db: unknown, deliveryId: string, status: string) => {
    rows.statuses.push({ deliveryId, status });
  },
  markDeliveryFailed: async () => {},
}));

const BASE_SECONDS = 30;
const masterKey = randomBytes(32);
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.stop();
});
beforeEach(() => {
  rows.deliveries.clear();
  rows.attempts.length = 0;
  rows.statuses.length = 0;
  logged.length = 0;
  receiver.received.length = 0;
  receiver.script.length = 0;
});

/** The activity over the rows above; the receiver on 127.0.0.1 is allowed unless told. */
function deliverWebhook(config: Record<string, string> = {}) {
  const services = {
    db: {} as Db,
    logger: createLogger('silent'),
    masterKey,
    config: parseConfig({
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_RETRY_BASE_SECONDS: String(BASE_SECONDS),
      ...config,
    }),
  } as Pick<Services, 'db' | 'logger' | 'masterKey' | 'config'>;
  // Only these four services are read by the webhook activities.
  return createWebhookActivities(services as Services).deliverWebhook;
}

/** A delivery of deal.paid to the receiver, waiting to be sent. */
function delivery(overrides: Partial<DeliveryToSend> = {}): string {
  const id = crypto.randomUUID();
  rows.deliveries.set(id, {
    id,
    status: 'pending',
    event_id: crypto.randomUUID(),
    event: 'deal.paid',
    body: Buffer.from('{"event":"deal.paid"}'),
    url: receiver.url,
    secret_encrypted: encryptSecret(masterKey, `whsec_${randomBytes(24).toString('base64')}`),
    previous_secret_encrypted: null,
    ...overrides,
  });
  return id;
}

/** What the SDK logged of the attempts (kept out of the output). */
const logged: LogEntry[] = [];
const logger = new DefaultLogger('DEBUG', (entry) => logged.push(entry));

/** Runs one attempt as Temporal's attempt number `attempt`; the failure it throws, if any. */
async function attempt(deliveryId: string, number: number, config?: Record<string, string>) {
  const env = new MockActivityEnvironment({ attempt: number }, { logger });
  try {
    await env.run(deliverWebhook(config), deliveryId);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ApplicationFailure);
    return error as ApplicationFailure;
  }
}

describe('one attempt of a webhook delivery', () => {
  it('fails a 5xx with the next delay: the base doubled for each attempt before, with jitter of a fifth', async () => {
    const id = delivery();
    for (const number of [1, 4, 8]) {
      receiver.script.push({ status: 500 });
      const failure = await attempt(id, number);
      const doubled = BASE_SECONDS * 1000 * 2 ** (number - 1);
      expect(failure).toMatchObject({ type: 'WebhookAttemptFailed', nonRetryable: false });
      expect(failure!.category).toBe(ApplicationFailureCategory.BENIGN);
      expect(failure!.nextRetryDelay).toBeGreaterThanOrEqual(doubled * 0.8);
      expect(failure!.nextRetryDelay).toBeLessThanOrEqual(doubled * 1.2);
    }
    // Each attempt is logged under the number Temporal gave it, and the delivery is retrying.
    expect(rows.attempts.map(({ attempt, status, httpStatus }) => ({ attempt, status, httpStatus }))).toEqual([
      { attempt: 1, status: 'retrying', httpStatus: 500 },
      { attempt: 4, status: 'retrying', httpStatus: 500 },
      { attempt: 8, status: 'retrying', httpStatus: 500 },
    ]);
    expect(receiver.received).toHaveLength(3);
    // An expected outcome, not the worker's trouble: the SDK logs it at DEBUG, never as a warning.
    expect(logged.filter((entry) => entry.message === 'Activity failed').map((entry) => entry.level)).toEqual([
      'DEBUG',
      'DEBUG',
      'DEBUG',
    ]);
  });

  it('waits at most 12 hours, however many attempts failed', async () => {
    const id = delivery();
    receiver.script.push({ status: 502 });
    expect((await attempt(id, 30))!.nextRetryDelay).toBe(MAX_RETRY_DELAY_MS);
    expect(MAX_RETRY_DELAY_MS).toBe(12 * 3600 * 1000);
  });

  it('waits as long as a 503 or 429 asks in Retry-After, within the same 12 hours', async () => {
    const id = delivery();
    receiver.script.push(
      { status: 503, headers: { 'Retry-After': '120' } },
      { status: 429, headers: { 'Retry-After': String(3 * 24 * 3600) } },
    );
    expect((await attempt(id, 1))!.nextRetryDelay).toBe(120_000);
    expect((await attempt(id, 2))!.nextRetryDelay).toBe(MAX_RETRY_DELAY_MS);
  });

  it('fails a 410 Gone for good: a type the retry policy does not retry, the delivery logged as failed', async () => {
    const id = delivery();
    receiver.script.push({ status: 410 });
    const failure = await attempt(id, 2);
    expect(failure).toMatchObject({ type: 'WebhookGone', nonRetryable: true });
    expect(WEBHOOK_ACTIVITY_OPTIONS.retry?.nonRetryableErrorTypes).toContain(failure!.type);
    expect(rows.attempts).toEqual([expect.objectContaining({ deliveryId: id, attempt: 2, status: 'failed' })]);
  });

  it('fails a delivery that does not exist for good, without a request', async () => {
    const failure = await attempt(crypto.randomUUID(), 1);
    expect(failure).toMatchObject({ type: 'WebhookDeliveryNotFound', nonRetryable: true });
    expect(WEBHOOK_ACTIVITY_OPTIONS.retry?.nonRetryableErrorTypes).toContain(failure!.type);
    expect(receiver.received).toEqual([]);
  });

  it('ends the retries once delivered: a 2xx is logged delivered and nothing is thrown', async () => {
    const id = delivery();
    expect(await attempt(id, 3)).toBeUndefined();
    expect(rows.attempts).toEqual([expect.objectContaining({ attempt: 3, status: 'delivered', httpStatus: 200 })]);
    expect(receiver.received.map((request) => request.headers['x-svc-delivery'])).toEqual([id]);
  });

  it('sends nothing for a delivery already settled (a retry that comes after an administrator marked it)', async () => {
    for (const status of ['delivered', 'failed', 'skipped'] as const)
      expect(await attempt(delivery({ status }), 5)).toBeUndefined();
    expect(receiver.received).toEqual([]);
    expect(rows.attempts).toEqual([]);
  });

  it('skips a delivery whose endpoint was removed: nobody to tell, no retry', async () => {
    const id = delivery({ url: null, secret_encrypted: null });
    expect(await attempt(id, 1)).toBeUndefined();
    expect(rows.statuses).toEqual([{ deliveryId: id, status: 'skipped' }]);
    expect(receiver.received).toEqual([]);
  });

  it('retries an address the SSRF check refuses (DNS may change), without connecting to it', async () => {
    const id = delivery();
    const failure = await attempt(id, 1, { WEBHOOK_ALLOW_LOOPBACK: '' });
    expect(failure).toMatchObject({ type: 'WebhookAttemptFailed', nonRetryable: false });
    expect(rows.attempts).toEqual([
      expect.objectContaining({
        status: 'retrying',
        httpStatus: null,
        error: expect.stringContaining('address not allowed'),
      }),
    ]);
    expect(receiver.received).toEqual([]);
  });
});
