// The webhook outbox's own promises (docs/decisions/0026-webhooks-leave-through-an-outbox.md), end to end over the real
// PostgreSQL, the real Temporal dev server and HTTP receivers on 127.0.0.1: a change's webhook leaves with no Temporal
// activity; one deal's events arrive in order while another deal's are not held up; drainers sharing a queue send each
// delivery once; a dead drainer's claim lapses and the attempts go on; a delivery failing for GIVE_UP_SECONDS since its
// first attempt is failed and lets its deal's next event go; a drainer sends only its own task queue's deliveries.
//
// The worker (startTestServer's) runs the drainer of the server's task queue. The tests that need a drainer in hand run
// their own on a task queue of their own (uniqueId('queue')) and write their deliveries for it, so no other drainer of
// this or another file sends them.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { createLogger } from '../../src/log.ts';
import type { Services } from '../../src/services.ts';
import { insertWebhookEvent, type WebhookEventInput } from '../../src/webhooks/events.ts';
import {
  CLAIM_SECONDS,
  CLAIM_SQL,
  GIVE_UP_SECONDS,
  startWebhookDrainer,
  type WebhookDrainer,
} from '../../src/webhooks/outbox.ts';
import { dealInApproval, json, post, startTestServer, uniqueId, type TestServer } from '../helpers.ts';
import { insertApprovedDeal, insertMarketplace, type TestMarketplace } from '../factories.ts';

let server: TestServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { WEBHOOK_RETRY_BASE_SECONDS: '1' } });
});

afterAll(async () => {
  // Drainers first (they may have attempts on the wire to the receivers), then the receivers, then the server.
  // Each is put first as it is made, so a test's drainers come before its receiver.
  for (const stop of stops) await stop();
  await server?.stop();
});

// ---- receivers ------------------------------------------------------------------------------------------------------

interface Arrival {
  delivery: string;
  eventId: string;
  event: string;
  /** The deal the event is of (the body's id). */
  deal: string;
  body: Buffer;
  /** When the request's body had arrived (before the answer). */
  at: number;
}

type Answer = { status: number; headers?: Record<string, string> };

interface Hook {
  url: string;
  arrivals: Arrival[];
}

/**
 * A marketplace's receiver that answers each request as `answer` says (200 unless), after `delayMs`; it records every
 * request. Stopped after the file's drainers.
 */
async function startHook(answer: (arrival: Arrival) => Answer | undefined = () => undefined, delayMs = 0) {
  const hook: Hook = { url: '', arrivals: [] };
  const receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const parsed = JSON.parse(body.toString('utf8'));
      const arrival: Arrival = {
        delivery: String(request.headers['x-svc-delivery']),
        eventId: String(request.headers['webhook-id']),
        event: String(request.headers['x-svc-event']),
        deal: parsed.id,
        body,
        at: Date.now(),
      };
      hook.arrivals.push(arrival);
      const { status, headers } = answer(arrival) ?? { status: 200 };
      setTimeout(() => {
        response.writeHead(status, { 'Content-Type': 'text/plain', ...headers });
        response.end(status < 300 ? 'ok' : 'no');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  stops.unshift(
    () =>
      new Promise<void>((resolve) => {
        receiver.closeAllConnections();
        receiver.close(() => resolve());
      }),
  );
  hook.url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/svc`;
  return hook;
}

/** A marketplace whose webhook (every event type) is the hook. */
async function shopWith(hook: Hook): Promise<TestMarketplace> {
  const shop = await insertMarketplace(server.services);
  const registered = await post(`${server.url}/api/mkt/webhook`, { url: hook.url }, { 'X-Svc-Key': shop.secret_key });
  expect(registered.status).toBe(200);
  return shop;
}

// ---- drainers and deliveries ----------------------------------------------------------------------------------------

/** The server's services as a worker on another task queue would have them (and, when given, its own logger). */
function servicesOf(taskQueue: string, logger = server.services.logger): Services {
  return { ...server.services, logger, config: { ...server.services.config, TEMPORAL_TASK_QUEUE: taskQueue } };
}

/** A drainer beside the workers of `taskQueue`, stopped at the end of the file. */
function drainerOf(taskQueue: string, logger?: Services['logger']): WebhookDrainer {
  const drainer = startWebhookDrainer(servicesOf(taskQueue, logger));
  stops.unshift(() => drainer.stop());
  return drainer;
}

type Deal = WebhookEventInput['deal'];

/** A deal row of the marketplace, as the API's creation writes it. */
function dealOf(marketplaceId: string, db: Pick<Services['db'], 'query'> = server.services.db): Promise<Deal> {
  return insertApprovedDeal(db, marketplaceId);
}

/** One event of the deal and its delivery for the drainers of `taskQueue`, as a change writes them; the ids. */
async function eventOf(
  deal: Deal,
  event: string,
  taskQueue: string,
  db: Parameters<typeof insertWebhookEvent>[0] = server.services.db,
) {
  const ids = { eventId: randomUUID(), deliveryId: randomUUID() };
  const made = await insertWebhookEvent(db, {
    ...ids,
    taskQueue,
    event,
    occurredAt: new Date().toISOString(),
    status: event.slice('deal.'.length),
    deal,
  });
  expect(made).toBe(ids.deliveryId);
  return ids;
}

async function row(deliveryId: string) {
  const found = await server.services.db.query(
    'SELECT status, due_at, attempts, claimed_until, task_queue FROM webhook_deliveries WHERE id = $1',
    [deliveryId],
  );
  return found.rows[0];
}

/** The delivery's logged attempts, first first: [attempt, status, http_status]. */
async function attemptsOf(deliveryId: string): Promise<[number, string, number | null][]> {
  const found = await server.services.db.query(
    'SELECT attempt, status, http_status FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
    [deliveryId],
  );
  return found.rows.map((attempt) => [attempt.attempt, attempt.status, attempt.http_status]);
}

const statusOf = async (deliveryId: string) => (await row(deliveryId))?.status;

interface PlanNode {
  'Relation Name'?: string;
  Alias?: string;
  'Subplan Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/**
 * The deliveries a drainer of `taskQueue` reads to claim from its own queue: its claim run under EXPLAIN ANALYZE and
 * rolled back, the rows its scan of the queue's candidates (the CTE `own`) returned and the rows it read and passed
 * over. The claim's other scan reads the deliveries written before the outbox (no queue), which other files of this
 * database may have left. Index scans only (a table this small would be read whole otherwise), as on a real backlog.
 */
async function claimReads(taskQueue: string): Promise<{ returned: number; passedOver: number }> {
  const client = await server.services.db.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    const explained = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${CLAIM_SQL}`, [CLAIM_SECONDS, 32, taskQueue]);
    const scans: { cte: string | undefined; node: PlanNode }[] = [];
    const walk = (node: PlanNode, cte: string | undefined) => {
      const within = node['Subplan Name'] ?? cte;
      // The candidates are `c` in the claim's text; PostgreSQL names them c_1, c_2 beside the CTE of the same name.
      if (node['Relation Name'] === 'webhook_deliveries' && /^c(_\d+)?$/.test(node.Alias ?? ''))
        scans.push({ cte: within, node });
      node.Plans?.forEach((child) => walk(child, within));
    };
    walk(explained.rows[0]['QUERY PLAN'][0].Plan, undefined);
    expect(scans.map((scan) => scan.cte).sort()).toEqual(['CTE own', 'CTE unqueued']);
    const own = scans.find((scan) => scan.cte === 'CTE own')!.node;
    const loops = own['Actual Loops'] ?? 1;
    return {
      returned: Number(own['Actual Rows']) * loops,
      passedOver: Number(own['Rows Removed by Filter'] ?? 0) * loops,
    };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

// ---- the tests ------------------------------------------------------------------------------------------------------

describe('a change of a deal', () => {
  it('sends its webhooks from the outbox: none is an activity of the deal workflow', async () => {
    const hook = await startHook();
    const shop = await shopWith(hook);
    const { dealId, approvalId, buyer } = await dealInApproval(server, shop.secret_key);
    expect((await post(`${server.url}/cabinet/approvals/${approvalId}/approve`, {}, buyer)).status).toBe(200);

    const ofDeal = () => hook.arrivals.filter((arrival) => arrival.deal === dealId);
    const deliveries = async () =>
      (
        await server.services.db.query(
          `SELECT d.id, e.event, d.status, d.attempts, d.task_queue, d.due_at FROM webhook_deliveries d
             JOIN webhook_events e ON e.id = d.event_id WHERE e.deal_id = $1 ORDER BY e.seq`,
          [dealId],
        )
      ).rows;
    await expect
      .poll(async () => (await deliveries()).map((delivery) => [delivery.event, delivery.status]), { timeout: 20_000 })
      .toEqual([
        ['deal.created', 'delivered'],
        ['deal.docs', 'delivered'],
        ['deal.approval', 'delivered'],
        ['deal.approved', 'delivered'],
      ]);

    // Each webhook is the delivery its change wrote, for the worker's task queue, sent once, in order.
    expect(await deliveries()).toEqual(
      ofDeal().map((arrival) => ({
        id: arrival.delivery,
        event: arrival.event,
        status: 'delivered',
        attempts: 1,
        task_queue: server.services.config.TEMPORAL_TASK_QUEUE,
        due_at: null,
      })),
    );

    // The deal workflow ran the changes (its history has the updates) but scheduled no webhook activity.
    const externalId = JSON.parse(ofDeal()[0].body.toString('utf8')).external_id;
    const handle = server.services.temporal.workflow.getHandle(dealWorkflowId(shop.id, externalId));
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((event) => event.workflowExecutionUpdateCompletedEventAttributes).length).toBeGreaterThan(0);
    const scheduled = events
      .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((name) => name != null);
    expect(scheduled).not.toContain('deliverWebhook');
    expect(scheduled).not.toContain('markWebhookDeliveryFailed');
  });
});

describe('the order of events', () => {
  it("holds a deal's later events until its first, failing several times, is delivered; another deal's go on", async () => {
    const queue = uniqueId('queue');
    // The first event of the slow deal is refused three times (a second of Retry-After each), then taken.
    let refusals = 0;
    let slowFirst = '';
    const hook = await startHook((arrival) =>
      arrival.eventId === slowFirst && refusals++ < 3 ? { status: 503, headers: { 'Retry-After': '1' } } : undefined,
    );
    const shop = await shopWith(hook);
    const [slow, quick] = [await dealOf(shop.id), await dealOf(shop.id)];
    const slowEvents: { eventId: string; deliveryId: string }[] = [];
    for (const event of ['deal.approved', 'deal.escrow_hold', 'deal.paid'])
      slowEvents.push(await eventOf(slow, event, queue));
    slowFirst = slowEvents[0].eventId;
    const quickEvents: { eventId: string; deliveryId: string }[] = [];
    for (const event of ['deal.approved', 'deal.escrow_hold']) quickEvents.push(await eventOf(quick, event, queue));

    drainerOf(queue);
    const ofDeal = (deal: Deal) => hook.arrivals.filter((arrival) => arrival.deal === deal.id);
    await expect.poll(() => ofDeal(slow).length, { timeout: 20_000 }).toBe(6);
    await expect.poll(() => statusOf(slowEvents[2].deliveryId), { timeout: 10_000 }).toBe('delivered');

    // The slow deal: its first event four times, then the others once each, in the order they happened.
    expect(ofDeal(slow).map((arrival) => arrival.eventId)).toEqual([
      slowFirst,
      slowFirst,
      slowFirst,
      slowFirst,
      slowEvents[1].eventId,
      slowEvents[2].eventId,
    ]);
    expect(await attemptsOf(slowEvents[0].deliveryId)).toEqual([
      [1, 'retrying', 503],
      [2, 'retrying', 503],
      [3, 'retrying', 503],
      [4, 'delivered', 200],
    ]);
    for (const { deliveryId } of slowEvents.slice(1))
      expect(await attemptsOf(deliveryId)).toEqual([[1, 'delivered', 200]]);

    // The quick deal, written after the slow one's events: both its events in order, before the slow one's first was
    // taken at all.
    const quickArrivals = ofDeal(quick);
    expect(quickArrivals.map((arrival) => arrival.eventId)).toEqual(quickEvents.map((event) => event.eventId));
    const slowTaken = ofDeal(slow)[3].at;
    expect(quickArrivals.every((arrival) => arrival.at < slowTaken)).toBe(true);
    for (const { deliveryId } of quickEvents) expect(await attemptsOf(deliveryId)).toEqual([[1, 'delivered', 200]]);
  });
});

describe('drainers sharing a task queue', () => {
  it('never send one delivery twice: 100 deliveries, two drainers, each delivery arrives once', async () => {
    const queue = uniqueId('queue');
    // Slow answers keep each drainer's attempts on the wire while the other claims.
    const delayMs = 300;
    const hook = await startHook(undefined, delayMs);
    const shop = await shopWith(hook);

    /** Which drainer made each attempt: each has a logger of its own. */
    const attemptsBy = (lines: string[]) => lines.filter((line) => line.includes('"webhook attempt"')).length;
    const linesOf = [[], []] as string[][];
    const [one, two] = linesOf.map((lines) =>
      drainerOf(
        queue,
        createLogger(
          'info',
          new Writable({
            write(chunk, _encoding, done) {
              lines.push(chunk.toString());
              done();
            },
          }),
        ),
      ),
    );

    // 90 deals with one event and 5 with two, written in one transaction: one NOTIFY wakes both drainers at once, and
    // both are asked to drain too. A drainer has at most 32 attempts on the wire per launch, and at most two launches
    // run at once (its loop's and drain()), so of the 95 due at once the other drainer must claim some.
    const client = await server.services.db.connect();
    const written: { deal: string; deliveryId: string; eventId: string }[] = [];
    try {
      await client.query('BEGIN');
      for (let index = 0; index < 95; index += 1) {
        const deal = await dealOf(shop.id, client);
        for (const event of index < 90 ? ['deal.approved'] : ['deal.approved', 'deal.escrow_hold'])
          written.push({ deal: deal.id, ...(await eventOf(deal, event, queue, client)) });
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
    expect(written).toHaveLength(100);
    await Promise.all([one.drain(), two.drain()]);
    await expect
      .poll(
        async () =>
          (
            await server.services.db.query(
              `SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ANY ($1) AND status = 'delivered'`,
              [written.map((delivery) => delivery.deliveryId)],
            )
          ).rows[0].n,
        { timeout: 20_000 },
      )
      .toBe(100);

    // Every delivery arrived exactly once, with one attempt logged; both drainers sent some.
    expect(hook.arrivals.map((arrival) => arrival.delivery).sort()).toEqual(
      written.map((delivery) => delivery.deliveryId).sort(),
    );
    const logged = await server.services.db.query(
      'SELECT delivery_id, count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ANY ($1) GROUP BY delivery_id',
      [written.map((delivery) => delivery.deliveryId)],
    );
    expect(logged.rows).toHaveLength(100);
    expect(logged.rows.every((attempt) => attempt.n === 1)).toBe(true);
    const [byOne, byTwo] = linesOf.map(attemptsBy);
    expect(byOne + byTwo).toBe(100);
    expect(byOne).toBeGreaterThan(0);
    expect(byTwo).toBeGreaterThan(0);

    // The deals with two events got them in order, the second only after the first was answered.
    for (const deal of new Set(written.slice(90).map((delivery) => delivery.deal))) {
      const [first, second] = hook.arrivals.filter((arrival) => arrival.deal === deal);
      expect([first.event, second.event]).toEqual(['deal.approved', 'deal.escrow_hold']);
      expect(second.at - first.at).toBeGreaterThanOrEqual(delayMs - 5);
    }
  });
});

describe('a drainer that died', () => {
  it('leaves its claim to lapse; then the delivery is sent again and its attempt number goes on', async () => {
    const queue = uniqueId('queue');
    const hook = await startHook();
    const shop = await shopWith(hook);
    const { deliveryId, eventId } = await eventOf(await dealOf(shop.id), 'deal.paid', queue);
    // A drainer claimed it (as its claim does: the attempt counted, held for a while) and died before recording.
    await server.services.db.query(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, claimed_until = now() + interval '1 hour' WHERE id = $1`,
      [deliveryId],
    );

    const drainer = drainerOf(queue);
    expect(await drainer.drain()).toBe(0);
    expect(hook.arrivals).toEqual([]);
    expect(await row(deliveryId)).toMatchObject({ status: 'pending', attempts: 1 });

    // The claim lapses.
    await server.services.db.query(
      `UPDATE webhook_deliveries SET claimed_until = now() - interval '1 second' WHERE id = $1`,
      [deliveryId],
    );
    await drainer.drain();
    await expect.poll(() => statusOf(deliveryId), { timeout: 10_000 }).toBe('delivered');
    expect(hook.arrivals.map((arrival) => [arrival.delivery, arrival.eventId])).toEqual([[deliveryId, eventId]]);
    expect(await row(deliveryId)).toMatchObject({ attempts: 2, claimed_until: null, due_at: null });
    expect(await attemptsOf(deliveryId)).toEqual([[2, 'delivered', 200]]);
  });
});

describe('a delivery failing for GIVE_UP_SECONDS', () => {
  it("is failed at its next attempt, and its deal's next event then goes out, with days of its own", async () => {
    const queue = uniqueId('queue');
    let first = { eventId: '', deliveryId: '' };
    let next = { eventId: '', deliveryId: '' };
    // The first event is refused every time, two seconds apart (time to backdate it before its second attempt); the
    // next one is refused once.
    let nextRefused = false;
    const hook = await startHook((arrival) => {
      if (arrival.eventId === first.eventId) return { status: 503, headers: { 'Retry-After': '2' } };
      if (arrival.eventId === next.eventId && !nextRefused) {
        nextRefused = true;
        return { status: 503, headers: { 'Retry-After': '1' } };
      }
      return undefined;
    });
    const shop = await shopWith(hook);
    const deal = await dealOf(shop.id);
    first = await eventOf(deal, 'deal.escrow_hold', queue);
    next = await eventOf(deal, 'deal.paid', queue);

    drainerOf(queue);
    await expect.poll(() => attemptsOf(first.deliveryId), { timeout: 10_000 }).toEqual([[1, 'retrying', 503]]);
    // While it is retried, the deal's next event waits.
    expect(await row(next.deliveryId)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(hook.arrivals.map((arrival) => arrival.eventId)).toEqual([first.eventId]);

    // As if both had been made, and the first had been failing, for longer than the outbox tries: the next event waited
    // behind it all that time.
    await server.services.db.query(
      `UPDATE webhook_deliveries SET created_at = now() - make_interval(secs => $2) WHERE id = ANY ($1)`,
      [[first.deliveryId, next.deliveryId], GIVE_UP_SECONDS + 60],
    );
    await server.services.db.query(
      `UPDATE webhook_attempts SET attempted_at = now() - make_interval(secs => $2) WHERE delivery_id = $1`,
      [first.deliveryId, GIVE_UP_SECONDS + 60],
    );
    await expect.poll(() => statusOf(next.deliveryId), { timeout: 15_000 }).toBe('delivered');
    expect(await attemptsOf(first.deliveryId)).toEqual([
      [1, 'retrying', 503],
      [2, 'failed', 503],
    ]);
    expect(await row(first.deliveryId)).toMatchObject({ status: 'failed', due_at: null, claimed_until: null });
    // The next event's days run from its own first attempt, not from when it was written: its failure is retried.
    expect(await attemptsOf(next.deliveryId)).toEqual([
      [1, 'retrying', 503],
      [2, 'delivered', 200],
    ]);
    expect(hook.arrivals.map((arrival) => arrival.eventId)).toEqual([
      first.eventId,
      first.eventId,
      next.eventId,
      next.eventId,
    ]);
  });
});

describe('task queues', () => {
  it("a drainer sends nothing of another task queue's deliveries; that queue's drainer does", async () => {
    const [mine, theirs] = [uniqueId('queue'), uniqueId('queue')];
    const hook = await startHook();
    const shop = await shopWith(hook);
    const own = await eventOf(await dealOf(shop.id), 'deal.approved', mine);
    const other = await eventOf(await dealOf(shop.id), 'deal.approved', theirs);

    await drainerOf(mine).drain();
    await expect.poll(() => statusOf(own.deliveryId), { timeout: 10_000 }).toBe('delivered');
    expect(hook.arrivals.map((arrival) => arrival.delivery)).toEqual([own.deliveryId]);
    // Due, unclaimed and untouched, though drainers of other queues (this file's worker among them) ran meanwhile.
    expect(await row(other.deliveryId)).toMatchObject({
      status: 'pending',
      attempts: 0,
      claimed_until: null,
      task_queue: theirs,
    });
    expect((await row(other.deliveryId)).due_at.getTime()).toBeLessThanOrEqual(Date.now());

    await drainerOf(theirs).drain();
    await expect.poll(() => statusOf(other.deliveryId), { timeout: 10_000 }).toBe('delivered');
    expect(hook.arrivals.map((arrival) => arrival.delivery)).toEqual([own.deliveryId, other.deliveryId]);
  });
});

describe('a claim under a backlog', () => {
  it("reads only what it may send: not another queue's due deliveries, nor a deal's held behind one retrying", async () => {
    const [mine, theirs] = [uniqueId('queue'), uniqueId('queue')];
    const hook = await startHook();
    const shop = await shopWith(hook);
    const { db } = server.services;
    // Another queue's due deliveries, which no drainer of this test serves.
    for (let index = 0; index < 30; index++) await eventOf(await dealOf(shop.id), 'deal.approved', theirs);
    // A deal whose first delivery is retried an hour from now, with ten deliveries written behind it before it failed
    // and ten after.
    const held = await dealOf(shop.id);
    const head = await eventOf(held, 'deal.approved', mine);
    const behind: { eventId: string; deliveryId: string }[] = [];
    for (let index = 0; index < 10; index++) behind.push(await eventOf(held, 'deal.escrow_hold', mine));
    // As the drainer records a failed attempt: retrying, due later.
    await db.query(
      `UPDATE webhook_deliveries SET status = 'retrying', attempts = 1, due_at = now() + interval '1 hour' WHERE id = $1`,
      [head.deliveryId],
    );
    for (let index = 0; index < 10; index++) behind.push(await eventOf(held, 'deal.paid', mine));
    // And one it may send.
    const free = await eventOf(await dealOf(shop.id), 'deal.approved', mine);

    // Each delivery behind the retrying one is due when it is, no earlier.
    const headDue = (await row(head.deliveryId)).due_at.getTime();
    for (const { deliveryId } of behind) expect((await row(deliveryId)).due_at.getTime()).toBe(headDue);
    expect(await claimReads(mine)).toEqual({ returned: 1, passedOver: 0 });

    // The retrying one is delivered (as the drainer records it): those behind it are due at once, and go in order.
    await db.query(`UPDATE webhook_deliveries SET status = 'delivered', due_at = NULL WHERE id = $1`, [
      head.deliveryId,
    ]);
    for (const { deliveryId } of behind)
      expect((await row(deliveryId)).due_at.getTime()).toBeLessThanOrEqual(Date.now());
    const drainer = drainerOf(mine);
    await drainer.drain();
    await expect
      .poll(async () => Promise.all(behind.map(({ deliveryId }) => statusOf(deliveryId))), { timeout: 20_000 })
      .toEqual(behind.map(() => 'delivered'));
    expect(await statusOf(free.deliveryId)).toBe('delivered');
    expect(hook.arrivals.filter((arrival) => arrival.deal === held.id).map((arrival) => arrival.eventId)).toEqual(
      behind.map(({ eventId }) => eventId),
    );
  });

  it("lets a replay of an earlier event go first: it waits for none of the deal's later deliveries", async () => {
    const queue = uniqueId('queue');
    const hook = await startHook();
    const shop = await shopWith(hook);
    const deal = await dealOf(shop.id);
    const first = await eventOf(deal, 'deal.approved', queue);
    const later = await eventOf(deal, 'deal.escrow_hold', queue);
    await server.services.db.query(`UPDATE webhook_deliveries SET status = 'delivered', due_at = NULL WHERE id = $1`, [
      first.deliveryId,
    ]);
    await server.services.db.query(
      `UPDATE webhook_deliveries SET status = 'retrying', attempts = 1, due_at = now() + interval '1 hour' WHERE id = $1`,
      [later.deliveryId],
    );
    // A second delivery of the first event, as a replay writes it: due now, though a later event of its deal is retrying.
    const replay = randomUUID();
    await server.services.db.query(
      `INSERT INTO webhook_deliveries (id, event_id, deal_id, task_queue) VALUES ($1, $2, $3, $4)`,
      [replay, first.eventId, deal.id, queue],
    );
    expect((await row(replay)).due_at.getTime()).toBeLessThanOrEqual(Date.now());
    expect(await claimReads(queue)).toEqual({ returned: 1, passedOver: 0 });
  });
});

describe('the admin API', () => {
  it('replays a delivery through the outbox: the replay is a row for the server’s task queue, sent by its worker', async () => {
    const hook = await startHook();
    const shop = await shopWith(hook);
    const { deliveryId, eventId } = await eventOf(
      await dealOf(shop.id),
      'deal.approved',
      server.services.config.TEMPORAL_TASK_QUEUE,
    );
    await expect.poll(() => statusOf(deliveryId), { timeout: 10_000 }).toBe('delivered');
    const answer = await post(
      `${server.url}/admin/webhook-deliveries/${deliveryId}/replay`,
      {},
      { Authorization: `Bearer ${server.adminToken}` },
    );
    expect(answer.status).toBe(202);
    const replay = await json(answer);
    expect(await row(replay.delivery_id)).toMatchObject({ task_queue: server.services.config.TEMPORAL_TASK_QUEUE });
    await expect.poll(() => statusOf(replay.delivery_id), { timeout: 10_000 }).toBe('delivered');
    expect(hook.arrivals.map((arrival) => [arrival.delivery, arrival.eventId])).toEqual([
      [deliveryId, eventId],
      [replay.delivery_id, eventId],
    ]);
  });
});
