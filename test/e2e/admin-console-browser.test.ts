// The console's shell in Debian's Chromium: a new administrator sets up the account from the mailed link on a phone
// in Russian (the QR code and key, a code from the app, a password) and lands in the console; an administrator at a
// desktop in English signs in with a code, adds a colleague, disables one after the confirmation, finds both in the
// audit log under their own e-mail, and signs out; an operator pages a marketplace's deals with the filter kept and
// finds nothing by an order number, in English at a desktop and in Russian on a phone; and pages the SSO clients
// found by a part of their name, narrowed by type, kind and state, down to the empty state's words.
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentStep, totpCode } from '../../src/admin/totp.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { ADMIN_PASSWORD, administrator } from '../console-helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';
import { createDealViaApi, insertHeldDeal, insertMarketplace } from '../factories.ts';
import { createClient, updateClient } from '../../src/sso/clients.ts';
import { axeFindings, horizontalOverflow } from '../a11y.ts';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startTestServer();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const bootstrap = () => ({ Authorization: `Bearer ${server.adminToken}` });

describe('the console in a browser', () => {
  it('sets up a new administrator from the mail on a phone, in Russian', async () => {
    const email = uniqueEmail('phone-admin');
    expect((await post(`${server.url}/admin/administrators`, { email, role: 'arbiter' }, bootstrap())).status).toBe(
      201,
    );
    const mail = await json(
      await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(email)}`, { headers: bootstrap() }),
    );
    const link = mail.items[0].text.match(/https?:\/\/\S+\/admin\/setup\?token=\S+/)[0];

    const context = await browser.newContext({ locale: 'ru-RU', viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(link);
    expect(await page.getAttribute('html', 'lang')).toBe('ru');
    expect(await page.textContent('h1')).toBe('Настройка учётной записи администратора');
    expect(await page.locator('figure.qr svg').count()).toBe(1);
    // The page fits the phone: nothing wider than the screen.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    const secret = (await page.textContent('#totp-secret'))!.replace(/\s/g, '');
    expect(await page.getAttribute('#otpauth-link', 'href')).toMatch(/^otpauth:\/\/totp\//);
    expect(await page.textContent('#otpauth-link')).toBe('Добавить в приложение-аутентификатор на этом телефоне');
    await page.fill('#password', 'a phone admin password');
    await page.fill('#password_repeat', 'a phone admin password');
    await page.fill('#totp', '999999' === totpCode(secret, currentStep()) ? '888888' : '999999');
    await page.click('main button[type=submit]');
    expect(await page.textContent('main [role=alert]')).toContain('Неверный код');
    await page.fill('#password', 'a phone admin password');
    await page.fill('#password_repeat', 'a phone admin password');
    await page.fill('#totp', totpCode(secret, currentStep()));
    await Promise.all([page.waitForURL((url) => url.pathname === '/admin'), page.click('main button[type=submit]')]);
    expect(await page.textContent('main')).toContain(email);
    expect(await page.textContent('header nav.sections')).toContain('Споры');
    await context.close();
  });

  it('signs in at a desktop in English, adds and disables a colleague after a confirmation, and finds both in the audit log', async () => {
    const boss = await administrator(server, 'admin');
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/view/administrators`);
    await page.waitForURL((url) => url.pathname === '/admin/sign-in');
    await page.fill('#email', boss.email);
    await page.fill('#password', ADMIN_PASSWORD);
    await page.fill('#totp', totpCode(boss.secret, currentStep() + 1));
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/admin/view/administrators'),
      page.click('main button[type=submit]'),
    ]);

    const colleague = uniqueEmail('colleague');
    await page.fill('#new-email', colleague);
    await page.selectOption('#new-role', 'support');
    await page.click('section#add button[type=submit], section[aria-labelledby=add] button[type=submit]');
    expect(await page.textContent('main [role=status]')).toContain('The administrator was added');
    // Invited from an English console, the colleague's setup mail is in English.
    const invitation = await json(
      await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(colleague)}`, { headers: bootstrap() }),
    );
    expect(invitation.items[0].subject).toBe('svc console: you are an administrator now');
    const card = page.locator('li.card', { hasText: colleague });
    await card.locator('button.danger').click();
    expect(await page.textContent('h1')).toBe(`Disable ${colleague}?`);
    await page.click('main button.danger');
    expect(await page.textContent('main [role=status]')).toContain('Saved');
    expect(await page.locator('li.card', { hasText: colleague }).textContent()).toContain('disabled');

    await page.click('header nav.sections a[href="/admin/view/audit"]');
    await page.fill('#actor', boss.email);
    await page.click('form.filters button[type=submit]');
    const rows = await page.locator('tbody tr').allTextContents();
    expect(rows.some((row) => row.includes('createAdministrator'))).toBe(true);
    expect(rows.some((row) => row.includes('updateAdministrator'))).toBe(true);
    expect(rows.every((row) => row.includes(boss.email))).toBe(true);

    await page.click('header button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/admin/sign-in');
    expect(await page.textContent('main [role=status]')).toContain('You have signed out of the console');
    await context.close();
  });

  it('the home page says what needs attention, with the open disputes counted in the header, in both languages and widths', async () => {
    const { db } = server.services;
    // A dispute waiting 400 days (older than any other test makes), and a marketplace whose webhook fails 30 times.
    const held = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    await db.query(
      `INSERT INTO deal_disputes (deal_id, status, reason, opened_by, opened_at) VALUES ($1, 'open', 'Late', 'buyer', now() - interval '400 days')`,
      [held.dealId],
    );
    const shop = await insertMarketplace(server.services, { name: `Failing hooks ${uniqueId()}` });
    for (let i = 0; i < 30; i++) {
      const event = crypto.randomUUID();
      await db.query(
        `INSERT INTO webhook_events (id, marketplace_id, deal_id, event, body, occurred_at) VALUES ($1, $2, NULL, 'webhook.test', '\\x7b7d', now())`,
        [event, shop.id],
      );
      await db.query(`INSERT INTO webhook_deliveries (id, event_id, status) VALUES ($1, $2, 'failed')`, [
        crypto.randomUUID(),
        event,
      ]);
    }
    const boss = await administrator(server, 'support');
    for (const [locale, viewport] of [
      ['en', { width: 1280, height: 900 }],
      ['ru', PHONE],
    ] as const) {
      const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
      await context.addCookies([{ name: 'svc_admin', value: boss.token, url: `${server.url}/admin` }]);
      const page = await context.newPage();
      await page.goto(`${server.url}/admin`);
      const disputes = page.locator('#attention-disputes');
      expect(Number(await disputes.locator('.count').textContent())).toBeGreaterThanOrEqual(1);
      expect(await disputes.textContent()).toContain(
        locale === 'ru' ? 'Самый старый ждёт 400 дней' : 'The oldest has waited 400 days',
      );
      expect(await page.textContent('header nav.sections')).toMatch(
        locale === 'ru' ? /Споры \(\d+\)/ : /Disputes \(\d+\)/,
      );
      const hooks = page.locator('#attention-webhooks');
      expect(Number(await hooks.locator('.count').textContent())).toBeGreaterThanOrEqual(30);
      expect(await hooks.locator(`a[href="/admin/view/marketplaces/${shop.id}#log"]`).textContent()).toBe(shop.name);
      expect(await page.locator('#attention-reconciliation a[href="/admin/view/reconciliation"]').count()).toBe(1);
      // The home page is no copy of the navigation.
      expect(await page.locator('main a[href="/admin/view/audit"]').count()).toBe(0);
      if (locale === 'ru') {
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
        // The phone header is compact: the sections scroll in one row.
        const header = (await page.locator('header.top').boundingBox())!;
        expect(header.height).toBeLessThan(140);
      } else {
        // A wide screen is used: the content is wider than the old 48rem column.
        const main = (await page.locator('main').boundingBox())!;
        expect(main.width).toBeGreaterThan(1000);
      }
      await context.close();
    }
    const icon = await fetch(`${server.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect(icon.headers.get('cache-control')).toContain('max-age=31536000');
    expect(Buffer.from(await icon.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
  });
  it('an operator pages a marketplace’s deals, keeps the filter, and finds nothing by an order number, in both languages and widths', async () => {
    // Sorted first among the marketplaces, so the deals' filter offers it however many the run made.
    const shop = await insertMarketplace(server.services, { name: `0 Pager ${uniqueId()}` });
    // 26 deals: a page of 25 and a second page of one, the first deal made.
    const first = await createDealViaApi(server, shop, { title: 'Oldest lamp' });
    for (let n = 2; n <= 26; n += 1) await createDealViaApi(server, shop, { title: `Lamp ${n}` });
    const boss = await administrator(server, 'support');
    for (const [locale, viewport, words] of [
      [
        'en',
        { width: 1280, height: 900 },
        { next: 'Next page →', previous: '← Previous page', none: 'Nothing matches these filters.' },
      ],
      [
        'ru',
        PHONE,
        {
          next: 'Следующая страница →',
          previous: '← Предыдущая страница',
          none: 'По этим фильтрам ничего не найдено.',
        },
      ],
    ] as const) {
      const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
      await context.addCookies([{ name: 'svc_admin', value: boss.token, url: `${server.url}/admin` }]);
      const page = await context.newPage();
      await page.goto(`${server.url}/admin/view/deals`);
      await page.selectOption('#marketplace_id', shop.id);
      await page.click('form.filters button[type=submit]');
      const rows = page.locator('#deal-list tbody tr');
      expect(await rows.count()).toBe(25);
      await page.click(`nav.pager a[rel=next]:has-text("${words.next}")`);
      expect(new URL(page.url()).searchParams.get('marketplace_id')).toBe(shop.id);
      expect(await rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain('Oldest lamp');
      expect(await page.inputValue('#marketplace_id')).toBe(shop.id);
      expect(await axeFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);
      await page.click(`nav.pager a[rel=prev]:has-text("${words.previous}")`);
      expect(await rows.count()).toBe(25);

      // Part of an order number finds that deal; one no deal has finds nothing, and says so.
      await page.fill('#external_id', first.external_id.slice(2));
      await page.click('form.filters button[type=submit]');
      expect(await rows.count()).toBe(1);
      await page.fill('#external_id', 'no-such-order');
      await page.click('form.filters button[type=submit]');
      expect(await page.textContent('#empty')).toContain(words.none);
      expect(await axeFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);
      await context.close();
    }
  });
  it('an operator finds SSO clients by part of a name across pages, narrows them by type, kind and state, in both languages and widths', async () => {
    const { db, masterKey } = server.services;
    const tag = uniqueId('acme');
    const client = (n: string, extra: { token_endpoint_auth_method?: 'none'; registered_dynamically?: boolean } = {}) =>
      createClient(db, masterKey, {
        client_id: `${tag}-${n}`,
        name: `Acme ${tag} ${n}`,
        redirect_uris: ['https://acme.example/cb'],
        ...extra,
      });
    // 23 of the tag: 21 confidential ones registered here, a public application that registered itself, and one disabled.
    for (let n = 1; n <= 21; n += 1) await client(`site-${n}`);
    await client('app', { token_endpoint_auth_method: 'none', registered_dynamically: true });
    await client('old');
    await updateClient(db, `${tag}-old`, { disabled: true });
    const boss = await administrator(server, 'support');
    for (const [locale, viewport, words] of [
      ['en', { width: 1280, height: 900 }, { none: 'Nothing matches these filters.', clear: 'Clear the filters' }],
      ['ru', PHONE, { none: 'По этим фильтрам ничего не найдено.', clear: 'Сбросить фильтры' }],
    ] as const) {
      const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
      await context.addCookies([{ name: 'svc_admin', value: boss.token, url: `${server.url}/admin` }]);
      const page = await context.newPage();
      const rows = page.locator('main table tbody tr');
      const ids = () => page.locator('main table tbody tr code').allTextContents();
      const show = () =>
        Promise.all([
          page.waitForURL(/\/admin\/view\/sso-clients\?/),
          page.click('#client-filters button[type=submit]'),
        ]);
      await page.goto(`${server.url}/admin/view/sso-clients`);
      // A part of the name, in another case: its 23 clients, 20 on the first page and 3 on the next, the filter kept.
      await page.fill('#f-q', tag.toUpperCase().slice(1));
      await show();
      expect(await rows.count()).toBe(20);
      expect((await ids()).every((id) => id.startsWith(tag))).toBe(true);
      await page.click('nav.pager a[rel=next]');
      expect(new URL(page.url()).searchParams.get('q')).toBe(tag.toUpperCase().slice(1));
      expect(await rows.count()).toBe(3);
      expect(await page.inputValue('#f-q')).toBe(tag.toUpperCase().slice(1));
      expect(await axeFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);

      // Public: the application alone, also as registered itself; disabled: the old one alone.
      await page.selectOption('#f-type', 'public');
      await show();
      expect(await ids()).toEqual([`${tag}-app`]);
      await page.selectOption('#f-made', 'itself');
      await show();
      expect(await ids()).toEqual([`${tag}-app`]);
      await page.selectOption('#f-type', '');
      await page.selectOption('#f-made', 'here');
      await page.selectOption('#f-state', 'disabled');
      await show();
      expect(await ids()).toEqual([`${tag}-old`]);
      // Made by a marketplace, none of the tag's is: the empty state says so and leads back to the whole list.
      await page.selectOption('#f-made', 'marketplace');
      await show();
      expect(await rows.count()).toBe(0);
      expect(await page.textContent('#empty')).toContain(words.none);
      expect(await page.textContent('#empty a')).toBe(words.clear);
      expect(await axeFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);
      await page.click('#empty a');
      expect(new URL(page.url()).search).toBe('');
      expect(await rows.count()).toBe(20);
      await context.close();
    }
  });
});
