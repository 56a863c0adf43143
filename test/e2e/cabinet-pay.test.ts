// The buyer pays from the cabinet (POST /cabinet/deals/{id}/pay and the deal page's Pay), over real HTTP against
// PostgreSQL, Temporal, our worker and the YooKassa double: a sandbox marketplace holds at once and says it is a test,
// a live one answers the acquirer's page (the same one again while it is pending, one payment at the acquirer) that
// returns to the deal's cabinet page; only the buyer of an approved deal may pay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';
import { dealInApproval as dealWaitingForApproval, json, post, startTestServer, type TestServer } from '../helpers.ts';
import { PageBrowser, type Reply } from '../page-browser.ts';

let server: TestServer;
let yookassa: YooKassaDouble;
let sandboxShop: { id: string; secret_key: string };
let liveShop: { id: string; secret_key: string };

beforeAll(async () => {
  yookassa = await startYooKassaDouble({ shopId: '777001', secretKey: 'test_pay_secret' });
  server = await startTestServer({
    worker: true,
    env: { YOOKASSA_API_URL: yookassa.apiUrl, YOOKASSA_SHOP_ID: '777001', YOOKASSA_SECRET_KEY: 'test_pay_secret' },
  });
  yookassa.notificationUrl = `${server.url}/api/escrow/yookassa/notifications`;
  const admin = { Authorization: `Bearer ${server.adminToken}` };
  sandboxShop = await json(
    await post(`${server.url}/admin/marketplaces`, { name: 'Pay sandbox shop', mode: 'sandbox' }, admin),
  );
  liveShop = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Pay live shop', mode: 'live' }, admin));
});
afterAll(async () => {
  await server?.stop();
  await yookassa?.close();
});

type Shop = { secret_key: string };
const key = (shop: Shop) => ({ 'X-Svc-Key': shop.secret_key });
const api = (path: string) => `${server.url}/api/mkt${path}`;
const cabinet = (path: string) => `${server.url}/cabinet${path}`;
const marketplaceDeal = async (shop: Shop, dealId: string) =>
  json(await fetch(api(`/deals/${dealId}`), { headers: key(shop) }));
const pay = (dealId: string, headers: Record<string, string>) => post(cabinet(`/deals/${dealId}/pay`), {}, headers);
const atAcquirer = (dealId: string) =>
  [...yookassa.payments.values()].filter((payment) => payment.metadata.deal_id === dealId);

/** A deal in the shop with a seller, waiting for the buyer's approval; the buyer and the seller signed in. */
async function dealInApproval(shop: Shop, amount = 4200) {
  const deal = await dealWaitingForApproval(server, shop.secret_key, { amount, seller: true });
  return { ...deal, seller: deal.seller! };
}

async function approvedDeal(shop: Shop, amount?: number) {
  const deal = await dealInApproval(shop, amount);
  expect((await post(cabinet(`/approvals/${deal.approvalId}/approve`), {}, deal.buyer)).status).toBe(200);
  return deal;
}

describe('POST /cabinet/deals/{id}/pay in a sandbox marketplace', () => {
  it('holds the full amount at once as a test, by the buyer; a second Pay is refused and pays nothing', async () => {
    const { dealId, buyer } = await approvedDeal(sandboxShop, 4200);
    const before = await json(await fetch(cabinet(`/deals/${dealId}`), { headers: buyer }));
    expect(before).toMatchObject({ status: 'approved', allowed_actions: ['pay'] });

    const paid = await pay(dealId, buyer);
    expect(paid.status).toBe(200);
    const body = await json(paid);
    expect(body).toMatchObject({
      payment_url: null,
      test: true,
      deal: { id: dealId, role: 'buyer', status: 'escrow_hold' },
    });
    expect([...body.deal.allowed_actions].sort()).toEqual(['dispute', 'refund', 'release']);
    expect(body.deal.payments).toMatchObject([
      { amount: 4200, provider: 'sandbox', status: 'hold', payment_url: null },
    ]);
    expect(body.deal).toEqual(await json(await fetch(cabinet(`/deals/${dealId}`), { headers: buyer })));

    const again = await pay(dealId, buyer);
    expect(again.status).toBe(400);
    expect(await json(again)).toMatchObject({
      code: 'invalid_payment_state',
      detail: expect.stringContaining('already held'),
    });
    const deal = await marketplaceDeal(sandboxShop, dealId);
    expect(deal.status).toBe('escrow_hold');
    expect(deal.payments).toHaveLength(1);

    // The marketplace hears that the buyer paid.
    const events = await json(await fetch(api(`/events?deal_id=${dealId}&limit=100`), { headers: key(sandboxShop) }));
    expect(events.items.find((item: { type: string }) => item.type === 'deal.escrow_hold').body).toMatchObject({
      actor: 'buyer',
    });
  });

  it('is refused before approval (deal_not_approved), and is no one’s but the buyer’s (404)', async () => {
    const { dealId, approvalId, buyer, seller } = await dealInApproval(sandboxShop);
    expect((await json(await fetch(cabinet(`/deals/${dealId}`), { headers: buyer }))).allowed_actions).not.toContain(
      'pay',
    );
    const early = await pay(dealId, buyer);
    expect(early.status).toBe(400);
    expect((await json(early)).code).toBe('deal_not_approved');

    expect((await post(cabinet(`/approvals/${approvalId}/approve`), {}, buyer)).status).toBe(200);
    expect((await json(await fetch(cabinet(`/deals/${dealId}`), { headers: seller }))).allowed_actions).toEqual([]);
    const bySeller = await pay(dealId, seller);
    expect(bySeller.status).toBe(404);
    expect((await json(bySeller)).code).toBe('not_found');
    const stranger = (await approvedDeal(sandboxShop)).buyer;
    expect((await pay(dealId, stranger)).status).toBe(404);
    expect((await pay('not-a-deal', buyer)).status).toBe(404);
    expect((await post(cabinet(`/deals/${dealId}/pay`), {})).status).toBe(401);
    expect((await marketplaceDeal(sandboxShop, dealId)).payments).toEqual([]);
  });
});

describe('POST /cabinet/deals/{id}/pay in a live marketplace', () => {
  it('answers the acquirer’s page, the same one while it is pending, and the deal is held once the buyer paid', async () => {
    const { dealId, buyer } = await approvedDeal(liveShop, 3100);
    const first = await pay(dealId, buyer);
    expect(first.status).toBe(200);
    const body = await json(first);
    expect(body).toMatchObject({
      test: false,
      payment_url: expect.stringContaining(`${yookassa.url}/checkout/payments/`),
      deal: { status: 'approved', role: 'buyer' },
    });
    expect(body.deal.payments).toMatchObject([
      { amount: 3100, provider: 'yookassa', status: 'pending', payment_url: body.payment_url },
    ]);
    expect(body.deal.allowed_actions.sort()).toEqual(['pay', 'refund']);

    const second = await json(await pay(dealId, buyer));
    expect(second.payment_url).toBe(body.payment_url);
    expect(second.deal.payments).toHaveLength(1);
    const made = atAcquirer(dealId);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ status: 'pending', amount: { value: '3100.00', currency: 'RUB' } });
    const creation = yookassa
      .requestsTo('POST', '/v3/payments')
      .filter((request) => (request.body as { metadata?: { deal_id?: string } }).metadata?.deal_id === dealId);
    expect(creation).toHaveLength(1);
    expect(creation[0].body).toMatchObject({
      capture: false,
      confirmation: { type: 'redirect', return_url: `${server.url}/cabinet/view/deals/${dealId}` },
    });

    await yookassa.pay(made[0].id);
    await expect
      .poll(async () => (await marketplaceDeal(liveShop, dealId)).status, { timeout: 20_000 })
      .toBe('escrow_hold');
    const late = await pay(dealId, buyer);
    expect(late.status).toBe(400);
    expect((await json(late)).code).toBe('invalid_payment_state');
    expect(atAcquirer(dealId)).toHaveLength(1);
  });
});

describe('the OpenAPI document', () => {
  it('describes the Pay answer: where to pay, whether it is a test, and the deal', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    const operation = document.paths['/cabinet/deals/{id}/pay'].post;
    expect(operation.operationId).toBe('cabinetPay');
    expect(operation.security).toEqual([{ cabinetToken: [] }]);
    const schema = operation.responses['200'].content['application/json'].schema;
    expect(schema.required.sort()).toEqual(['deal', 'payment_url', 'test']);
    expect(schema.properties.deal.properties.allowed_actions.items.enum).toContain('pay');
  });
});

// The deal page, as a browser without JavaScript drives it.

const csrfOf = (page: Reply) => /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
const words = (page: Reply) => page.text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

/** The buyer's browser, signed in on the cabinet's sign-in page with the password their invitation set. */
async function buyerBrowser(email: string, lang: 'en' | 'ru' = 'en'): Promise<PageBrowser> {
  const browser = new PageBrowser(server, { 'Accept-Language': lang });
  const form = await browser.get('/cabinet/sign-in');
  const signedIn = await browser.post('/cabinet/sign-in', {
    _csrf: csrfOf(form),
    email,
    password: 'a strong password',
    next: '/cabinet',
  });
  expect(signedIn.status).toBe(303);
  return browser;
}

describe('the deal page’s Pay', () => {
  it('sandbox: says the payment is a test, holds at once and says so in words; in Russian too', async () => {
    for (const lang of ['en', 'ru'] as const) {
      const { dealId, buyerEmail } = await approvedDeal(sandboxShop, 1500.5);
      const browser = await buyerBrowser(buyerEmail, lang);
      const page = await browser.get(`/cabinet/view/deals/${dealId}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain(`<form method="post" action="/cabinet/view/deals/${dealId}/pay">`);
      const text = words(page);
      if (lang === 'en') {
        expect(text).toContain('Pay RUB 1,500.50');
        expect(text).toContain('The money is held safely until you release it to the seller');
        expect(text).toContain('test mode (sandbox)');
      } else {
        expect(text).toMatch(/Оплатить 1\s500,50\s₽/);
        expect(text).toContain('Деньги надёжно удерживаются');
        expect(text).toContain('тестовом режиме (песочница)');
      }
      // A form without the page's token moves nothing.
      expect((await browser.post(`/cabinet/view/deals/${dealId}/pay`, {})).status).toBe(403);
      expect((await marketplaceDeal(sandboxShop, dealId)).payments).toEqual([]);

      const paid = await browser.post(`/cabinet/view/deals/${dealId}/pay`, { _csrf: csrfOf(page) });
      expect(paid.status).toBe(303);
      expect(paid.location).toBe(`/cabinet/view/deals/${dealId}?done=test_payment_held`);
      const after = words(await browser.follow(paid));
      if (lang === 'en') {
        expect(after).toContain('Test payment: the money is held (sandbox)');
        expect(after).toContain('Paid: the money is held in escrow');
        expect(after).toContain('test payment (sandbox)');
      } else {
        expect(after).toContain('Тестовый платёж: деньги удерживаются (песочница)');
        expect(after).toContain('Оплачено: деньги удерживаются на безопасной сделке');
      }
      expect(after).not.toContain(lang === 'en' ? 'Pay RUB' : 'Оплатить 1');

      // A second Pay (an old tab) is refused in words, and nothing more is paid.
      const again = await browser.post(`/cabinet/view/deals/${dealId}/pay`, { _csrf: csrfOf(page) });
      expect(again.status).toBe(400);
      expect(words(again)).toContain(
        lang === 'en' ? 'The money is already held: there is nothing more to pay.' : 'Деньги уже удерживаются',
      );
      expect((await marketplaceDeal(sandboxShop, dealId)).payments).toHaveLength(1);
    }
  });

  it('live: 303 to the acquirer’s page, which the page’s form-action lets through', async () => {
    const { dealId, buyerEmail } = await approvedDeal(liveShop, 990);
    const browser = await buyerBrowser(buyerEmail);
    const page = await browser.get(`/cabinet/view/deals/${dealId}`);
    expect(words(page)).not.toContain('sandbox');
    expect(page.headers.get('content-security-policy')).toMatch(
      new RegExp(`form-action 'self' [^;]*${yookassa.url.replace(/[.:/]/g, '\\$&')}`),
    );
    const paid = await browser.post(`/cabinet/view/deals/${dealId}/pay`, { _csrf: csrfOf(page) });
    expect(paid.status).toBe(303);
    expect(paid.location).toMatch(new RegExp(`^${yookassa.url}/checkout/payments/`));
    // Back on the page before paying: Pay leads to the same payment page.
    const back = await browser.get(`/cabinet/view/deals/${dealId}`);
    expect(words(back)).toContain('If you have just paid');
    const again = await browser.post(`/cabinet/view/deals/${dealId}/pay`, { _csrf: csrfOf(back) });
    expect(again.location).toBe(paid.location);
    expect(atAcquirer(dealId)).toHaveLength(1);
  });

  it('before approval: the page offers no Pay, and a forged one is refused in words; a seller’s is a 404', async () => {
    const { dealId, buyerEmail } = await dealInApproval(sandboxShop);
    const browser = await buyerBrowser(buyerEmail);
    const page = await browser.get(`/cabinet/view/deals/${dealId}`);
    expect(page.text).not.toContain(`/cabinet/view/deals/${dealId}/pay`);
    const early = await browser.post(`/cabinet/view/deals/${dealId}/pay`, { _csrf: csrfOf(page) });
    expect(early.status).toBe(400);
    expect(words(early)).toContain('The terms are not approved yet.');

    const held = await approvedDeal(sandboxShop);
    const sellerEmail = (await marketplaceDeal(sandboxShop, held.dealId)).seller_email;
    const seller = await buyerBrowser(sellerEmail);
    const sellerPage = await seller.get(`/cabinet/view/deals/${held.dealId}`);
    expect(sellerPage.text).not.toContain('/pay"');
    expect((await seller.post(`/cabinet/view/deals/${held.dealId}/pay`, { _csrf: csrfOf(sellerPage) })).status).toBe(
      404,
    );
  });
});
