// Money reaching the seller, played as people do it in Debian's Chromium: a marketplace makes a deal with a seller
// (API), the buyer approves and pays from the cabinet (sandbox), the seller gives a test card on the Payouts page and
// marks the order shipped on the deal page (confirming), the marketplace marks it delivered with no inspection window
// (API), so the money is released at once and paid out; the seller's deal page says where it went, the marketplace's
// ledger has the payout, and the console's deal page shows the deal's postings. In English at a desktop and in Russian
// on a phone (screenshots under test-output/money/). Then the Payouts form and the console's split decision over plain
// HTTP (test/page-browser.ts).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { ensureUser, setPassword } from '../../src/accounts/users.ts';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { moneyClient } from '../money-helpers.ts';
import { PageBrowser, type Reply } from '../page-browser.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 800 };
const PASSWORD = 'correct horse battery staple';
const SCREENSHOTS = path.resolve('test-output/money');

let server: TestServer;
let browser: Browser;
let admin: TestAdministrator;
let money: ReturnType<typeof moneyClient>;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  browser = await launchChromium();
  admin = await administrator(server, 'admin');
  money = moneyClient(server);
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

type Shop = { id: string; secret_key: string };
const api = (path: string) => `${server.url}/api/mkt${path}`;
const key = (shop: Shop) => ({ 'X-Svc-Key': shop.secret_key });
const adminApi = () => ({ Authorization: `Bearer ${server.adminToken}` });
const dealOf = async (shop: Shop, id: string) => json(await fetch(api(`/deals/${id}`), { headers: key(shop) }));

/** A sandbox marketplace with a fixed fee of 150 and no inspection window: delivery releases the money at once. */
async function shopWithoutInspection(): Promise<Shop> {
  const shop = await json(
    await post(`${server.url}/admin/marketplaces`, { name: uniqueId('Payout shop'), mode: 'sandbox' }, adminApi()),
  );
  const changed = await fetch(`${server.url}/admin/marketplaces/${shop.id}`, {
    method: 'PATCH',
    headers: { ...adminApi(), 'Content-Type': 'application/json' },
    body: JSON.stringify({ inspection_days: 0, fee_schedule: { fixed: 150 } }),
  });
  expect(changed.status).toBe(200);
  expect(await json(changed)).toMatchObject({ inspection_days: 0 });
  return shop;
}

/** The marketplace's deal with a buyer and a seller, a contract, and the approval waiting for the buyer. */
async function dealInApproval(shop: Shop, buyerEmail: string, sellerEmail: string, amount: number): Promise<string> {
  const body = {
    external_id: uniqueId('order'),
    buyer_email: buyerEmail,
    seller_email: sellerEmail,
    title: 'Oak wardrobe',
    amount,
  };
  const deal = await json(await post(api('/deals'), body, key(shop)));
  const upload = await fetch(api(`/deals/${deal.id}/documents?kind=contract&name=Contract.pdf`), {
    method: 'POST',
    headers: { ...key(shop), 'Content-Type': 'application/pdf' },
    body: Buffer.from('%PDF-1.4 wardrobe'),
  });
  expect(upload.status).toBe(201);
  expect((await post(api(`/deals/${deal.id}/approval`), {}, key(shop))).status).toBe(201);
  return deal.id;
}

/**
 * A person's own browser, in their language and screen, from the invitation link in their mail to a set password.
 * `expect` is the running test's: the journeys run at once, and expect.poll needs to know whose it is.
 */
async function fromInvitation(
  expect: ExpectStatic,
  email: string,
  locale: 'en' | 'ru',
  viewport: typeof DESKTOP,
): Promise<Page> {
  let link: string | undefined;
  await expect
    .poll(
      async () => {
        const { items } = await json(
          await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers: adminApi() }),
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
  await page.goto(`${link}&lang=${locale}`);
  await page.fill('#password', PASSWORD);
  await page.fill('#password_confirm', PASSWORD);
  await page.click('form[action="/cabinet/invite"] button[type=submit]');
  // Back to the deal the invitation was about.
  await page.waitForURL(/\/cabinet\/view\/deals\/[0-9a-f-]{36}$/);
  return page;
}

/** Nothing wider than the screen: no sideways scrolling. */
const fitsTheScreen = async (page: Page, width: number) =>
  Number(await page.evaluate('document.documentElement.scrollWidth')) <= width;
/** A full-page screenshot, to look at each step as the person saw it. */
const shot = (page: Page, locale: string, name: string) =>
  page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${locale}.png`), fullPage: true });
const text = async (page: Page, selector: string) =>
  ((await page.textContent(selector)) ?? '').replace(/\s+/g, ' ').trim();

/** What each language says at each step (the pages' own words, so a missing translation shows up here). */
const WORDS = {
  en: {
    held: 'Paid: the money is held in escrow',
    payoutsTitle: 'Payouts',
    noDestination: 'You have not given a payout destination yet.',
    saved: 'Saved: your payouts go to Test card •••• 1111.',
    current: 'Your payouts go to: Test card •••• 1111',
    confirmShip: 'Mark the order shipped?',
    cannotUndo: 'This cannot be undone',
    shipped: 'Marked shipped: the buyer and the shop have been told.',
    shippedOn: 'Shipped on',
    buyerNote: 'The order is on its way: the money can no longer be refunded without the arbiter.',
    refusal:
      'The order is already shipped: you can no longer cancel and refund alone. Open a dispute instead, and the arbiter decides.',
    paidOut: /^Paid out to Test card •••• 1111: RUB\s4,050\.00\.$/,
    paid: 'Completed: the money was sent to the seller',
    released: /^RUB\s4,050\.00$/,
    delivered: 'Delivered',
    consoleTitle: 'Ledger',
    consolePaidOut: 'paid out to the seller',
    consolePayout: 'paid out',
  },
  ru: {
    held: 'Оплачено: деньги удерживаются на безопасной сделке',
    payoutsTitle: 'Выплаты',
    noDestination: 'Вы ещё не указали, куда переводить выплаты.',
    saved: 'Сохранено: выплаты приходят на Тестовая карта •••• 1111.',
    current: 'Выплаты приходят на: Тестовая карта •••• 1111',
    confirmShip: 'Отметить, что заказ отправлен?',
    cannotUndo: 'Отменить это нельзя',
    shipped: 'Отправка отмечена: покупатель и магазин уведомлены.',
    shippedOn: 'Отправлено',
    buyerNote: 'Заказ в пути: вернуть деньги без арбитра уже нельзя.',
    refusal:
      'Заказ уже отправлен: сами отменить сделку и вернуть деньги вы больше не можете. Откройте спор — решит арбитр.',
    paidOut: /^Выплачено на Тестовая карта •••• 1111: 4\s050,00\s₽\.$/,
    paid: 'Завершена: деньги переведены продавцу',
    released: /^4\s050,00\s₽$/,
    delivered: 'Доставлено',
    consoleTitle: 'Проводки',
    consolePaidOut: 'выплачено продавцу',
    consolePayout: 'выплачено',
  },
} as const;

/** `expect` is the running test's (see fromInvitation). */
async function journey(expect: ExpectStatic, locale: 'en' | 'ru', viewport: typeof DESKTOP) {
  const words = WORDS[locale];
  const shop = await shopWithoutInspection();
  const buyerEmail = uniqueEmail('buyer');
  const sellerEmail = uniqueEmail('seller');
  const dealId = await dealInApproval(shop, buyerEmail, sellerEmail, 4200);
  const dealPage = `${server.url}/cabinet/view/deals/${dealId}`;

  // The buyer approves the terms and pays (sandbox: held at once).
  const buyer = await fromInvitation(expect, buyerEmail, locale, viewport);
  await buyer.check('form[action$="/approve"] input[name=read_contract]');
  await buyer.click('form[action$="/approve"] button[type=submit]');
  await buyer.waitForURL(`${dealPage}?done=approved`);
  await buyer.click(`form[action="/cabinet/view/deals/${dealId}/pay"] button[type=submit]`);
  await buyer.waitForURL(`${dealPage}?done=test_payment_held`);
  expect(await text(buyer, 'dd.status')).toBe(words.held);

  // The seller gives a test card on the Payouts page, found in the cabinet's navigation.
  const seller = await fromInvitation(expect, sellerEmail, locale, viewport);
  await seller.click('header nav.sections a[href="/cabinet/view/payouts"]');
  expect(await text(seller, 'h1')).toBe(words.payoutsTitle);
  expect(await text(seller, '#payout-current')).toContain(words.noDestination);
  expect(await text(seller, 'section[aria-labelledby="payout-test"]')).toContain('4000 0000 0000 0002');
  expect(await fitsTheScreen(seller, viewport.width)).toBe(true);
  await seller.fill('#test-card', '4111 1111 1111 1111');
  await seller.click('#payout-test-form button[type=submit]');
  await seller.waitForURL('**/cabinet/view/payouts?done=payout_saved');
  expect(await text(seller, '.notice')).toContain(words.saved);
  expect(await text(seller, '#payout-current')).toBe(words.current);
  await shot(seller, locale, 'payouts');

  // The seller marks the order shipped from the deal page; nothing changes until they confirm.
  await seller.click('header nav.sections a[href="/cabinet"]');
  await seller.click(`main a[href="/cabinet/view/deals/${dealId}"]`);
  await seller.waitForURL(dealPage);
  await seller.fill('#carrier', 'CDEK');
  await seller.fill('#tracking', 'RU123456789');
  await seller.click('#ship-form button[type=submit]');
  await seller.waitForURL(`${dealPage}/shipment?carrier=CDEK&tracking=RU123456789`);
  expect(await text(seller, 'h1')).toBe(words.confirmShip);
  expect(await text(seller, '.consequence')).toContain(words.cannotUndo);
  expect((await dealOf(shop, dealId)).delivery.status).toBe('none');
  expect(await fitsTheScreen(seller, viewport.width)).toBe(true);
  await shot(seller, locale, 'ship-confirmation');
  await seller.click('main form button[type=submit]');
  await seller.waitForURL(`${dealPage}?done=shipped`);
  expect(await text(seller, '.notice')).toBe(words.shipped);
  expect(await text(seller, '#delivery-status')).toContain(words.shippedOn);
  const delivery = await text(seller, 'section[aria-labelledby="delivery"]');
  expect(delivery).toContain('CDEK');
  expect(delivery).toContain('RU123456789');
  expect(await seller.locator('#ship-form').count()).toBe(0);
  expect((await dealOf(shop, dealId)).delivery).toMatchObject({
    status: 'shipped',
    carrier: 'CDEK',
    tracking: 'RU123456789',
  });

  // The buyer is offered no refund now (the rules), and a refund asked for anyway is refused in words.
  await buyer.goto(dealPage);
  expect(await buyer.locator('a[href$="/escrow/refund"]').count()).toBe(0);
  expect(await buyer.locator('a[href$="/escrow/dispute"]').count()).toBe(1);
  expect(await text(buyer, 'section[aria-labelledby="delivery"]')).toContain(words.buyerNote);
  const refused = await buyer.goto(`${dealPage}/escrow/refund`);
  expect(refused?.status()).toBe(400);
  expect(await text(buyer, '.error')).toBe(words.refusal);
  await shot(buyer, locale, 'buyer-refund-refused');

  // The marketplace marks it delivered; with no inspection window the money is released and paid out at once.
  expect((await post(api(`/deals/${dealId}/delivery`), undefined, key(shop))).status).toBe(200);
  await expect
    .poll(async () => (await seller.reload(), await text(seller, '#payout-state')), { timeout: 30_000 })
    .toMatch(words.paidOut);
  expect(await text(seller, 'dd.status')).toBe(words.paid);
  expect(await text(seller, '#released-amount')).toMatch(words.released);
  await shot(seller, locale, 'seller-paid-out');
  expect(await fitsTheScreen(seller, viewport.width)).toBe(true);
  const state = await dealOf(shop, dealId);
  expect(state).toMatchObject({
    status: 'paid',
    released_amount: 4050,
    refunded_amount: 0,
    delivery: { status: 'delivered', inspection_ends_at: null },
  });

  // The marketplace reads its ledger: the money reached the seller.
  expect(await money.postingsOf({ id: shop.id, key: key(shop), public_key: '' }, dealId)).toEqual([
    `payment: buyer -4200.00, deal_held:${dealId} 4200.00`,
    `fee: deal_held:${dealId} -150.00, marketplace_fee 150.00`,
    `payout: deal_held:${dealId} -4050.00, seller_payable 4050.00`,
    'payout: seller_payable -4050.00, seller_paid_out 4050.00',
  ]);

  // An administrator opens the deal in the console: its delivery, its payout and its postings.
  const console = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
  await console.addCookies([{ name: 'svc_admin', value: admin.token, url: `${server.url}/admin` }]);
  const adminPage = await console.newPage();
  await adminPage.goto(`${server.url}/admin/view/deals/${dealId}`);
  expect(await adminPage.getAttribute('html', 'lang')).toBe(locale);
  expect(await text(adminPage, '#delivery-status')).toContain(words.delivered);
  expect(await text(adminPage, '#payout-status')).toContain(words.consolePayout);
  const postings = adminPage.locator('section[aria-labelledby="ledger-postings"]');
  expect(await text(adminPage, '#ledger-postings')).toBe(words.consoleTitle);
  expect(await postings.locator('tbody tr').count()).toBe(4);
  expect(await postings.locator('span[title="seller_paid_out"]').textContent()).toBe(words.consolePaidOut);
  const paidOut = postings.locator('li', { has: adminPage.locator('span[title="seller_paid_out"]') });
  expect(await paidOut.locator('.amount').getAttribute('data-amount')).toBe('4050.00');
  expect(await fitsTheScreen(adminPage, viewport.width)).toBe(true);
  await shot(adminPage, locale, 'console-deal');
  await console.close();
  await buyer.context().close();
  await seller.context().close();
}

// The two journeys are independent (a marketplace, a deal and people of their own each): they run at once.
describe.concurrent('a seller paid out, in a browser', () => {
  it('in English on a desktop', { timeout: 180_000 }, async ({ expect }) => {
    await journey(expect, 'en', DESKTOP);
  });

  it('in Russian on a phone', { timeout: 180_000 }, async ({ expect }) => {
    await journey(expect, 'ru', PHONE);
  });
});

// Over plain HTTP: the Payouts form's answers, and the arbiter's split in the console.

const csrfOf = (reply: Reply) => /name="_csrf" value="([^"]+)"/.exec(reply.text)?.[1] ?? '';
const words = (reply: Reply) => reply.text.replace(/\s+/g, ' ');

/** The seller signed in on the sign-in page with a password of their account. */
async function sellerPages(email: string, headers: Record<string, string> = {}): Promise<PageBrowser> {
  const { user } = await ensureUser(server.services.db, { email });
  await setPassword(server.services.db, user.id, PASSWORD);
  const pages = new PageBrowser(server, headers);
  const form = await pages.get('/cabinet/sign-in');
  expect((await pages.post('/cabinet/sign-in', { _csrf: csrfOf(form), email, password: PASSWORD })).status).toBe(303);
  return pages;
}

describe('the Payouts page', () => {
  it('refuses a wrong card in words, keeps a declined one, and the deal page says the payout failed until another card is given', async () => {
    const shop = await money.marketplace();
    const sellerEmail = uniqueEmail('seller');
    const deal = await money.heldDeal(shop, { seller_email: sellerEmail, amount: 1000 });
    const seller = await sellerPages(sellerEmail, { 'Accept-Language': 'en' });

    const page = await seller.get('/cabinet/view/payouts');
    expect(page.status).toBe(200);
    expect(page.text).toContain('href="/cabinet/view/payouts"');
    expect(words(page)).toContain('You have not given a payout destination yet.');
    expect(words(page)).toContain('4111 1111 1111 1111: the payout succeeds.');
    expect(words(page)).toContain('4000 0000 0000 0002: the bank declines the payout');
    expect(words(page)).toContain('YooKassa’s payout widget');
    const csrf = csrfOf(page);

    expect((await seller.post('/cabinet/view/payouts', { type: 'test_card', token: '4111111111111111' })).status).toBe(
      403,
    );
    const wrong = await seller.post('/cabinet/view/payouts', {
      _csrf: csrf,
      type: 'test_card',
      token: '5555 5555 5555 4444',
    });
    expect(wrong.status).toBe(400);
    expect(words(wrong)).toContain(
      'That is not one of the test cards. Use 4111 1111 1111 1111 (the payout succeeds) or 4000 0000 0000 0002 (it is declined).',
    );
    expect(wrong.text).toContain('value="5555 5555 5555 4444"');
    // A card number is never taken as the payout widget's token, nor written back into the page.
    const number = await seller.post('/cabinet/view/payouts', {
      _csrf: csrf,
      type: 'bank_card',
      token: '4276 3800 1234 5678',
    });
    expect(number.status).toBe(400);
    expect(words(number)).toContain('That looks like a card number. Never type your card number here');
    expect(number.text).not.toContain('4276');
    const wallet = await seller.post('/cabinet/view/payouts', { _csrf: csrf, type: 'yoo_money', token: '123' });
    expect(wallet.status).toBe(400);
    expect(words(wallet)).toContain('A YooMoney wallet number has 11 to 20 digits.');
    const russian = await seller.request('POST', '/cabinet/view/payouts?lang=ru', {
      _csrf: csrf,
      type: 'test_card',
      token: '1234',
    });
    expect(russian.status).toBe(400);
    expect(words(russian)).toContain('Это не тестовая карта.');
    expect(words(await seller.get('/cabinet/view/payouts?lang=en'))).toContain(
      'You have not given a payout destination yet.',
    );

    const declined = await seller.post('/cabinet/view/payouts', {
      _csrf: csrf,
      type: 'test_card',
      token: '4000 0000 0000 0002',
    });
    expect(declined.location).toBe('/cabinet/view/payouts?done=payout_saved');
    const saved = await seller.follow(declined);
    expect(words(saved)).toContain('Saved: your payouts go to Test card •••• 0002.');
    expect(words(saved)).toContain('Your payouts go to: Test card •••• 0002');

    // Released to a declined card: the deal page says so, and where to give another one.
    await deal.move('release');
    const dealPath = `/cabinet/view/deals/${deal.id}`;
    await expect
      .poll(async () => words(await seller.get(dealPath)))
      .toContain('The payout failed: the bank declined the card (card_declined).');
    const failed = await seller.get(dealPath);
    expect(failed.text).toContain(
      '<a class="button" href="/cabinet/view/payouts">Give another card on the Payouts page</a>',
    );
    expect(words(failed)).toContain('Paid: the money is held in escrow');
    expect(words(await seller.get('/cabinet/view/payouts'))).toContain(`href="${dealPath}"`);

    const good = await seller.post('/cabinet/view/payouts', {
      _csrf: csrf,
      type: 'test_card',
      token: '4111111111111111',
    });
    expect(good.status).toBe(303);
    await expect
      .poll(async () => words(await seller.get(dealPath)), { timeout: 20_000 })
      .toMatch(/Paid out to Test card •••• 1111: RUB\s1,000\.00\./);
    expect(words(await seller.get('/cabinet/view/payouts'))).toContain('No deal is waiting for a payout.');
  });
});

describe('shipment and the inspection window on the deal page', () => {
  it('marks shipped only after the confirmation, refuses it twice in words, and tells both sides until when a dispute is open', async () => {
    const shop = await money.marketplace({ inspection_days: 3 });
    const sellerEmail = uniqueEmail('seller');
    const deal = await money.heldDeal(shop, { seller_email: sellerEmail, amount: 700 });
    const buyerEmail: string = (await money.getDeal(shop, deal.id)).buyer_email;
    const seller = await sellerPages(sellerEmail, { 'Accept-Language': 'en' });
    const buyer = await sellerPages(buyerEmail, { 'Accept-Language': 'ru' });
    const dealPath = `/cabinet/view/deals/${deal.id}`;

    const page = await seller.get(dealPath);
    expect(page.text).toContain(`<form method="get" action="${dealPath}/shipment" id="ship-form">`);
    expect(words(page)).toContain('Not shipped yet.');
    expect((await buyer.get(dealPath)).text).not.toContain('id="ship-form"');
    expect((await buyer.get(`${dealPath}/shipment`)).status).toBe(404);

    // A form sent without the confirmation gets the confirmation first, with what it said.
    const unconfirmed = await seller.post(`${dealPath}/shipment`, {
      _csrf: csrfOf(page),
      carrier: 'Boxberry',
      tracking: 'BB-42',
    });
    expect(unconfirmed.status).toBe(200);
    expect(words(unconfirmed)).toContain('Mark the order shipped?');
    expect(unconfirmed.text).toContain('value="BB-42"');
    expect((await money.getDeal(shop, deal.id)).delivery.status).toBe('none');
    const tooLong = await seller.post(`${dealPath}/shipment`, {
      _csrf: csrfOf(page),
      carrier: 'x'.repeat(101),
      tracking: '',
      confirmed: 'yes',
    });
    expect(tooLong.status).toBe(400);
    expect(words(tooLong)).toContain('The carrier and the tracking number are at most 100 characters each.');
    const shipped = await seller.post(`${dealPath}/shipment`, {
      _csrf: csrfOf(page),
      carrier: 'Boxberry',
      tracking: 'BB-42',
      confirmed: 'yes',
    });
    expect(shipped.location).toBe(`${dealPath}?done=shipped`);
    const again = await seller.get(`${dealPath}/shipment`);
    expect(again.status).toBe(400);
    expect(words(again)).toContain(
      'The order cannot be marked shipped now: it is already marked, or the money is not held.',
    );

    expect(
      (await post(money.api(`/deals/${deal.id}/delivery`), undefined, { 'X-Svc-Key': shop.key['X-Svc-Key'] })).status,
    ).toBe(200);
    const ends: string = (await money.getDeal(shop, deal.id)).delivery.inspection_ends_at;
    expect(new Date(ends).getTime()).toBeGreaterThan(Date.now() + 2 * 86_400_000);
    // Shown in Moscow time, the zone named.
    const zone = { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Europe/Moscow' } as const;
    const date = new Intl.DateTimeFormat('en-GB', zone).format(new Date(ends));
    const datum = new Intl.DateTimeFormat('ru-RU', zone).format(new Date(ends));
    expect(words(await seller.get(dealPath))).toContain(
      `The buyer can open a dispute until ${date} Moscow time; after that the money is released to you automatically.`,
    );
    const buyerPage = words(await buyer.get(dealPath));
    expect(buyerPage).toContain(
      `Проверьте полученное. Открыть спор можно до ${datum} мск; после этого деньги автоматически уйдут продавцу.`,
    );
    expect(buyerPage).toContain('Boxberry');
    expect(buyerPage).not.toContain('/escrow/refund');
  });
});

describe("the console's split decision", () => {
  const form = (path: string, fields: Record<string, string>) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { Cookie: admin.cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'en' },
      body: new URLSearchParams({ _csrf: admin.csrf, ...fields }),
      redirect: 'manual',
    });
  const read = async (path: string) =>
    (
      await (await fetch(`${server.url}${path}`, { headers: { Cookie: admin.cookie, 'Accept-Language': 'en' } })).text()
    ).replace(/\s+/g, ' ');

  it('asks for both parts, confirms them, refuses parts that do not add up, and splits', async () => {
    const shop = await money.marketplace({ fee_schedule: { fixed: 50 } });
    const sellerEmail = uniqueEmail('seller');
    const deal = await money.heldDeal(shop, { seller_email: sellerEmail, amount: 1000 });
    const seller = await sellerPages(sellerEmail);
    expect(
      (
        await seller.post('/cabinet/view/payouts', {
          _csrf: csrfOf(await seller.get('/cabinet/view/payouts')),
          type: 'test_card',
          token: '4111111111111111',
        })
      ).status,
    ).toBe(303);
    await money.disputeAsBuyer(deal.id, 'Half of it is scratched');

    const queue = await read(`/admin/view/disputes/${deal.id}`);
    expect(queue).toContain('Split: part to the seller, part back to the buyer');
    expect(queue).toContain(`name="release_amount"`);
    const decide = `/admin/view/disputes/${deal.id}/decide`;
    const missing = await form(decide, { outcome: 'split', reason: 'Scratched' });
    expect(missing.status).toBe(400);
    expect((await missing.text()).replace(/\s+/g, ' ')).toContain('write both parts of the split as amounts');

    const asked = await form(decide, {
      outcome: 'split',
      release_amount: '600',
      refund_amount: '400,00',
      reason: 'Scratched',
    });
    expect(asked.status).toBe(200);
    const confirmation = (await asked.text()).replace(/\s+/g, ' ');
    expect(confirmation).toMatch(/Split: RUB\s600\.00 to the seller and RUB\s400\.00 back to the buyer\?/);
    expect(confirmation).toContain('This cannot be undone.');
    expect((await money.getDeal(shop, deal.id)).status).toBe('disputed');

    const wrong = await form(decide, {
      outcome: 'split',
      release_amount: '600',
      refund_amount: '300',
      reason: 'Scratched',
      confirmed: 'yes',
    });
    expect(wrong.status).toBe(400);
    expect((await wrong.text()).replace(/\s+/g, ' ')).toContain(
      'Not done: the two parts must add up to the money held',
    );

    const done = await form(decide, {
      outcome: 'split',
      release_amount: '600',
      refund_amount: '400',
      reason: 'Scratched',
      confirmed: 'yes',
    });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/admin/view/deals/${deal.id}?done=decided_split`);
    await expect.poll(async () => (await money.getDeal(shop, deal.id)).status, { timeout: 20_000 }).toBe('paid');
    const page = await read(`/admin/view/deals/${deal.id}?done=decided_split`);
    expect(page).toContain('Decided: the money is split between the seller and the buyer.');
    expect(page).toMatch(/Released to the seller<\/dt><dd id="released-amount">RUB\s550\.00/);
    expect(page).toMatch(/Refunded to the buyer<\/dt><dd id="refunded-amount">RUB\s400\.00/);
    expect(page).toContain('title="seller_paid_out"');
    expect(page).toContain('title="refunded"');
  });
});
