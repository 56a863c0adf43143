// A live marketplace on YooKassa Safe Deal, through the servers against the YooKassa double: the buyer pays on the
// acquirer's page into a safe deal (held when the notification is re-read), the marketplace refunds part as agreed,
// the buyer releases, and the seller is paid out to the card from the payout widget; a payout the double holds pending
// is settled by its notification; the double's deal balance and payouts equal the ledger to the kopeck.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';
import { dealInApproval, json, post, startTestServer, type TestServer } from '../helpers.ts';

let server: TestServer;
let yookassa: YooKassaDouble;
let shop: { id: string; secret_key: string };

beforeAll(async () => {
  yookassa = await startYooKassaDouble({ shopId: '777002', secretKey: 'test_safe_secret' });
  server = await startTestServer({
    worker: true,
    env: { YOOKASSA_API_URL: yookassa.apiUrl, YOOKASSA_SHOP_ID: '777002', YOOKASSA_SECRET_KEY: 'test_safe_secret' },
  });
  yookassa.notificationUrl = `${server.url}/api/escrow/yookassa/notifications`;
  const admin = { Authorization: `Bearer ${server.adminToken}` };
  shop = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Safe deal shop', mode: 'live' }, admin));
  const patched = await fetch(`${server.url}/admin/marketplaces/${shop.id}`, {
    method: 'PATCH',
    headers: { ...admin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ provider: 'yookassa_safe_deal', fee_schedule: { percent: 10 } }),
  });
  expect(patched.status).toBe(200);
});
afterAll(async () => {
  await server?.stop();
  await yookassa?.close();
});

const key = () => ({ 'X-Svc-Key': shop.secret_key });
const api = (path: string) => `${server.url}/api/mkt${path}`;
const read = async (dealId: string) => json(await fetch(api(`/deals/${dealId}`), { headers: key() }));
const put = (url: string, body: unknown, headers: Record<string, string>) =>
  fetch(url, {
    method: 'PUT',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

/** A deal the buyer approved and paid at the double: its money is in a safe deal. */
async function heldSafeDeal(amount: number) {
  const deal = await dealInApproval(server, shop.secret_key, { amount, seller: true });
  expect((await post(`${server.url}/cabinet/approvals/${deal.approvalId}/approve`, {}, deal.buyer)).status).toBe(200);
  const paid = await json(await post(`${server.url}/cabinet/deals/${deal.dealId}/pay`, {}, deal.buyer));
  expect(paid.payment_url).toEqual(expect.any(String));
  const payment = [...yookassa.payments.values()].find((candidate) => candidate.metadata.deal_id === deal.dealId)!;
  await yookassa.pay(payment.id);
  await expect.poll(async () => (await read(deal.dealId)).status).toBe('escrow_hold');
  return { ...deal, seller: deal.seller!, payment };
}

describe('a live marketplace on YooKassa Safe Deal', () => {
  it('holds in a safe deal, refunds part, and pays the seller out of it; the ledger equals the double', async () => {
    const deal = await heldSafeDeal(10000);
    const state = await read(deal.dealId);
    expect(state.payments).toEqual([expect.objectContaining({ provider: 'yookassa_safe_deal', status: 'hold' })]);
    expect(state).toMatchObject({ fee: 1000, seller_amount: 9000 });

    const refunded = await post(
      api(`/deals/${deal.dealId}/escrow/partial-refund`),
      { amount: 2000, reason: 'One chair was missing' },
      key(),
    );
    expect(refunded.status).toBe(200);
    expect(await json(refunded)).toMatchObject({ refunded_amount: 2000 });

    // The seller gives the card synonym from YooKassa's payout widget; a test card is refused in live mode.
    const testCard = await put(
      `${server.url}/cabinet/payout-destination`,
      { type: 'bank_card', token: '4111' },
      deal.seller,
    );
    expect(testCard.status).toBe(400);
    expect(
      (
        await put(
          `${server.url}/cabinet/payout-destination`,
          { type: 'bank_card', token: 'syn_card_7700112233' },
          deal.seller,
        )
      ).status,
    ).toBe(200);

    expect((await post(`${server.url}/cabinet/deals/${deal.dealId}/escrow/release`, {}, deal.buyer)).status).toBe(200);
    await expect.poll(async () => (await read(deal.dealId)).status, { timeout: 20_000 }).toBe('paid');
    const paid = await read(deal.dealId);
    // 10,000 paid, 2,000 back to the buyer, the fee 1,000: 7,000 paid out to the seller.
    expect(paid).toMatchObject({
      released_amount: 7000,
      refunded_amount: 2000,
      payout: { status: 'succeeded', destination: { type: 'bank_card' } },
    });
    // At the double: the safe deal held the seller's part (the fee went to the shop), and nothing of it is left.
    const safeDealId = yookassa.payments.get(deal.payment.id)!.deal!.id;
    expect(yookassa.deals().find((candidate) => candidate.id === safeDealId)).toMatchObject({
      balance: '0.00',
      payoutBalance: '0.00',
    });

    const balance = await json(await fetch(api('/balance'), { headers: key() }));
    expect(balance.items).toEqual([
      { currency: 'RUB', held: 0, payable: 0, paid_out: 7000, refunded: 2000, fees: 1000 },
    ]);
    const payouts = paid.payout.items;
    expect(payouts).toEqual([expect.objectContaining({ amount: 7000, status: 'succeeded' })]);
    expect(yookassa.payoutsFor(payouts[0].id)).toHaveLength(1);
  });

  it('makes a partial refund again under its Idempotency-Key after the acquirer failed it for a moment, once', async () => {
    const deal = await heldSafeDeal(5000);
    const headers = { ...key(), 'Idempotency-Key': `refund-${deal.dealId}` };
    const body = { amount: 1000, reason: 'A missing leg' };
    // Every try of the first attempt fails (YooKassa answers 500 five times): nothing changed, 503.
    yookassa.failNext(5, 500);
    const first = await post(api(`/deals/${deal.dealId}/escrow/partial-refund`), body, headers);
    expect(first.status).toBe(503);
    expect((await json(first)).code).toBe('acquirer_unavailable');
    expect((await read(deal.dealId)).refunded_amount).toBe(0);
    // The same request again, under the same key: made again (not the first failure replayed), and only once.
    const again = await post(api(`/deals/${deal.dealId}/escrow/partial-refund`), body, headers);
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ refunded_amount: 1000 });
    const replayed = await post(api(`/deals/${deal.dealId}/escrow/partial-refund`), body, headers);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('Idempotent-Replayed')).toBe('true');
    const refunds = [...yookassa.refunds.values()].filter((refund) => refund.payment_id === deal.payment.id);
    expect(refunds.map((refund) => refund.amount.value)).toEqual(['1000.00']);
  });

  it('waits for a pending payout and settles it from the notification', async () => {
    const deal = await heldSafeDeal(3000);
    expect(
      (
        await put(
          `${server.url}/cabinet/payout-destination`,
          { type: 'yoo_money', token: '41001234567890' },
          deal.seller,
        )
      ).status,
    ).toBe(200);
    yookassa.holdPayouts(true);
    try {
      expect((await post(`${server.url}/cabinet/deals/${deal.dealId}/escrow/release`, {}, deal.buyer)).status).toBe(
        200,
      );
      await expect.poll(async () => (await read(deal.dealId)).payout.items.length, { timeout: 20_000 }).toBe(1);
      const pending = await read(deal.dealId);
      expect(pending).toMatchObject({ status: 'escrow_hold', payout: { status: 'pending' } });
      const [atDouble] = yookassa.payoutsFor(pending.payout.items[0].id);
      await yookassa.settlePayout(atDouble.id, 'succeeded');
    } finally {
      yookassa.holdPayouts(false);
    }
    await expect.poll(async () => (await read(deal.dealId)).status, { timeout: 20_000 }).toBe('paid');
  });
});
