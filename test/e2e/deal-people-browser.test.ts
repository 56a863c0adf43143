// A whole deal with two people in two browsers (Debian's Chromium through playwright-core): the buyer in English at a
// desktop width, the seller in Russian at a phone width. Each comes from their invitation mail, the buyer approves,
// the money is held, the buyer opens a dispute through its confirmation page, both sides write with files, the arbiter
// decides with a reason, and the marketplace reconciles every webhook it got with the events list.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 800 };
/** Each person's key pages as they saw them, for a reviewer to look at. */
const SCREENSHOTS = path.resolve('test-output/deal-people');
const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
const PASSWORD = 'correct horse battery staple';

let server: TestServer;
let receiver: Receiver;
let browser: Browser;
let marketplace: { id: string; name: string; secret_key: string };
let workDir: string;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  receiver = await startReceiver();
  marketplace = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Two people shop' }, admin()));
  await post(`${server.url}/api/mkt/webhook`, { url: receiver.url }, mkt());
  browser = await launchChromium();
  workDir = mkdtempSync(path.join(tmpdir(), 'svc-deal-people-'));
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await server?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const mkt = () => ({ 'X-Svc-Key': marketplace.secret_key });
const api = (p: string) => `${server.url}/api/mkt${p}`;

async function mailsTo(email: string): Promise<{ subject: string; text: string }[]> {
  return (await json(await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers: admin() })))
    .items;
}

/** A person's own browser: their language and screen, from the invitation link in their mail to a set password. */
async function personFromInvitation(email: string, locale: 'en' | 'ru', viewport: typeof DESKTOP): Promise<Page> {
  let link: string | undefined;
  await expect
    .poll(
      async () =>
        (link = (await mailsTo(email))
          .map((mail) => /https?:\/\/\S+\/cabinet\/invite\?token=\S+/.exec(mail.text)?.[0])
          .find(Boolean)),
      {
        timeout: 20_000,
      },
    )
    .toBeDefined();
  const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
  const page = await context.newPage();
  await page.goto(`${link}&lang=${locale}`);
  // The invitation page says who opened which deal, in the reader's language.
  const invited = await page.textContent('#invited-deal');
  expect(invited).toContain(marketplace.name);
  expect(invited).toContain('Armchair');
  expect(invited).toContain(locale === 'ru' ? 'открыл безопасную сделку' : 'has opened a safe deal');
  await shot(page, `invitation-${locale}-${viewport.width}`);
  await page.fill('#password', PASSWORD);
  await page.fill('#password_confirm', PASSWORD);
  await page.click('form[action="/cabinet/invite"] button[type=submit]');
  // Back to the deal the invitation was about.
  await page.waitForURL(/\/cabinet\/view\/deals\/[0-9a-f-]{36}$/);
  return page;
}

const dealPage = (page: Page, dealId: string) => page.goto(`${server.url}/cabinet/view/deals/${dealId}`);
const isCyrillic = (text: string) => /[а-яё]/i.test(text);

describe('a deal between two people', () => {
  it(
    'goes from invitations to the arbiter’s decision, with both sides heard and every event reconciled',
    { timeout: 180_000 },
    async () => {
      const buyerEmail = uniqueEmail('buyer');
      const sellerEmail = uniqueEmail('seller');
      const created = await json(
        await post(
          api('/deals'),
          {
            external_id: uniqueId('order'),
            buyer_email: buyerEmail,
            seller_email: sellerEmail,
            title: 'Armchair',
            amount: 12500,
            // Their languages, as the marketplace knows them: mails and the accounts follow.
            buyer_locale: 'en',
            seller_locale: 'ru',
          },
          mkt(),
        ),
      );
      const dealId: string = created.id;

      const upload = await fetch(api(`/deals/${dealId}/documents?kind=contract&name=Contract.pdf`), {
        method: 'POST',
        headers: { ...mkt(), 'Content-Type': 'application/pdf' },
        body: Buffer.from('%PDF-1.4 armchair'),
      });
      expect(upload.status).toBe(201);
      expect((await post(api(`/deals/${dealId}/approval`), {}, mkt())).status).toBe(201);

      // The buyer approves in English on a desktop.
      const buyer = await personFromInvitation(buyerEmail, 'en', DESKTOP);
      // Approving needs the tick that says the contract was read.
      expect(await buyer.textContent('#marketplace')).toBe(marketplace.name);
      await shot(buyer, 'buyer-deal-approval-en-1280');
      await buyer.check('form[action$="/approve"] input[name=read_contract]');
      await buyer.click('form[action$="/approve"] button[type=submit]');
      await expect
        .poll(async () => (await json(await fetch(api(`/deals/${dealId}`), { headers: mkt() }))).status)
        .toBe('approved');
      expect((await post(api(`/deals/${dealId}/escrow`), {}, mkt())).status).toBe(201);

      // The seller, in Russian on a phone, sees the deal as the seller, with no escrow moves.
      const seller = await personFromInvitation(sellerEmail, 'ru', PHONE);
      expect(await seller.textContent('body')).toContain('Armchair');
      await dealPage(seller, dealId);
      expect(await seller.locator('a[href*="/escrow/"]').count()).toBe(0);
      expect(await seller.getAttribute('html', 'lang')).toBe('ru');
      expect(await seller.textContent('#marketplace')).toBe(marketplace.name);
      // A seller approves nothing: their home has no empty Approvals section.
      await seller.goto(`${server.url}/cabinet`);
      expect(await seller.locator('#approvals').count()).toBe(0);
      expect(await seller.locator('#deals').count()).toBe(1);

      // The buyer opens a dispute: a link, a confirmation page that says what happens, a reason, then words of success.
      await dealPage(buyer, dealId);
      await buyer.click('a[href$="/escrow/dispute"]');
      expect(await buyer.textContent('.consequence')).toBeTruthy();
      expect(await json(await fetch(api(`/deals/${dealId}`), { headers: mkt() }))).toMatchObject({
        status: 'escrow_hold',
      });
      await buyer.fill('#reason', 'The armchair arrived with a broken leg');
      await buyer.click('form[action$="/escrow/dispute"] button[type=submit]');
      await buyer.waitForSelector('.notice');
      expect(await buyer.textContent('#dispute ~ dl')).toContain('The armchair arrived with a broken leg');

      // Back and forth, with files.
      const photo = path.join(workDir, 'leg.jpg');
      const receipt = path.join(workDir, 'квитанция.pdf');
      writeFileSync(photo, Buffer.from('JPEG photo of the broken leg'));
      writeFileSync(receipt, Buffer.from('%PDF courier receipt: delivered intact'));
      await buyer.fill('#message-text', 'Photo of the leg attached.');
      await buyer.setInputFiles('#message-files', photo);
      await buyer.click('form[action$="/dispute/messages"] button[type=submit]');
      await buyer.waitForSelector('.notice');

      await dealPage(seller, dealId);
      expect(await seller.textContent('.message')).toContain('Photo of the leg attached.');
      const photoLink = seller.locator('.message a', { hasText: 'leg.jpg' });
      const download = await seller.request.get(`${server.url}${await photoLink.getAttribute('href')}`);
      expect(await download.text()).toBe('JPEG photo of the broken leg');
      // The seller answers with a file alone: no text needed.
      await seller.setInputFiles('#message-files', receipt);
      await seller.click('form[action$="/dispute/messages"] button[type=submit]');
      await seller.waitForSelector('.notice');

      await dealPage(buyer, dealId);
      expect(await buyer.locator('.message').count()).toBe(2);
      expect(await buyer.locator('.message a', { hasText: 'квитанция.pdf' }).count()).toBe(1);

      // The arbiter decides with a written reason; both pages show it.
      const decided = await post(
        `${server.url}/admin/deals/${dealId}/escrow/resolve`,
        { outcome: 'refund', reason: 'The courier receipt does not cover the leg' },
        admin(),
      );
      expect(decided.status).toBe(200);
      await dealPage(buyer, dealId);
      expect(await buyer.textContent('.decision')).toContain('The courier receipt does not cover the leg');
      // The refund reads as the arbiter's decision, not as a cancellation.
      expect(await buyer.textContent('dd.status')).toBe(
        'Refunded by the arbiter’s decision: the money went back to the buyer',
      );
      await dealPage(seller, dealId);
      expect(await seller.textContent('.decision')).toContain('The courier receipt does not cover the leg');
      expect(await seller.textContent('dd.status')).toBe('Деньги возвращены покупателю по решению арбитра');
      expect(Number(await seller.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(PHONE.width);
      await shot(seller, 'seller-deal-decided-ru-390');
      await dealPage(buyer, dealId);
      await shot(buyer, 'buyer-deal-decided-en-1280');

      // Mails, each in its reader's language and naming the marketplace: English for the buyer, Russian for the seller.
      await expect.poll(async () => (await mailsTo(sellerEmail)).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
      const buyerMails = await mailsTo(buyerEmail);
      const sellerMails = await mailsTo(sellerEmail);
      for (const mail of [...buyerMails, ...sellerMails]) expect(mail.subject).toContain(marketplace.name);
      const notices = (mails: { subject: string; text: string }[]) =>
        mails.filter((mail) => !mail.text.includes('/cabinet/invite?token='));
      expect(notices(buyerMails).length).toBeGreaterThanOrEqual(3);
      // Subjects, as the texts quote the other side's words in whatever language they wrote.
      expect(notices(buyerMails).map((mail) => isCyrillic(mail.subject))).toEqual(notices(buyerMails).map(() => false));
      expect(notices(sellerMails).map((mail) => isCyrillic(mail.subject))).toEqual(
        notices(sellerMails).map(() => true),
      );
      expect(sellerMails.some((mail) => mail.text.includes('The courier receipt does not cover the leg'))).toBe(true);

      // The marketplace reconciles: the events list has every webhook it got, same ids, same bodies, and who did what.
      const expected = [
        'deal.created',
        'deal.docs',
        'deal.approval',
        'deal.approved',
        'deal.escrow_hold',
        'deal.disputed',
        'deal.refunded',
      ];
      const delivered = () => receiver.received.filter((request) => JSON.parse(request.body.toString()).id === dealId);
      await expect.poll(() => delivered().length, { timeout: 20_000 }).toBe(expected.length);
      const listed = await json(await fetch(api(`/events?deal_id=${dealId}&limit=100`), { headers: mkt() }));
      expect(listed.items.map((item: { type: string }) => item.type).reverse()).toEqual(expected);
      for (const request of delivered()) {
        const item = listed.items.find(
          (candidate: { event_id: string }) => candidate.event_id === request.headers['webhook-id'],
        );
        expect(item.body).toEqual(JSON.parse(request.body.toString()));
      }
      const byType = Object.fromEntries(
        listed.items.map((item: { type: string; body: object }) => [item.type, item.body]),
      );
      expect(byType['deal.disputed']).toMatchObject({
        actor: 'buyer',
        reason: 'The armchair arrived with a broken leg',
      });
      expect(byType['deal.refunded']).toMatchObject({
        actor: 'arbiter',
        reason: 'The courier receipt does not cover the leg',
      });
    },
  );
});
