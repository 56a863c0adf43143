// The marketplace's fee through the servers: a schedule set by an administrator (audited, on the card), applied to
// each new deal's amount and kept by the deal; a deal's own fee from the marketplace (0 ≤ fee < amount), compared on a
// repeat; the widget's deals get the schedule's; the deal shows fee and seller_amount.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator } from '../console-helpers.ts';
import { moneyClient } from '../money-helpers.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';

let server: TestServer;
let money: ReturnType<typeof moneyClient>;

beforeAll(async () => {
  server = await startTestServer();
  money = moneyClient(server);
});
afterAll(async () => {
  await server?.stop();
});

describe("the marketplace's fee", () => {
  it('is set by an administrator, audited, shown on the card, and taken from new deals only', async () => {
    const shop = await money.marketplace();
    const card = await json(await fetch(`${server.url}/admin/marketplaces/${shop.id}`, { headers: money.admin() }));
    expect(card).toMatchObject({
      fee_schedule: { percent: null, fixed: null, min: null, max: null },
      fee_moment: 'close',
    });
    const before = await money.createDeal(shop, { amount: 1000 });
    expect(await money.getDeal(shop, before.created.id)).toMatchObject({ amount: 1000, fee: 0, seller_amount: 1000 });

    const changed = await money.patch(shop.id, {
      fee_schedule: { percent: 2.5, fixed: 10, min: 20, max: 5000 },
      fee_moment: 'payment',
    });
    expect(changed.status).toBe(200);
    expect(await json(changed)).toMatchObject({
      fee_schedule: { percent: 2.5, fixed: 10, min: 20, max: 5000 },
      fee_moment: 'payment',
    });
    const audit = (
      await json(
        await fetch(
          `${server.url}/admin/audit?${new URLSearchParams({ object_id: shop.id, action: 'updateMarketplace' })}`,
          { headers: money.admin() },
        ),
      )
    ).items;
    expect(audit[0].before).toMatchObject({ fee_schedule: { percent: null }, fee_moment: 'close' });
    expect(audit[0].after).toMatchObject({ fee_schedule: { percent: 2.5, fixed: 10 }, fee_moment: 'payment' });

    // 2.5 % of 1234.56 is 30.864, 30.86 to the kopeck (half-up), plus 10.
    const after = await money.createDeal(shop, { amount: 1234.56 });
    expect(await money.getDeal(shop, after.created.id)).toMatchObject({
      amount: 1234.56,
      fee: 40.86,
      seller_amount: 1193.7,
    });
    // The minimum, and never more than the amount.
    expect(await money.getDeal(shop, (await money.createDeal(shop, { amount: 100 })).created.id)).toMatchObject({
      fee: 20,
      seller_amount: 80,
    });
    expect(await money.getDeal(shop, (await money.createDeal(shop, { amount: 15 })).created.id)).toMatchObject({
      fee: 15,
      seller_amount: 0,
    });
    // The deal made before keeps its fee; one made while the schedule was this one keeps it after another change.
    expect(await money.patch(shop.id, { fee_schedule: { percent: 10 } })).toHaveProperty('status', 200);
    expect(await money.getDeal(shop, before.created.id)).toMatchObject({ fee: 0, seller_amount: 1000 });
    expect(await money.getDeal(shop, after.created.id)).toMatchObject({ fee: 40.86, seller_amount: 1193.7 });
    // The whole schedule was replaced: the parts left out are not set now.
    expect(
      await json(await fetch(`${server.url}/admin/marketplaces/${shop.id}`, { headers: money.admin() })),
    ).toMatchObject({
      fee_schedule: { percent: 10, fixed: null, min: null, max: null },
      fee_moment: 'payment',
    });
  });

  it('refuses a schedule that is not money', async () => {
    const shop = await money.marketplace();
    for (const fee_schedule of [
      { percent: 101 },
      { percent: 2.555 },
      { fixed: -1 },
      { min: 0.001 },
      { max: 'lots' },
      { other: 1 },
    ]) {
      const refused = await money.patch(shop.id, { fee_schedule });
      expect(refused.status, JSON.stringify(fee_schedule)).toBe(400);
      expect((await json(refused)).code).toBe('validation_failed');
    }
    expect((await money.patch(shop.id, { fee_moment: 'later' })).status).toBe(400);
  });

  it("takes the marketplace's own fee for a deal: 0 up to less than the amount, compared on a repeat", async () => {
    const shop = await money.marketplace({ fee_schedule: { percent: 5 } });
    const own = await money.createDeal(shop, { amount: 500.1, fee: 100 });
    expect(own.response.status).toBe(201);
    expect(await money.getDeal(shop, own.created.id)).toMatchObject({ amount: 500.1, fee: 100, seller_amount: 400.1 });
    const none = await money.createDeal(shop, { amount: 80, fee: 0 });
    expect(await money.getDeal(shop, none.created.id)).toMatchObject({ fee: 0, seller_amount: 80 });

    for (const [amount, fee] of [
      [100, 100],
      [100, 100.01],
      [0, 0.01],
    ]) {
      const refused = await money.createDeal(shop, { amount, fee });
      expect(refused.response.status, `${fee} of ${amount}`).toBe(400);
      expect(refused.created).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'fee', message: expect.stringMatching(/less than the amount/) }],
      });
    }
    expect((await money.createDeal(shop, { amount: 100, fee: 1.234 })).response.status).toBe(400);

    // A repeat with the same fee is the same deal; with another, a conflict naming it.
    expect((await post(money.api('/deals'), own.body, shop.key)).status).toBe(200);
    const conflict = await post(money.api('/deals'), { ...own.body, fee: 99 }, shop.key);
    expect(conflict.status).toBe(409);
    expect((await json(conflict)).fields).toEqual(['fee']);
    // Leaving the fee out of the repeat compares nothing about it.
    const { fee: _fee, ...withoutFee } = own.body;
    expect((await post(money.api('/deals'), withoutFee, shop.key)).status).toBe(200);
  });

  it("gives widget deals the schedule's fee, and takes no fee from a storefront", async () => {
    const shop = await money.marketplace({ fee_schedule: { percent: 3, fixed: 0.5 } });
    const base = { public_key: shop.public_key, buyer_email: uniqueEmail('buyer'), amount: 1500.5 };
    const created = await post(`${server.url}/api/mkt/widget/deals`, { ...base, external_id: uniqueId('order') });
    expect(created.status).toBe(201);
    // 3 % of 1500.50 is 45.015, 45.02 half-up, plus 0.50.
    expect(await money.getDeal(shop, (await json(created)).id)).toMatchObject({ fee: 45.52, seller_amount: 1454.98 });
    const refused = await post(`${server.url}/api/mkt/widget/deals`, {
      ...base,
      external_id: uniqueId('order'),
      fee: 0,
    });
    expect(refused.status).toBe(400);
    expect((await json(refused)).errors).toEqual([expect.objectContaining({ path: 'fee' })]);
  });
});

describe("the console's marketplace card", () => {
  it('shows the fee schedule in the form and saves it as the JSON operation does, audited alike', async () => {
    const shop = await money.marketplace({ fee_schedule: { percent: 1.5, max: 300 } });
    const operator = await administrator(server, 'admin');
    const page = await (
      await fetch(`${server.url}/admin/view/marketplaces/${shop.id}`, { headers: { Cookie: operator.cookie } })
    ).text();
    expect(page).toContain('id="fee_percent" name="fee_percent"');
    expect(page).toMatch(/id="fee_percent"[^>]*value="1.50"/);
    expect(page).toMatch(/id="fee_max"[^>]*value="300.00"/);
    expect(page).toMatch(/<option value="close" selected>/);

    const card = await json(await fetch(`${server.url}/admin/marketplaces/${shop.id}`, { headers: money.admin() }));
    const save = (fields: Record<string, string>) =>
      fetch(`${server.url}/admin/view/marketplaces/${shop.id}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { Cookie: operator.cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          _csrf: operator.csrf,
          intent: 'save',
          name: card.name,
          mode: 'sandbox',
          allowed_origins: '',
          sso_redirect_uri: '',
          fee_percent: '2,5',
          fee_fixed: '10',
          fee_min: '',
          fee_max: '',
          fee_moment: 'payment',
          ...fields,
        }),
      });
    expect((await save({})).status).toBe(303);
    expect(
      await json(await fetch(`${server.url}/admin/marketplaces/${shop.id}`, { headers: money.admin() })),
    ).toMatchObject({
      fee_schedule: { percent: 2.5, fixed: 10, min: null, max: null },
      fee_moment: 'payment',
    });
    const audit = (
      await json(
        await fetch(
          `${server.url}/admin/audit?${new URLSearchParams({ object_id: shop.id, action: 'updateMarketplace' })}`,
          { headers: money.admin() },
        ),
      )
    ).items;
    expect(audit[0]).toMatchObject({
      actor: expect.stringContaining(operator.email),
      after: { fee_schedule: { percent: 2.5, fixed: 10 } },
    });
    const { created } = await money.createDeal(shop, { amount: 100 });
    expect(await money.getDeal(shop, created.id)).toMatchObject({ fee: 12.5, seller_amount: 87.5 });

    const refused = await save({ fee_percent: 'a lot' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('Fee');
  });
});

describe('the OpenAPI document', () => {
  it('documents the fee on the creation, the deal and the marketplace', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    expect(
      document.paths['/api/mkt/deals'].post.requestBody.content['application/json'].schema.properties.fee,
    ).toMatchObject({ minimum: 0, multipleOf: 0.01 });
    expect(
      document.paths['/api/mkt/widget/deals'].post.requestBody.content['application/json'].schema.properties.fee,
    ).toBeUndefined();
    const deal = document.paths['/api/mkt/deals/{deal_id}'].get.responses['200'].content['application/json'].schema;
    expect(deal.required).toEqual(expect.arrayContaining(['fee', 'seller_amount']));
    const patchBody = document.paths['/admin/marketplaces/{id}'].patch.requestBody.content['application/json'].schema;
    expect(patchBody.properties.fee_moment.enum).toEqual(['payment', 'close']);
    expect(Object.keys(patchBody.properties.fee_schedule.properties)).toEqual(['percent', 'fixed', 'min', 'max']);
  });
});
