// The console's SSO client and data account pages in Debian's Chromium. At a desktop in English an operator registers
// a client, reveals its secret and rotates it after the confirmation (the old secret is invalid_client, the new one
// works); on a phone in Russian an operator finds a data account by e-mail, sees this month's usage, and revokes a
// key after the confirmation (401 at once on the data server). The audit log page shows each action with the
// operator's e-mail.
import { type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { REDIRECT_URI, codeFor, createUser, exchange } from '../sso-helpers.ts';
import { bearer, dataKey } from '../doubles/data-setup.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 900 };

let server: TestServer;
let data: TestServer;
let browser: Browser;

beforeAll(async () => {
  [server, data] = await Promise.all([startTestServer(), startTestServer({ kind: 'data' })]);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([server, data].map((s) => s?.stop()));
});

/** A browser signed in to the console as this administrator (the console's cookie, as the sign-in sets it). */
async function consoleBrowser(
  admin: TestAdministrator,
  locale: 'en' | 'ru',
  viewport: typeof DESKTOP,
): Promise<BrowserContext> {
  const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
  await context.addCookies([{ name: 'svc_admin', value: admin.token, url: `${server.url}/admin` }]);
  return context;
}

describe('SSO clients and data accounts in the console', () => {
  it('registers a client, reveals its secret and rotates it at a desktop in English', async () => {
    const operator = await administrator(server, 'admin');
    const context = await consoleBrowser(operator, 'en', DESKTOP);
    const page = await context.newPage();
    const clientId = uniqueId('console-client');

    await page.goto(`${server.url}/admin/view/sso-clients`);
    await page.fill('#client_id', clientId);
    await page.fill('#name', 'Console shop');
    await page.fill('#redirect_uris', 'http://not-https.example/cb');
    await page.click('main button:has-text("Register")');
    expect(await page.textContent('main [role=alert]')).toContain('The redirect URIs are not allowed');
    await page.fill('#redirect_uris', REDIRECT_URI);
    await page.click('main button:has-text("Register")');
    expect(await page.textContent('h1')).toBe('Client Console shop is registered');
    const registered = (await page.textContent('#client-secret'))!.trim();
    expect(registered).toMatch(/^cs_/);

    await page.click('text=Open the client’s card');
    expect(await page.textContent('#client-state')).toBe('enabled');
    expect(await page.locator('#client-secret').count()).toBe(0);
    await page.click('main button:has-text("Reveal the secret")');
    expect(page.url()).toMatch(/\/admin\/view\/shown\/[0-9a-f-]{36}$/);
    expect((await page.textContent('#client-secret'))!.trim()).toBe(registered);
    // A reload of the revealed secret shows it no more.
    await page.reload();
    expect(await page.locator('#client-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(registered);

    await page.goto(`${server.url}/admin/view/sso-clients/${clientId}`);
    await page.click('main button:has-text("Rotate the secret")');
    expect(await page.textContent('h1')).toBe('Rotate the secret of Console shop?');
    await page.click('main button:has-text("Yes, rotate")');
    expect(await page.textContent('h1')).toBe('The secret of Console shop was rotated');
    const rotated = (await page.textContent('#client-secret'))!.trim();
    expect(rotated).toMatch(/^cs_/);
    expect(rotated).not.toBe(registered);

    const user = await createUser(server);
    const client = {
      client_id: clientId,
      client_secret: registered,
      redirect_uris: REDIRECT_URI,
      name: 'Console shop',
    };
    const code = await codeFor(server, client, user.token);
    const old = await exchange(server, {
      client_id: clientId,
      client_secret: registered,
      code,
      redirect_uri: REDIRECT_URI,
    });
    expect(old.status).toBe(401);
    expect((await json(old)).code).toBe('invalid_client');
    const fresh = await exchange(server, {
      client_id: clientId,
      client_secret: rotated,
      code,
      redirect_uri: REDIRECT_URI,
    });
    expect(fresh.status).toBe(200);
    expect((await json(fresh)).email).toBe(user.email);

    await page.goto(`${server.url}/admin/view/audit?object_id=${clientId}`);
    const rows = await page.locator('main tbody tr').allTextContents();
    for (const action of ['createSsoClient', 'revealSsoClientSecret', 'rotateSsoClientSecret']) {
      expect(rows.some((row) => row.includes(action) && row.includes(operator.email))).toBe(true);
    }
    expect(await page.textContent('main')).not.toContain(rotated);
    await context.close();
  });

  it('finds a data account on a phone in Russian and revokes its key: 401 at once', async () => {
    const operator = await administrator(server, 'admin');
    const email = uniqueEmail('phone-data');
    const { key } = await dataKey(server.services.db, 'free', email);
    for (let i = 0; i < 2; i++) expect((await fetch(`${data.url}/v1/me`, { headers: bearer(key) })).status).toBe(200);
    const context = await consoleBrowser(operator, 'ru', PHONE);
    const page = await context.newPage();

    await page.goto(`${server.url}/admin/view/data-accounts`);
    expect(await page.textContent('h1')).toBe('Аккаунты данных');
    await page.fill('#q', email);
    await page.click('main button:has-text("Найти")');
    await page.click(`main a:has-text("${email}")`);
    expect(await page.textContent('#account-used')).toBe('2');
    expect(await page.textContent('#account-tariff')).toBe('free');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);

    await page.click('main button:has-text("Отозвать")');
    expect(await page.textContent('h1')).toContain('Отозвать ключ');
    expect((await fetch(`${data.url}/v1/me`, { headers: bearer(key) })).status).toBe(200);
    await page.click('main button:has-text("Да, отозвать")');
    expect(await page.textContent('main [role=status]')).toContain('Ключ отозван');
    expect(await page.textContent('main tbody')).toContain('отозван');
    expect((await fetch(`${data.url}/v1/me`, { headers: bearer(key) })).status).toBe(401);

    await page.goto(`${server.url}/admin/view/audit?action=revokeDataKey&actor=${encodeURIComponent(operator.email)}`);
    const rows = await page.locator('main tbody tr').allTextContents();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(operator.email);
    await context.close();
  });
});
