// The operator-wide second-factor requirement turned on and off again: it holds for every marketplace at once, so this
// file runs in the e2e-keys project (vitest.config.ts), on a database no other file shares at the same time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, post, startTestServer, type TestServer } from '../helpers.ts';
import { PageBrowser } from '../page-browser.ts';
import { insertHeldDealSignedIn, insertMarketplace } from '../factories.ts';
import { administrator } from '../console-helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: true });
});
afterAll(async () => {
  await server?.stop();
});

describe('the operator requiring a second factor before money moves', () => {
  it('holds for a marketplace that requires none, and lets the money move again once turned off', async () => {
    const admin = await administrator(server);
    const console = new PageBrowser(server, { 'Accept-Language': 'en' });
    console.cookies.set('svc_admin', admin.token);
    const set = async (required: 'yes' | 'no') => {
      const done = await console.post('/admin/view/settings/second-factor', {
        _csrf: admin.csrf,
        required,
        confirmed: 'yes',
      });
      expect(done.status).toBe(303);
      return done.location;
    };

    const shop = await insertMarketplace(server.services);
    const deal = await insertHeldDealSignedIn(server.services, { marketplaceId: shop.id });
    const release = () => post(`${server.url}/cabinet/deals/${deal.dealId}/escrow/release`, {}, deal.buyer);

    try {
      expect(await set('yes')).toBe('/admin/view/settings/second-factor?done=required');
      const setting = await fetch(`${server.url}/api/mkt/settings/second-factor`, {
        headers: { 'X-Svc-Key': shop.secret_key },
      });
      expect(await json(setting)).toEqual({ required: false, operator_required: true });

      const refused = await release();
      expect(refused.status).toBe(403);
      expect((await json(refused)).code).toBe('second_factor_required');
      const page = new PageBrowser(server, { 'Accept-Language': 'ru' });
      page.cookies.set(...deal.sessions.buyer.cookie);
      const dealPage = await page.get(`/cabinet/view/deals/${deal.dealId}`);
      expect(dealPage.status).toBe(200);
      expect(dealPage.text).toContain('второго фактора');
    } finally {
      expect(await set('no')).toBe('/admin/view/settings/second-factor?done=not_required');
    }

    const released = await release();
    expect(released.status).toBe(200);
    expect((await json(released)).status).toBe('released');
    const audit = await server.services.db.query<{ after: unknown }>(
      `SELECT after FROM audit_log WHERE action = 'setSecondFactorRequirement' AND actor LIKE '%' || $1 || '%' ORDER BY id`,
      [admin.email],
    );
    expect(audit.rows.map((row) => row.after)).toEqual([
      { require_second_factor: true },
      { require_second_factor: false },
    ]);
  });
});
