// An operator works with marketplaces in the console by clicking (Debian's Chromium through playwright-core): in
// English at a desktop width, activates a marketplace (keys shown once), rotates its secret key, replays a failed
// webhook delivery, deactivates it, and finds each action in the audit log; in Russian at a phone width, reveals a
// webhook secret and replays every failed delivery since a moment through its confirmation.
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { launchChromium, PHONE } from '../chromium.ts';

const DESKTOP = { width: 1280, height: 800 };

let server: TestServer;
let browser: Browser;
let admin: TestAdministrator;
const receivers: Receiver[] = [];

beforeAll(async () => {
  // Retries an hour apart: whatever arrives during the test after a failure is the operator's replay.
  server = await startTestServer({ worker: true, env: { WEBHOOK_RETRY_BASE_SECONDS: '3600' } });
  admin = await administrator(server, 'admin');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await Promise.all(receivers.map((receiver) => receiver.stop()));
  await server?.stop();
});

async function operator(locale: 'en' | 'ru', viewport: typeof DESKTOP): Promise<Page> {
  const context = await browser.newContext({ locale: locale === 'ru' ? 'ru-RU' : 'en-US', viewport });
  await context.addCookies([{ name: 'svc_admin', value: admin.token, url: `${server.url}/admin` }]);
  return context.newPage();
}

async function receiver(script: Parameters<typeof startReceiver>[0] = []) {
  const started = await startReceiver(script);
  receivers.push(started);
  return started;
}

const ping = async (key: string) =>
  (await fetch(`${server.url}/api/mkt/ping`, { headers: { 'X-Svc-Key': key } })).status;
const lookup = async (publicKey: string) =>
  (
    await post(`${server.url}/api/mkt/widget/deals/lookup`, {
      public_key: publicKey,
      external_id: uniqueId('order'),
      buyer_email: uniqueEmail('buyer'),
    })
  ).status;
const adminJson = async (path: string) => json(await fetch(`${server.url}${path}`, { headers: admin.headers }));
const deliveryStatus = async (id: string) =>
  (await server.services.db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [id])).rows[0]?.status;

describe('marketplaces in the console', () => {
  it(
    'an operator activates, rotates, replays, deactivates, and the audit log shows it all',
    { timeout: 120_000 },
    async () => {
      const page = await operator('en', DESKTOP);
      const name = `Console shop ${uniqueId()}`;

      // Activate: the keys appear once, in the answer to the form, never in the address.
      await page.goto(`${server.url}/admin/view/marketplaces?lang=en`);
      await page.click('a[href="/admin/view/marketplaces/new"]');
      await page.fill('#name', name);
      await page.selectOption('#mode', 'sandbox');
      await page.fill('#allowed_origins', 'https://console-shop.example');
      await page.click('form[action="/admin/view/marketplaces"] button[type=submit]');
      const secretKey = (await page.textContent('#secret-key'))!;
      const publicKey = (await page.textContent('#public-key'))!;
      expect(secretKey).toMatch(/^mk_/);
      expect(publicKey).toMatch(/^pk_/);
      expect(await page.textContent('.error')).toContain('shown only this once');
      expect(page.url()).not.toContain(secretKey);
      // Post/redirect/get: the keys are on a page of their own, and reloading it creates nothing and shows them no more.
      expect(new URL(page.url()).pathname).toMatch(/^\/admin\/view\/shown\/[0-9a-f-]{36}$/);
      expect(await ping(secretKey)).toBe(200);
      const shownUrl = page.url();
      await page.reload();
      expect(page.url()).toBe(shownUrl);
      expect(await page.textContent('h1')).toBe('These keys are not shown again');
      expect(await page.textContent('.notice')).toContain('Nothing was created, changed or revealed again');
      expect(await page.content()).not.toContain(secretKey);
      const named = await server.services.db.query('SELECT id FROM marketplaces WHERE name = $1', [name]);
      expect(named.rows).toHaveLength(1);
      await page.click('text=Open the marketplace’s card');
      const cardUrl = page.url();
      const marketplaceId = cardUrl.split('/').at(-1)!;
      expect(await page.textContent('h1')).toBe(name);
      expect(await page.textContent('#keys ~ .table')).toContain(secretKey.slice(0, 11));
      // Shown once: the card never shows the keys again.
      expect(await page.content()).not.toContain(secretKey);

      // Rotate the secret key with an hour of overlap, through the confirmation.
      await page.selectOption('#overlap', '3600');
      await page.click('#rotate-secret-key button[type=submit]');
      expect(await page.textContent('.consequence')).toContain('1 hour');
      await page.click('button.danger:has-text("Yes, do it")');
      const newKey = (await page.textContent('#secret-key'))!;
      expect(newKey).toMatch(/^mk_/);
      expect(newKey).not.toBe(secretKey);
      // Reloading the rotation's answer rotates nothing again: only the first rotation is in the audit log.
      await page.reload();
      expect(await page.textContent('h1')).toBe('These keys are not shown again');
      expect(await ping(newKey)).toBe(200);
      const rotations = await adminJson(`/admin/audit?object_id=${marketplaceId}&action=rotateMarketplaceSecretKey`);
      expect(rotations.items).toHaveLength(1);
      await page.goto(`${cardUrl}?lang=en`);
      expect(await ping(secretKey)).toBe(200); // during the overlap
      expect(await ping(newKey)).toBe(200);
      // The hour passes (the database's clock decides; the JSON tests wait out a real overlap of 2 s).
      await server.services.db.query(
        "UPDATE marketplace_keys SET expires_at = now() - interval '1 second' WHERE marketplace_id = $1 AND kind = 'secret' AND expires_at IS NOT NULL",
        [marketplaceId],
      );
      expect(await ping(secretKey)).toBe(401);
      expect(await ping(newKey)).toBe(200);

      // A webhook whose receiver answers 500 to the first event, then is fixed.
      const hook = await receiver([{ status: 500 }]);
      expect((await post(`${server.url}/api/mkt/webhook`, { url: hook.url }, { 'X-Svc-Key': newKey })).status).toBe(
        200,
      );
      const deal = await json(
        await post(
          `${server.url}/api/mkt/deals`,
          { external_id: uniqueId('order'), buyer_email: uniqueEmail('buyer'), title: 'Desk', amount: 300 },
          { 'X-Svc-Key': newKey },
        ),
      );
      await expect.poll(() => hook.received.length, { timeout: 20_000 }).toBe(1);

      // Find the failed attempt in the webhook log, with its filters, and replay it.
      await expect
        .poll(
          async () => {
            await page.goto(`${cardUrl}?lang=en`);
            await page.selectOption('#f-status', 'retrying');
            await page.click('#log-filters button[type=submit]');
            return page.locator('#webhook-log tbody tr').count();
          },
          { timeout: 20_000 },
        )
        .toBe(1);
      const row = page.locator('#webhook-log tbody tr').first();
      expect(await row.textContent()).toContain('deal.created');
      expect(await row.textContent()).toContain('500');
      await row.locator('summary').click();
      expect(await row.locator('pre').first().textContent()).toContain(deal.id);
      // The status is a badge in words; the Replay button is whole within the desktop's viewport.
      expect(await row.locator('.badge').textContent()).toBe('failed, will retry');
      const replayBox = (await row.locator('button:has-text("Replay")').boundingBox())!;
      expect(replayBox.x + replayBox.width).toBeLessThanOrEqual(DESKTOP.width);
      const failedDelivery = (await row.getAttribute('data-delivery'))!;
      await row.locator('button:has-text("Replay")').click();
      expect(await page.textContent('.notice')).toContain('1 event is being sent again');
      // At once after the redirect, the replay is listed (sending, or already attempted) with a link to the failure.
      expect(await page.locator(`a[href="#delivery-${failedDelivery}"]`).count()).toBeGreaterThanOrEqual(1);
      await expect.poll(() => hook.received.length, { timeout: 20_000 }).toBe(2);
      await expect
        .poll(
          async () => {
            await page.goto(`${cardUrl}?lang=en`);
            return page.locator(`#webhook-log tr:has(a[href="#delivery-${failedDelivery}"]) .badge`).allTextContents();
          },
          { timeout: 20_000 },
        )
        .toEqual(['delivered']);
      expect(hook.received[1].body.equals(hook.received[0].body)).toBe(true);
      expect(hook.received[1].headers['x-svc-delivery']).not.toBe(hook.received[0].headers['x-svc-delivery']);

      // Deactivate, through the confirmation: the keys stop, the deal stays readable.
      await page.click('#activation-form button[type=submit]');
      expect(await page.textContent('.consequence')).toContain('refused at once');
      await page.click('button.danger:has-text("Yes, do it")');
      expect(await page.textContent('.notice')).toContain('deactivated');
      expect(await ping(newKey)).toBe(401);
      expect(await lookup(publicKey)).toBe(401);
      expect((await adminJson(`/admin/deals/${deal.id}`)).id).toBe(deal.id);

      // The audit log shows each action with the operator as its actor.
      await page.goto(`${server.url}/admin/view/audit?object_id=${marketplaceId}&lang=en`);
      const rows = await page.locator('tbody tr').allTextContents();
      for (const action of ['createMarketplace', 'rotateMarketplaceSecretKey', 'deactivateMarketplace']) {
        expect(
          rows.some((text) => text.includes(action) && text.includes(admin.email)),
          action,
        ).toBe(true);
      }
      await page.goto(
        `${server.url}/admin/view/audit?action=replayWebhook&actor=${encodeURIComponent(admin.email)}&lang=en`,
      );
      expect(await page.locator('tbody tr').count()).toBe(1);
      expect(await page.content()).not.toContain(newKey);
    },
  );

  it(
    'in Russian on a phone: the new keys fit the screen, each copies with its button, and a reload creates nothing',
    { timeout: 120_000 },
    async () => {
      const page = await operator('ru', PHONE);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      const name = `Магазин на телефоне ${uniqueId()}`;
      await page.goto(`${server.url}/admin/view/marketplaces/new?lang=ru`);
      await page.fill('#name', name);
      await page.fill('#allowed_origins', 'https://phone-shop.example');
      await page.click('form[action="/admin/view/marketplaces"] button[type=submit]');
      const secretKey = (await page.textContent('#secret-key'))!.trim();
      expect(secretKey).toMatch(/^mk_/);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
      // The key is one block as wide as the page, in a few lines, not a column of single characters.
      const box = (await page.locator('#secret-key').boundingBox())!;
      expect(box.width).toBeGreaterThan(PHONE.width / 2);
      const lineHeight = Number(
        await page.evaluate("parseFloat(getComputedStyle(document.getElementById('secret-key')).lineHeight) || 20"),
      );
      expect(box.height / lineHeight).toBeLessThan(6);
      const copy = page.locator('button[data-copy-target="secret-key"]');
      expect(await copy.isVisible()).toBe(true);
      const copyBox = (await copy.boundingBox())!;
      expect(copyBox.x + copyBox.width).toBeLessThanOrEqual(PHONE.width);
      expect(await copy.textContent()).toBe('Скопировать');
      await copy.click();
      await expect.poll(() => page.textContent('#copy-status')).toBe('Скопировано в буфер обмена.');
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secretKey);
      await page.locator('button[data-copy-target="public-key"]').click();
      expect(await page.evaluate('navigator.clipboard.readText()')).toMatch(/^pk_/);

      await page.reload();
      expect(await page.textContent('h1')).toBe('Эти ключи больше не показываются');
      expect(await page.content()).not.toContain(secretKey);
      const named = await server.services.db.query('SELECT id FROM marketplaces WHERE name = $1', [name]);
      expect(named.rows).toHaveLength(1);
    },
  );

  it(
    'registers and then replaces a webhook from the card, after a confirmation, audited; a bad URL changes nothing',
    { timeout: 120_000 },
    async () => {
      const made = await json(
        await post(`${server.url}/admin/marketplaces`, { name: `Hook shop ${uniqueId()}` }, admin.headers),
      );
      const registration = async () =>
        json(await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': made.secret_key } }));
      const first = await receiver();
      const second = await receiver();
      const page = await operator('en', DESKTOP);
      await page.goto(`${server.url}/admin/view/marketplaces/${made.id}?lang=en`);
      expect(await page.textContent('#webhook-form h3')).toBe('Register the webhook');

      // A URL that is not a URL: said in words, nothing registered.
      await page.fill('#webhook_url', 'https://Shop.example/hooks');
      await page.click('#webhook-form button[type=submit]');
      expect(await page.textContent('main [role=alert]')).toContain('lower-case host');
      expect((await fetch(`${server.url}/api/mkt/webhook`, { headers: { 'X-Svc-Key': made.secret_key } })).status).toBe(
        404,
      );

      await page.fill('#webhook_url', first.url);
      await page.click('#webhook-form button[type=submit]');
      expect(await page.textContent('.notice')).toContain('The webhook is registered');
      expect(await registration()).toMatchObject({ url: first.url });

      // Replacing it asks first, naming both addresses; then only deal.created goes to the new one.
      await page.fill('#webhook_url', second.url);
      await page.uncheck('input[name=webhook_all]');
      await page.check('input[name=webhook_events][value="deal.created"]');
      await page.click('#webhook-form button[type=submit]');
      expect(await page.textContent('.consequence')).toContain(first.url);
      expect(await page.textContent('.consequence')).toContain(second.url);
      expect(await registration()).toMatchObject({ url: first.url });
      await page.click('button.danger:has-text("Yes, do it")');
      expect(await page.textContent('.notice')).toContain('The webhook is changed');
      expect(await registration()).toMatchObject({ url: second.url, events: ['deal.created'] });

      const audit = await adminJson(`/admin/audit?object_id=${made.id}&action=registerWebhook`);
      expect(audit.items.map((item: { actor: string }) => item.actor)).toEqual([admin.email, admin.email]);
      expect(audit.items[0]).toMatchObject({
        before: { url: first.url },
        after: { url: second.url, events: ['deal.created'] },
      });

      // Another role may not change it: 403, nothing changed.
      const support = await administrator(server, 'support');
      const refused = await fetch(`${server.url}/admin/view/marketplaces/${made.id}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { Cookie: support.cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          _csrf: support.csrf,
          intent: 'save-webhook',
          webhook_url: first.url,
          confirmed: 'yes',
        }).toString(),
      });
      expect(refused.status).toBe(403);
      expect(await registration()).toMatchObject({ url: second.url });

      // On a phone in Russian the form fits the screen.
      const phone = await operator('ru', PHONE);
      await phone.goto(`${server.url}/admin/view/marketplaces/${made.id}?lang=ru`);
      expect(await phone.textContent('#webhook-form h3')).toBe('Изменить вебхук');
      expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    },
  );

  it(
    'in Russian on a phone: reveals the webhook secret and replays failed deliveries since a moment',
    { timeout: 120_000 },
    async () => {
      const made = await json(
        await post(`${server.url}/admin/marketplaces`, { name: 'Телефонный магазин' }, admin.headers),
      );
      const hook = await receiver([{ status: 410 }]);
      const { secret } = await json(
        await post(`${server.url}/api/mkt/webhook`, { url: hook.url }, { 'X-Svc-Key': made.secret_key }),
      );
      const since = new Date(Date.now() - 120_000).toISOString().slice(0, 16);
      const page = await operator('ru', PHONE);
      await page.goto(`${server.url}/admin/view/marketplaces?lang=ru`);
      await page.fill('#q', 'Телефонный');
      await page.click('form.filters button[type=submit]');
      await page.click(`a[href="/admin/view/marketplaces/${made.id}"]`);
      expect(await page.getAttribute('html', 'lang')).toBe('ru');
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);

      // The reveal is post/redirect/get: the secret on a page of its own, once; a reload shows it no more.
      await page.click('#reveal-webhook-secret button');
      expect(page.url()).toMatch(/\/admin\/view\/shown\/[0-9a-f-]{36}$/);
      expect(await page.textContent('#webhook-secret')).toBe(secret);
      await page.reload();
      expect(await page.textContent('h1')).toBe('Эти ключи больше не показываются');
      expect(await page.content()).not.toContain(secret);
      await page.click(`main a[href="/admin/view/marketplaces/${made.id}"]`);

      // The test event fails for good (410); the receiver is fixed after that one answer.
      await page.click('#test-webhook button');
      expect(await page.textContent('.notice')).toContain('webhook.test');
      const [delivery] = (
        await server.services.db.query(
          "SELECT d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.marketplace_id = $1 AND e.event = 'webhook.test'",
          [made.id],
        )
      ).rows;
      await expect.poll(() => deliveryStatus(delivery.id), { timeout: 20_000 }).toBe('failed');

      await page.reload();
      await page.fill('#since', since);
      await page.click('#replay-since button[type=submit]');
      expect(await page.textContent('.consequence')).toContain('1');
      await page.click('button.danger');
      expect(await page.textContent('.notice')).toContain('Событий отправляется снова: 1');
      // On the phone the log is a list of cards: the status badge and the Replay button of each are on the screen.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
      const card = page.locator('#webhook-log tbody tr').first();
      expect(await card.locator('.badge').isVisible()).toBe(true);
      const replay = (await card.locator('button:has-text("Отправить снова")').boundingBox())!;
      expect(replay.x).toBeGreaterThanOrEqual(0);
      expect(replay.x + replay.width).toBeLessThanOrEqual(PHONE.width);
      const badgeBox = (await card.locator('.badge').boundingBox())!;
      expect(badgeBox.x + badgeBox.width).toBeLessThanOrEqual(PHONE.width);
      await expect.poll(() => hook.received.length, { timeout: 20_000 }).toBe(2);
      const audit = await adminJson(`/admin/audit?object_id=${made.id}`);
      expect(audit.items.map((item: { action: string; actor: string }) => `${item.action} ${item.actor}`)).toEqual(
        expect.arrayContaining([
          `revealWebhookSecret ${admin.email}`,
          `sendWebhookTest ${admin.email}`,
          `replayFailedWebhooks ${admin.email}`,
        ]),
      );
      expect(JSON.stringify(audit)).not.toContain(secret);
    },
  );
});
