// The widget in a real browser (Debian's Chromium through playwright-core): a storefront on another origin embeds
// /widget/marketplace.js; the buyer goes through Continue, approval in the cabinet pages, Pay safely and sees the
// held state without a reload. Every mode, theme and locale renders (screenshots under test-output/widget/).
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from './helpers.ts';

// Launch flags documented in DEVELOPERS.md.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const SCREENSHOTS = path.resolve('test-output/widget');

// Callbacks given to page.evaluate run in the browser; the Node program has no DOM types, so name what they use.
declare const document: any;
declare const window: any;
declare function getComputedStyle(element: unknown): { backgroundColor: string };

let server: TestServer;
let storefront: { url: string; close(): Promise<void> };
let context: BrowserContext;
let userDataDir: string;
let marketplace: { id: string; public_key: string };

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
  marketplace = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Browser shop', mode: 'sandbox' }, { Authorization: `Bearer ${server.adminToken}` }));
  storefront = await startStorefront(server.url);
  userDataDir = mkdtempSync(path.join(tmpdir(), 'svc-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: FLAGS, locale: 'en-US' });
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
    .poll(async () => {
      const mail = await json(await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers: { Authorization: `Bearer ${server.adminToken}` } }));
      // Deal notices may come after the invitation: the invitation is the mail with the link.
      token = mail.items.map((item: { text: string }) => item.text.match(/\/cabinet\/invite\?token=(\S+)/)?.[1]).find(Boolean);
      return token;
    }, { timeout: 20_000 })
    .toBeDefined();
  return token!;
}

describe('the widget on a storefront', () => {
  it('takes the buyer through Continue, approval in the cabinet, Pay safely, to the held state', async () => {
    const email = uniqueEmail('buyer');
    const { page, problems } = await openPage();
    await page.goto(`${storefront.url}/?email=${encodeURIComponent(email)}&order=${uniqueId('order')}`);
    const widget = page.locator('#aris-deal-widget');
    const live = widget.locator('[aria-live=polite]');
    await expect.poll(() => widget.getByRole('button', { name: 'Continue' }).isVisible()).toBe(true);
    // The storefront's `button{background:red}` does not reach inside the shadow root.
    const background = await widget.getByRole('button', { name: 'Continue' }).evaluate((button) => getComputedStyle(button).backgroundColor);
    expect(background).not.toBe('rgb(255, 0, 0)');

    // Keyboard only: Tab reaches the button, Enter presses it.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.textContent)).toBe('Continue');
    await page.keyboard.press('Enter');

    const approveLink = widget.getByRole('link', { name: 'Approve in your cabinet' });
    await expect.poll(() => approveLink.isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await live.textContent()).toContain('Approve it there');
    const cabinetUrl = await approveLink.getAttribute('href');
    expect(cabinetUrl).toMatch(new RegExp(`^${server.url}/cabinet/view/deals/[0-9a-f-]{36}$`));

    // The buyer sets a password from the invitation and approves in the cabinet, in another tab.
    const cabinet = await context.newPage();
    await cabinet.goto(`${server.url}/cabinet/invite?token=${await invitationToken(email)}`);
    await cabinet.getByLabel('New password').fill('a strong password');
    await cabinet.getByLabel('Repeat the password').fill('a strong password');
    await cabinet.getByRole('button', { name: 'Set the password and sign in' }).click();
    await cabinet.getByRole('button', { name: 'Approve' }).first().click();
    await cabinet.goto(cabinetUrl!);
    expect(await cabinet.content()).toContain('Bicycle Aris');
    await cabinet.close();

    // The widget follows the status by itself: Pay safely appears, then the held state.
    const pay = widget.getByRole('button', { name: 'Pay safely' });
    await expect.poll(() => pay.isVisible(), { timeout: 20_000 }).toBe(true);
    await pay.click();
    await expect.poll(() => widget.locator('section').textContent(), { timeout: 20_000 }).toContain('The money is held in escrow');
    expect(await live.textContent()).toContain('The money is held in escrow');
    await widget.screenshot({ path: path.join(SCREENSHOTS, 'flow-held.png') });

    // A reload finds the same deal (token kept in this browser) in the held state.
    await page.reload();
    await expect.poll(() => widget.locator('section').textContent(), { timeout: 20_000 }).toContain('The money is held in escrow');
    expect(problems).toEqual([]);
    await page.close();
  });

  const MODES = ['full', 'compact', 'button'] as const;
  const THEMES = ['light', 'dark'] as const;
  const LOCALES = [['en', 'Continue'], ['ru', 'Продолжить']] as const;

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
            return { className: root.className, lang: root.lang, background: getComputedStyle(root).backgroundColor, steps: root.querySelectorAll('li').length };
          });
          expect(look.className).toBe(`w ${mode} ${theme}`);
          expect(look.lang).toBe(locale);
          expect(look.steps).toBe(mode === 'full' ? 4 : 0);
          if (mode !== 'button') expect(look.background).toBe(theme === 'dark' ? 'rgb(27, 31, 36)' : 'rgb(255, 255, 255)');
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
    await page.locator('#aris-deal-widget').getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.locator('#aris-deal-widget section').textContent()).toContain('This shop has not set up safe deals correctly');
    await page.close();
  });
});
