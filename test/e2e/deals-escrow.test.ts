// Escrow beyond the sandbox: a live marketplace's two-stage YooKassa payment against the local double of its API,
// and the date a hold lapses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';
import {
  json,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
} from '../helpers.ts';

/** A marketplace with one deal that the buyer has approved, and the buyer's cabinet token. */
async function approvedDeal(server: TestServer, secretKey: string, amount = 2500) {
  const api = (path: string) => `${server.url}/api/mkt${path}`;
  const key = { 'X-Svc-Key': secretKey };
  const buyerEmail = uniqueEmail('buyer');
  const deal = await json(
    await post(api('/deals'), { external_id: uniqueId('order'), buyer_email: buyerEmail, title: 'Sofa', amount }, key),
  );
  await fetch(api(`/deals/${deal.id}/documents?kind=offer`), {
    method: 'POST',
    headers: key,
    body: Buffer.from('offer'),
  });
  const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, key));
  const buyer = await signInFromInvitation(server, buyerEmail);
  expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
  const getDeal = async () => json(await fetch(api(`/deals/${deal.id}`), { headers: key }));
  return { deal, buyer, getDeal, escrow: (body: unknown = {}) => post(api(`/deals/${deal.id}/escrow`), body, key) };
}

describe('live escrow through YooKassa', () => {
  let server: TestServer;
  let yookassa: YooKassaDouble;
  let secretKey: string;

  beforeAll(async () => {
    yookassa = await startYooKassaDouble({ shopId: '123456', secretKey: 'test_secret' });
    server = await startTestServer({
      worker: true,
      env: { YOOKASSA_API_URL: `${yookassa.url}/v3`, YOOKASSA_SHOP_ID: '123456', YOOKASSA_SECRET_KEY: 'test_secret' },
    });
    yookassa.notificationUrl = `${server.url}/api/escrow/yookassa/notifications`;
    const created = await json(
      await post(
        `${server.url}/admin/marketplaces`,
        { name: 'Live shop', mode: 'live' },
        { Authorization: `Bearer ${server.adminToken}` },
      ),
    );
    secretKey = created.secret_key;
  });
  afterAll(async () => {
    await server?.stop();
    await yookassa?.close();
  });

  const paymentAtAcquirer = (paymentId: string) =>
    [...yookassa.payments.values()].find((payment) => payment.metadata?.payment_id === paymentId)!;

  it('gives a payment link, holds when the buyer pays (after re-reading the payment), and captures on release', async () => {
    const { deal, buyer, getDeal, escrow } = await approvedDeal(server, secretKey);
    const started = await escrow();
    expect(started.status).toBe(201);
    const payment = await json(started);
    expect(payment).toMatchObject({
      ok: true,
      provider: 'yookassa',
      status: 'pending',
      amount: 2500,
      payment_url: expect.stringContaining(yookassa.url),
    });

    const repeat = await escrow();
    expect(repeat.status).toBe(200);
    expect((await json(repeat)).payment_id).toBe(payment.payment_id);
    expect((await getDeal()).status).toBe('approved');

    const atAcquirer = paymentAtAcquirer(payment.payment_id);
    expect(atAcquirer).toMatchObject({ status: 'pending', amount: { value: '2500.00', currency: 'RUB' } });
    const creation = yookassa.requests.find(
      (request) =>
        request.method === 'POST' &&
        request.path === '/v3/payments' &&
        request.headers['idempotence-key'] === payment.payment_id,
    );
    expect(creation?.body).toMatchObject({
      capture: false,
      confirmation: { type: 'redirect', return_url: `${server.url}/cabinet/view/deals/${deal.id}` },
    });

    await yookassa.pay(atAcquirer.id);
    await expect.poll(async () => (await getDeal()).status, { timeout: 20_000 }).toBe('escrow_hold');
    const reread = yookassa.requests.filter(
      (request) => request.method === 'GET' && request.path === `/v3/payments/${atAcquirer.id}`,
    );
    expect(reread.length).toBeGreaterThanOrEqual(1);
    const held = (await getDeal()).payments[0];
    const lapse = Date.parse(held.hold_expires_at) - Date.now();
    expect(lapse).toBeGreaterThan(7 * 24 * 3600 * 1000 - 60_000);

    const released = await post(`${server.url}/cabinet/deals/${deal.id}/escrow/release`, {}, buyer);
    expect(released.status).toBe(200);
    expect(paymentAtAcquirer(payment.payment_id).status).toBe('succeeded');
    const captures = yookassa.requests.filter((request) => request.path === `/v3/payments/${atAcquirer.id}/capture`);
    expect(captures.map((request) => request.headers['idempotence-key'])).toEqual([`${payment.payment_id}/release`]);
    expect((await getDeal()).status).toBe('paid');
  });

  it('refunds a pending payment, and cancels it at the acquirer if the buyer pays anyway', async () => {
    const { deal, buyer, getDeal, escrow } = await approvedDeal(server, secretKey, 300);
    const payment = await json(await escrow());
    const refunded = await post(`${server.url}/cabinet/deals/${deal.id}/escrow/refund`, {}, buyer);
    expect(refunded.status).toBe(200);
    expect((await getDeal()).status).toBe('refunded');

    const atAcquirer = paymentAtAcquirer(payment.payment_id);
    await yookassa.pay(atAcquirer.id);
    await expect.poll(() => paymentAtAcquirer(payment.payment_id).status, { timeout: 20_000 }).toBe('canceled');
    expect((await getDeal()).status).toBe('refunded');
  });

  it('ignores a forged notification: the acquirer says the payment is still pending', async () => {
    const { getDeal, escrow } = await approvedDeal(server, secretKey, 40);
    const payment = await json(await escrow());
    const atAcquirer = paymentAtAcquirer(payment.payment_id);
    const forged = await post(`${server.url}/api/escrow/yookassa/notifications`, {
      type: 'notification',
      event: 'payment.waiting_for_capture',
      object: { id: atAcquirer.id, status: 'waiting_for_capture' },
    });
    expect(forged.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await getDeal()).status).toBe('approved');
  });
});

// What happens at the lapse is played on the time-skipping test server (test/e2e/deal-hold-lapse.test.ts, and with activities in memory in test/workflow/deal-timers.test.ts), from records
// like these: here only that a hold made through the API is dated to lapse when the acquirer lets the money go.
describe('the hold limit', () => {
  let server: TestServer;
  let secretKey: string;

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    const created = await json(
      await post(
        `${server.url}/admin/marketplaces`,
        { name: 'Slow shop' },
        { Authorization: `Bearer ${server.adminToken}` },
      ),
    );
    secretKey = created.secret_key;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('dates the lapse of a sandbox hold 7 days ahead, as YooKassa would', async () => {
    const { getDeal, escrow } = await approvedDeal(server, secretKey);
    const asked = Date.now();
    expect((await escrow()).status).toBe(201);
    const deal = await getDeal();
    expect(deal.status).toBe('escrow_hold');
    const lapse = Date.parse(deal.payments[0].hold_expires_at);
    expect(lapse).toBeGreaterThanOrEqual(asked + 7 * 24 * 3600 * 1000 - 1000);
    expect(lapse).toBeLessThanOrEqual(Date.now() + 7 * 24 * 3600 * 1000);
  });
});
