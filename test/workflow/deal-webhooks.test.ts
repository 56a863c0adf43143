// Webhook delivery from the deal workflow (and an administrator's replay) on Temporal's time-skipping test server: the
// retries wait the delay the activity chose, or the retry policy's backoff when it chose none (30 s doubling up to
// 12 hours, workflows/webhooks/webhook-options.ts), and Temporal gives up within the 4 days of the schedule-to-close
// timeout, when the workflow marks the delivery failed and goes on with the deal's next event. What one attempt does
// (the delay it chooses, 410, the log) is the activity's own, tested in webhook-delivery.test.ts.
import { describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { retryDelayMs } from '../../src/webhooks/delivery.ts';
import { startEscrowUpdate } from '../../workflows/deals/deal-messages.ts';
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
} from './support.ts';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
const world = new FakeWorld();
const taskQueue = 'deal-webhooks';
useTimeSkippingWorker(taskQueue, world, (started) => ({ env, bundle } = started));

/** The retry policy's own backoff (WEBHOOK_ACTIVITY_OPTIONS.retry): 30 s, doubling, at most 12 hours. */
const policyWait = (attempt: number) => Math.min(30 * SECOND * 2 ** (attempt - 1), 12 * HOUR);

const attemptsOf = (deliveryId: string) =>
  world.callsOf('deliverWebhook').filter((call) => call.args[0] === deliveryId);

/** The time between one attempt's scheduling and the next's, in the server's clock. */
const waitsBetween = (attempts: ActivityCall[]) => attempts.slice(1).map((call, i) => call.at - attempts[i].at);

/** Each wait as expected, give or take the moments an attempt takes. */
function expectWaits(waits: number[], expected: number[]): void {
  expect(waits).toHaveLength(expected.length);
  waits.forEach((wait, i) => {
    expect(wait).toBeGreaterThanOrEqual(expected[i]);
    expect(wait).toBeLessThan(expected[i] + 5 * SECOND);
  });
}

/** An approved deal whose deal.created the receiver fails as `answer` says; the escrow's event queues behind it. */
async function dealWithFailingCreation(answer: (attempt: number) => ReturnType<typeof world.webhookAnswer>) {
  const snapshot = approvedSnapshot(await env.currentTimeMs());
  const dealId = snapshot.deal.id;
  const created = `created/${dealId}`;
  world.webhookAnswer = ({ id }, attempt) => (id === created ? answer(attempt) : 'delivered');
  world.seed(snapshot);
  const handle = await startDeal(env, taskQueue, snapshot);
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
  const held = world.deal(dealId).events.find((event) => event.type === 'deal.escrow_hold')!;
  return { handle, dealId, created, held: held.deliveryId };
}

describe('a receiver that fails', () => {
  it('is tried again after the delay the activity chose, and the deal’s next event waits until it is through', async () => {
    const chosen = [10 * MINUTE, HOUR, 3 * HOUR];
    const { handle, created, held } = await dealWithFailingCreation((attempt) =>
      attempt <= chosen.length
        ? { fail: `HTTP 503 (attempt ${attempt})`, retryInMs: chosen[attempt - 1] }
        : 'delivered',
    );
    await expect.poll(() => attemptsOf(created).length).toBe(1);
    await env.sleep(5 * HOUR);
    await expect.poll(() => world.delivered).toEqual(expect.arrayContaining([created, held]));

    const attempts = attemptsOf(created);
    expectWaits(waitsBetween(attempts), chosen);
    // In the order they happened: deal.escrow_hold is first tried once deal.created is through.
    expect(world.delivered.indexOf(created)).toBeLessThan(world.delivered.indexOf(held));
    expect(attemptsOf(held).map((call) => call.at)).toEqual([expect.any(Number)]);
    expect(attemptsOf(held)[0].at).toBeGreaterThanOrEqual(attempts.at(-1)!.at);
    expect(world.failed).not.toContain(created);
    await expectReplays(bundle, handle);
    await handle.terminate('the test is over');
  });

  it('that chose no delay is tried on the retry policy’s backoff, and given up within 4 days: the delivery is marked failed, the next event goes out', async () => {
    const { handle, created, held } = await dealWithFailingCreation(() => ({ fail: 'worker lost' }));
    await expect.poll(() => attemptsOf(created).length).toBe(1);
    await env.sleep(4 * DAY + HOUR);
    await expect.poll(() => world.delivered).toContain(held);

    const attempts = attemptsOf(created);
    const first = attempts[0].at;
    // 30 s, 1 min, 2 min … 8 h 32 min, then 12 hours at most; one more 12 hours would end after the 4 days.
    expectWaits(
      waitsBetween(attempts),
      attempts.slice(1).map((_, i) => policyWait(i + 1)),
    );
    expect(attempts).toHaveLength(18);
    expect(attempts.at(-1)!.at + policyWait(attempts.length)).toBeGreaterThan(first + 4 * DAY);
    const [marked, ...more] = world.callsOf('markWebhookDeliveryFailed').filter((call) => call.args[0] === created);
    expect(more).toEqual([]);
    expect(marked.at).toBeGreaterThanOrEqual(attempts.at(-1)!.at);
    expect(marked.at).toBeLessThanOrEqual(first + 4 * DAY);
    // The failed event does not hold up the rest: deal.escrow_hold went out after it was marked.
    expect(attemptsOf(held)[0].at).toBeGreaterThanOrEqual(marked.at);
    expect(world.failed.filter((id) => id === created)).toHaveLength(1);
    await expectReplays(bundle, handle);
    await handle.terminate('the test is over');
  });

  it('that answers 410 Gone is not tried again: the delivery is marked failed at once', async () => {
    const { handle, created, held } = await dealWithFailingCreation(() => 'gone');
    await expect.poll(() => world.delivered).toContain(held);
    expect(attemptsOf(created)).toHaveLength(1);
    expect(world.failed).toContain(created);
    await expectReplays(bundle, handle);
    await handle.terminate('the test is over');
  });
});

describe('an administrator’s replay of a delivery', () => {
  it('keeps trying for at least 3 days on the activity’s own delays, then gives up within 4 and answers failed', async () => {
    const deliveryId = crypto.randomUUID();
    world.deliveries.set(deliveryId, { dealId: 'replayed', type: 'deal.paid' });
    // As the real activity chooses: doubling from 30 s with ±20 % jitter, at most 12 hours.
    world.webhookAnswer = ({ id }, attempt) =>
      id === deliveryId ? { fail: 'HTTP 500', retryInMs: retryDelayMs(attempt, 30) } : 'delivered';
    const handle = await env.client.workflow.start<typeof webhookReplayWorkflow>('webhookReplayWorkflow', {
      workflowId: `webhook-replay/${deliveryId}`,
      taskQueue,
      args: [deliveryId],
    });
    expect(await handle.result()).toBe('failed');

    const attempts = attemptsOf(deliveryId);
    const first = attempts[0].at;
    expect(attempts.at(-1)!.at).toBeGreaterThanOrEqual(first + 3 * DAY);
    const marked = world.callsOf('markWebhookDeliveryFailed').filter((call) => call.args[0] === deliveryId);
    expect(marked).toHaveLength(1);
    expect(marked[0].at).toBeLessThanOrEqual(first + 4 * DAY);
    await expectReplays(bundle, handle);
  });

  it('answers delivered when the receiver takes it', async () => {
    const deliveryId = crypto.randomUUID();
    world.deliveries.set(deliveryId, { dealId: 'replayed', type: 'deal.paid' });
    const result = await env.client.workflow.execute<typeof webhookReplayWorkflow>('webhookReplayWorkflow', {
      workflowId: `webhook-replay/${deliveryId}`,
      taskQueue,
      args: [deliveryId],
    });
    expect(result).toBe('delivered');
    expect(world.delivered).toContain(deliveryId);
    expect(world.failed).not.toContain(deliveryId);
  });
});
