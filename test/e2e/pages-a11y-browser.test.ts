// Every page people use, opened in Debian's Chromium as the person who uses it (a visitor, a buyer, a seller, an
// operator), in English at a desktop and in Russian on a phone, and in the other two pairings too: axe-core finds no
// serious or critical problem, the page is in the reader's language, nothing is wider than a phone, and every button
// and link is on screen. A screenshot of each page in each pairing goes to test-output/pages/ for a reviewer.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import {
  cabinetSession,
  createDealViaApi,
  insertHeldDealSignedIn,
  insertMarketplace,
  type HeldDeal,
} from '../factories.ts';
import { startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';
import { registerClient, REDIRECT_URI, type Client } from '../sso-helpers.ts';
import { createClient } from '../../src/sso/clients.ts';
import { axeFindings, controlsOffScreen, horizontalOverflow } from '../a11y.ts';

const DESKTOP = { width: 1280, height: 800 };
const SCREENSHOTS = path.resolve('test-output/pages');
const PAIRINGS = [
  { lang: 'en', size: DESKTOP },
  { lang: 'ru', size: PHONE },
  { lang: 'ru', size: DESKTOP },
  { lang: 'en', size: PHONE },
] as const;

type Person = 'visitor' | 'buyer' | 'seller' | 'operator';

let server: TestServer;
let browser: Browser;
let admin: TestAdministrator;
let deal: HeldDeal & { sessions: { buyer: { token: string; userId: string }; seller?: { token: string } } };
let client: Client;

beforeAll(async () => {
  server = await startTestServer();
  browser = await launchChromium();
  admin = await administrator(server, 'admin');
  deal = await insertHeldDealSignedIn(server.services, { seller: true, title: 'Bicycle Aris' });
  client = await registerClient(server, { name: 'Cyclists’ forum' });
  mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Each page a person opens: its name (for the screenshot and the failure), who opens it, its address and status. */
function pages(): { name: string; person: Person; path: string; status?: number }[] {
  const authorize = `/sso/authorize?${new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    state: 'a11y',
  })}`;
  return [
    { name: 'cabinet-sign-in', person: 'visitor', path: '/cabinet/sign-in' },
    { name: 'cabinet-sign-up', person: 'visitor', path: '/cabinet/sign-up' },
    { name: 'cabinet-forgot-password', person: 'visitor', path: '/cabinet/forgot-password' },
    // A link that does not work is a page that says so (400), with the way on.
    { name: 'cabinet-invite-invalid', person: 'visitor', path: '/cabinet/invite?token=inv_not-a-token', status: 400 },
    { name: 'sso-sign-in', person: 'visitor', path: authorize },
    { name: 'problem-page', person: 'visitor', path: '/problems/validation_failed' },
    { name: 'console-sign-in', person: 'visitor', path: '/admin/sign-in' },
    { name: 'cabinet-home', person: 'buyer', path: '/cabinet' },
    { name: 'cabinet-deal-buyer', person: 'buyer', path: `/cabinet/view/deals/${deal.dealId}` },
    { name: 'cabinet-profile', person: 'buyer', path: '/cabinet/view/profile' },
    { name: 'cabinet-security', person: 'buyer', path: '/cabinet/view/security' },
    // The step-up before a money move, for a buyer without a second factor yet: it says to set one up first.
    {
      name: 'cabinet-verify',
      person: 'buyer',
      path: `/cabinet/view/verify?next=${encodeURIComponent(`/cabinet/view/deals/${deal.dealId}/escrow/release`)}`,
    },
    { name: 'cabinet-data-keys', person: 'buyer', path: '/cabinet/view/data-keys' },
    { name: 'cabinet-connected-sites', person: 'buyer', path: '/cabinet/view/connected-sites' },
    { name: 'sso-consent', person: 'buyer', path: authorize },
    { name: 'cabinet-deal-seller', person: 'seller', path: `/cabinet/view/deals/${deal.dealId}` },
    { name: 'cabinet-payouts', person: 'seller', path: '/cabinet/view/payouts' },
    { name: 'console-home', person: 'operator', path: '/admin' },
    { name: 'console-marketplaces', person: 'operator', path: '/admin/view/marketplaces' },
    { name: 'console-marketplace-new', person: 'operator', path: '/admin/view/marketplaces/new' },
    { name: 'console-marketplace', person: 'operator', path: `/admin/view/marketplaces/${deal.marketplaceId}` },
    { name: 'console-deals', person: 'operator', path: '/admin/view/deals' },
    { name: 'console-deal', person: 'operator', path: `/admin/view/deals/${deal.dealId}` },
    { name: 'console-disputes', person: 'operator', path: '/admin/view/disputes' },
    { name: 'console-ledger', person: 'operator', path: '/admin/view/ledger' },
    { name: 'console-reconciliation', person: 'operator', path: '/admin/view/reconciliation' },
    { name: 'console-sso-clients', person: 'operator', path: '/admin/view/sso-clients' },
    { name: 'console-data-accounts', person: 'operator', path: '/admin/view/data-accounts' },
    { name: 'console-audit', person: 'operator', path: '/admin/view/audit' },
    { name: 'console-administrators', person: 'operator', path: '/admin/view/administrators' },
    { name: 'console-mail', person: 'operator', path: '/admin/view/mail' },
    { name: 'console-second-factor', person: 'operator', path: '/admin/view/settings/second-factor' },
    { name: 'console-people', person: 'operator', path: '/admin/view/people' },
    { name: 'console-person', person: 'operator', path: `/admin/view/people/${deal.sessions.buyer.userId}` },
  ];
}

async function contextOf(person: Person, lang: string, size: { width: number; height: number }) {
  const context: BrowserContext = await browser.newContext({
    locale: lang === 'ru' ? 'ru-RU' : 'en-GB',
    viewport: size,
  });
  const url = server.url;
  if (person === 'buyer') await context.addCookies([{ name: 'svc_session', value: deal.sessions.buyer.token, url }]);
  if (person === 'seller') await context.addCookies([{ name: 'svc_session', value: deal.sessions.seller!.token, url }]);
  if (person === 'operator')
    await context.addCookies([{ name: 'svc_admin', value: admin.cookie.split('=')[1], url: `${url}/admin` }]);
  return context;
}

describe('every page, as its reader sees it', () => {
  for (const { lang, size } of PAIRINGS) {
    it(`passes in ${lang === 'ru' ? 'Russian' : 'English'} at ${size.width} px`, async () => {
      const problems: string[] = [];
      const people = new Map<Person, BrowserContext>();
      try {
        for (const entry of pages()) {
          let context = people.get(entry.person);
          if (!context) people.set(entry.person, (context = await contextOf(entry.person, lang, size)));
          const page = await context.newPage();
          const response = await page.goto(`${server.url}${entry.path}`);
          const where = `${entry.name} (${entry.path})`;
          if (response?.status() !== (entry.status ?? 200)) problems.push(`${where}: answered ${response?.status()}`);
          if ((await page.getAttribute('html', 'lang')) !== lang) problems.push(`${where}: not in ${lang}`);
          for (const finding of await axeFindings(page))
            problems.push(
              `${where}: ${finding.impact} ${finding.rule} (${finding.help}) at ${finding.targets.join(', ')}`,
            );
          const overflow = await horizontalOverflow(page);
          if (overflow > 0) problems.push(`${where}: ${overflow} px wider than the screen`);
          const off = await controlsOffScreen(page);
          if (off.length > 0) problems.push(`${where}: off screen: ${off.join('; ')}`);
          await page.screenshot({
            path: path.join(SCREENSHOTS, `${entry.name}-${lang}-${size.width}.png`),
            fullPage: true,
          });
          await page.close();
        }
      } finally {
        for (const context of people.values()) await context.close();
      }
      expect(problems).toEqual([]);
    });
  }
});

/** A console list as its reader walks it: checked as every page is, and photographed for a reviewer. */
async function checked(page: Page, name: string, lang: string, size: { width: number }): Promise<string[]> {
  const problems: string[] = [];
  if ((await page.getAttribute('html', 'lang')) !== lang) problems.push(`${name}: not in ${lang}`);
  for (const finding of await axeFindings(page))
    problems.push(`${name}: ${finding.impact} ${finding.rule} (${finding.help}) at ${finding.targets.join(', ')}`);
  const overflow = await horizontalOverflow(page);
  if (overflow > 0) problems.push(`${name}: ${overflow} px wider than the screen`);
  const off = await controlsOffScreen(page);
  if (off.length > 0) problems.push(`${name}: off screen: ${off.join('; ')}`);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${lang}-${size.width}.png`), fullPage: true });
  return problems;
}

describe('a console list: its pages, its filters and its empty state', () => {
  const WORDS = {
    en: { page2: 'Page 2', next: 'Next page →', previous: '← Previous page', none: 'Nothing matches these filters.' },
    ru: {
      page2: 'Страница 2',
      next: 'Следующая страница →',
      previous: '← Предыдущая страница',
      none: 'По этим фильтрам ничего не найдено.',
    },
  } as const;

  for (const { lang, size } of [PAIRINGS[0], PAIRINGS[1]]) {
    it(`walks to the second page and back keeping the filter, then finds nothing, in ${lang} at ${size.width} px`, async () => {
      const words = WORDS[lang];
      // 51 records of one actor: a page of 50 and a second page of one.
      const actor = `${uniqueId('pager')}@example.com`;
      await server.services.db.query(
        `INSERT INTO audit_log (actor, action, object_type, object_id, after)
         SELECT $1, 'pagerTest', 'marketplace', g::text, '{}'::jsonb FROM generate_series(1, 51) g`,
        [actor],
      );
      const context = await contextOf('operator', lang, size);
      const page = await context.newPage();
      const problems: string[] = [];
      try {
        await page.goto(`${server.url}/admin/view/audit`);
        await page.fill('#actor', actor);
        await page.click('form.filters button[type=submit]');
        const rows = page.locator('main tbody tr');
        expect(await rows.count()).toBe(50);
        expect(await page.locator('nav.pager a[rel=prev]').count()).toBe(0);
        // The newest first: record 51 opens the first page, record 1 is alone on the second.
        expect(await rows.first().textContent()).toContain('51');
        await page.click(`nav.pager a[rel=next]:has-text("${words.next}")`);
        expect(new URL(page.url()).searchParams.get('actor')).toBe(actor);
        expect(await rows.count()).toBe(1);
        expect(await rows.first().locator('code').textContent()).toBe('1');
        expect(await page.textContent('nav.pager')).toContain(words.page2);
        expect(await page.inputValue('#actor')).toBe(actor);
        expect(await page.locator('nav.pager a[rel=next]').count()).toBe(0);
        problems.push(...(await checked(page, 'list-audit-page-2', lang, size)));
        await page.click(`nav.pager a[rel=prev]:has-text("${words.previous}")`);
        expect(await rows.count()).toBe(50);
        expect(new URL(page.url()).searchParams.get('starting_after')).toBeNull();

        // A filter that matches nothing says so in words, with the way back to the whole list.
        await page.fill('#action', 'noSuchAction');
        await page.click('form.filters button[type=submit]');
        expect(await rows.count()).toBe(0);
        expect(await page.textContent('#empty')).toContain(words.none);
        problems.push(...(await checked(page, 'list-audit-empty', lang, size)));
        await page.click('#empty a');
        expect(new URL(page.url()).search).toBe('');
        expect(await rows.count()).toBeGreaterThan(0);

        // The marketplaces by state: the deactivated one alone, then no live one among them.
        const prefix = uniqueId('Pager shop');
        const [, stopped] = [
          await insertMarketplace(server.services, { name: `${prefix} open` }),
          await insertMarketplace(server.services, { name: `${prefix} closed` }),
        ];
        await server.services.db.query('UPDATE marketplaces SET active = false WHERE id = $1', [stopped.id]);
        await page.goto(`${server.url}/admin/view/marketplaces`);
        await page.fill('#q', prefix);
        await page.selectOption('#state', 'inactive');
        await page.click('form.filters button[type=submit]');
        expect(await rows.count()).toBe(1);
        expect(await rows.first().textContent()).toContain(`${prefix} closed`);
        await page.selectOption('#mode', 'live');
        await page.click('form.filters button[type=submit]');
        expect(await page.textContent('#empty')).toContain(words.none);
        expect(await page.inputValue('#q')).toBe(prefix);
        problems.push(...(await checked(page, 'list-marketplaces-empty', lang, size)));
      } finally {
        await context.close();
      }
      expect(problems).toEqual([]);
    });
  }
});

describe('the cabinet’s deals and sessions: pages, filters and an empty state', () => {
  const WORDS = {
    en: { next: 'Next page →', previous: '← Previous page', none: 'Nothing matches these filters.', seller: 'Seller' },
    ru: {
      next: 'Следующая страница →',
      previous: '← Предыдущая страница',
      none: 'По этим фильтрам ничего не найдено.',
      seller: 'Продавец',
    },
  } as const;

  for (const { lang, size } of [PAIRINGS[0], PAIRINGS[1]]) {
    it(`a buyer of 12 deals walks to the second page, filters, finds nothing, and pages their sessions, in ${lang} at ${size.width} px`, async () => {
      const words = WORDS[lang];
      const email = uniqueEmail('many-deals');
      const shop = await insertMarketplace(server.services);
      // Twelve deals: ten on the first page, two on the second; one is a kettle.
      for (let n = 1; n <= 12; n += 1)
        await createDealViaApi(server, shop, { buyer_email: email, title: n === 1 ? 'Kettle' : `Sofa ${n}` });
      const session = await cabinetSession(server.services, email);
      const context = await browser.newContext({ locale: lang === 'ru' ? 'ru-RU' : 'en-GB', viewport: size });
      await context.addCookies([{ name: 'svc_session', value: session.token, url: server.url }]);
      const page = await context.newPage();
      const problems: string[] = [];
      try {
        await page.goto(`${server.url}/cabinet`);
        const deals = page.locator('#deal-list > li');
        expect(await deals.count()).toBe(10);
        // Newest first: the twelfth deal opens the list, the kettle (the first) ends the second page.
        expect(await deals.first().textContent()).toContain('Sofa 12');
        await page.click(`section nav.pager a[rel=next]:has-text("${words.next}")`);
        expect(await deals.count()).toBe(2);
        expect(await deals.last().textContent()).toContain('Kettle');
        problems.push(...(await checked(page, 'list-cabinet-deals-page-2', lang, size)));
        await page.click(`section nav.pager a[rel=prev]:has-text("${words.previous}")`);
        expect(await deals.count()).toBe(10);

        // The text filter finds the kettle alone; as a seller the person has no deal: the empty state says so.
        await page.fill('#q', 'kettle');
        await page.click('#deal-filters button[type=submit]');
        expect(await deals.count()).toBe(1);
        expect(await page.locator('section nav.pager').count()).toBe(0);
        await page.selectOption('#f-role', 'seller');
        await page.click('#deal-filters button[type=submit]');
        expect(await deals.count()).toBe(0);
        expect(await page.textContent('#empty')).toContain(words.none);
        expect(await page.inputValue('#q')).toBe('kettle');
        expect(await page.locator('#f-role option[selected]').textContent()).toBe(words.seller);
        problems.push(...(await checked(page, 'list-cabinet-deals-empty', lang, size)));
        await page.click('#empty a');
        expect(await deals.count()).toBe(10);

        // Signed in on 21 devices: 20 sessions on the first page, this one among them (the most recent), one after.
        for (let n = 0; n < 20; n += 1) await cabinetSession(server.services, email);
        await page.goto(`${server.url}/cabinet/view/security`);
        const sessions = page.locator('#session-list > li');
        expect(await sessions.count()).toBe(20);
        await page.click(`section nav.pager a[rel=next]:has-text("${words.next}")`);
        expect(await sessions.count()).toBe(1);
        problems.push(...(await checked(page, 'list-cabinet-sessions-page-2', lang, size)));
        await page.click(`section nav.pager a[rel=prev]:has-text("${words.previous}")`);
        expect(await sessions.count()).toBe(20);
      } finally {
        await context.close();
      }
      expect(problems).toEqual([]);
    });
  }
});

describe('the cabinet’s connected sites: pages and an empty state', () => {
  const WORDS = {
    en: {
      none: 'You have not signed in to any site with svc ID yet. A site appears here once you sign in to it',
      next: 'Next page →',
      page2: 'Page 2',
      yes: 'Yes, disconnect',
    },
    ru: {
      none: 'Вы ещё не входили ни на один сайт через svc ID. Сайт появится здесь, когда вы войдёте на него',
      next: 'Следующая страница →',
      page2: 'Страница 2',
      yes: 'Да, отключить',
    },
  } as const;

  for (const { lang, size } of [PAIRINGS[0], PAIRINGS[1]]) {
    it(`a person with no sites reads why, then with 11 pages to the eleventh and disconnects it, in ${lang} at ${size.width} px`, async () => {
      const words = WORDS[lang];
      const { db, masterKey } = server.services;
      const session = await cabinetSession(server.services, uniqueEmail('many-sites'));
      const context = await browser.newContext({ locale: lang === 'ru' ? 'ru-RU' : 'en-GB', viewport: size });
      await context.addCookies([{ name: 'svc_session', value: session.token, url: server.url }]);
      const page = await context.newPage();
      const problems: string[] = [];
      try {
        await page.goto(`${server.url}/cabinet/view/connected-sites`);
        expect(await page.textContent('#empty')).toContain(words.none);
        expect(await page.locator('nav.pager').count()).toBe(0);
        problems.push(...(await checked(page, 'list-connected-sites-empty', lang, size)));

        // Eleven sites, Site 1 used last: ten on the first page, the eleventh (used longest ago) on the second.
        const tag = uniqueId('site');
        for (let n = 1; n <= 11; n += 1) {
          await createClient(db, masterKey, {
            client_id: `${tag}-${n}`,
            name: `Site ${n} ${tag}`,
            redirect_uris: [REDIRECT_URI],
          });
          await db.query(
            `INSERT INTO sso_grants (user_id, client_id, last_at) VALUES ($1, $2, now() - make_interval(mins => $3))`,
            [session.userId, `${tag}-${n}`, n],
          );
        }
        await page.reload();
        const sites = page.locator('#site-list > li');
        expect(await sites.count()).toBe(10);
        expect(await sites.first().textContent()).toContain(`Site 1 ${tag}`);
        await page.click(`nav.pager a[rel=next]:has-text("${words.next}")`);
        expect(await page.textContent('nav.pager')).toContain(words.page2);
        expect(await sites.count()).toBe(1);
        expect(await sites.first().textContent()).toContain(`Site 11 ${tag}`);
        problems.push(...(await checked(page, 'list-connected-sites-page-2', lang, size)));

        // Disconnected after its confirmation, it is gone: ten sites, one page.
        await sites.first().locator('a.button').click();
        await Promise.all([
          page.waitForURL(/disconnected=/),
          page.click(`main form button[type=submit]:has-text("${words.yes}")`),
        ]);
        expect(await sites.count()).toBe(10);
        expect(await page.textContent('#site-list')).not.toContain(`Site 11 ${tag}`);
        expect(await page.locator('nav.pager').count()).toBe(0);
      } finally {
        await context.close();
      }
      expect(problems).toEqual([]);
    });
  }
});
