// Money that reaches the seller, through the servers as a marketplace, a buyer, a seller and the arbiter use them:
// sandbox deals released and paid out to the seller's test card (or held until the seller gives one, or failed and
// paid again), shipment, delivery and the inspection window, partial refunds and the arbiter's split, payouts split by
// the acquirer's per-payout limit; the events told, and the ledger to the kopeck.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBalanced, moneyClient, type Shop } from '../money-helpers.ts';
import {
  json,
  ownerDb,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  type TestServer,
} from '../helpers.ts';
import { randomUUID } from 'node:crypto';
import { destinationForPayout, setDealDestination } from '../../src/money/destinations.ts';

let server: TestServer;
let money: ReturnType<typeof moneyClient>;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  money = moneyClient(server);
});
afterAll(async () => {
  await server?.stop();
});

const GOOD_CARD = { type: 'test_card', token: '4111111111111111' };
const DECLINED_CARD = { type: 'test_card', token: '4000000000000002' };

const put = (url: string, body: unknown, headers: Record<string, string>) =>
  fetch(url, {
    method: 'PUT',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

/** A held deal with a seller, who is signed in; the buyer moves the money as in the cabinet. */
async function sellerDeal(shop: Shop, fields: Record<string, unknown> = {}) {
  const sellerEmail = uniqueEmail('seller');
  const deal = await money.heldDeal(shop, { seller_email: sellerEmail, amount: 1000, ...fields });
  const seller = await signInFromInvitation(server, sellerEmail);
  const read = () => money.getDeal(shop, deal.id);
  return { ...deal, seller, read };
}

async function eventsOf(shop: Shop, dealId: string): Promise<string[]> {
  const { items } = await json(await fetch(money.api(`/events?deal_id=${dealId}&limit=100`), { headers: shop.key }));
  return items.map((item: { type: string }) => item.type).reverse();
}

async function setInspectionDays(shop: Shop, days: number) {
  const db = ownerDb();
  await db.query('UPDATE marketplaces SET inspection_days = $2 WHERE id = $1', [shop.id, days]);
  await db.end();
}

describe('payouts to the seller', () => {
  it('waits for the seller’s destination after a release, then pays out and the deal is paid', async () => {
    const shop = await money.marketplace({ fee_schedule: { fixed: 100 } });
    const deal = await sellerDeal(shop);
    await deal.move('release');
    await expect.poll(async () => (await deal.read()).payout.status).toBe('awaiting_destination');
    expect((await deal.read()).status).toBe('escrow_hold');
    // The seller is asked for a destination by mail; the mail leaves through the notice outbox, after the change.
    const sellerEmail = (await deal.read()).seller_email;
    await expect
      .poll(async () => {
        const mail = await json(
          await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(sellerEmail)}`, { headers: money.admin() }),
        );
        return mail.items.some((item: { subject: string }) =>
          /where should we pay you|куда перевести деньги/.test(item.subject),
        );
      })
      .toBe(true);

    const given = await put(`${server.url}/cabinet/payout-destination`, GOOD_CARD, deal.seller);
    expect(given.status).toBe(200);
    expect(await json(given)).toMatchObject({ type: 'test_card', title: 'Test card •••• 1111' });
    await expect.poll(async () => (await deal.read()).status).toBe('paid');
    const state = await deal.read();
    expect(state).toMatchObject({ fee: 100, seller_amount: 900, released_amount: 900, refunded_amount: 0 });
    expect(state.payout).toMatchObject({
      status: 'succeeded',
      destination: { type: 'test_card', title: 'Test card •••• 1111' },
    });
    expect(state.payout.items).toEqual([
      expect.objectContaining({ amount: 900, status: 'succeeded', failure_reason: null }),
    ]);
    // The token is never shown again.
    expect(JSON.stringify(state)).not.toContain('4111111111111111');
    await expect.poll(() => eventsOf(shop, deal.id)).toEqual(expect.arrayContaining(['deal.payout_sent', 'deal.paid']));
    const events = await eventsOf(shop, deal.id);
    expect(events.indexOf('deal.payout_sent')).toBeLessThan(events.indexOf('deal.paid'));

    expect(await money.postingsOf(shop, deal.id)).toEqual([
      `payment: buyer -1000.00, deal_held:${deal.id} 1000.00`,
      `fee: deal_held:${deal.id} -100.00, marketplace_fee 100.00`,
      `payout: deal_held:${deal.id} -900.00, seller_payable 900.00`,
      'payout: seller_payable -900.00, seller_paid_out 900.00',
    ]);
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'RUB', held: 0, payable: 0, paid_out: 900, refunded: 0, fees: 100 },
    ]);
    expectBalanced((await money.ledger(shop)).items);
  });

  it('keeps the money held when a payout is declined, and pays again to the destination the marketplace gives', async () => {
    const shop = await money.marketplace();
    const deal = await sellerDeal(shop);
    expect((await put(`${server.url}/cabinet/payout-destination`, DECLINED_CARD, deal.seller)).status).toBe(200);
    await deal.move('release');
    await expect.poll(async () => (await deal.read()).payout.status).toBe('failed');
    const failed = await deal.read();
    expect(failed.status).toBe('escrow_hold');
    expect(failed.payout.items).toEqual([
      expect.objectContaining({ status: 'failed', failure_reason: 'card_declined' }),
    ]);
    await expect.poll(() => eventsOf(shop, deal.id)).toContain('deal.payout_failed');
    expect(await money.postingsOf(shop, deal.id)).not.toContain(
      'payout: seller_payable -1000.00, seller_paid_out 1000.00',
    );

    // A card the sandbox does not know is refused with what to use.
    const wrong = await put(
      money.api(`/deals/${deal.id}/payout-destination`),
      { type: 'test_card', token: '5555555555554444' },
      shop.key,
    );
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).code).toBe('payout_destination_invalid');
    expect((await put(money.api(`/deals/${deal.id}/payout-destination`), GOOD_CARD, shop.key)).status).toBe(200);
    await expect.poll(async () => (await deal.read()).status).toBe('paid');
    const paid = await deal.read();
    expect(paid.payout.items.map((item: { status: string }) => item.status)).toEqual(['failed', 'succeeded']);
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'RUB', held: 0, payable: 0, paid_out: 1000, refunded: 0, fees: 0 },
    ]);
  });

  it('sends every retry of a payout to the destination its first attempt used, whatever was given since', async () => {
    const shop = await money.marketplace();
    const deal = await sellerDeal(shop);
    const { db, masterKey } = server.services;
    await setDealDestination(db, masterKey, deal.id, { type: 'test_card', token: '4000000000000002' });
    const payoutId = randomUUID();
    expect(await destinationForPayout(db, masterKey, deal.id, payoutId)).toMatchObject({ token: '4000000000000002' });
    await setDealDestination(db, masterKey, deal.id, { type: 'test_card', token: '4111111111111111' });
    // The same payout (a retry under its key) keeps its card; the next payout takes the new one.
    expect(await destinationForPayout(db, masterKey, deal.id, payoutId)).toMatchObject({
      token: '4000000000000002',
      title: 'Test card •••• 0002',
    });
    expect(await destinationForPayout(db, masterKey, deal.id, randomUUID())).toMatchObject({
      token: '4111111111111111',
    });
  });

  it('splits a payout above the acquirer’s per-payout limit of 150,000', async () => {
    const shop = await money.marketplace();
    const deal = await sellerDeal(shop, { amount: 200000.5 });
    expect((await put(`${server.url}/cabinet/payout-destination`, GOOD_CARD, deal.seller)).status).toBe(200);
    await deal.move('release');
    await expect.poll(async () => (await deal.read()).status).toBe('paid');
    expect((await deal.read()).payout.items.map((item: { amount: number }) => item.amount)).toEqual([150000, 50000.5]);
  });
});

describe('shipment, delivery and inspection', () => {
  it('after shipment the buyer cannot refund alone; delivery with no inspection window releases at once', async () => {
    const shop = await money.marketplace();
    await setInspectionDays(shop, 0);
    const deal = await sellerDeal(shop);
    expect((await put(`${server.url}/cabinet/payout-destination`, GOOD_CARD, deal.seller)).status).toBe(200);
    // Only the seller ships from the cabinet.
    const shipped = await post(
      `${server.url}/cabinet/deals/${deal.id}/shipment`,
      { carrier: 'CDEK', tracking: 'RU123' },
      deal.seller,
    );
    expect(shipped.status).toBe(200);
    expect((await json(shipped)).delivery).toMatchObject({
      status: 'shipped',
      carrier: 'CDEK',
      tracking: 'RU123',
      delivered_at: null,
    });
    const again = await post(money.api(`/deals/${deal.id}/shipment`), {}, shop.key);
    expect(again.status).toBe(400);
    expect((await json(again)).code).toBe('invalid_delivery_state');

    const buyerRefund = await money.heldDealRefundAttempt(deal.id);
    expect(buyerRefund).toMatchObject({ status: 400, code: 'shipped_dispute_instead' });

    const delivered = await post(money.api(`/deals/${deal.id}/delivery`), undefined, shop.key);
    expect(delivered.status).toBe(200);
    await expect.poll(async () => (await deal.read()).status).toBe('paid');
    const state = await deal.read();
    expect(state.delivery).toMatchObject({ status: 'delivered', inspection_ends_at: null });
    expect(await eventsOf(shop, deal.id)).toEqual(
      expect.arrayContaining(['deal.shipped', 'deal.delivered', 'deal.payout_sent', 'deal.paid']),
    );
  });
});

describe('partial outcomes', () => {
  it('refunds part as agreed, refuses a part that leaves the seller nothing, and pays out the rest', async () => {
    const shop = await money.marketplace({ fee_schedule: { fixed: 100 } });
    const deal = await sellerDeal(shop);
    expect((await put(`${server.url}/cabinet/payout-destination`, GOOD_CARD, deal.seller)).status).toBe(200);
    const tooMuch = await post(
      money.api(`/deals/${deal.id}/escrow/partial-refund`),
      { amount: 900, reason: 'all of it' },
      shop.key,
    );
    expect(tooMuch.status).toBe(400);
    expect((await json(tooMuch)).code).toBe('invalid_refund_amount');
    const refunded = await post(
      money.api(`/deals/${deal.id}/escrow/partial-refund`),
      { amount: 250.5, reason: 'a scratch' },
      shop.key,
    );
    expect(refunded.status).toBe(200);
    expect(await json(refunded)).toMatchObject({ status: 'escrow_hold', refunded_amount: 250.5 });
    await expect.poll(() => eventsOf(shop, deal.id)).toContain('deal.partially_refunded');

    await deal.move('release');
    await expect.poll(async () => (await deal.read()).status).toBe('paid');
    expect(await deal.read()).toMatchObject({ released_amount: 649.5, refunded_amount: 250.5 });
    expect(await money.postingsOf(shop, deal.id)).toEqual(
      expect.arrayContaining([
        `refund: deal_held:${deal.id} -250.50, refunded 250.50`,
        'payout: seller_payable -649.50, seller_paid_out 649.50',
      ]),
    );
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'RUB', held: 0, payable: 0, paid_out: 649.5, refunded: 250.5, fees: 100 },
    ]);
  });

  it('lets the arbiter split a disputed payment', async () => {
    const shop = await money.marketplace({ fee_schedule: { fixed: 50 } });
    const deal = await sellerDeal(shop);
    expect((await put(`${server.url}/cabinet/payout-destination`, GOOD_CARD, deal.seller)).status).toBe(200);
    await money.disputeAsBuyer(deal.id, 'Half of it is broken');
    const resolve = (body: unknown) => post(`${server.url}/admin/deals/${deal.id}/escrow/resolve`, body, money.admin());
    const wrong = await resolve({ outcome: 'split', release_amount: 600, refund_amount: 300, reason: 'half' });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).code).toBe('invalid_refund_amount');
    expect(
      (await resolve({ outcome: 'split', release_amount: 600, refund_amount: 400, reason: 'Four tenths were broken' }))
        .status,
    ).toBe(200);
    await expect.poll(async () => (await deal.read()).status).toBe('paid');
    expect(await deal.read()).toMatchObject({
      released_amount: 550,
      refunded_amount: 400,
      dispute: { status: 'decided' },
    });
    expect((await money.balance(shop)).items).toEqual([
      { currency: 'RUB', held: 0, payable: 0, paid_out: 550, refunded: 400, fees: 50 },
    ]);
  });
});
