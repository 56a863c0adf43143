// The deal workflow's durability: events of one deal arrive in order even when the receiver fails first, long
// histories continue as new without losing anything, PostgreSQL commits before anyone acts on a write, record rows
// PostgreSQL lost come back from the workflow, what a lost workflow task wrote is told once and leaves no stray row,
// and a whole lifecycle's history replays (recorded into test/fixtures/deal-histories with RECORD_HISTORIES=1, where
// test/workflow/deal-replay.test.ts replays every recorded history without a server).
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { startWorker, WORKFLOWS_PATH } from '../../src/worker.ts';
import { randomUUID } from 'node:crypto';
import { payoutDestinationSignal, reassertSignal, snapshotQuery } from '../../workflows/deals/deal-messages.ts';
import { createDealActivities } from '../../activities/deals/records.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import {
  json,
  ownerDb,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
} from '../helpers.ts';

const HISTORIES = path.join(import.meta.dirname, '..', 'fixtures', 'deal-histories');

interface Shop {
  id: string;
  key: string;
  receiver: Receiver;
}

let server: TestServer;
let shop: Shop;
/** A second marketplace with a receiver of its own, whose script no other test's deliveries consume. */
let quietShop: Shop;
const shops: Shop[] = [];

async function openShop(name: string): Promise<Shop> {
  const receiver = await startReceiver();
  const created = await json(
    await post(`${server.url}/admin/marketplaces`, { name }, { Authorization: `Bearer ${server.adminToken}` }),
  );
  await post(`${server.url}/api/mkt/webhook`, { url: receiver.url }, { 'X-Svc-Key': created.secret_key });
  const opened = { id: created.id, key: created.secret_key, receiver };
  shops.push(opened);
  return opened;
}

beforeAll(async () => {
  // Fast retries, and continue-as-new after a short history, so both show within a test.
  server = await startTestServer({
    worker: true,
    env: { WEBHOOK_RETRY_BASE_SECONDS: '1', DEAL_WORKFLOW_HISTORY_LIMIT: '40' },
  });
  shop = await openShop('Durable shop');
  quietShop = await openShop('Quiet shop');
});
afterAll(async () => {
  await server?.stop();
  for (const opened of shops) await opened.receiver.stop();
});

const key = (of = shop) => ({ 'X-Svc-Key': of.key });
const api = (path: string) => `${server.url}/api/mkt${path}`;
const handleOf = (deal: { external_id: string }, of = shop) =>
  server.services.temporal.workflow.getHandle(dealWorkflowId(of.id, deal.external_id));

async function addDocument(dealId: string, i: number, of = shop) {
  expect(
    (
      await fetch(api(`/deals/${dealId}/documents?kind=act`), {
        method: 'POST',
        headers: key(of),
        body: Buffer.from(`act ${i}`),
      })
    ).status,
  ).toBe(201);
}

/** An approved deal: documents, then the buyer approves in the cabinet. Returns the deal and the buyer's headers. */
async function approvedDeal(documents = 1, of = shop) {
  const buyerEmail = uniqueEmail('buyer');
  const deal = await json(
    await post(
      api('/deals'),
      { external_id: uniqueId('order'), buyer_email: buyerEmail, title: 'Lamp', amount: 99 },
      key(of),
    ),
  );
  for (let i = 0; i < documents; i++) await addDocument(deal.id, i, of);
  const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, key(of)));
  const buyer = await signInFromInvitation(server, buyerEmail);
  expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
  return { deal: deal as { id: string; external_id: string }, buyer };
}

/** A deal with the money held in escrow. */
async function heldDeal(of = shop) {
  const { deal, buyer } = await approvedDeal(1, of);
  expect((await post(api(`/deals/${deal.id}/escrow`), {}, key(of))).status).toBe(201);
  return { deal, buyer };
}

/** A paid deal: approve in the cabinet, hold, release. Returns the deal id and external id. */
async function paidDeal(documents = 1) {
  const { deal, buyer } = await approvedDeal(documents);
  expect((await post(api(`/deals/${deal.id}/escrow`), {}, key())).status).toBe(201);
  expect((await post(`${server.url}/cabinet/deals/${deal.id}/escrow/release`, {}, buyer)).status).toBe(200);
  return deal;
}

const arrivals = (dealId: string, of = shop) =>
  of.receiver.received
    .map((request) => ({ event: JSON.parse(request.body.toString()), headers: request.headers }))
    .filter(({ event }) => event.id === dealId);

describe('webhook delivery of one deal', () => {
  it('retries a failing receiver with the same bytes and keeps the events in order', async () => {
    shop.receiver.script.push({ status: 500 }, { status: 503, headers: { 'Retry-After': '1' } });
    const deal = await paidDeal();
    await expect.poll(() => arrivals(deal.id).length, { timeout: 30_000 }).toBe(9);
    const received = arrivals(deal.id);
    expect(received.map(({ event }) => event.event)).toEqual([
      'deal.created',
      'deal.created',
      'deal.created',
      'deal.docs',
      'deal.approval',
      'deal.approved',
      'deal.escrow_hold',
      'deal.payout_sent',
      'deal.paid',
    ]);
    const [first, second, third] = received;
    expect(second.event).toEqual(first.event);
    expect(third.headers['x-svc-signature']).toBe(first.headers['x-svc-signature']);
    expect(third.headers['x-svc-delivery']).toBe(first.headers['x-svc-delivery']);

    const log = await json(
      await fetch(`${server.url}/admin/marketplaces/${shop.id}/webhook-deliveries`, {
        headers: { Authorization: `Bearer ${server.adminToken}` },
      }),
    );
    const created = log.items.filter(
      (item: { deal_id: string; event: string }) => item.deal_id === deal.id && item.event === 'deal.created',
    );
    expect(
      created
        .map((item: { attempt: number; status: string; http_status: number }) => [
          item.attempt,
          item.status,
          item.http_status,
        ])
        .sort(),
    ).toEqual([
      [1, 'retrying', 500],
      [2, 'retrying', 503],
      [3, 'delivered', 200],
    ]);
  });
});

describe('long histories', () => {
  it('continue as new and keep working on the same deal', async () => {
    const deal = await paidDeal(12);
    const workflowId = dealWorkflowId(shop.id, deal.external_id);
    const runs = [];
    for await (const execution of server.services.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runs.push(execution.status.name);
    expect(runs).toContain('CONTINUED_AS_NEW');
    await expect
      .poll(async () => (await server.services.temporal.workflow.getHandle(workflowId).describe()).status.name, {
        timeout: 20_000,
      })
      .toBe('COMPLETED');
    const state = await json(await fetch(api(`/deals/${deal.id}`), { headers: key() }));
    expect(state.status).toBe('paid');
    expect(state.documents).toHaveLength(12);
    await expect
      .poll(() => arrivals(deal.id).map(({ event }) => event.event), { timeout: 20_000 })
      .toEqual([
        'deal.created',
        'deal.docs',
        'deal.approval',
        'deal.approved',
        'deal.escrow_hold',
        'deal.payout_sent',
        'deal.paid',
      ]);
  });
});

describe('what PostgreSQL commits', () => {
  it('is on disk before it answers: the embedded server commits synchronously', async () => {
    const setting = async (name: string) => (await server.services.db.query(`SHOW ${name}`)).rows[0][name];
    expect([await setting('fsync'), await setting('synchronous_commit'), await setting('full_page_writes')]).toEqual([
      'on',
      'on',
      'on',
    ]);
  });
});

describe('record rows PostgreSQL lost', () => {
  /** Every column of the deal's record rows, and its status. */
  async function recordRows(dealId: string) {
    const { db } = server.services;
    const rows = (table: string) =>
      db
        .query(`SELECT * FROM ${table} WHERE deal_id = $1 ORDER BY created_at, id`, [dealId])
        .then((result) => result.rows);
    const [deal, documents, approvals, payments, payouts] = await Promise.all([
      db.query('SELECT status FROM deals WHERE id = $1', [dealId]),
      rows('deal_documents'),
      rows('deal_approvals'),
      rows('deal_payments'),
      rows('deal_payouts'),
    ]);
    return { status: deal.rows[0].status, documents, approvals, payments, payouts };
  }

  /**
   * What a crash could do behind the workflow's back (a restore, a failover to a replica that lagged): document and
   * payment gone, decision, status and the deal's version rolled back, as one earlier state of PostgreSQL.
   */
  async function loseWrites(dealId: string) {
    const { db } = server.services;
    await db.query('DELETE FROM deal_documents WHERE deal_id = $1', [dealId]);
    await db.query('DELETE FROM deal_payouts WHERE deal_id = $1', [dealId]);
    await db.query('DELETE FROM deal_payments WHERE deal_id = $1', [dealId]);
    await db.query(
      `UPDATE deal_approvals SET status = 'pending', comment = 'not what the buyer said', decided_at = NULL WHERE deal_id = $1`,
      [dealId],
    );
    await db.query(`UPDATE deals SET status = 'approval', version = greatest(version - 3, 0) WHERE id = $1`, [dealId]);
  }

  it('come back exactly when a worker starts and asks the open deals to re-assert', async () => {
    const { deal } = await heldDeal();
    const intact = await recordRows(deal.id);
    expect(intact).toMatchObject({
      status: 'escrow_hold',
      documents: [expect.anything()],
      payments: [expect.objectContaining({ status: 'hold' })],
    });
    await loseWrites(deal.id);
    expect(await recordRows(deal.id)).not.toEqual(intact);

    const restarted = await startWorker(server.services);
    try {
      await expect.poll(() => recordRows(deal.id), { timeout: 20_000 }).toEqual(intact);
    } finally {
      await restarted.stop();
    }
  });

  it('come back exactly when the deal is asked to re-assert them', async () => {
    const { deal } = await heldDeal();
    const intact = await recordRows(deal.id);
    await loseWrites(deal.id);
    await handleOf(deal).signal(reassertSignal);
    await expect.poll(() => recordRows(deal.id), { timeout: 10_000 }).toEqual(intact);
  });

  it('come back with the next change of the deal', async () => {
    const { deal, buyer } = await heldDeal();
    const intact = await recordRows(deal.id);
    await loseWrites(deal.id);
    expect((await post(`${server.url}/cabinet/deals/${deal.id}/escrow/release`, {}, buyer)).status).toBe(200);
    // The release, then the payout it started (to the sandbox's succeeding card: this deal has no seller).
    await expect.poll(async () => (await recordRows(deal.id)).status, { timeout: 20_000 }).toBe('paid');
    const after = await recordRows(deal.id);
    expect(after).toEqual({
      ...intact,
      status: 'paid',
      payments: [
        { ...intact.payments[0], status: 'released', payout_status: 'succeeded', updated_at: expect.any(Date) },
      ],
      payouts: [expect.objectContaining({ status: 'succeeded', payment_id: intact.payments[0].id })],
    });
  });

  it('come back before the workflow ends: the last change lost in its own commit is written again as the deal ends', async () => {
    const { deal, buyer } = await heldDeal(quietShop);
    // A trigger needs the schema's owner; the service's own role may not make one.
    const db = ownerDb();
    // The loss happens inside the transaction that records deal.paid, so no later change could heal it: only the
    // re-assertion the workflow makes as the deal ends can. The trigger acts once (not on the healing write, which finds
    // the status it rolled back to), for this deal only.
    const lose = `lose_at_paid_${deal.id.replaceAll('-', '')}`;
    await db.query(`
      CREATE FUNCTION ${lose}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM deal_documents WHERE deal_id = NEW.id;
        DELETE FROM deal_payouts WHERE deal_id = NEW.id;
        UPDATE deals SET status = 'approval', version = greatest(version - 3, 0) WHERE id = NEW.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER ${lose} AFTER UPDATE ON deals FOR EACH ROW
        WHEN (NEW.id = '${deal.id}' AND NEW.status = 'paid' AND OLD.status NOT IN ('paid', 'approval') AND pg_trigger_depth() < 1)
        EXECUTE FUNCTION ${lose}();`);
    try {
      expect((await post(`${server.url}/cabinet/deals/${deal.id}/escrow/release`, {}, buyer)).status).toBe(200);
      await expect
        .poll(async () => (await handleOf(deal, quietShop).describe()).status.name, { timeout: 30_000 })
        .toBe('COMPLETED');
    } finally {
      await db.query(`DROP TRIGGER ${lose} ON deals; DROP FUNCTION ${lose}();`);
      await db.end();
    }
    expect(await recordRows(deal.id)).toMatchObject({
      status: 'paid',
      documents: [expect.anything()],
      payments: [expect.objectContaining({ status: 'released', payout_status: 'succeeded' })],
      payouts: [expect.objectContaining({ status: 'succeeded' })],
    });
    await expect
      .poll(
        () =>
          arrivals(deal.id, quietShop)
            .map(({ event }) => event.event)
            .at(-1),
        { timeout: 20_000 },
      )
      .toBe('deal.paid');
  });

  it('come back when a long history continues as new', async () => {
    const { deal } = await approvedDeal(1, quietShop);
    const handle = handleOf(deal, quietShop);
    const { runId } = await handle.describe();
    // Short of the limit (40 events), so no change continues the run before the rows go.
    for (let i = 1; (await handle.describe()).historyLength <= 24; i++) await addDocument(deal.id, i, quietShop);
    const intact = await recordRows(deal.id);
    await loseWrites(deal.id);
    // Signals that change nothing (no payout waits for a destination) grow the history without a write that would heal
    // the rows; past the limit the run continues as new, and the new run re-asserts what it carries. Each signal waits
    // for its workflow task: signals sent faster than a loaded worker takes them would share tasks, and the count of
    // signals would say nothing about the history's length.
    for (let i = 0; ; i++) {
      const now = await handle.describe();
      if (now.runId !== runId) break;
      expect(i).toBeLessThan(20);
      await handle.signal(payoutDestinationSignal, { by: 'seller' });
      await expect
        .poll(
          async () => {
            const after = await handle.describe();
            return after.runId !== runId || (after.historyLength > now.historyLength && !after.raw.pendingWorkflowTask);
          },
          { timeout: 20_000 },
        )
        .toBe(true);
    }
    await expect.poll(() => recordRows(deal.id), { timeout: 10_000 }).toEqual(intact);
  });
});

describe('writes of a workflow task that never reached Temporal', () => {
  // A local activity writes before its workflow task completes; when Temporal is down then, the task and the update in
  // it are lost, the caller gets a 503 and tries again, while PostgreSQL keeps what the lost task wrote.
  // A refund: one change that closes the deal (a release closes it later, with its payout).
  async function loseTaskOfRefund(deal: { id: string; external_id: string }) {
    const held = await handleOf(deal, quietShop).query(snapshotQuery);
    const refunded = { ...held.payments[0], status: 'refunded' as const, updated_at: new Date().toISOString() };
    const lost = {
      id: randomUUID(),
      deliveryId: randomUUID(),
      type: 'deal.refunded',
      occurredAt: new Date().toISOString(),
    };
    const { recordDealChange } = createDealActivities(server.services);
    // As the workflow writes it: sized, at the version after the one it held.
    await recordDealChange({
      dealId: deal.id,
      status: 'refunded',
      event: lost,
      records: { ...held, payments: [refunded] },
      version: held.version! + 1,
      changed: { payment: refunded },
    });
    return lost;
  }

  // Deals of these tests keep one run: a continue-as-new re-asserts the workflow's records, which would put back the
  // state before the lost task and hide what is tested here.
  let historyLimit: number;
  beforeAll(() => {
    historyLimit = server.services.config.DEAL_WORKFLOW_HISTORY_LIMIT;
    server.services.config.DEAL_WORKFLOW_HISTORY_LIMIT = 10_000;
  });
  afterAll(() => {
    server.services.config.DEAL_WORKFLOW_HISTORY_LIMIT = historyLimit;
  });

  const refundedArrivals = (deal: { id: string }) =>
    arrivals(deal.id, quietShop).filter(({ event }) => event.event === 'deal.refunded');
  const refundedEvents = async (deal: { id: string }) =>
    (
      await server.services.db.query(`SELECT id FROM webhook_events WHERE deal_id = $1 AND event = 'deal.refunded'`, [
        deal.id,
      ])
    ).rows.map((row) => row.id);

  /** Waits until the deal's workflow has ended and the outbox has nothing more of the deal to send. */
  async function allSent(deal: { id: string; external_id: string }) {
    await expect
      .poll(async () => (await handleOf(deal, quietShop).describe()).status.name, { timeout: 30_000 })
      .toBe('COMPLETED');
    await expect
      .poll(
        async () =>
          (
            await server.services.db.query(
              'SELECT count(*)::int AS n FROM webhook_deliveries WHERE deal_id = $1 AND due_at IS NOT NULL',
              [deal.id],
            )
          ).rows[0].n,
        { timeout: 20_000 },
      )
      .toBe(0);
  }

  it('tell the marketplace once: the retried change sends the event the lost task recorded', async () => {
    const { deal, buyer } = await heldDeal(quietShop);
    const lost = await loseTaskOfRefund(deal);
    expect((await post(`${server.url}/cabinet/deals/${deal.id}/escrow/refund`, {}, buyer)).status).toBe(200);
    await allSent(deal);
    expect(refundedArrivals(deal).map(({ event }) => event.event_id)).toEqual([lost.id]);
    expect(await refundedEvents(deal)).toEqual([lost.id]);
  });

  it('tell the marketplace once: an event the lost task already sent is not sent again', async () => {
    const { deal, buyer } = await heldDeal(quietShop);
    const lost = await loseTaskOfRefund(deal);
    // The lost task's write committed, so the outbox sends its event at once, before the retried change comes.
    await expect
      .poll(() => refundedArrivals(deal).map(({ event }) => event.event_id), { timeout: 20_000 })
      .toEqual([lost.id]);
    expect((await post(`${server.url}/cabinet/deals/${deal.id}/escrow/refund`, {}, buyer)).status).toBe(200);
    await allSent(deal);
    expect(refundedArrivals(deal).map(({ event }) => event.event_id)).toEqual([lost.id]);
    expect(await refundedEvents(deal)).toEqual([lost.id]);
  });

  it('leave no stray record: the next write keeps only the rows the workflow holds', async () => {
    const { deal, buyer } = await heldDeal(quietShop);
    const stray = randomUUID();
    // What a lost task's write leaves: its row, and the deal one version on.
    await server.services.db.query(
      `WITH stray AS (INSERT INTO deal_approvals (id, deal_id, status, approver, comment, created_at) VALUES ($1, $2, 'pending', 'x@example.com', '', now()))
       UPDATE deals SET version = version + 1 WHERE id = $2`,
      [stray, deal.id],
    );
    expect((await post(`${server.url}/cabinet/deals/${deal.id}/escrow/release`, {}, buyer)).status).toBe(200);
    const held = await handleOf(deal, quietShop).query(snapshotQuery);
    const approvals = await server.services.db.query('SELECT id FROM deal_approvals WHERE deal_id = $1', [deal.id]);
    expect(approvals.rows.map((row) => row.id)).toEqual(held.approvals.map((approval) => approval.id));
    expect(approvals.rows.map((row) => row.id)).not.toContain(stray);
  });
});

describe('determinism', () => {
  it('replays the history of a lifecycle through the API on the current workflow code, and records it when asked', async () => {
    const deal = await paidDeal();
    const handle = handleOf(deal);
    await expect.poll(async () => (await handle.describe()).status.name, { timeout: 20_000 }).toBe('COMPLETED');
    const fresh = await handle.fetchHistory();
    if (process.env.RECORD_HISTORIES === '1') {
      // The CLI writes the standard JSON history format that the Web UI downloads too; the recorded histories are
      // replayed by test/workflow/deal-replay.test.ts.
      const json = execFileSync(inject('temporalCli'), [
        'workflow',
        'show',
        '--workflow-id',
        handle.workflowId,
        '--address',
        inject('temporalAddress'),
        '--output',
        'json',
      ]);
      mkdirSync(HISTORIES, { recursive: true });
      writeFileSync(path.join(HISTORIES, 'paid.json'), json);
    }
    // Throws DeterminismViolationError when the code takes another step than the history recorded.
    await Worker.runReplayHistory({ workflowsPath: WORKFLOWS_PATH, replayName: 'fresh' }, fresh);
  });
});
