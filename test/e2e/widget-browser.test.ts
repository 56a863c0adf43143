// The widget in a real browser (Debian's Chromium through playwright-core): a storefront on another origin embeds
// /widget/marketplace.js; the buyer goes through Continue, approval in the cabinet pages, Pay safely and sees the
// held state without a reload; a reload at any point shows the deal as it stands (desktop and phone widths), every
// status in words (ru, en), the invitation line only when a mail went. Every mode, theme and locale renders
// (screenshots under test-output/widget/).
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  json,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
  UUID_SOURCE,
} from '../helpers.ts';
import { CHROMIUM, CHROMIUM_FLAGS, PHONE } from '../chromium.ts';
import { createWidgetDealViaApi, insertMarketplace, type TestMarketplace } from '../factories.ts';

// Launch flags documented in DEVELOPERS.md.
const SCREENSHOTS = path.resolve('test-output/widget');

// Callbacks given to page.evaluate run in the browser; the Node program has no DOM types, so name what they use.
declare const document: any;
declare const window: any;
declare function getComputedStyle(element: unknown): { backgroundColor: string };

let server: TestServer;
let storefront: { url: string; close(): Promise<void> };
let context: BrowserContext;
let userDataDir: string;
let marketplace: TestMarketplace;
const DESKTOP = { width: 1280, height: 720 };

/** A shop on another origin, with CSS that would restyle the widget if Shadow DOM let it in. */
async function startStorefront(apiUrl: string): Promise<typeof storefront> {
  const web = http.createServer((request, response) => {
    const query = new URL(request.url!, 'http://shop').searchParams;
    const attr = (name: string, value: string) => `data-${name}="${value.replace(/"/g, '&quot;')}"`;
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html><head><title>Shop</title>
<style>body{font-family:serif;background:#f4efe6} button{background:red!important;font-size:40px}</style></head>
<body><h1>Bicycle</h1>
<div id="aris-deal-widget" ${[
      attr('public-key', marketplace.public_key),
      attr('marketplace-id', marketplace.id),
      attr('external-id', query.get('order') ?? uniqueId('order')),
      attr('buyer-email', query.get('email') ?? uniqueEmail('buyer')),
      attr('seller-email', 'seller@example.com'),
      attr('title', 'Bicycle Aris'),
      attr('amount', '1500.5'),
      attr('currency', 'RUB'),
    ].join(' ')}></div>
<script src="${apiUrl}/widget/marketplace.js"></script>
<script>SvcWidget.init({container: '#aris-deal-widget', mode: '${query.get('mode') ?? 'full'}', theme: '${query.get('theme') ?? 'light'}', locale: '${query.get('locale') ?? 'en'}'})</script>
</body></html>`);
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(web.address() as import('node:net').AddressInfo).port}`,
    close: () => new Promise((resolve) => web.close(() => resolve())),
  };
}

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  marketplace = await insertMarketplace(server.services, { name: 'Browser shop' });
  storefront = await startStorefront(server.url);
  userDataDir = mkdtempSync(path.join(tmpdir(), 'svc-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    locale: 'en-US',
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await context?.close();
  await storefront?.close();
  await server?.stop();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

/** A page that fails the test on any script error or failed request to our server. */
async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
  return { page, problems };
}

async function invitationToken(email: string): Promise<string> {
  let token: string | undefined;
  await expect
    .poll(
      async () => {
        const mail = await json(
          await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, {
            headers: { Authorization: `Bearer ${server.adminToken}` },
          }),
        );
        // Deal notices may come after the invitation: the invitation is the mail with the link.
        token = mail.items
          .map((item: { text: string }) => item.text.match(/\/cabinet\/invite\?token=(\S+)/)?.[1])
          .find(Boolean);
        return token;
      },
      { timeout: 20_000 },
    )
    .toBeDefined();
  return token!;
}

/** The storefront's page for this order and buyer. */
const shopUrl = (order: string, email: string, locale = 'en', mode = 'full') =>
  `${storefront.url}/?${new URLSearchParams({ order, email, locale, mode })}`;

/** The widget's words once it has found the order's deal (the lookup answered), whitespace made plain. */
async function settledText(page: Page): Promise<string> {
  const section = page.locator('#aris-deal-widget section');
  let text = '';
  await expect
    .poll(
      async () => {
        text = ((await section.textContent()) ?? '').replace(/\s+/g, ' ');
        return text !== '' && !/Checking this order|Проверяем заказ/.test(text);
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  return text;
}

/** Everything the storefront's own scripts could read from storage: no widget token may be there. */
const storageOfThePage = (page: Page) =>
  page.evaluate(() => JSON.stringify({ local: { ...window.localStorage }, session: { ...window.sessionStorage } }));

/** The buyer_locale of each deal of this buyer, oldest first. */
const buyerLocaleOf = async (email: string) =>
  (
    await server.services.db.query<{ buyer_locale: string | null }>(
      'SELECT buyer_locale FROM deals WHERE buyer_email = $1 ORDER BY created_at',
      [email],
    )
  ).rows.map((row) => row.buyer_locale);

describe('the widget on a storefront', () => {
  it('takes the buyer through Continue, approval in the cabinet, Pay safely, to the held state', async () => {
    const email = uniqueEmail('buyer');
    const { page, problems } = await openPage();
    await page.goto(`${storefront.url}/?email=${encodeURIComponent(email)}&order=${uniqueId('order')}`);
    const widget = page.locator('#aris-deal-widget');
    const live = widget.locator('[aria-live=polite]');
    await expect.poll(() => widget.getByRole('button', { name: 'Continue' }).isVisible()).toBe(true);
    // The storefront's `button{background:red}` does not reach inside the shadow root.
    const background = await widget
      .getByRole('button', { name: 'Continue' })
      .evaluate((button) => getComputedStyle(button).backgroundColor);
    expect(background).not.toBe('rgb(255, 0, 0)');

    // Keyboard only: Tab reaches the button, Enter presses it.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.textContent)).toBe('Continue');
    await page.keyboard.press('Enter');

    const approveLink = widget.getByRole('link', { name: 'Approve in your cabinet' });
    await expect.poll(() => approveLink.isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await live.textContent()).toContain('Approve it there');
    // A new buyer: this creation invited them, and the widget says so.
    expect(await live.textContent()).toContain(`We sent a mail about this deal to ${email}`);
    const cabinetUrl = await approveLink.getAttribute('href');
    expect(cabinetUrl).toMatch(new RegExp(`^${server.url}/cabinet/view/deals/${UUID_SOURCE}$`));
    // The widget told the server the language the buyer sees: the deal and the buyer's mail follow it.
    expect(await buyerLocaleOf(email)).toEqual(['en']);

    // A reload mid-deal finds the deal waiting for approval (not step 1), the invitation line still there; the
    // storefront's storage holds no token (a JWT starts with eyJ).
    await page.reload();
    const afterReload = await settledText(page);
    expect(afterReload).toContain('Approve it there');
    expect(afterReload).toContain(`We sent a mail about this deal to ${email}`);
    expect(await widget.getByRole('button', { name: 'Continue' }).count()).toBe(0);
    expect(await widget.locator('li[aria-current=step]').textContent()).toBe('Approval');
    expect(await storageOfThePage(page)).not.toContain('eyJ');

    // The buyer sets a password from the invitation and approves in the cabinet, in another tab.
    const cabinet = await context.newPage();
    await cabinet.goto(`${server.url}/cabinet/invite?token=${await invitationToken(email)}`);
    await cabinet.getByLabel('New password').fill('a strong password');
    await cabinet.getByLabel('Repeat the password').fill('a strong password');
    await cabinet.getByRole('button', { name: 'Set the password and sign in' }).click();
    await cabinet.getByLabel('I have read the contract').first().check();
    await cabinet.getByRole('button', { name: 'Approve' }).first().click();
    await cabinet.goto(cabinetUrl!);
    expect(await cabinet.content()).toContain('Bicycle Aris');
    await cabinet.close();

    // The widget follows the status by itself: Pay safely appears, then the held state. The marketplace is a sandbox:
    // the widget says it is a test before anything is paid, and links to the contract in the cabinet.
    const pay = widget.getByRole('button', { name: 'Pay safely (test)' });
    await expect.poll(() => pay.isVisible(), { timeout: 20_000 }).toBe(true);
    expect(await widget.locator('.badge').textContent()).toBe('Test mode');
    expect(await widget.locator('section').textContent()).toContain('no real money is taken');
    expect(await widget.getByRole('link', { name: 'Read the contract' }).getAttribute('href')).toBe(
      `${cabinetUrl}#documents`,
    );
    await pay.click();
    await expect
      .poll(() => widget.locator('section').textContent(), { timeout: 20_000 })
      .toContain('The money is held in escrow');
    expect(await live.textContent()).toContain('The money is held in escrow');
    await widget.screenshot({ path: path.join(SCREENSHOTS, 'flow-held.png') });

    // A reload finds the same deal in the held state, at desktop and at phone width, without Continue.
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await page.reload();
      expect(await settledText(page)).toContain('The money is held in escrow');
      expect(await widget.getByRole('button', { name: 'Continue' }).count()).toBe(0);
      const open = widget.getByRole('link', { name: 'Open your cabinet' });
      expect(await open.getAttribute('href')).toBe(cabinetUrl);
      const box = (await widget.locator('section').boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(size.width);
      await widget.screenshot({ path: path.join(SCREENSHOTS, `reload-held-${size.width}.png`) });
    }
    expect(await storageOfThePage(page)).not.toContain('eyJ');
    // With the storefront's storage emptied (another browser, a private window) the order still finds its deal.
    await page.evaluate(() => {
      window.localStorage.clear();
      window.sessionStorage.clear();
    });
    await page.reload();
    expect(await settledText(page)).toContain('The money is held in escrow');
    expect(problems).toEqual([]);
    await page.setViewportSize(DESKTOP);
    await page.close();
  });

  it('tells a returning buyer nothing about an invitation, on a phone, in Russian; a reload keeps the step', async () => {
    // The buyer has an account with a password from an earlier deal.
    const email = uniqueEmail('returning');
    const earlier = await createWidgetDealViaApi(server, marketplace, { buyer_email: email });
    expect(earlier.invitation_sent).toBe(true);
    await signInFromInvitation(server, email);

    const { page, problems } = await openPage();
    await page.setViewportSize(PHONE);
    await page.goto(shopUrl(uniqueId('order'), email, 'ru'));
    const widget = page.locator('#aris-deal-widget');
    await widget.getByRole('button', { name: 'Продолжить' }).click();
    const approveLink = widget.getByRole('link', { name: 'Согласовать в личном кабинете' });
    await expect.poll(() => approveLink.isVisible(), { timeout: 30_000 }).toBe(true);
    const text = await settledText(page);
    expect(text).toContain('Согласуйте его там.');
    expect(text).not.toContain('приглашение');
    // The earlier deal came from a script without a language; this one from the Russian widget.
    expect(await buyerLocaleOf(email)).toEqual([null, 'ru']);
    await page.reload();
    const again = await settledText(page);
    expect(again).toContain('Согласуйте его там.');
    expect(again).not.toContain('приглашение');
    expect(await widget.getByRole('button', { name: 'Продолжить' }).count()).toBe(0);
    const box = (await widget.locator('section').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    // The step labels stay apart on a phone: each fits its own step, and a clear gap separates its words from the next.
    const labels = await widget.locator('li').evaluateAll((items) =>
      items.map((item) => {
        const range = document.createRange();
        range.selectNodeContents(item);
        const text = range.getBoundingClientRect();
        const own = item.getBoundingClientRect();
        return { text: item.textContent, textLeft: text.left, textRight: text.right, ownRight: own.right };
      }),
    );
    expect(labels.map((label) => label.text)).toEqual(['Договор', 'Согласование', 'Оплата', 'Деньги в резерве']);
    for (const [index, label] of labels.entries()) {
      expect(label.textRight).toBeLessThanOrEqual(label.ownRight + 0.5);
      if (index > 0) expect(label.textLeft - labels[index - 1].textRight).toBeGreaterThanOrEqual(8);
    }
    await widget.screenshot({ path: path.join(SCREENSHOTS, 'returning-approve-ru-phone.png') });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows every status of a deal in words on load, in Russian and English, never step 1', async () => {
    const email = uniqueEmail('buyer');
    const fields = {
      buyer_email: email,
      seller_email: 'seller@example.com',
      title: 'Bicycle Aris',
      amount: 1500.5,
      currency: 'RUB',
    };
    const mk = { 'X-Svc-Key': marketplace.secret_key };
    const widgetCall = (id: string, token: string, action: string) =>
      post(`${server.url}/api/mkt/widget/deals/${id}/${action}`, action === 'start' ? { locale: 'en' } : {}, {
        'X-Svc-Widget-Token': token,
      });
    type Step = 'start' | 'approve' | 'reject' | 'escrow' | 'release' | 'refund' | 'dispute' | 'cancel';
    /** A deal of a new order, as the widget makes it. */
    const newDeal = () => createWidgetDealViaApi(server, marketplace, fields);
    /** The deal taken as far as `steps` say, as the buyer (signed in) and the shop would. */
    async function advance(
      created: { id: string; widget_token: string },
      steps: Step[],
      buyer: Record<string, string>,
    ): Promise<void> {
      for (const step of steps) {
        let response: Response;
        if (step === 'start' || step === 'escrow') response = await widgetCall(created.id, created.widget_token, step);
        else if (step === 'approve' || step === 'reject') {
          const approvals = await json(
            await fetch(`${server.url}/api/mkt/widget/deals/${created.id}`, {
              headers: { 'X-Svc-Widget-Token': created.widget_token },
            }),
          );
          response = await post(
            `${server.url}/cabinet/approvals/${approvals.approvals.at(-1).id}/${step}`,
            { comment: 'Not this one' },
            buyer,
          );
        } else if (step === 'cancel')
          response = await post(`${server.url}/api/mkt/deals/${created.id}/cancel`, { reason: 'Out of stock' }, mk);
        else {
          // A release pays the seller out: the shop says where, for this deal.
          if (step === 'release') {
            const destination = { type: 'test_card', token: '4111111111111111' };
            const put = await fetch(`${server.url}/api/mkt/deals/${created.id}/payout-destination`, {
              method: 'PUT',
              headers: { ...mk, 'Content-Type': 'application/json' },
              body: JSON.stringify(destination),
            });
            expect(put.status).toBe(200);
          }
          response = await post(
            `${server.url}/cabinet/deals/${created.id}/escrow/${step}`,
            step === 'dispute' ? { reason: 'It never came' } : {},
            buyer,
          );
        }
        expect(response.status, `${step}: ${await response.clone().text()}`).toBeLessThan(300);
      }
      if (steps.at(-1) === 'release') {
        await expect
          .poll(
            async () => (await json(await fetch(`${server.url}/api/mkt/deals/${created.id}`, { headers: mk }))).status,
          )
          .toBe('paid');
      }
    }
    const cases = [
      {
        steps: ['start', 'reject'],
        en: 'You rejected the terms',
        ru: 'Вы отклонили условия',
        button: { en: 'Continue', ru: 'Продолжить' },
      },
      {
        steps: ['start', 'approve'],
        en: 'The terms are approved',
        ru: 'Условия согласованы',
        button: { en: 'Pay safely (test)', ru: 'Оплатить безопасно (тест)' },
      },
      { steps: ['start', 'approve', 'escrow'], en: 'The money is held in escrow', ru: 'Деньги зарезервированы' },
      {
        steps: ['start', 'approve', 'escrow', 'release'],
        en: 'the seller has been paid',
        ru: 'продавец получил оплату',
      },
      {
        steps: ['start', 'approve', 'escrow', 'refund'],
        en: 'the money returned to you',
        ru: 'деньги вернулись к вам',
      },
      { steps: ['start', 'approve', 'escrow', 'dispute'], en: 'A dispute is open', ru: 'Открыт спор' },
      {
        steps: ['cancel'],
        en: 'This order was cancelled. No money was taken from you.',
        ru: 'Заказ отменён. Деньги с вас не списаны.',
      },
    ] as const;
    // Every case's deal at once (they are independent): the buyer signs in from the first one's invitation.
    const first = await newDeal();
    const buyer = await signInFromInvitation(server, email);
    const deals = [first, ...(await Promise.all(cases.slice(1).map(() => newDeal())))];
    await Promise.all(cases.map(({ steps }, i) => advance(deals[i], [...steps], buyer)));

    const { page, problems } = await openPage();
    const widget = page.locator('#aris-deal-widget');
    for (const [i, { steps, en, ru, ...rest }] of cases.entries()) {
      const { external_id: order } = deals[i];
      for (const [locale, words] of [
        ['en', en],
        ['ru', ru],
      ] as const) {
        await page.goto(shopUrl(order, email, locale));
        const text = await settledText(page);
        expect(text, `${steps.join(' → ')} (${locale})`).toContain(words);
        const button = 'button' in rest ? rest.button[locale] : undefined;
        // The one next step this state has; never the Continue of a new deal otherwise.
        expect(await widget.getByRole('button').allTextContents()).toEqual(button ? [button] : []);
      }
      await widget.screenshot({ path: path.join(SCREENSHOTS, `state-${steps.at(-1)}-ru.png`) });
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  const MODES = ['full', 'compact', 'button'] as const;
  const THEMES = ['light', 'dark'] as const;
  const LOCALES = [
    ['en', 'Continue'],
    ['ru', 'Продолжить'],
  ] as const;

  it('renders every mode, theme and locale', async () => {
    const { page, problems } = await openPage();
    for (const mode of MODES) {
      for (const theme of THEMES) {
        for (const [locale, label] of LOCALES) {
          await page.goto(`${storefront.url}/?mode=${mode}&theme=${theme}&locale=${locale}`);
          const widget = page.locator('#aris-deal-widget');
          const button = widget.getByRole('button', { name: label });
          await expect.poll(() => button.isVisible()).toBe(true);
          const look = await widget.evaluate((host) => {
            const root = host.shadowRoot!.querySelector('section')!;
            return {
              className: root.className,
              lang: root.lang,
              background: getComputedStyle(root).backgroundColor,
              steps: root.querySelectorAll('li').length,
            };
          });
          expect(look.className).toBe(`w ${mode} ${theme}`);
          expect(look.lang).toBe(locale);
          expect(look.steps).toBe(mode === 'full' ? 4 : 0);
          // Every mode shows the amount and what a safe deal is, in the widget's language.
          const text = ((await widget.locator('section').textContent()) ?? '').replace(/\s+/g, ' ');
          expect(text).toContain(locale === 'ru' ? '1 500,50' : '1,500.50');
          if (mode !== 'full') {
            expect(text).toContain(
              locale === 'ru'
                ? 'Безопасная сделка: продавец получит деньги только после'
                : 'Safe deal: the seller gets your money only after',
            );
          }
          if (mode !== 'button')
            expect(look.background).toBe(theme === 'dark' ? 'rgb(27, 31, 36)' : 'rgb(255, 255, 255)');
          await widget.screenshot({ path: path.join(SCREENSHOTS, `${mode}-${theme}-${locale}.png`) });
        }
      }
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it('tells the buyer in words when the shop set it up wrong', async () => {
    const { page } = await openPage();
    await page.goto(storefront.url);
    await page.evaluate(() => {
      const host = document.querySelector('#aris-deal-widget');
      host.dataset.publicKey = 'pk_wrong';
      window.SvcWidget.init({ container: host, locale: 'en' });
    });
    // The page load's lookup already meets the wrong key: the buyer is told before pressing anything, and cannot.
    await expect
      .poll(() => page.locator('#aris-deal-widget section').textContent())
      .toContain('This shop has not set up safe deals correctly');
    expect(await page.locator('#aris-deal-widget').getByRole('button', { name: 'Continue' }).isDisabled()).toBe(true);
    await page.close();
  });
});
