// Every timer of the deal workflow (DealEntity.nextTimer) on Temporal's time-skipping test server, with the activities
// in memory (test/workflow/support.ts): the act before an acquirer's hold lapses, the buyer's reminder and the end of
// the inspection window, the checks of a payout the acquirer has not finished, and a long history continued as new
// with its timer. Each timer is shown not to act a minute before its time and to act within a minute after it, in
// the server's clock; each run's history then replays on the same code.
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { DealSnapshot } from '../../src/deals/model.ts';
import { nextPayoutId } from '../../src/money/deal-money.ts';
import type { SellerPayoutInput } from '../../activities/deals/payouts.ts';
import {
  acquirerNotificationSignal,
  addDocumentUpdate,
  deliverUpdate,
  disputeMessageUpdate,
  movePaymentUpdate,
  payoutDestinationSignal,
  shipUpdate,
  snapshotQuery,
  startEscrowUpdate,
  type DealSettings,
  type DealWorkflowInput,
} from '../../workflows/deals/deal-messages.ts';
import type { dealWorkflow } from '../../workflows/deals/deal.ts';
import { PATCH_LEVEL } from '../../workflows/deals/patches.ts';
import {
  approvedSnapshot,
  DAY,
  expectReplays,
  FakeWorld,
  heldSnapshot,
  HOUR,
  MINUTE,
  SETTINGS,
  startDeal,
  logged,
  useTimeSkippingWorker,
  timersStarted,
  type SellerPayoutAnswer,
} from './support.ts';

const HOLD = 7 * DAY;
const MARGIN = SETTINGS.holdMarginSeconds * 1000;
const LAPSE_REASON = (policy: string) =>
  `The acquirer's hold was about to lapse; the service's policy is to ${policy}.`;

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
const world = new FakeWorld();
const taskQueue = 'deal-timers';
useTimeSkippingWorker(taskQueue, world, (started) => ({ env, bundle } = started));

/** Moves the server's clock to `at` (firing every timer on the way); the clock stands still afterwards. */
async function sleepUntil(at: number): Promise<void> {
  const now = await env.currentTimeMs();
  expect(at).toBeGreaterThan(now);
  await env.sleep(at - now);
}

/** How many timers of the run fired so far: the server writes it to the history when its clock passes the timer. */
async function timersFired(handle: WorkflowHandle): Promise<number> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).filter((event) => event.timerFiredEventAttributes).length;
}

/** Starts the deal and waits until its workflow has provisioned it and set the timer it waits on (if any). */
async function begin(
  snapshot: DealSnapshot,
  settings: Partial<DealSettings> = {},
  options: { timer?: boolean } = {},
): Promise<WorkflowHandle<typeof dealWorkflow>> {
  world.seed(snapshot);
  const handle = await startDeal(env, taskQueue, snapshot, settings);
  await expect.poll(() => world.callsOf('provisionParties', snapshot.deal.id)).toHaveLength(1);
  if (options.timer !== false) await expect.poll(async () => (await timersStarted(handle)).length).toBeGreaterThan(0);
  return handle;
}

/** A deal whose money is held now, until the acquirer's hold limit, its workflow started and waiting. */
async function beginHeld() {
  const start = await env.currentTimeMs();
  const snapshot = heldSnapshot(start, start + HOLD);
  return { start, dealId: snapshot.deal.id, handle: await begin(snapshot) };
}

const eventsOf = (dealId: string) => world.deal(dealId).events;
const eventTimes = (dealId: string, type: string) =>
  eventsOf(dealId)
    .filter((event) => event.type === type)
    .map((event) => Date.parse(event.occurredAt));

describe('money still held shortly before the acquirer lets it go', () => {
  it('is refunded by policy at the margin and not a minute before: the acquirer refunds it, the marketplace is told why', async () => {
    const start = await env.currentTimeMs();
    const snapshot = heldSnapshot(start, start + HOLD);
    const dealId = snapshot.deal.id;
    const payment = snapshot.payments[0];
    const handle = await begin(snapshot);
    const lapseAt = start + HOLD - MARGIN;
    // One timer, set for the margin before the lapse (6 days 12 hours), less the moments the start took.
    const [timer] = await timersStarted(handle);
    expect(timer).toBeGreaterThan(HOLD - MARGIN - MINUTE);
    expect(timer).toBeLessThanOrEqual(HOLD - MARGIN);

    await sleepUntil(lapseAt - MINUTE);
    expect(await timersFired(handle)).toBe(0);
    expect(world.callsOf('refundEscrowPart', dealId)).toEqual([]);
    expect((await handle.query(snapshotQuery)).payments[0].status).toBe('hold');

    await sleepUntil(lapseAt + MINUTE);
    await expect.poll(() => world.deal(dealId).status).toBe('refunded');
    // A paying-out acquirer (the sandbox) returns all it holds by a refund keyed by the payment, so a retry is one refund.
    const [refund, ...more] = world.callsOf('refundEscrowPart', dealId);
    expect(more).toEqual([]);
    expect(refund.args).toEqual([
      'sandbox',
      {
        refundId: `${payment.id}/refund`,
        providerPaymentId: payment.provider_payment_id,
        providerDealId: null,
        amount: '2500.00',
        currency: 'RUB',
      },
    ]);
    expect(refund.at).toBeGreaterThanOrEqual(lapseAt);
    expect(refund.at).toBeLessThan(lapseAt + MINUTE);
    expect(eventsOf(dealId)).toEqual([
      expect.objectContaining({
        type: 'deal.refunded',
        actor: 'system',
        reason: LAPSE_REASON('refund'),
        webhook: true,
      }),
    ]);
    const [refundedAt] = eventTimes(dealId, 'deal.refunded');
    expect(refundedAt).toBeGreaterThanOrEqual(lapseAt);
    expect(refundedAt).toBeLessThan(lapseAt + MINUTE);
    // The closed deal's workflow ends without sending its event: the refund's write handed it to the outbox.
    await handle.result();
    expect(world.webhookEvents(dealId)).toEqual(['deal.refunded']);
    expect(world.outbox.get(eventsOf(dealId)[0].deliveryId)).toMatchObject({ dealId, type: 'deal.refunded' });
    expect(world.callsOf('deliverWebhook', dealId)).toEqual([]);
    await expectReplays(bundle, handle);
  });

  it('is captured by a release policy on a two-stage payment, at the margin the settings give', async () => {
    const start = await env.currentTimeMs();
    const snapshot = heldSnapshot(start, start + HOLD, { provider: 'yookassa' });
    const dealId = snapshot.deal.id;
    const payment = snapshot.payments[0];
    // Two days' margin: the act comes at 5 days, not at the default 6 days 12 hours.
    const handle = await begin(snapshot, { holdPolicy: 'release', holdMarginSeconds: 2 * 24 * 3600 });
    const lapseAt = start + HOLD - 2 * DAY;

    await sleepUntil(lapseAt - MINUTE);
    expect(world.callsOf('captureEscrowPayment', dealId)).toEqual([]);
    await sleepUntil(lapseAt + MINUTE);
    await expect.poll(() => world.deal(dealId).status).toBe('paid');
    const captures = world.callsOf('captureEscrowPayment', dealId);
    expect(captures.map((call) => call.args)).toEqual([
      ['yookassa', payment.provider_payment_id, 2500, 'RUB', `${payment.id}/release`],
    ]);
    expect(captures[0].at).toBeGreaterThanOrEqual(lapseAt);
    expect(captures[0].at).toBeLessThan(lapseAt + MINUTE);
    // Captured money is the shop's: no payout, paid at once.
    expect(world.callsOf('createSellerPayout', dealId)).toEqual([]);
    expect(eventsOf(dealId)).toEqual([
      expect.objectContaining({ type: 'deal.paid', actor: 'system', reason: LAPSE_REASON('release') }),
    ]);
    await handle.result();
    await expectReplays(bundle, handle);
  });

  it('is released by a release policy on a paying-out acquirer: the seller is paid out, then the deal is paid', async () => {
    const start = await env.currentTimeMs();
    const snapshot = heldSnapshot(start, start + HOLD, { provider: 'yookassa_safe_deal' });
    const dealId = snapshot.deal.id;
    const handle = await begin(snapshot, { holdPolicy: 'release' });
    await handle.result();
    const lapseAt = start + HOLD - MARGIN;
    const [payout] = world.callsOf('createSellerPayout', dealId);
    expect(payout.args).toEqual([
      expect.objectContaining({ dealId, provider: 'yookassa_safe_deal', owed: '2500.00', currency: 'RUB' }),
    ]);
    expect(payout.at).toBeGreaterThanOrEqual(lapseAt);
    expect(payout.at).toBeLessThan(lapseAt + MINUTE);
    expect(world.callsOf('captureEscrowPayment', dealId)).toEqual([]);
    // Both told as the release's: the payout completes it.
    expect(eventsOf(dealId).map(({ type, actor, reason }) => ({ type, actor, reason }))).toEqual([
      { type: 'deal.payout_sent', actor: 'system', reason: LAPSE_REASON('release') },
      { type: 'deal.paid', actor: 'system', reason: LAPSE_REASON('release') },
    ]);
    expect(world.deal(dealId).status).toBe('paid');
    await expectReplays(bundle, handle);
  });

  it('goes back to the buyer while a dispute is open, whatever the policy: only the arbiter releases disputed money', async () => {
    const start = await env.currentTimeMs();
    const snapshot = heldSnapshot(start, start + HOLD);
    const dealId = snapshot.deal.id;
    const handle = await begin(snapshot, { holdPolicy: 'release' });
    await env.sleep(2 * DAY);
    const disputed = await handle.executeUpdate(movePaymentUpdate, {
      args: [{ action: 'dispute', actor: 'buyer', reason: 'Arrived broken' }],
    });
    expect(disputed.status).toBe('disputed');

    await handle.result();
    const lapseAt = start + HOLD - MARGIN;
    expect(world.callsOf('createSellerPayout', dealId)).toEqual([]);
    const [refund] = world.callsOf('refundEscrowPart', dealId);
    expect(refund.at).toBeGreaterThanOrEqual(lapseAt);
    expect(refund.at).toBeLessThan(lapseAt + MINUTE);
    expect(eventsOf(dealId).map(({ type, actor }) => ({ type, actor }))).toEqual([
      { type: 'deal.disputed', actor: 'buyer' },
      { type: 'deal.refunded', actor: 'system' },
    ]);
    expect(eventsOf(dealId)[1].reason).toContain('before the arbiter decided');
    expect((await handle.query(snapshotQuery)).dispute).toMatchObject({
      status: 'decided',
      decision: { outcome: 'refund' },
    });
    await expectReplays(bundle, handle);
  });

  it('is left alone once the buyer has released it: the timer is dropped and nothing acts at the margin', async () => {
    const { start, dealId, handle } = await beginHeld();
    await env.sleep(3 * DAY);
    await handle.executeUpdate(movePaymentUpdate, { args: [{ action: 'release', actor: 'buyer' }] });
    await handle.result();
    // Past the margin and the lapse itself (awaiting the result may have skipped there already): nothing acts.
    const now = await env.currentTimeMs();
    if (now < start + HOLD + HOUR) await env.sleep(start + HOLD + HOUR - now);

    expect(world.deal(dealId).status).toBe('paid');
    expect(await timersFired(handle)).toBe(0);
    for (const name of ['refundEscrowPart', 'cancelEscrowPayment', 'captureEscrowPayment'] as const)
      expect(world.callsOf(name, dealId)).toEqual([]);
    expect(eventsOf(dealId).map(({ type, actor }) => ({ type, actor }))).toEqual([
      { type: 'deal.payout_sent', actor: 'buyer' },
      { type: 'deal.paid', actor: 'buyer' },
    ]);
    await expectReplays(bundle, handle);
  });

  it('lapses by the acquirer’s own hold limit, counted from when the acquirer confirms the hold', async () => {
    const start = await env.currentTimeMs();
    const snapshot = approvedSnapshot(start);
    const dealId = snapshot.deal.id;
    world.seed(snapshot).createdStatus = 'pending';
    const handle = await startDeal(env, taskQueue, snapshot);
    // A live payment: pending until the buyer pays, held for 3 days (this acquirer's limit) from then.
    const { payment } = await handle.executeUpdate(startEscrowUpdate, {
      args: [
        {
          amount: 0,
          description: '',
          provider: 'yookassa_safe_deal',
          return_url: 'https://shop.example/back',
          hold_limit_seconds: 3 * 24 * 3600,
        },
      ],
    });
    expect(payment).toMatchObject({ status: 'pending', hold_expires_at: null });
    // Nothing is held, so nothing waits to act.
    await env.sleep(10 * HOUR);
    expect(await timersStarted(handle)).toEqual([]);

    await handle.signal(acquirerNotificationSignal, { paymentId: payment.id, status: 'hold' });
    await expect.poll(() => world.deal(dealId).status).toBe('escrow_hold');
    const [confirmedAt] = eventTimes(dealId, 'deal.escrow_hold');
    expect(confirmedAt).toBeGreaterThanOrEqual(start + 10 * HOUR);
    const held = (await handle.query(snapshotQuery)).payments[0];
    expect(Date.parse(held.hold_expires_at!)).toBe(confirmedAt + 3 * DAY);

    const lapseAt = confirmedAt + 3 * DAY - MARGIN;
    await sleepUntil(lapseAt - MINUTE);
    expect(world.callsOf('refundEscrowPart', dealId)).toEqual([]);
    await handle.result();
    const [refund] = world.callsOf('refundEscrowPart', dealId);
    expect(refund.args[1]).toMatchObject({ refundId: `${payment.id}/refund`, providerDealId: `deal_${payment.id}` });
    expect(refund.at).toBeGreaterThanOrEqual(lapseAt);
    expect(refund.at).toBeLessThan(lapseAt + MINUTE);
    expect(world.deal(dealId).status).toBe('refunded');
    await expectReplays(bundle, handle);
  });
});

describe('the buyer’s inspection window after delivery', () => {
  /** A held deal, shipped and delivered now with an inspection window of `days`; when the window ends. */
  async function delivered(days: number, settings: Partial<DealSettings> = {}) {
    const start = await env.currentTimeMs();
    const snapshot = heldSnapshot(start, start + HOLD);
    const handle = await begin(snapshot, settings);
    await handle.executeUpdate(shipUpdate, { args: [{ actor: 'marketplace', carrier: 'CDEK', tracking: 'RU1' }] });
    const delivery = await handle.executeUpdate(deliverUpdate, {
      args: [{ actor: 'marketplace', inspection_days: days }],
    });
    const endsAt = Date.parse(delivery.inspection_ends_at!);
    expect(endsAt - Date.parse(delivery.delivered_at!)).toBe(days * DAY);
    return { handle, dealId: snapshot.deal.id, start, endsAt };
  }

  const reminders = (dealId: string) => eventsOf(dealId).filter((event) => event.type === 'inspection_reminder');

  it('reminds the buyer by mail once, a day before it ends, then releases to the seller at its end', async () => {
    const { handle, dealId, endsAt } = await delivered(3);
    const remindAt = endsAt - DAY;

    await sleepUntil(remindAt - MINUTE);
    expect(reminders(dealId)).toEqual([]);
    expect((await handle.query(snapshotQuery)).delivery?.reminded_at).toBeNull();

    await sleepUntil(remindAt + MINUTE);
    await expect.poll(() => reminders(dealId).length).toBe(1);
    // A mail to the buyer only: no webhook delivery for it.
    expect(reminders(dealId)[0]).toMatchObject({
      mailOnly: true,
      webhook: false,
      data: { inspection_ends_at: new Date(endsAt).toISOString() },
    });
    expect(Date.parse(reminders(dealId)[0].occurredAt)).toBeGreaterThanOrEqual(remindAt);
    expect(Date.parse(reminders(dealId)[0].occurredAt)).toBeLessThan(remindAt + MINUTE);
    const reminded = await handle.query(snapshotQuery);
    expect(reminded.delivery?.reminded_at).toBe(reminders(dealId)[0].occurredAt);
    expect(reminded.payments[0].status).toBe('hold');

    await sleepUntil(endsAt - MINUTE);
    expect(world.callsOf('createSellerPayout', dealId)).toEqual([]);
    expect((await handle.query(snapshotQuery)).payments[0].status).toBe('hold');

    await handle.result();
    expect(reminders(dealId)).toHaveLength(1);
    expect(world.webhookEvents(dealId)).toEqual(['deal.shipped', 'deal.delivered', 'deal.payout_sent', 'deal.paid']);
    const [paidAt] = eventTimes(dealId, 'deal.paid');
    expect(paidAt).toBeGreaterThanOrEqual(endsAt);
    expect(paidAt).toBeLessThan(endsAt + MINUTE);
    expect(eventsOf(dealId).find((event) => event.type === 'deal.paid')).toMatchObject({
      actor: 'system',
      reason: 'The buyer’s inspection window ended without a dispute.',
    });
    expect(world.callsOf('createSellerPayout', dealId)).toHaveLength(1);
    await expectReplays(bundle, handle);
  });

  it('is not released while the buyer’s dispute is open: the hold’s lapse returns the money instead', async () => {
    // A window of one day has no reminder: a day before its end is the delivery itself.
    const { handle, dealId, start, endsAt } = await delivered(1, { holdPolicy: 'release' });
    await env.sleep(12 * HOUR);
    await handle.executeUpdate(movePaymentUpdate, {
      args: [{ action: 'dispute', actor: 'buyer', reason: 'Not as described' }],
    });

    await sleepUntil(endsAt + DAY);
    expect((await handle.query(snapshotQuery)).payments[0].status).toBe('disputed');
    expect(world.callsOf('createSellerPayout', dealId)).toEqual([]);

    await handle.result();
    const lapseAt = start + HOLD - MARGIN;
    expect(eventsOf(dealId).map((event) => event.type)).toEqual([
      'deal.shipped',
      'deal.delivered',
      'deal.disputed',
      'deal.refunded',
    ]);
    const [refundedAt] = eventTimes(dealId, 'deal.refunded');
    expect(refundedAt).toBeGreaterThanOrEqual(lapseAt);
    expect(refundedAt).toBeLessThan(lapseAt + MINUTE);
    await expectReplays(bundle, handle);
  });

  it('ending after the hold’s margin, gives way to the lapse: the first timer acts and the later ones go', async () => {
    // A window of 10 days on money held for 7: the refund by policy at 6 days 12 hours comes before the reminder (day 9).
    const { handle, dealId, start } = await delivered(10);
    await handle.result();
    const lapseAt = start + HOLD - MARGIN;
    expect(eventsOf(dealId).map((event) => event.type)).toEqual(['deal.shipped', 'deal.delivered', 'deal.refunded']);
    const [refundedAt] = eventTimes(dealId, 'deal.refunded');
    expect(refundedAt).toBeGreaterThanOrEqual(lapseAt);
    expect(refundedAt).toBeLessThan(lapseAt + MINUTE);
    expect(world.callsOf('createSellerPayout', dealId)).toEqual([]);
    await expectReplays(bundle, handle);
  });
});

describe('a payout the acquirer does not answer', () => {
  it('is asked a few times at once in the worker, then under the same id by a server activity until it answers', async () => {
    const { dealId, handle } = await beginHeld();
    world.deal(dealId).payoutFailures = 6;
    // The release is answered while the payout waits for the acquirer: its last local try has failed by then.
    await handle.executeUpdate(movePaymentUpdate, { args: [{ action: 'release', actor: 'buyer' }] });
    await handle.result();

    const calls = world
      .callsOf('createSellerPayout', dealId)
      .map(({ args }) => (args[0] as SellerPayoutInput).payoutId);
    const paymentId = (await handle.query(snapshotQuery)).payments[0].id;
    // Four local tries and three of the server activity's, one id: the acquirer makes one payout of them.
    expect(calls).toEqual(Array.from({ length: 7 }, () => nextPayoutId(paymentId, [])));
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.flatMap(({ activityTaskScheduledEventAttributes: task }) =>
      task ? [task.activityType!.name] : [],
    );
    expect(scheduled).toEqual(['createSellerPayout']);
    expect(eventsOf(dealId).map(({ type }) => type)).toEqual(['deal.payout_sent', 'deal.paid']);
    expect(world.deal(dealId).status).toBe('paid');
    await expectReplays(bundle, handle);
  });

  it('refused, is a failed payout at once: no server activity takes it up', async () => {
    const { dealId, handle } = await beginHeld();
    world.deal(dealId).payoutAnswers.push('refuse');
    await handle.executeUpdate(movePaymentUpdate, { args: [{ action: 'release', actor: 'buyer' }] });
    await expect.poll(() => world.webhookEvents(dealId)).toContain('deal.payout_failed');
    expect(world.callsOf('createSellerPayout', dealId)).toHaveLength(1);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter(({ activityTaskScheduledEventAttributes: task }) => task)).toEqual([]);
  });
});

describe('a payout the acquirer has not finished', () => {
  const pending = (id: string): SellerPayoutAnswer => ({
    providerPayoutId: id,
    status: 'pending',
    failureReason: null,
    amount: '2500.00',
    destination: { type: 'bank_card', title: 'Card ···4444' },
  });

  it('is asked about after 1, 2, 4 … minutes, then hourly, until the acquirer settles it: then the deal is paid', async () => {
    const { dealId, handle } = await beginHeld();
    const deal = world.deal(dealId);
    deal.payoutAnswers.push(pending('po-slow'));
    const still = { providerPayoutId: 'po-slow', status: 'pending', failureReason: null } as const;
    // A re-read the acquirer refuses (the fourth) is asked again later, on the same schedule.
    deal.payoutReads.push(still, still, still, 'refuse', still, still, still, still, {
      ...still,
      status: 'succeeded',
    });

    await handle.executeUpdate(movePaymentUpdate, { args: [{ action: 'release', actor: 'buyer' }] });
    await expect.poll(() => world.callsOf('createSellerPayout', dealId).length).toBe(1);
    expect((await handle.query(snapshotQuery)).payouts).toEqual([
      expect.objectContaining({ status: 'pending', provider_payout_id: 'po-slow' }),
    ]);
    expect(world.deal(dealId).status).toBe('escrow_hold');

    await handle.result();
    const made = world.callsOf('createSellerPayout', dealId)[0].at;
    const reads = world.callsOf('getSellerPayout', dealId).map((call) => call.at);
    expect(reads).toHaveLength(9);
    const waits = reads.map((at, i) => at - (i === 0 ? made : reads[i - 1]));
    const expected = [1, 2, 4, 8, 16, 32, 60, 60, 60].map((minutes) => minutes * MINUTE);
    // Each wait as set, give or take the moments a turn of the workflow takes.
    waits.forEach((wait, i) => {
      expect(wait).toBeGreaterThanOrEqual(expected[i]);
      expect(wait).toBeLessThan(expected[i] + 5000);
    });
    expect(world.callsOf('createSellerPayout', dealId)).toHaveLength(1);
    // Logged, not fatal (the workflow's log reaches the worker's logger after its turn).
    await expect
      .poll(() => logged)
      .toContainEqual(
        expect.objectContaining({
          message: 'A pending payout could not be re-read',
          meta: expect.objectContaining({ dealId }),
        }),
      );
    expect(eventsOf(dealId).map(({ type, actor }) => ({ type, actor }))).toEqual([
      { type: 'deal.payout_sent', actor: 'buyer' },
      { type: 'deal.paid', actor: 'buyer' },
    ]);
    expect(world.deal(dealId).status).toBe('paid');
    await expectReplays(bundle, handle);
  });

  it('once failed, is asked about no more: it waits for a new destination, then is made again', async () => {
    const { dealId, handle } = await beginHeld();
    world.deal(dealId).payoutAnswers.push(pending('po-doomed'));
    world
      .deal(dealId)
      .payoutReads.push({ providerPayoutId: 'po-doomed', status: 'failed', failureReason: 'card_expired' });
    await handle.executeUpdate(movePaymentUpdate, { args: [{ action: 'release', actor: 'buyer' }] });
    await expect.poll(() => world.callsOf('createSellerPayout', dealId).length).toBe(1);

    await env.sleep(MINUTE + 1000);
    await expect.poll(() => world.webhookEvents(dealId)).toContain('deal.payout_failed');
    expect(eventsOf(dealId).find((event) => event.type === 'deal.payout_failed')?.data).toMatchObject({
      failure_reason: 'card_expired',
    });
    expect((await handle.query(snapshotQuery)).payments[0].payout_status).toBe('failed');

    // A day on: no more checks, no timer waiting, the money still held for the seller.
    const timers = (await timersStarted(handle)).length;
    await env.sleep(DAY);
    expect(world.callsOf('getSellerPayout', dealId)).toHaveLength(1);
    expect(await timersStarted(handle)).toHaveLength(timers);
    expect(world.deal(dealId).status).toBe('escrow_hold');

    await handle.signal(payoutDestinationSignal, { by: 'seller' });
    await handle.result();
    const made = world.callsOf('createSellerPayout', dealId).map(({ args }) => (args[0] as SellerPayoutInput).payoutId);
    // The second payout is another one at the acquirer: its id follows from the records, which now hold the first.
    const [{ id: failed }] = (await handle.query(snapshotQuery)).payouts!;
    const paymentId = (await handle.query(snapshotQuery)).payments[0].id;
    expect(made).toEqual([nextPayoutId(paymentId, []), nextPayoutId(paymentId, [{ payment_id: paymentId }])]);
    expect(failed).toBe(made[0]);
    expect(world.webhookEvents(dealId)).toEqual(['deal.payout_failed', 'deal.payout_sent', 'deal.paid']);
    await expectReplays(bundle, handle);
  });
});

describe('a long history', () => {
  it('continues as new once its history is past the limit and its updates are done: the next run gets the deal, re-asserts its records and keeps its timer, with no deliveries to send', async () => {
    const start = await env.currentTimeMs();
    const snapshot = heldSnapshot(start, start + HOLD);
    const dealId = snapshot.deal.id;
    const limit = 40;
    const handle = await begin(snapshot, { holdPolicy: 'release', historyLimit: limit });
    const first = await handle.describe();
    await handle.executeUpdate(movePaymentUpdate, {
      args: [{ action: 'dispute', actor: 'buyer', reason: 'Scratched' }],
    });

    // Messages of the dispute until the history is past the limit: the run continues as new at once, with no webhook
    // of its own to wait for (each message's write handed its event to the outbox).
    const messages: string[] = [];
    while ((await handle.describe()).runId === first.runId) {
      expect(messages.length).toBeLessThan(limit);
      const id = crypto.randomUUID();
      messages.push(id);
      await handle.executeUpdate(disputeMessageUpdate, {
        args: [{ message: { id, author: 'buyer', text: `photo ${messages.length}`, files: [], created_at: '' } }],
      });
    }
    const firstRun = env.client.workflow.getHandle(handle.workflowId, first.runId);
    const ended = await firstRun.describe();
    expect(ended.status.name).toBe('CONTINUED_AS_NEW');
    expect(ended.historyLength).toBeGreaterThan(limit);
    // Nothing held it: it ended within a minute of its start in the server's clock, which no test step moved on.
    expect(ended.closeTime!.getTime() - first.startTime.getTime()).toBeLessThan(MINUTE);

    // What the next run was given: the deal as the first run held it, provisioned, at today's patch level, and nothing
    // to send (a run that takes the outbox queues no deliveries).
    const { events } = await handle.fetchHistory();
    const [payload] = events![0].workflowExecutionStartedEventAttributes!.input!.payloads!;
    const given = JSON.parse(new TextDecoder().decode(payload.data)) as DealWorkflowInput;
    expect(given).toMatchObject({ pendingDeliveries: [], provisioned: true, patchLevel: PATCH_LEVEL });
    expect(given.snapshot.dispute?.messages.map((message) => message.id)).toEqual(messages);
    expect(world.callsOf('deliverWebhook', dealId)).toEqual([]);

    const carried = await handle.query(snapshotQuery);
    expect(carried.payments[0].status).toBe('disputed');
    expect(carried.dispute?.messages.map((message) => message.id)).toEqual(messages);
    // The new run writes the deal once more (a re-assertion: no change, no event), for a write PostgreSQL lost.
    await expect.poll(() => world.deal(dealId).writes.at(-1)).toMatchObject({ version: carried.version });
    const reasserted = world.deal(dealId).writes.at(-1)!;
    expect(reasserted).not.toHaveProperty('changed');
    expect(reasserted).not.toHaveProperty('event');
    expect(reasserted.records?.dispute?.messages).toHaveLength(messages.length);

    // The new run waits for the same lapse: the disputed money goes back to the buyer at the margin.
    const lapseAt = start + HOLD - MARGIN;
    await handle.result();
    const [refund] = world.callsOf('refundEscrowPart', dealId);
    expect(refund.at).toBeGreaterThanOrEqual(lapseAt);
    expect(refund.at).toBeLessThan(lapseAt + MINUTE);
    expect(world.webhookEvents(dealId)).toEqual(['deal.disputed', 'deal.refunded']);
    expect(world.callsOf('deliverWebhook', dealId)).toEqual([]);
    await expectReplays(bundle, handle, first.runId);
    await expectReplays(bundle, handle);
  });

  it('keeps the hold limit of a payment the acquirer has not confirmed, to date its lapse in the next run', async () => {
    const start = await env.currentTimeMs();
    const snapshot = approvedSnapshot(start);
    const dealId = snapshot.deal.id;
    world.seed(snapshot).createdStatus = 'pending';
    const limit = 30;
    const handle = await startDeal(env, taskQueue, snapshot, { historyLimit: limit });
    const first = await handle.describe();
    // A safe deal holds for 90 days, not the 7 a payment with no known limit is given.
    const { payment } = await handle.executeUpdate(startEscrowUpdate, {
      args: [
        {
          amount: 0,
          description: '',
          provider: 'yookassa_safe_deal',
          return_url: 'https://shop.example/back',
          hold_limit_seconds: 90 * 24 * 3600,
        },
      ],
    });
    expect(payment.status).toBe('pending');
    // Documents until the run continues as new (it looks at its length when a task begins), the payment still pending.
    for (let n = 1; (await handle.describe()).runId === first.runId; n++) {
      expect(n).toBeLessThan(50);
      await handle.executeUpdate(addDocumentUpdate, {
        args: [
          {
            id: crypto.randomUUID(),
            kind: 'invoice',
            name: `scan ${n}.pdf`,
            content_type: 'application/pdf',
            size: 1,
            sha256: '0'.repeat(64),
            created_at: new Date(start).toISOString(),
            organization_id: crypto.randomUUID(),
            storage_key: `scan-${n}`,
          },
        ],
      });
    }
    expect((await handle.query(snapshotQuery)).payments[0].status).toBe('pending');

    await handle.signal(acquirerNotificationSignal, { paymentId: payment.id, status: 'hold' });
    await expect.poll(() => world.deal(dealId).status).toBe('escrow_hold');
    const [confirmedAt] = eventTimes(dealId, 'deal.escrow_hold');
    const held = (await handle.query(snapshotQuery)).payments[0];
    expect(Date.parse(held.hold_expires_at!)).toBe(confirmedAt + 90 * DAY);
    await expectReplays(bundle, handle, first.runId);
    await handle.terminate('the test is done: the lapse is 90 days away');
  });
});
