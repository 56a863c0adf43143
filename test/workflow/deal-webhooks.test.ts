// Webhooks and the deal workflow on Temporal's time-skipping test server, since they leave through the outbox
// (docs/decisions/0026-webhooks-leave-through-an-outbox.md). A new run hands every delivery to the outbox with the
// change that wrote it: it schedules no deliverWebhook, and at the API's patch level it records no patch marker. The workflow's
// delivery loop is left for the runs from before the outbox: a run given pendingDeliveries by one of them, and an
// administrator's replay started then. There the real deliverWebhook activity (activities/webhooks/delivery.ts) reads
// the world's outbox (test/workflow/support.ts): it answers once the outbox has delivered the delivery, fails for good
// when the outbox failed it, and otherwise asks again just after the outbox has it due (a due one that waits, ever less
// often); the retry
// policy (workflows/webhooks/webhook-options.ts) backs off 30 s doubling for failures it did not time, and stops within
// the 4 days of its schedule-to-close. What the outbox sends, and when, is tested end to end in test/e2e; the
// activity's own answers in webhook-delivery.test.ts.
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { DealSnapshot } from '../../src/deals/model.ts';
import { nextPayoutId } from '../../src/money/deal-money.ts';
import type { SellerPayoutInput } from '../../activities/deals/payouts.ts';
import { movePaymentUpdate, startEscrowUpdate } from '../../workflows/deals/deal-messages.ts';
import type { webhookReplayWorkflow } from '../../workflows/webhooks/webhook-replay.ts';
import {
  approvedSnapshot,
  DAY,
  expectReplays,
  FakeWorld,
  HOUR,
  MINUTE,
  SECOND,
  startDeal,
  useTimeSkippingWorker,
  type ActivityCall,
  type WebhookAnswer,
} from './support.ts';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
const world = new FakeWorld();
const taskQueue = 'deal-webhooks';
useTimeSkippingWorker(taskQueue, world, (started) => ({ env, bundle } = started));

/** The moments one ask of the activity takes in the server's clock, which runs while an activity does. */
const SLACK = 5 * SECOND;

const asksOf = (deliveryId: string) => world.callsOf('deliverWebhook').filter((call) => call.args[0] === deliveryId);
const marksOf = (deliveryId: string) =>
  world.callsOf('markWebhookDeliveryFailed').filter((call) => call.args[0] === deliveryId);

/** The time between one ask and the next, in the server's clock. */
const waitsBetween = (asks: ActivityCall[]) => asks.slice(1).map((call, i) => call.at - asks[i].at);

/** Each wait as expected, give or take the moments an ask takes. */
function expectWaits(waits: number[], expected: number[]): void {
  expect(waits).toHaveLength(expected.length);
  waits.forEach((wait, i) => {
    expect(wait).toBeGreaterThanOrEqual(expected[i]);
    expect(wait).toBeLessThan(expected[i] + SLACK);
  });
}

// ---------------------------------------------------------------------------------------------------------------------
// What a run's history holds

const decoded = (data: Uint8Array | null | undefined): unknown => JSON.parse(new TextDecoder().decode(data));

/** The activities the run scheduled (by type and first argument), its patch markers, and its search-attribute upserts. */
async function historyOf(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  return {
    scheduled: events.flatMap(({ activityTaskScheduledEventAttributes: scheduled }) =>
      scheduled ? [{ type: scheduled.activityType!.name!, arg: decoded(scheduled.input!.payloads![0].data) }] : [],
    ),
    // How the SDK records patched(id): a marker named core_patch whose patch-data is {"id": …, "deprecated": …}.
    patchMarkers: events.flatMap(({ markerRecordedEventAttributes: marker }) =>
      marker?.markerName === 'core_patch'
        ? [(decoded(marker.details!['patch-data'].payloads![0].data) as { id: string }).id]
        : [],
    ),
    // Each upsert as { attribute: value }: the deal's status, and TemporalChangeVersion, the patches' visibility twin.
    upserts: events.flatMap(({ upsertWorkflowSearchAttributesEventAttributes: upsert }) =>
      upsert
        ? [
            Object.fromEntries(
              Object.entries(upsert.searchAttributes!.indexedFields!).map(([key, value]) => [key, decoded(value.data)]),
            ),
          ]
        : [],
    ),
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// A new run

/** A deal through its life as the API drives it: escrow held at once (sandbox), released by the buyer, paid out. */
async function lifecycle(snapshot: DealSnapshot, input: Parameters<typeof startDeal>[4] = {}) {
  world.seed(snapshot);
  const handle = await startDeal(env, taskQueue, snapshot, {}, input);
  await handle.executeUpdate(startEscrowUpdate, {
    args: [
      {
        amount: 0,
        description: '',
        provider: 'sandbox',
        return_url: 'https://shop.example/back',
        hold_limit_seconds: 7 * 24 * 3600,
      },
    ],
  });
  await handle.executeUpdate(movePaymentUpdate, { args: [{ action: 'release', actor: 'buyer' }] });
  await handle.result();
  return handle;
}

describe('a new deal run', () => {
  it('at the patch level the API starts it with, sends no webhook itself, records no patch marker, schedules no activity task, and still upserts its status', async () => {
    const snapshot = approvedSnapshot(await env.currentTimeMs());
    const dealId = snapshot.deal.id;
    const handle = await lifecycle(snapshot);

    // Every event was written with its delivery, which is the outbox's to send.
    expect(world.webhookEvents(dealId)).toEqual(['deal.escrow_hold', 'deal.payout_sent', 'deal.paid']);
    for (const event of world.deal(dealId).events) expect(world.outbox.get(event.deliveryId)?.dealId).toBe(dealId);
    expect(world.callsOf('deliverWebhook', dealId)).toEqual([]);

    const history = await historyOf(handle);
    // The escrow payment and the payout were asked in the worker, by local activities: the deal has no activity task.
    // The payout's id follows from the payment's records, so a lost task would ask again under the same id.
    expect(world.callsOf('createEscrowPayment', dealId)).toHaveLength(1);
    const [payout] = world.callsOf('createSellerPayout', dealId);
    const [payment] = world.latestRecords(world.deal(dealId)).payments;
    expect((payout.args[0] as SellerPayoutInput).payoutId).toBe(nextPayoutId(payment.id, []));
    expect(history.scheduled).toEqual([]);
    expect(history.patchMarkers).toEqual([]);
    // The status is still the deal's search attribute, upserted at each change of it, and nothing else is.
    expect(history.upserts).toEqual([{ DealStatus: 'escrow_hold' }, { DealStatus: 'paid' }]);
    await expectReplays(bundle, handle);
  });

  it.each([
    [1, ['acquirer-local', 'payout-local']],
    [2, ['payout-local']],
  ])('at patch level %s asks patched() for the changes made after it alone, and takes them', async (level, asked) => {
    const snapshot = approvedSnapshot(await env.currentTimeMs());
    const dealId = snapshot.deal.id;
    const handle = await lifecycle(snapshot, { patchLevel: level });

    expect(world.webhookEvents(dealId)).toEqual(['deal.escrow_hold', 'deal.payout_sent', 'deal.paid']);
    const history = await historyOf(handle);
    expect(history.scheduled).toEqual([]);
    expect(history.patchMarkers).toEqual(asked);
    await expectReplays(bundle, handle);
  });

  it('started without a patch level (by code from before it) asks patched() for each change and takes the outbox too: markers, but no delivery', async () => {
    const snapshot = approvedSnapshot(await env.currentTimeMs());
    const dealId = snapshot.deal.id;
    const handle = await lifecycle(snapshot, { patchLevel: undefined });

    expect(world.webhookEvents(dealId)).toEqual(['deal.escrow_hold', 'deal.payout_sent', 'deal.paid']);
    expect(world.callsOf('deliverWebhook', dealId)).toEqual([]);
    const history = await historyOf(handle);
    expect(history.scheduled).toEqual([]);
    // A new history takes every change it asks about, each with its marker and its TemporalChangeVersion upsert: what
    // a patch level spares (the tests above), the outbox among them.
    expect(history.patchMarkers).toEqual(
      expect.arrayContaining([
        'local-records',
        'start-from-records',
        'webhook-outbox',
        'payouts',
        'acquirer-local',
        'payout-local',
      ]),
    );
    expect(history.upserts).toContainEqual({ TemporalChangeVersion: expect.arrayContaining(['webhook-outbox']) });
    expect(history.upserts.filter((upsert) => 'DealStatus' in upsert)).toEqual([
      { DealStatus: 'escrow_hold' },
      { DealStatus: 'paid' },
    ]);
    await expectReplays(bundle, handle);
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// Deliveries a run from before the outbox handed over

/**
 * An approved deal whose run is started as one from before the outbox continued it as new: provisioned, without a
 * patch level, with deal.created and deal.escrow_hold still to send, written into the outbox now (as the migration
 * hands them over). The receiver answers deal.created as `answer` says, anything else at once.
 */
async function handedOver(answer: (attempt: number) => WebhookAnswer) {
  const now = await env.currentTimeMs();
  const snapshot = approvedSnapshot(now);
  const dealId = snapshot.deal.id;
  world.seed(snapshot);
  const created = world.writeDelivery({ dealId, type: 'deal.created' }, now);
  const held = world.writeDelivery({ dealId, type: 'deal.escrow_hold' }, now);
  world.webhookAnswer = ({ id }, attempt) => (id === created ? answer(attempt) : 'delivered');
  const handle = await startDeal(
    env,
    taskQueue,
    snapshot,
    {},
    { provisioned: true, patchLevel: undefined, pendingDeliveries: [created, held] },
  );
  return { handle, dealId, created, held, madeAt: now };
}

/** The deliveries the run scheduled deliverWebhook for, in its history's order. */
const deliveriesScheduled = async (handle: WorkflowHandle) =>
  (await historyOf(handle)).scheduled.filter(({ type }) => type === 'deliverWebhook').map(({ arg }) => arg);

describe('deliveries handed over by a run from before the outbox', () => {
  it('are waited for one after another: asked about again just after the outbox has one due, and the next only once the outbox delivered it', async () => {
    // The outbox tries deal.created at once, after 2, 10 and 30 minutes; the fourth attempt delivers it.
    const retries = [2 * MINUTE, 10 * MINUTE, 30 * MINUTE];
    const { handle, dealId, created, held, madeAt } = await handedOver((attempt) =>
      attempt <= retries.length
        ? { fail: `HTTP 503 (attempt ${attempt})`, retryInMs: retries[attempt - 1] }
        : 'delivered',
    );
    await expect.poll(() => asksOf(created).length).toBeGreaterThan(0);
    await env.sleep(HOUR);
    await expect.poll(() => asksOf(held).length).toBe(1);

    const outboxAttempts = world.outbox.get(created)!.attempts.map(({ at }) => at);
    expect(outboxAttempts).toEqual([madeAt, madeAt + 2 * MINUTE, madeAt + 12 * MINUTE, madeAt + 42 * MINUTE]);
    const asks = asksOf(created);
    // About one ask for each attempt of the outbox, not one a minute for the 42 minutes (nor the retry policy's 30 s, 1, 2,
    // 4, 8 … minutes) …
    for (const wait of waitsBetween(asks)) expect(wait).toBeGreaterThanOrEqual(SECOND);
    expect(asks.length).toBeLessThanOrEqual(outboxAttempts.length + 2);
    // … and within a second of each time the outbox had it due: the last ask found it delivered.
    for (const due of outboxAttempts.slice(1))
      expect(asks.some((ask) => ask.at >= due && ask.at < due + SECOND + SLACK)).toBe(true);
    expect(asks.at(-1)!.at).toBeGreaterThanOrEqual(madeAt + 42 * MINUTE);
    expect(asks.at(-1)!.at).toBeLessThan(madeAt + 42 * MINUTE + SECOND + SLACK);
    // In the order they happened: deal.escrow_hold is asked about once deal.created is through, and is at once.
    expect(asksOf(held)[0].at).toBeGreaterThanOrEqual(asks.at(-1)!.at);
    expect(world.outbox.get(held)).toMatchObject({ status: 'delivered' });
    expect(await deliveriesScheduled(handle)).toEqual([created, held]);
    expect(world.callsOf('markWebhookDeliveryFailed', dealId)).toEqual([]);
    await expectReplays(bundle, handle);
    await handle.terminate('the test is over');
  });

  it('that the outbox fails (410 Gone) end the wait at the next ask: the run marks it failed and goes on with the next', async () => {
    // The outbox tries deal.created at once and after 5 minutes, when the receiver answers 410.
    const { handle, created, held, madeAt } = await handedOver((attempt) =>
      attempt === 1 ? { fail: 'HTTP 500', retryInMs: 5 * MINUTE } : 'gone',
    );
    await expect.poll(() => asksOf(created).length).toBeGreaterThan(0);
    await env.sleep(10 * MINUTE);
    await expect.poll(() => asksOf(held).length).toBe(1);

    expect(world.outbox.get(created)).toMatchObject({ status: 'failed', settledAt: madeAt + 5 * MINUTE });
    // WEBHOOK_GONE is not retried: the ask that found it failed is the last.
    const asks = asksOf(created);
    expect(asks.at(-1)!.at).toBeGreaterThanOrEqual(madeAt + 5 * MINUTE);
    expect(asks.at(-1)!.at).toBeLessThan(madeAt + 5 * MINUTE + SECOND + SLACK);
    const [marked, ...more] = marksOf(created);
    expect(more).toEqual([]);
    expect(marked.at).toBeGreaterThanOrEqual(asks.at(-1)!.at);
    // The failed event does not hold up the rest.
    expect(asksOf(held)[0].at).toBeGreaterThanOrEqual(marked.at);
    expect(marksOf(held)).toEqual([]);
    expect(await deliveriesScheduled(handle)).toEqual([created, held]);
    await expectReplays(bundle, handle);
    await handle.terminate('the test is over');
  });

  it('are asked about on the retry policy’s backoff (30 s doubling) while the outbox cannot be read', async () => {
    // PostgreSQL is down for the first 10 minutes: the activity fails without a delay of its own.
    world.outboxUnreadableUntil = (await env.currentTimeMs()) + 10 * MINUTE;
    const { handle, created, held } = await handedOver(() => 'delivered');
    await expect.poll(() => asksOf(created).length).toBeGreaterThan(0);
    await env.sleep(20 * MINUTE);
    await expect.poll(() => asksOf(held).length).toBe(1);

    const asks = asksOf(created);
    expectWaits(waitsBetween(asks), [30 * SECOND, MINUTE, 2 * MINUTE, 4 * MINUTE, 8 * MINUTE]);
    expect(asks.at(-1)!.at).toBeGreaterThanOrEqual(world.outboxUnreadableUntil);
    expect(marksOf(created)).toEqual([]);
    await handle.terminate('the test is over');
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// An administrator's replay from before the outbox

/** Starts the replay workflow of a delivery written into the outbox now. */
async function replay(answer: (attempt: number) => WebhookAnswer) {
  const madeAt = await env.currentTimeMs();
  const deliveryId = world.writeDelivery({ dealId: crypto.randomUUID(), type: 'deal.paid' }, madeAt);
  world.webhookAnswer = ({ id }, attempt) => (id === deliveryId ? answer(attempt) : 'delivered');
  const handle = await env.client.workflow.start<typeof webhookReplayWorkflow>('webhookReplayWorkflow', {
    workflowId: `webhook-replay/${deliveryId}`,
    taskQueue,
    args: [deliveryId],
  });
  return { handle, deliveryId, madeAt };
}

describe('an administrator’s replay started before the outbox', () => {
  it('answers delivered once the outbox has delivered it, however long the receiver failed first', async () => {
    const { handle, deliveryId, madeAt } = await replay((attempt) =>
      attempt <= 3 ? { fail: 'HTTP 502', retryInMs: HOUR } : 'delivered',
    );
    expect(await handle.result()).toBe('delivered');
    expect(world.outbox.get(deliveryId)).toMatchObject({ status: 'delivered', settledAt: madeAt + 3 * HOUR });
    const asks = asksOf(deliveryId);
    expect(asks.at(-1)!.at).toBeGreaterThanOrEqual(madeAt + 3 * HOUR);
    expect(asks.at(-1)!.at).toBeLessThan(madeAt + 3 * HOUR + SECOND + SLACK);
    expect(marksOf(deliveryId)).toEqual([]);
    await expectReplays(bundle, handle);
  });

  it('answers failed once the outbox failed it, and marks it failed', async () => {
    const { handle, deliveryId, madeAt } = await replay((attempt) =>
      attempt === 1 ? { fail: 'HTTP 500', retryInMs: 20 * MINUTE } : 'gone',
    );
    expect(await handle.result()).toBe('failed');
    expect(asksOf(deliveryId).at(-1)!.at).toBeGreaterThanOrEqual(madeAt + 20 * MINUTE);
    expect(marksOf(deliveryId)).toHaveLength(1);
    expect(world.outbox.get(deliveryId)?.status).toBe('failed');
    await expectReplays(bundle, handle);
  });

  it('waits at least 3 days for a delivery the outbox keeps retrying, asking after each of its attempts, then gives up within 4 and answers failed', async () => {
    // The receiver fails every attempt; the outbox retries twice a day and would fail it only after 4 days, so the
    // retry policy's schedule-to-close is what ends the wait.
    const { handle, deliveryId } = await replay(() => ({ fail: 'HTTP 500', retryInMs: 12 * HOUR }));
    expect(await handle.result()).toBe('failed');

    const asks = asksOf(deliveryId);
    const first = asks[0].at;
    expect(asks.at(-1)!.at).toBeGreaterThanOrEqual(first + 3 * DAY);
    // Just after each of the outbox's attempts, twice a day: a few asks, not thousands.
    for (const wait of waitsBetween(asks.slice(1))) expect(wait).toBeGreaterThanOrEqual(12 * HOUR - SLACK);
    expect(asks.length).toBeLessThanOrEqual(10);
    const [marked, ...more] = marksOf(deliveryId);
    expect(more).toEqual([]);
    expect(marked.at).toBeLessThanOrEqual(first + 4 * DAY);
    expect(world.outbox.get(deliveryId)?.status).toBe('failed');
    await expectReplays(bundle, handle);
  });
});
