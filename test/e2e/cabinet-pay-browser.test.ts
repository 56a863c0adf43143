// The buyer pays from the cabinet in a real browser (Debian's Chromium through playwright-core): in English on a desktop
// with a live marketplace (Pay → the acquirer's page, here the YooKassa double's → back to the deal, held), and in
// Russian on a phone with a sandbox one (Pay → held at once, said to be a test). Each comes from their invitation mail
// and approves first. The page's CSP must let the Pay form's 303 reach the acquirer: Chromium holds a form's redirects
// to form-action.
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 800 };
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let yookassa: YooKassaDouble;
let browser: Browser;
let sandboxShop: { secret_key: string };
let liveShop: { secret_key: string };

beforeAll(async () => {
  yookassa = await startYooKassaDouble({ shopId: '777002', secretKey: 'test_pay_browser' });
  server = await startTestServer({
    worker: true,
    env: { YOOKASSA_API_URL: yookassa.apiUrl, YOOKASSA_SHOP_ID: '777002', YOOKASSA_SECRET_KEY: 'test_pay_browser' },
  });
  yookassa.notificationUrl = `${server.url}/api/escrow/yookassa/notifications`;
  const admin = { Authorization: `Bearer ${server.adminToken}` };
  sandboxShop = await json(
    await post(`${server.url}/admin/marketplaces`, { name: 'Pay sandbox', mode: 'sandbox' }, admin),
  );
  liveShop = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Pay live', mode: 'live' }, admin));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await yookassa?.close();
});

const key = (shop: { secret_key: string }) => ({ 'X-Svc-Key': shop.secret_key });
const api = (p: string) => `${server.url}/api/mkt${p}`;

/** A deal waiting for the buyer's approval, with a contract. */
async function dealInApproval(shop: { secret_key: string }, buyerEmail: string, amount: number): Promise<string> {
  const deal = await json(
    await post(
      api('/deals'),
      { external_id: uniqueId('order'), buyer_email: buyerEmail, title: 'Bookcase', amount },
      key(shop),
    ),
  );
  const upload = await fetch(api(`/deals/${deal.id}/documents?kind=contract&name=Contract.pdf`), {
    method: 'POST',
    headers: { ...key(shop), 'Content-Type': 'application/pdf' },
    body: Buffer.from('%PDF-1.4 bookcase'),
  });
  expect(upload.status).toBe(201);
  expect((await post(api(`/deals/${deal.id}/approval`), {}, key(shop))).status).toBe(201);
  return deal.id;
}

/** The buyer's own browser, in their language and screen, from the invitation link in their mail to a set password. */
async function buyerFromInvitation(
  email: string,
  locale: 'en' | 'ru',
  viewport: typeof DESKTOP,
): Promise<{ page: Page; problems: string[] }> {
  let link: string | undefined;
  await expect
    .poll(
      async () => {
        const { items } = await json(
          await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, {
            headers: { Authorization: `Bearer ${server.adminToken}` },
          }),
        );
        return (link = items
          .map((mail: { text: string }) => /https?:\/\/\S+\/cabinet\/invite\?token=\S+/.exec(mail.text)?.[0])
          .find(Boolean));
      },
      { timeout: 20_000 },
    )
    .toBeDefined();
  const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
  const page = await context.newPage();
  // A CSP violation is said on the console (the double's page has no favicon: those misses are not ours).
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) problems.push(message.text());
  });
  await page.goto(`${link}&lang=${locale}`);
  await page.fill('#password', PASSWORD);
  await page.fill('#password_confirm', PASSWORD);
  await page.click('form[action="/cabinet/invite"] button[type=submit]');
  // Back to the deal the invitation was about.
  await page.waitForURL(/\/cabinet\/view\/deals\/[0-9a-f-]{36}$/);
  return { page, problems };
}

/** The buyer approves the terms from the cabinet's home page and lands on nothing else. */
async function approve(page: Page): Promise<void> {
  await page.check('form[action$="/approve"] input[name=read_contract]');
  await page.click('form[action$="/approve"] button[type=submit]');
  await page.waitForSelector('.notice');
}

/** Nothing wider than the phone: no sideways scrolling. */
const fitsTheScreen = async (page: Page) =>
  Number(await page.evaluate('document.documentElement.scrollWidth')) <= PHONE.width;

describe('the buyer pays from the cabinet', () => {
  it(
    'in English on a desktop, through the acquirer’s page and back to the deal, held',
    { timeout: 120_000 },
    async () => {
      const email = uniqueEmail('buyer');
      const dealId = await dealInApproval(liveShop, email, 2750);
      const { page, problems } = await buyerFromInvitation(email, 'en', DESKTOP);
      await approve(page);
      expect(page.url()).toBe(`${server.url}/cabinet/view/deals/${dealId}?done=approved`);
      expect(await page.textContent('dd.status')).toBe('Terms approved, waiting for payment');

      const pay = page.locator(`form[action="/cabinet/view/deals/${dealId}/pay"] button[type=submit]`);
      expect(await pay.textContent()).toMatch(/^Pay RUB\s2,750\.00$/);
      expect(await page.textContent('section[aria-labelledby="escrow"]')).toContain(
        'The money is held safely until you release it to the seller',
      );
      await pay.click();
      await page.waitForURL(new RegExp(`^${yookassa.url}/checkout/payments/`));
      expect(await page.textContent('button')).toBe('Pay 2750.00 RUB');

      // Paying at the acquirer brings the buyer back to the deal, held once the acquirer's news is in.
      await page.click('button');
      await page.waitForURL(`${server.url}/cabinet/view/deals/${dealId}`);
      await expect
        .poll(async () => (await page.reload(), await page.textContent('dd.status')), { timeout: 20_000 })
        .toBe('Paid: the money is held in escrow');
      expect(await page.locator(`form[action$="/pay"]`).count()).toBe(0);
      expect(await page.locator('a[href$="/escrow/release"]').count()).toBe(1);
      expect(await page.textContent('section[aria-labelledby="payments"]')).not.toContain('sandbox');
      expect(problems).toEqual([]);
      expect((await json(await fetch(api(`/deals/${dealId}`), { headers: key(liveShop) }))).status).toBe('escrow_hold');
    },
  );

  it('in Russian on a phone, held at once and said to be a test', { timeout: 120_000 }, async () => {
    const email = uniqueEmail('buyer');
    const dealId = await dealInApproval(sandboxShop, email, 1500.5);
    const { page, problems } = await buyerFromInvitation(email, 'ru', PHONE);
    await approve(page);
    expect(await page.getAttribute('html', 'lang')).toBe('ru');
    expect(await page.textContent('dd.status')).toBe('Условия согласованы, ожидается оплата');
    const escrow = await page.textContent('section[aria-labelledby="escrow"]');
    expect(escrow).toContain('Деньги надёжно удерживаются, пока вы не переведёте их продавцу');
    expect(escrow).toContain('тестовом режиме (песочница)');
    expect(await fitsTheScreen(page)).toBe(true);

    const pay = page.locator(`form[action="/cabinet/view/deals/${dealId}/pay"] button[type=submit]`);
    expect(await pay.textContent()).toMatch(/^Оплатить 1\s500,50\s₽$/);
    await pay.click();
    await page.waitForURL(`${server.url}/cabinet/view/deals/${dealId}?done=test_payment_held`);
    expect(await page.textContent('.notice')).toBe(
      'Тестовый платёж: деньги удерживаются (песочница). Настоящие деньги не списывались.',
    );
    expect(await page.textContent('dd.status')).toBe('Оплачено: деньги удерживаются на безопасной сделке');
    expect(await page.textContent('section[aria-labelledby="payments"]')).toContain('тестовый платёж (песочница)');
    expect(await page.locator(`form[action$="/pay"]`).count()).toBe(0);
    expect(await fitsTheScreen(page)).toBe(true);
    expect(problems).toEqual([]);
    expect((await json(await fetch(api(`/deals/${dealId}`), { headers: key(sandboxShop) }))).status).toBe(
      'escrow_hold',
    );
  });
});
