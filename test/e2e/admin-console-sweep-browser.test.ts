// Every console page on a phone (390 px) in Russian and at a desktop (1280 px) in English: nothing wider than the
// screen, and every button of the page's main content within the viewport's width.
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { createDealViaApi, insertMarketplace } from '../factories.ts';
import { issueDataKey } from '../../src/data-api/keys.ts';
import { ensureUser } from '../../src/accounts/users.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 800 };

let server: TestServer;
let browser: Browser;
let admin: TestAdministrator;
let paths: string[];

beforeAll(async () => {
  server = await startTestServer();
  browser = await launchChromium();
  admin = await administrator(server, 'admin');
  const shop = await insertMarketplace(server.services, { name: `Очень длинное название магазина ${uniqueId()}` });
  const deal = await createDealViaApi(server, shop, {
    external_id: `order-with-a-rather-long-external-identifier-${uniqueId()}`,
    buyer_email: uniqueEmail('a-buyer-with-a-long-address'),
  });
  const client = await json(
    await post(
      `${server.url}/admin/sso/clients`,
      { client_id: `sweep-${uniqueId()}`.toLowerCase(), name: 'Sweep', redirect_uris: 'https://sweep.example/cb' },
      admin.headers,
    ),
  );
  const { user: person } = await ensureUser(server.services.db, {
    email: uniqueEmail('a-person-with-a-rather-long-address'),
    name: `Очень длинное имя человека ${uniqueId()}`,
  });
  const { account_id } = await issueDataKey(server.services.db, { email: uniqueEmail('sweep'), tariff: 'free' });
  paths = [
    '/admin',
    '/admin/view/marketplaces',
    '/admin/view/marketplaces/new',
    `/admin/view/marketplaces/${shop.id}`,
    '/admin/view/deals',
    `/admin/view/deals/${deal.id}`,
    '/admin/view/disputes',
    '/admin/view/ledger',
    '/admin/view/reconciliation',
    '/admin/view/sso-clients',
    `/admin/view/sso-clients/${client.client_id}`,
    '/admin/view/data-accounts',
    `/admin/view/data-accounts/${account_id}`,
    '/admin/view/audit',
    '/admin/view/administrators',
    '/admin/view/mail',
    '/admin/view/settings/second-factor',
    '/admin/view/people',
    `/admin/view/people/${person.id}`,
  ];
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('every console page fits the screen', () => {
  for (const [locale, viewport] of [
    ['ru', PHONE],
    ['en', DESKTOP],
  ] as const) {
    it(`in ${locale === 'ru' ? 'Russian on a phone' : 'English at a desktop'}`, { timeout: 120_000 }, async () => {
      const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
      await context.addCookies([{ name: 'svc_admin', value: admin.token, url: `${server.url}/admin` }]);
      const page = await context.newPage();
      const wide: string[] = [];
      for (const path of paths) {
        const response = await page.goto(`${server.url}${path}`);
        expect(response?.status(), path).toBe(200);
        expect(await page.getAttribute('html', 'lang')).toBe(locale);
        const width = Number(await page.evaluate('document.documentElement.scrollWidth'));
        if (width > viewport.width) wide.push(`${path}: ${width}px`);
        // Buttons outside a table's own scrolling box are whole within the viewport.
        const outside = await page.evaluate(`[...document.querySelectorAll('main button:not([hidden])')]
          .filter((b) => !b.closest('.table') && b.getClientRects().length > 0)
          .filter((b) => b.getBoundingClientRect().right > ${viewport.width} + 0.5)
          .map((b) => b.textContent.trim())`);
        expect(outside, path).toEqual([]);
      }
      expect(wide).toEqual([]);
      await context.close();
    });
  }

  it('allows only our own script, served with the copy buttons’ code', async () => {
    const home = await fetch(`${server.url}/admin`, { headers: { Cookie: admin.cookie } });
    const csp = home.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    const script = await fetch(`${server.url}/admin/assets/console.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('data-copy-target');
  });

  it('styles its text, choice and code fields like the rest of the site, not as bare native controls', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: DESKTOP });
    await context.addCookies([{ name: 'svc_admin', value: admin.token, url: `${server.url}/admin` }]);
    const page = await context.newPage();
    const look = (selector: string) =>
      page.evaluate(
        `(() => { const s = getComputedStyle(document.querySelector(${JSON.stringify(selector)})); return [s.borderRadius, s.paddingTop, s.borderTopColor]; })()`,
      );
    const styled = ['4px', '9.6px', 'rgb(118, 118, 118)'];
    await page.goto(`${server.url}/admin/view/marketplaces/new`);
    expect(await look('#name')).toEqual(styled);
    expect(await look('#mode')).toEqual(styled);
    const anonymous = await browser.newPage();
    await anonymous.goto(`${server.url}/admin/sign-in`);
    expect(await anonymous.evaluate(`getComputedStyle(document.querySelector('#totp')).borderRadius`)).toBe('4px');
    await anonymous.close();
    await context.close();
  });
});
