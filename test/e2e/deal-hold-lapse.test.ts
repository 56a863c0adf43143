// The hold lapse and the buyer's inspection window on Temporal's time-skipping test server (src/dev/temporal-test-server.ts): the real deal workflow and
// the real activities over the test PostgreSQL, started from records the factory wrote as a deal whose money the
// sandbox acquirer holds for 7 days. Days pass in the test server's clock, not in ours.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startWebhookDrainer, type WebhookDrainer } from '../../src/webhooks/outbox.ts';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { createServices, type Services } from '../../src/services.ts';
import { createLogger } from '../../src/log.ts';
import { WORKFLOWS_PATH } from '../../src/worker.ts';
import { resolveTemporalTestServer } from '../../src/dev/temporal-test-server.ts';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes.ts';
import { dealSettings } from '../../src/deals/commands.ts';
import { dealSearchAttributes } from '../../src/deals/search-attributes.ts';
import { dealStatus, dealWorkflowId } from '../../src/deals/model.ts';
import { loadSnapshot } from '../../src/deals/store.ts';
import { createActivities } from '../../activities/index.ts';
import { deliverUpdate, movePaymentUpdate, shipUpdate } from '../../workflows/deals/deal-messages.ts';
import type { dealWorkflow } from '../../workflows/deals/deal.ts';
import { insertHeldDeal, type HeldDeal } from '../factories.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import { testConfig, uniqueId } from '../helpers.ts';

const DAY = 24 * 3600 * 1000;
const HOLD_LIMIT = 7 * DAY;

let env: TestWorkflowEnvironment;
let services: Services;
let worker: Worker;
let running: Promise<void>;
let receiver: Receiver;
let webhooks: WebhookDrainer;
const taskQueue = uniqueId('hold-lapse');

beforeAll(async () => {
  installQuietRuntime();
  const path = await resolveTemporalTestServer({
    explicit: process.env.TEMPORAL_TEST_SERVER || undefined,
    say: (message) => console.log(message),
  });
  const [started, workflowBundle] = await Promise.all([
    TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } }),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet }),
  ]);
  env = started;
  // The workflow sets the deal search attributes, and the test server refuses ones it does not know. It has no flag
  // for them (the SDK's `searchAttributes` option passes the dev server's flags, which it refuses) and cannot list
  // them (so not ensureSearchAttributes), but it adds them through the operator API.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [
        name,
        proto.temporal.api.enums.v1.IndexedValueType[
          `INDEXED_VALUE_TYPE_${type.toUpperCase() as Uppercase<typeof type>}`
        ],
      ]),
    ),
  });
  const config = testConfig({ TEMPORAL_TASK_QUEUE: taskQueue });
  services = createServices(config, createLogger(config.LOG_LEVEL));
  receiver = await startReceiver();
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: createActivities(services),
  });
  running = worker.run();
  // The webhooks of this queue's deals leave through the outbox, as beside every worker (src/worker.ts).
  webhooks = startWebhookDrainer(services);
});

afterAll(async () => {
  await webhooks?.stop();
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await env?.teardown();
  await services?.close();
  await receiver?.stop();
});

/** The SDK's state changes, the bundler's notes and the core's remarks on the server's API stay out of the output. */
const quiet = new DefaultLogger('ERROR');

function installQuietRuntime(): void {
  try {
    Runtime.install({
      logger: quiet,
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // Installed already in this process: its logger stays.
  }
}

/** Starts the deal's workflow as the API does (src/deals/commands.ts startOptions), under the given hold policy. */
async function startDeal(
  held: HeldDeal,
  holdPolicy: 'refund' | 'release',
): Promise<WorkflowHandle<typeof dealWorkflow>> {
  const snapshot = (await loadSnapshot(services.db, held.dealId))!;
  // The default margin: only the policy is chosen here.
  const settings = dealSettings({ ...services, config: testConfig({ ESCROW_HOLD_POLICY: holdPolicy }) });
  return env.client.workflow.start<typeof dealWorkflow>('dealWorkflow', {
    workflowId: dealWorkflowId(held.marketplaceId, held.externalId),
    taskQueue,
    args: [{ snapshot, settings }],
    typedSearchAttributes: dealSearchAttributes(snapshot.deal, dealStatus(snapshot)),
    memo: { title: snapshot.deal.title },
  });
}

/** 7 days from now in the test server's clock: when the sandbox lets a payment held now go. */
const holdLimit = async () => new Date((await env.currentTimeMs()) + HOLD_LIMIT);

async function history(handle: WorkflowHandle) {
  return (await handle.fetchHistory()).events ?? [];
}

/** The activities the run called, by type: its activity tasks, and its local activities (a marker each, once done). */
async function activitiesCalled(handle: WorkflowHandle): Promise<string[]> {
  return (await history(handle)).flatMap(
    ({ activityTaskScheduledEventAttributes: task, markerRecordedEventAttributes: marker }) => {
      if (task) return [task.activityType?.name ?? ''];
      const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
      return data ? [(JSON.parse(new TextDecoder().decode(data)) as { activity_type: string }).activity_type] : [];
    },
  );
}

/** Until the workflow has set the timer for the lapse: then it waits, and the clock is all that moves it. */
async function lapseTimer(handle: WorkflowHandle): Promise<number> {
  let seconds = 0;
  await expect
    .poll(
      async () => {
        const started = (await history(handle)).map((event) => event.timerStartedEventAttributes).filter(Boolean);
        seconds = Number(started.at(-1)?.startToFireTimeout?.seconds ?? 0);
        return started.length;
      },
      { timeout: 30_000 },
    )
    .toBeGreaterThan(0);
  return seconds;
}

async function records(dealId: string) {
  const snapshot = (await loadSnapshot(services.db, dealId))!;
  const stored = await services.db.query<{ status: string }>('SELECT status FROM deals WHERE id = $1', [dealId]);
  const events = await services.db.query<{ event: string; body: Buffer; occurred_at: Date }>(
    'SELECT event, body, occurred_at FROM webhook_events WHERE deal_id = $1 ORDER BY occurred_at, seq',
    [dealId],
  );
  return {
    payment: snapshot.payments[0],
    status: stored.rows[0].status,
    events: events.rows.map((row) => ({ ...JSON.parse(row.body.toString()), occurred_at: row.occurred_at.getTime() })),
  };
}

const marginMs = () => services.config.ESCROW_HOLD_MARGIN_SECONDS * 1000;

describe('money still held shortly before the acquirer lets it go', () => {
  it('is refunded by policy, once the margin is reached and not before, and the marketplace is told why', async () => {
    expect(services.config.ESCROW_HOLD_MARGIN_SECONDS).toBe(12 * 3600); // the default
    const held = await insertHeldDeal(services, { holdExpiresAt: await holdLimit(), webhookUrl: receiver.url });
    const handle = await startDeal(held, 'refund');
    const lapseAt = Date.parse(held.holdExpiresAt) - marginMs();
    // The timer runs until the margin before the lapse (6 days 12 hours), less the moments the start took.
    const timerMs = (await lapseTimer(handle)) * 1000;
    expect(timerMs).toBeGreaterThan(HOLD_LIMIT - marginMs() - 60_000);
    expect(timerMs).toBeLessThanOrEqual(HOLD_LIMIT - marginMs());

    await env.sleep(6 * DAY);
    expect(await env.currentTimeMs()).toBeGreaterThanOrEqual(Date.parse(held.holdExpiresAt) - HOLD_LIMIT + 6 * DAY);
    const before = await records(held.dealId);
    expect(before.payment.status).toBe('hold');
    expect(before.status).toBe('escrow_hold');
    expect(before.events).toEqual([]);

    // Waiting for the result lets the server skip to the timer and on to the workflow's end (the deal is closed).
    await handle.result();
    const after = await records(held.dealId);
    expect(after.payment).toMatchObject({ status: 'refunded', hold_expires_at: held.holdExpiresAt });
    expect(after.status).toBe('refunded');
    expect(after.events).toEqual([
      expect.objectContaining({
        event: 'deal.refunded',
        status: 'refunded',
        actor: 'system',
        reason: "The acquirer's hold was about to lapse; the service's policy is to refund.",
      }),
    ]);
    // Acted at the margin in the server's clock: 12 hours before the lapse, not at it and not days early.
    expect(after.events[0].occurred_at).toBeGreaterThanOrEqual(lapseAt);
    expect(after.events[0].occurred_at).toBeLessThan(lapseAt + 60_000);
    const told = () =>
      receiver.received
        .map((request) => JSON.parse(request.body.toString()))
        .filter((event) => event.id === held.dealId);
    await expect.poll(told).toHaveLength(1);
    expect(told()).toEqual([
      expect.objectContaining({ event: 'deal.refunded', actor: 'system', event_id: after.events[0].event_id }),
    ]);
    // The sandbox acquirer was asked to refund what it held, once (a safe deal refunds; a two-stage hold is cancelled).
    expect((await activitiesCalled(handle)).filter((type) => type === 'refundEscrowPart')).toHaveLength(1);
  });

  it('is released to the seller when the policy says release', async () => {
    const held = await insertHeldDeal(services, { holdExpiresAt: await holdLimit() });
    const handle = await startDeal(held, 'release');
    await lapseTimer(handle);
    await env.sleep(6 * DAY);
    expect((await records(held.dealId)).payment.status).toBe('hold');

    await handle.result();
    const after = await records(held.dealId);
    expect(after.payment.status).toBe('released');
    expect(after.status).toBe('paid');
    // The release paid the seller out (a sandbox deal without a seller: to the succeeding test card), then it was paid.
    expect(after.events).toEqual([
      expect.objectContaining({ event: 'deal.payout_sent', actor: 'system' }),
      expect.objectContaining({
        event: 'deal.paid',
        actor: 'system',
        reason: "The acquirer's hold was about to lapse; the service's policy is to release.",
      }),
    ]);
    const lapseAt = Date.parse(held.holdExpiresAt) - marginMs();
    expect(after.events[1].occurred_at).toBeGreaterThanOrEqual(lapseAt);
    expect(after.events[1].occurred_at).toBeLessThan(lapseAt + 60_000);
  });

  it('goes back to the buyer while a dispute is open, whatever the policy: only the arbiter releases disputed money', async () => {
    const held = await insertHeldDeal(services, { holdExpiresAt: await holdLimit() });
    const handle = await startDeal(held, 'release');
    await lapseTimer(handle);
    await env.sleep(2 * DAY);
    const disputed = await handle.executeUpdate(movePaymentUpdate, {
      args: [{ action: 'dispute', actor: 'buyer', reason: 'Arrived broken' }],
    });
    expect(disputed.status).toBe('disputed');

    await handle.result();
    const after = await records(held.dealId);
    expect(after.payment.status).toBe('refunded');
    expect(after.status).toBe('refunded');
    expect(after.events.map(({ event, actor }) => ({ event, actor }))).toEqual([
      { event: 'deal.disputed', actor: 'buyer' },
      { event: 'deal.refunded', actor: 'system' },
    ]);
    expect(after.events[1].reason).toContain('before the arbiter decided');
    expect((await loadSnapshot(services.db, held.dealId))!.dispute).toMatchObject({
      status: 'decided',
      decision: { outcome: 'refund' },
    });
    const lapseAt = Date.parse(held.holdExpiresAt) - marginMs();
    expect(after.events[1].occurred_at).toBeGreaterThanOrEqual(lapseAt);
    expect(after.events[1].occurred_at).toBeLessThan(lapseAt + 60_000);
  });

  it('is left alone once the buyer has released it: no lapse action afterwards', async () => {
    const held = await insertHeldDeal(services, { holdExpiresAt: await holdLimit() });
    const handle = await startDeal(held, 'refund');
    await lapseTimer(handle);
    await env.sleep(3 * DAY);

    const released = await handle.executeUpdate(movePaymentUpdate, { args: [{ action: 'release', actor: 'buyer' }] });
    expect(released.status).toBe('released');
    await handle.result();
    // Past the margin and past the lapse itself.
    await env.sleep(5 * DAY);
    expect(await env.currentTimeMs()).toBeGreaterThan(Date.parse(held.holdExpiresAt));

    const after = await records(held.dealId);
    expect(after.payment.status).toBe('released');
    expect(after.status).toBe('paid');
    expect(after.events.map(({ event, actor }) => ({ event, actor }))).toEqual([
      { event: 'deal.payout_sent', actor: 'buyer' },
      { event: 'deal.paid', actor: 'buyer' },
    ]);
    expect((await history(handle)).filter((event) => event.timerFiredEventAttributes)).toEqual([]);
    // The release's payout was called, and nothing that would give the money back.
    const called = await activitiesCalled(handle);
    expect(called).toContain('createSellerPayout');
    expect(called.filter((type) => ['cancelEscrowPayment', 'refundEscrowPart'].includes(type))).toEqual([]);
  });
});

describe('the buyer’s inspection window after delivery', () => {
  it('reminds the buyer a day before it ends, then releases to the seller and pays out, by system', async () => {
    const held = await insertHeldDeal(services, { holdExpiresAt: await holdLimit() });
    const handle = await startDeal(held, 'refund');
    await lapseTimer(handle);
    await handle.executeUpdate(shipUpdate, { args: [{ actor: 'marketplace', carrier: 'CDEK', tracking: 'RU1' }] });
    const delivered = await handle.executeUpdate(deliverUpdate, {
      args: [{ actor: 'marketplace', inspection_days: 3 }],
    });
    const endsAt = Date.parse(delivered.inspection_ends_at!);
    expect(endsAt - Date.parse(delivered.delivered_at!)).toBe(3 * DAY);

    // Two days in: still held, the reminder not yet due.
    await env.sleep(2 * DAY - 60_000);
    expect((await records(held.dealId)).payment.status).toBe('hold');
    expect((await loadSnapshot(services.db, held.dealId))!.delivery?.reminded_at).toBeNull();
    // A day before the end: reminded, still held.
    await env.sleep(2 * 60_000);
    await expect.poll(async () => (await loadSnapshot(services.db, held.dealId))!.delivery?.reminded_at).not.toBeNull();
    expect((await records(held.dealId)).payment.status).toBe('hold');

    // The window ends before the hold's margin (6 days 12 hours), so the release comes from the window, not the lapse.
    await handle.result();
    const after = await records(held.dealId);
    expect(after.status).toBe('paid');
    const paid = after.events.find((event) => event.event === 'deal.paid')!;
    expect(paid).toMatchObject({ actor: 'system', reason: expect.stringContaining('inspection window ended') });
    expect(paid.occurred_at).toBeGreaterThanOrEqual(endsAt);
    expect(paid.occurred_at).toBeLessThan(endsAt + 60_000);
    expect(after.events.map((event) => event.event)).toEqual([
      'deal.shipped',
      'deal.delivered',
      'deal.payout_sent',
      'deal.paid',
    ]);
  });

  it('does not release while the buyer’s dispute is open: the arbiter decides', async () => {
    const held = await insertHeldDeal(services, { holdExpiresAt: await holdLimit() });
    const handle = await startDeal(held, 'refund');
    await lapseTimer(handle);
    await handle.executeUpdate(deliverUpdate, { args: [{ actor: 'marketplace', inspection_days: 1 }] });
    await env.sleep(12 * 3600_000);
    await handle.executeUpdate(movePaymentUpdate, {
      args: [{ action: 'dispute', actor: 'buyer', reason: 'Not as described' }],
    });
    await env.sleep(2 * DAY);
    const after = await records(held.dealId);
    expect(after.status).toBe('disputed');
    expect(after.events.map((event) => event.event)).toEqual(['deal.delivered', 'deal.disputed']);
    await handle.executeUpdate(movePaymentUpdate, {
      args: [{ action: 'refund', actor: 'arbiter', reason: 'It was not as described' }],
    });
    await handle.result();
    expect((await records(held.dealId)).status).toBe('refunded');
  });
});
