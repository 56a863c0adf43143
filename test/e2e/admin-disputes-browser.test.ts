// An arbiter works the disputes queue in Debian's Chromium: at a desktop in English, finds the open dispute, reads
// both sides' messages with their evidence, decides a refund with a reason through the confirmation, sees the decision
// on the deal page and in the audit log under their own e-mail; on a phone in Russian, decides a release the same way.
import { type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureUser } from '../../src/accounts/users.ts';
import { addDisputeMessage, moveEscrow } from '../../src/deals/service.ts';
import { setDealDestination } from '../../src/money/destinations.ts';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { insertHeldDeal, insertMarketplace } from '../factories.ts';
import { randomUUID } from 'node:crypto';
import { json, startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 900 };

let server: TestServer;
let browser: Browser;
let arbiter: TestAdministrator;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  browser = await launchChromium();
  arbiter = await administrator(server, 'arbiter');
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A held deal whose buyer opened a dispute, and both sides wrote: the buyer with a photo, the seller with a receipt. */
async function disputedDeal(words: { reason: string; buyer: string; seller: string }) {
  const { services } = server;
  const held = await insertHeldDeal(services, { holdExpiresAt: new Date(Date.now() + 7 * 86_400_000) });
  const sellerEmail = uniqueEmail('seller');
  // The workflow starts from these records at the first change, seller included.
  await services.db.query('UPDATE deals SET seller_email = $2 WHERE id = $1', [held.dealId, sellerEmail]);
  // Where a release pays the seller: the marketplace's test card for this deal.
  await setDealDestination(services.db, services.masterKey, held.dealId, {
    type: 'test_card',
    token: '4111111111111111',
  });
  const buyer = { kind: 'person' as const, user: (await ensureUser(services.db, { email: held.buyerEmail })).user };
  const seller = { kind: 'person' as const, user: (await ensureUser(services.db, { email: sellerEmail })).user };
  await moveEscrow(services, buyer, held.dealId, 'dispute', words.reason);
  await addDisputeMessage(services, buyer, held.dealId, {
    text: words.buyer,
    files: [{ name: 'broken-leg.jpg', contentType: 'image/jpeg', bytes: Buffer.from('jpeg') }],
  });
  await addDisputeMessage(services, seller, held.dealId, {
    text: words.seller,
    files: [{ name: 'courier-receipt.pdf', contentType: 'application/pdf', bytes: Buffer.from('%PDF') }],
  });
  return held;
}

async function signedIn(locale: 'en' | 'ru', viewport: typeof DESKTOP): Promise<BrowserContext> {
  const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
  await context.addCookies([{ name: 'svc_admin', value: arbiter.token, url: `${server.url}/admin` }]);
  return context;
}

const dealState = async (dealId: string) =>
  json(
    await fetch(`${server.url}/admin/deals/${dealId}`, { headers: { Authorization: `Bearer ${server.adminToken}` } }),
  );

/** The arbiter's form posted over HTTP, as a reload or a second tab sends it again. */
const submit = (path: string, fields: Record<string, string>) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { Cookie: arbiter.cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'en' },
    body: new URLSearchParams({ _csrf: arbiter.csrf, ...fields }).toString(),
  });
const count = async (sql: string, values: unknown[]) =>
  Number((await server.services.db.query<{ n: string }>(sql, values)).rows[0].n);

describe('the disputes queue in a browser', () => {
  it('an arbiter’s decision sent twice decides once and is audited once', async () => {
    const deal = (await disputedDeal({ reason: 'Never arrived', buyer: 'Nothing came', seller: 'Sent on time' }))
      .dealId;
    const decide = `/admin/view/disputes/${deal}/decide`;
    const fields = { outcome: 'refund', reason: 'No proof of delivery' };
    // Unconfirmed, the decision asks first; the confirmation's form carries its one-time key.
    const asked = await submit(decide, fields);
    expect(asked.status).toBe(200);
    const question = await asked.text();
    expect(question).toContain('This cannot be undone.');
    const key = /name="_once" value="([0-9a-f-]{36})"/.exec(question)?.[1];
    expect(key).toBeDefined();
    const confirmed = { ...fields, confirmed: 'yes', _once: key! };
    const first = await submit(decide, confirmed);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(`/admin/view/deals/${deal}?done=decided_refund`);
    const again = await submit(decide, confirmed);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(`/admin/view/deals/${deal}?done=decided_refund`);
    const audited = "SELECT count(*) AS n FROM audit_log WHERE action = 'adminResolveDispute' AND object_id = $1";
    expect(await count(audited, [deal])).toBe(1);
    // Without the key (another tab's stale form), the decided dispute is refused in words, nothing audited.
    const stale = await submit(decide, { ...fields, confirmed: 'yes', _once: randomUUID() });
    expect(stale.status).toBe(400);
    expect((await stale.text()).replace(/\s+/g, ' ')).toContain('Not done');
    expect(await count(audited, [deal])).toBe(1);
  });

  it('an arbiter at a desktop in English decides a refund with a reason, and the audit log names them', async () => {
    const deal = await disputedDeal({
      reason: 'The armchair arrived broken',
      buyer: 'Photo of the broken leg attached',
      seller: 'It left the warehouse intact',
    });
    const context = await signedIn('en', DESKTOP);
    const page = await context.newPage();
    await page.goto(`${server.url}/admin`);
    await page.click('header nav.sections a[href="/admin/view/disputes"]');
    expect(await page.textContent('h1')).toBe('Disputes');
    // The header counts the open disputes.
    expect(await page.textContent('header nav.sections a[href="/admin/view/disputes"]')).toMatch(/^Disputes \(\d+\)$/);

    // The queue is a list: the deal's title, how long it waits, the marketplace, the deal and its contract; no thread.
    const row = page.locator(`#dispute-queue tr#dispute-${deal.dealId}`);
    const rowText = (await row.textContent())!;
    expect(rowText).toContain(deal.externalId);
    expect(rowText).toContain('The armchair arrived broken');
    expect(rowText).toMatch(/\d+ minutes?/);
    expect(await row.locator(`a[href="/admin/view/deals/${deal.dealId}"]`).count()).toBe(1);
    expect(await row.locator('a[href^="/admin/view/marketplaces/"]').count()).toBe(1);
    // The contract column links the deal's contract (the offer, as this deal has no contract).
    const contract = row.locator('td[data-label="Contract"] a');
    expect(await contract.textContent()).toBe('offer.pdf');
    expect(await contract.getAttribute('href')).toMatch(/^\/admin\/documents\/[0-9a-f-]{36}\/content$/);
    expect(await page.textContent('main')).not.toContain('Photo of the broken leg attached');
    await row.locator(`a[href="/admin/view/disputes/${deal.dealId}"]`).click();
    expect(page.url()).toContain(`/admin/view/disputes/${deal.dealId}`);

    const card = page.locator(`#dispute-${deal.dealId}`);
    const text = (await card.textContent())!;
    expect(text).toContain(deal.externalId);
    expect(text).toContain('The armchair arrived broken');
    expect(text).toContain('Buyer');
    expect(text).toContain('Photo of the broken leg attached');
    expect(text).toContain('Seller');
    expect(text).toContain('It left the warehouse intact');
    const evidence = card.locator('a', { hasText: 'courier-receipt.pdf' });
    const download = await fetch(`${server.url}${await evidence.getAttribute('href')}`, {
      headers: { Cookie: arbiter.cookie },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).toString()).toBe('%PDF');

    // The decision needs a reason and a confirmation; until then the money stays held.
    await card.locator('input[name=outcome][value=refund]').check();
    await card.locator('textarea[name=reason]').fill('The seller shows no proof of an intact delivery');
    await card.locator('form[action$="/decide"] button[type=submit]').click();
    expect(await page.textContent('h1')).toContain('Decide for the buyer: refund');
    expect(await page.textContent('.consequence')).toContain('goes back to the buyer');
    expect((await dealState(deal.dealId)).status).toBe('disputed');
    await Promise.all([
      page.waitForURL(`**/admin/view/deals/${deal.dealId}?done=decided_refund`),
      page.click('main form button[type=submit]'),
    ]);

    expect(await page.textContent('main [role=status]')).toContain('Decided: the money goes back to the buyer');
    const decision = (await page.textContent('#dispute ~ .decision, .decision'))!;
    expect(decision).toContain('The money goes back to the buyer');
    expect(decision).toContain('The seller shows no proof of an intact delivery');
    expect(await page.textContent('dd.status')).toContain('refunded');
    expect(await page.textContent('#timeline ~ .table')).toContain('deal.refunded');
    expect((await dealState(deal.dealId)).status).toBe('refunded');

    await page.goto(`${server.url}/admin/view/audit?action=adminResolveDispute&object_id=${deal.dealId}`);
    const auditRow = (await page.textContent('tbody tr'))!;
    expect(auditRow).toContain(arbiter.email);
    expect(auditRow).toContain('adminResolveDispute');
    await context.close();
  });

  it('an arbiter on a phone in Russian decides a release; the pages fit the screen', async () => {
    const deal = await disputedDeal({
      reason: 'Не тот цвет',
      buyer: 'Заказывала синий',
      seller: 'В заказе указан зелёный',
    });
    const context = await signedIn('ru', PHONE);
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/view/disputes`);
    expect(await page.getAttribute('html', 'lang')).toBe('ru');
    expect(await page.textContent('h1')).toBe('Споры');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    const row = page.locator(`#dispute-queue tr#dispute-${deal.dealId}`);
    expect(await row.locator('td').first().isVisible()).toBe(true);
    await row.locator(`a[href="/admin/view/disputes/${deal.dealId}"]`).click();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    const card = page.locator(`#dispute-${deal.dealId}`);
    expect(await card.textContent()).toContain('Заказывала синий');
    expect(await card.textContent()).toContain('В заказе указан зелёный');

    await card.locator('input[name=outcome][value=release]').check();
    await card.locator('textarea[name=reason]').fill('В заказе действительно зелёный');
    await card.locator('form[action$="/decide"] button[type=submit]').click();
    expect(await page.textContent('h1')).toContain('Решить в пользу продавца');
    await Promise.all([
      page.waitForURL(`**/admin/view/deals/${deal.dealId}?done=decided_release`),
      page.click('main form button[type=submit]'),
    ]);
    expect(await page.textContent('main [role=status]')).toContain('Решено: деньги переводятся продавцу');
    expect(await page.textContent('.decision')).toContain('В заказе действительно зелёный');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    // Paid once the payout the release started went through.
    await expect.poll(async () => (await dealState(deal.dealId)).status).toBe('paid');
    await context.close();
  });

  // Last: its 26 open disputes, newest in the queue, would push the tests' own disputes off the first page.
  it('the queue narrows to one marketplace, kept across its pages and tabs, and says when it has none there', async () => {
    const { services } = server;
    const shop = await insertMarketplace(services);
    // Another marketplace's dispute, opened first, then 26 open disputes of one marketplace in the order the queue
    // shows them (25 a page, then one); written directly, as the queue reads only the dispute rows and their deals.
    const other = await disputedDeal({ reason: 'Elsewhere', buyer: 'b', seller: 's' });
    const deals = [];
    for (let index = 0; index < 26; index++) {
      const held = await insertHeldDeal(services, { marketplaceId: shop.id });
      await services.db.query(
        `INSERT INTO deal_disputes (deal_id, status, reason, opened_by, opened_at)
         VALUES ($1, 'open', $2, 'buyer', clock_timestamp())`,
        [held.dealId, `Filtered dispute ${index}`],
      );
      deals.push(held.dealId);
    }

    const context = await signedIn('en', DESKTOP);
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/view/disputes`);
    expect(await page.locator(`#dispute-queue tr#dispute-${other.dealId}`).count()).toBe(1);
    await page.selectOption('#marketplace_id', shop.id);
    await Promise.all([page.waitForURL(/marketplace_id=/), page.click('#dispute-filters button[type=submit]')]);
    const shown = () => page.locator('#dispute-queue tbody tr').evaluateAll((rows) => rows.map((row) => row.id));
    expect(await shown()).toEqual(deals.slice(0, 25).map((id) => `dispute-${id}`));
    expect(await page.textContent('nav.pager')).toContain('Page 1');
    await Promise.all([page.waitForURL(/starting_after=/), page.click('nav.pager a[rel=next]')]);
    // The second page is the same marketplace's last dispute, and the filter still says which marketplace.
    expect(new URL(page.url()).searchParams.get('marketplace_id')).toBe(shop.id);
    expect(await shown()).toEqual([`dispute-${deals[25]}`]);
    expect(await page.inputValue('#marketplace_id')).toBe(shop.id);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(DESKTOP.width);
    await context.close();

    // On a phone in Russian, the decided tab keeps the marketplace: it has decided nothing there yet, said in words.
    const phone = await signedIn('ru', PHONE);
    const ru = await phone.newPage();
    await ru.goto(`${server.url}/admin/view/disputes?marketplace_id=${shop.id}`);
    await ru.click('main a[href*="status=decided"]');
    expect(new URL(ru.url()).searchParams.get('marketplace_id')).toBe(shop.id);
    expect(await ru.locator('#dispute-queue').count()).toBe(0);
    expect(await ru.textContent('#empty')).toContain('По этим фильтрам ничего не найдено.');
    await ru.click('#empty a');
    expect(new URL(ru.url()).search).toBe('');
    expect(await ru.locator(`#dispute-queue tr#dispute-${other.dealId}`).count()).toBe(1);
    expect(await ru.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await phone.close();
  });
});
