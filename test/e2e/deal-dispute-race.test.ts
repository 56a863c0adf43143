// A disputed payment moves only by the arbiter's decision, with a reason (docs/decisions/0015-the-arbiter-decides-disputes.md): whatever a caller read
// before, and whoever asks. The deal's workflow checks the rule when it applies a move, under the deal's lock, so a
// plain release that raced a dispute cannot decide it. Played through the API (a race on many deals, then each refused
// move in turn), straight to the workflow, and with two moves the workflow accepted together, then applied in turn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import { createServices } from '../../src/services.ts';
import { createLogger } from '../../src/log.ts';
import { startWorker } from '../../src/worker.ts';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { loadSnapshot } from '../../src/deals/store.ts';
import { startDealWorkflow, updateDeal } from '../../src/deals/commands.ts';
import { movePaymentUpdate, snapshotQuery, type MovePaymentInput } from '../../workflows/deals/deal-messages.ts';
import { insertHeldDeal, insertHeldDealSignedIn, insertMarketplace, type TestMarketplace } from '../factories.ts';
import { json, post, startTestServer, testConfig, uniqueId, type TestServer } from '../helpers.ts';

const ADMITTED =
  proto.temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED;
const BOOTSTRAP = `bootstrap-${uniqueId('token')}-long-enough`;
const REASON = 'Arrived broken';

let server: TestServer;
let shop: TestMarketplace;

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { SVC_BOOTSTRAP_ADMIN_TOKEN: BOOTSTRAP } });
  shop = await insertMarketplace(server.services, { name: 'Dispute race shop' });
});
afterAll(async () => {
  await server?.stop();
});

/** The bootstrap token: an administrator with the admin role. */
const bootstrap = () => ({ Authorization: `Bearer ${BOOTSTRAP}` });
const mkt = () => ({ 'X-Svc-Key': shop.secret_key });
const readState = async (dealId: string) =>
  json(await fetch(`${server.url}/api/mkt/deals/${dealId}`, { headers: mkt() }));
const readAdminDeal = async (dealId: string) =>
  json(await fetch(`${server.url}/admin/deals/${dealId}`, { headers: bootstrap() }));
/** Read once a release's payout (made by the deal's loop after the release answered) is through: the deal is paid then. */
async function settled<T extends { status: string; payout?: { status: string } }>(read: () => Promise<T>): Promise<T> {
  await expect
    .poll(async () => (await read()).payout?.status ?? (await read()).status, { timeout: 20_000 })
    .not.toBe('pending');
  return read();
}
const dealState = (dealId: string) => settled(() => readState(dealId));
const adminDeal = (dealId: string) =>
  settled(async () => {
    const found = await readAdminDeal(dealId);
    return { ...found, status: found.deal?.status ?? found.status, payout: found.deal?.payout ?? found.payout };
  });

async function answer(response: Response) {
  return { status: response.status, body: await json(response) };
}

/** The failure type a refused update carries (the API's problem code), or 'accepted'. */
async function refusalOf(update: Promise<unknown>): Promise<string> {
  try {
    await update;
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
    for (let cause = (error as Error).cause; cause; cause = (cause as Error).cause) {
      if (cause instanceof ApplicationFailure) return cause.type ?? 'untyped';
    }
    throw error;
  }
}

describe("the buyer's dispute and an administrator's plain release at the same moment", () => {
  it('never decide the dispute: either the release comes first and no dispute opens, or the release is refused', async () => {
    const deals = await Promise.all(
      Array.from({ length: 12 }, () => insertHeldDealSignedIn(server.services, { marketplaceId: shop.id })),
    );
    const raced = await Promise.all(
      deals.map(async (deal) => {
        const [dispute, release] = await Promise.all([
          post(`${server.url}/cabinet/deals/${deal.dealId}/escrow/dispute`, { reason: REASON }, deal.buyer).then(
            answer,
          ),
          post(`${server.url}/admin/deals/${deal.dealId}/escrow/release`, {}, bootstrap()).then(answer),
        ]);
        return { deal, dispute, release };
      }),
    );
    const outcomes = { disputed: 0, released: 0 };
    for (const { deal, dispute, release } of raced) {
      const state = await adminDeal(deal.dealId);
      // Whatever came first, the arbiter never decided anything here, least of all with an empty reason.
      expect(state.events.filter((event: { actor: string }) => event.actor === 'arbiter')).toEqual([]);
      expect(state.dispute?.decision ?? null).toBeNull();
      if (dispute.status === 200) {
        outcomes.disputed++;
        expect(release, deal.dealId).toMatchObject({ status: 400, body: { code: 'dispute_open' } });
        expect(state).toMatchObject({
          status: 'disputed',
          dispute: { status: 'open', reason: REASON, decision: null },
        });
        expect(state.payments).toEqual([expect.objectContaining({ status: 'disputed' })]);
        expect(state.events.map((event: { type: string }) => event.type)).not.toContain('deal.paid');
      } else {
        outcomes.released++;
        expect(release.status, deal.dealId).toBe(200);
        expect(dispute.status).toBe(400);
        expect(['invalid_payment_state', 'deal_closed']).toContain(dispute.body.code);
        expect(state).toMatchObject({ status: 'paid', dispute: null });
        expect(state.events.at(-1)).toMatchObject({ type: 'deal.paid', actor: 'administrator' });
      }
    }
    expect(outcomes.disputed + outcomes.released).toBe(12);

    // The open disputes are the arbiter's to decide, with a reason.
    for (const { deal, dispute } of raced.filter((race) => race.dispute.status === 200)) {
      const decided = await post(
        `${server.url}/admin/deals/${deal.dealId}/escrow/resolve`,
        { outcome: 'refund', reason: 'No proof of delivery' },
        bootstrap(),
      );
      expect(decided.status, JSON.stringify(dispute)).toBe(200);
    }
  });
});

describe("the buyer's release and refund at the same moment", () => {
  it('move the money once, refuse the other, and the worker lives on', async () => {
    const deals = await Promise.all(
      Array.from({ length: 4 }, () => insertHeldDealSignedIn(server.services, { marketplaceId: shop.id })),
    );
    const raced = await Promise.all(
      deals.map((deal) =>
        Promise.all(
          (['release', 'refund'] as const).map((move) =>
            post(`${server.url}/cabinet/deals/${deal.dealId}/escrow/${move}`, {}, deal.buyer).then(answer),
          ),
        ),
      ),
    );
    for (const [index, [release, refund]] of raced.entries()) {
      const state = await dealState(deals[index].dealId);
      const won = release.status === 200 ? 'paid' : 'refunded';
      expect([release.status, refund.status].sort()).toEqual([200, 400]);
      expect(['deal_closed', 'invalid_payment_state']).toContain((release.status === 400 ? release : refund).body.code);
      expect(state.status).toBe(won);
    }
    // A closed deal whose refused update was still waiting for the lock once made the workflow spin until the worker
    // thread died; the same worker still moves money now.
    const after = await insertHeldDealSignedIn(server.services, { marketplaceId: shop.id });
    expect((await post(`${server.url}/cabinet/deals/${after.dealId}/escrow/release`, {}, after.buyer)).status).toBe(
      200,
    );
  });
});

describe('a disputed payment', () => {
  it("refuses every move but the arbiter's decision with 400 dispute_open, whoever asks, and stays as it was", async () => {
    const deal = await insertHeldDealSignedIn(server.services, { marketplaceId: shop.id });
    const early = await post(
      `${server.url}/admin/deals/${deal.dealId}/escrow/resolve`,
      { outcome: 'release', reason: 'Nothing to decide' },
      bootstrap(),
    );
    expect(early.status).toBe(400);
    expect((await json(early)).code).toBe('invalid_payment_state');
    expect(
      (await post(`${server.url}/cabinet/deals/${deal.dealId}/escrow/dispute`, { reason: REASON }, deal.buyer)).status,
    ).toBe(200);
    const before = await dealState(deal.dealId);
    expect(before).toMatchObject({ status: 'disputed', dispute: { status: 'open', reason: REASON } });

    const admin = (path: string) => `${server.url}/admin/deals/${deal.dealId}${path}`;
    const cabinet = (path: string) => `${server.url}/cabinet/deals/${deal.dealId}${path}`;
    const moves: [string, string, unknown, Record<string, string>][] = [
      ['administrator release', admin('/escrow/release'), {}, bootstrap()],
      [
        'administrator release with a reason',
        admin('/escrow/release'),
        { reason: 'The seller proved delivery' },
        bootstrap(),
      ],
      ['administrator refund', admin('/escrow/refund'), {}, bootstrap()],
      ['administrator refund with a reason', admin('/escrow/refund'), { reason: 'The buyer is right' }, bootstrap()],
      ['administrator dispute', admin('/escrow/dispute'), { reason: 'Once more' }, bootstrap()],
      ['administrator cancel', admin('/cancel'), { reason: 'Never mind' }, bootstrap()],
      ['buyer release', cabinet('/escrow/release'), {}, deal.buyer],
      ['buyer refund', cabinet('/escrow/refund'), {}, deal.buyer],
      ['buyer dispute', cabinet('/escrow/dispute'), { reason: 'Still broken' }, deal.buyer],
      ['marketplace cancel', `${server.url}/api/mkt/deals/${deal.dealId}/cancel`, { reason: 'Refund it' }, mkt()],
    ];
    for (const [who, url, body, headers] of moves) {
      const refused = await post(url, body, headers);
      expect(refused.status, who).toBe(400);
      expect((await json(refused)).code, who).toBe('dispute_open');
    }
    // The marketplace has no release or refund of its own at all (the specification: not through any marketplace API operation).
    for (const move of ['release', 'refund']) {
      const response = await post(`${server.url}/api/mkt/deals/${deal.dealId}/escrow/${move}`, {}, mkt());
      expect([404, 405], move).toContain(response.status);
    }
    expect(await dealState(deal.dealId)).toEqual(before);

    expect((await post(admin('/escrow/resolve'), { outcome: 'release', reason: ' ' }, bootstrap())).status).toBe(400);
    expect(await dealState(deal.dealId)).toEqual(before);
    const resolved = await post(
      admin('/escrow/resolve'),
      { outcome: 'refund', reason: 'The photos show it broken' },
      bootstrap(),
    );
    expect(resolved.status).toBe(200);
    expect(await json(resolved)).toMatchObject({ status: 'refunded' });
    const after = await adminDeal(deal.dealId);
    expect(after).toMatchObject({
      status: 'refunded',
      dispute: {
        status: 'decided',
        reason: REASON,
        decision: { outcome: 'refund', reason: 'The photos show it broken' },
      },
    });
    expect(after.events.at(-1)).toMatchObject({
      type: 'deal.refunded',
      actor: 'arbiter',
      reason: 'The photos show it broken',
    });
    const again = await post(admin('/escrow/resolve'), { outcome: 'release', reason: 'Changed my mind' }, bootstrap());
    expect((await json(again)).code).toBe('deal_closed');
  });

  it("is the workflow's own rule: a move sent straight to it is refused the same way", async () => {
    const deal = await insertHeldDealSignedIn(server.services, { marketplaceId: shop.id });
    const handle = server.services.temporal.workflow.getHandle(dealWorkflowId(shop.id, deal.externalId));
    const move = (input: MovePaymentInput) => handle.executeUpdate(movePaymentUpdate, { args: [input] });
    // The arbiter decides disputes only.
    await startDealWorkflow(server.services, (await loadSnapshot(server.services.db, deal.dealId))!);
    expect(await refusalOf(move({ action: 'release', actor: 'arbiter', reason: 'No dispute yet' }))).toBe(
      'invalid_payment_state',
    );
    expect(await refusalOf(move({ action: 'dispute', actor: 'buyer' }))).toBe('reason_required');
    expect(await refusalOf(move({ action: 'dispute', actor: 'buyer', reason: REASON }))).toBe('accepted');
    const disputed = await handle.query(snapshotQuery);

    for (const input of [
      { action: 'release', actor: 'administrator' },
      { action: 'refund', actor: 'administrator', reason: 'A reason does not make it a decision' },
      { action: 'release', actor: 'admin' },
      { action: 'refund', actor: 'buyer' },
      { action: 'dispute', actor: 'administrator', reason: 'Again' },
      { action: 'dispute', actor: 'arbiter', reason: 'Again' },
    ] satisfies MovePaymentInput[]) {
      expect(await refusalOf(move(input)), JSON.stringify(input)).toBe('dispute_open');
    }
    expect(await refusalOf(move({ action: 'release', actor: 'arbiter' }))).toBe('reason_required');
    expect(await refusalOf(move({ action: 'release', actor: 'arbiter', reason: '   ' }))).toBe('reason_required');
    expect(await handle.query(snapshotQuery)).toEqual(disputed);

    expect(await refusalOf(move({ action: 'release', actor: 'arbiter', reason: 'Delivered as described' }))).toBe(
      'accepted',
    );
    const decided = await handle.query(snapshotQuery);
    expect(decided.payments.at(-1)!.status).toBe('released');
    expect(decided.dispute).toMatchObject({
      status: 'decided',
      decision: { outcome: 'release', reason: 'Delivered as described' },
    });
  });
});

describe('two moves the workflow accepted together', () => {
  it('are applied in turn, each checked against the deal as the one before left it', async () => {
    // A task queue without a worker yet: both updates wait for the workflow's first task and come in it together, so
    // the release's validator sees the money held; only the check when the release's turn comes sees the dispute.
    const services = createServices(
      testConfig({ TEMPORAL_TASK_QUEUE: uniqueId('late-worker') }),
      createLogger('silent'),
    );
    try {
      const held = await insertHeldDeal(services);
      await startDealWorkflow(services, (await loadSnapshot(services.db, held.dealId))!);
      const handle = services.temporal.workflow.getHandle(dealWorkflowId(held.marketplaceId, held.externalId));
      /** Until the server has the update (admitted: it waits for the workflow's next task); unknown until it comes. */
      const admitted = (updateId: string) =>
        expect
          .poll(
            () =>
              services.temporal.workflowService
                .pollWorkflowExecutionUpdate({
                  namespace: services.config.TEMPORAL_NAMESPACE,
                  updateRef: { workflowExecution: { workflowId: handle.workflowId }, updateId },
                  waitPolicy: { lifecycleStage: ADMITTED },
                })
                .then(
                  () => true,
                  () => false,
                ),
            { timeout: 10_000 },
          )
          .toBe(true);
      const dispute = refusalOf(
        handle.executeUpdate(movePaymentUpdate, {
          args: [{ action: 'dispute', actor: 'buyer', reason: REASON }],
          updateId: 'dispute',
        }),
      );
      await admitted('dispute');
      const release = refusalOf(
        handle.executeUpdate(movePaymentUpdate, {
          args: [{ action: 'release', actor: 'administrator' }],
          updateId: 'release',
        }),
      );
      await admitted('release');

      const worker = await startWorker(services);
      try {
        expect(await dispute).toBe('accepted');
        expect(await release).toBe('dispute_open');
      } finally {
        await worker.stop();
      }
      // The release passed its validator (accepted into the history) and was refused when applied.
      const events = (await handle.fetchHistory()).events ?? [];
      const accepted = events
        .map((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId)
        .filter(Boolean);
      expect(accepted).toEqual(['dispute', 'release']);
      const state = await loadSnapshot(services.db, held.dealId);
      expect(state!.payments).toEqual([expect.objectContaining({ status: 'disputed' })]);
      expect(state!.dispute).toMatchObject({ status: 'open', reason: REASON, decision: null });
    } finally {
      await services.close();
    }
  });
});

describe('a move that reaches a deal after its workflow ended', () => {
  it('meets the deal as its records stand, not as its caller read it: a late dispute on a paid deal is refused and changes nothing', async () => {
    const deal = await insertHeldDealSignedIn(server.services, { marketplaceId: shop.id });
    // What a caller read while the money was still held, before the release reached the deal.
    const stale = (await loadSnapshot(server.services.db, deal.dealId))!;
    expect((await post(`${server.url}/admin/deals/${deal.dealId}/escrow/release`, {}, bootstrap())).status).toBe(200);
    const handle = server.services.temporal.workflow.getHandle(
      dealWorkflowId(stale.deal.marketplace_id, stale.deal.external_id),
    );
    await expect.poll(async () => (await handle.describe()).status.name, { timeout: 20_000 }).toBe('COMPLETED');

    // The late update starts the deal's workflow again, given the stale snapshot, as a slow request would.
    const late = updateDeal(server.services, stale, movePaymentUpdate, {
      action: 'dispute',
      actor: 'buyer',
      reason: REASON,
    });
    await expect(late).rejects.toMatchObject({ status: 400, code: 'deal_closed' });
    await expect.poll(async () => (await handle.describe()).status.name, { timeout: 20_000 }).toBe('COMPLETED');
    const state = await dealState(deal.dealId);
    expect(state).toMatchObject({ status: 'paid', dispute: null });
    expect(state.payments).toEqual([expect.objectContaining({ status: 'released' })]);
  });
});
