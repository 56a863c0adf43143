// A deal's currency is an ISO 4217 code of money in use (docs/decisions/0011-money-in-minor-units.md), wherever a deal is made: the marketplace
// API and the widget share one schema (src/deals/currencies.ts), the OpenAPI document lists the codes, and a live
// marketplace takes only what its acquirer takes (YooKassa: roubles).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENCIES, isCurrency } from '../../src/deals/currencies.ts';
import { PROVIDER_CURRENCIES } from '../../src/escrow/providers.ts';
import {
  json,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
} from '../helpers.ts';

describe('the list of currencies', () => {
  it('is ISO 4217 money in use: no test, "no currency", metal, fund or withdrawn code', () => {
    expect(new Set(CURRENCIES).size).toBe(CURRENCIES.length);
    for (const code of CURRENCIES) expect(code).toMatch(/^[A-Z]{3}$/);
    for (const code of ['RUB', 'USD', 'EUR', 'CNY', 'KZT', 'BYN', 'GBP', 'JPY', 'XCG', 'ZWG', 'SLE', 'VED'])
      expect(isCurrency(code), code).toBe(true);
    const refused = [
      'ZZZ',
      'XXX',
      'XTS',
      'XAU',
      'XAG',
      'XPT',
      'XPD',
      'XDR',
      'XSU',
      'XUA',
      'XBA',
      'BOV',
      'CHE',
      'CHW',
      'CLF',
      'COU',
      'MXV',
      'USN',
      'UYI',
      'UYW',
    ];
    for (const code of [
      ...refused,
      'BGN',
      'ANG',
      'HRK',
      'CUC',
      'SLL',
      'ZWL',
      'VEF',
      'MRO',
      'STD',
      'BYR',
      'rub',
      'RUBLE',
    ])
      expect(isCurrency(code), code).toBe(false);
  });

  it('has no typo: every code is one Intl knows, but for codes newer than some ICU builds', () => {
    const intl = new Set(Intl.supportedValuesOf('currency'));
    const unknown = CURRENCIES.filter((code) => !intl.has(code));
    expect(['VED', 'XCG', 'ZWG', 'SLE']).toEqual(expect.arrayContaining(unknown));
  });

  it('is what the sandbox takes; YooKassa takes roubles', () => {
    expect(PROVIDER_CURRENCIES.sandbox).toEqual(CURRENCIES);
    expect(PROVIDER_CURRENCIES.yookassa).toEqual(['RUB']);
  });
});

describe('a deal’s currency', () => {
  let server: TestServer;
  let sandbox: { id: string; secret_key: string; public_key: string };
  let live: { id: string; secret_key: string; public_key: string };
  const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    sandbox = await json(
      await post(`${server.url}/admin/marketplaces`, { name: 'Currency shop', mode: 'sandbox' }, admin()),
    );
    live = await json(
      await post(`${server.url}/admin/marketplaces`, { name: 'Live currency shop', mode: 'live' }, admin()),
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  const create = (shop: { secret_key: string }, fields: Record<string, unknown>) =>
    post(
      `${server.url}/api/mkt/deals`,
      { external_id: uniqueId('order'), buyer_email: uniqueEmail('buyer'), amount: 100, ...fields },
      { 'X-Svc-Key': shop.secret_key },
    );
  const widgetCreate = (shop: { public_key: string }, fields: Record<string, unknown>) =>
    post(`${server.url}/api/mkt/widget/deals`, {
      public_key: shop.public_key,
      external_id: uniqueId('order'),
      buyer_email: uniqueEmail('buyer'),
      amount: 100,
      ...fields,
    });

  async function refusedNamingCurrency(response: Response) {
    expect(response.status).toBe(400);
    const problem = await json(response);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((error: { path: string }) => error.path)).toEqual(['currency']);
    return problem;
  }

  it('is refused unless it is an ISO 4217 code in use, on the API and in the widget, and nothing is made', async () => {
    for (const currency of ['ZZZ', 'XXX', 'XTS', 'XAU', 'BGN', 'zzz', 'RUBLES', '', 'RU']) {
      const externalId = uniqueId('order');
      await refusedNamingCurrency(await create(sandbox, { external_id: externalId, currency }));
      const found = await fetch(`${server.url}/api/mkt/deals?external_id=${externalId}`, {
        headers: { 'X-Svc-Key': sandbox.secret_key },
      });
      expect(found.status, currency).toBe(404);
      await refusedNamingCurrency(await widgetCreate(sandbox, { currency }));
    }
  });

  it('takes any code in use in a sandbox, in any case, kept upper-cased', async () => {
    for (const [given, kept] of [
      ['eur', 'EUR'],
      ['KZT', 'KZT'],
      ['Cny', 'CNY'],
    ]) {
      const created = await create(sandbox, { currency: given });
      expect(created.status).toBe(201);
      const deal = await json(
        await fetch(`${server.url}/api/mkt/deals/${(await json(created)).id}`, {
          headers: { 'X-Svc-Key': sandbox.secret_key },
        }),
      );
      expect(deal.currency).toBe(kept);
    }
    const widget = await widgetCreate(sandbox, { currency: 'usd' });
    expect(widget.status).toBe(201);
  });

  it('is roubles for a live marketplace: another code is 400 validation_failed naming currency', async () => {
    const problem = await refusedNamingCurrency(await create(live, { currency: 'USD' }));
    expect(problem.errors[0].message).toContain('RUB');
    await refusedNamingCurrency(await widgetCreate(live, { currency: 'eur' }));
    expect((await create(live, { currency: 'rub' })).status).toBe(201);
    expect((await create(live, {})).status).toBe(201);
  });

  it('of a sandbox deal stops escrow once the marketplace is live, before the acquirer is asked', async () => {
    const shop = await json(
      await post(`${server.url}/admin/marketplaces`, { name: 'Switching shop', mode: 'sandbox' }, admin()),
    );
    const key = { 'X-Svc-Key': shop.secret_key };
    const buyerEmail = uniqueEmail('buyer');
    const deal = await json(await create(shop, { buyer_email: buyerEmail, currency: 'USD' }));
    await fetch(`${server.url}/api/mkt/deals/${deal.id}/documents?kind=offer`, {
      method: 'POST',
      headers: key,
      body: Buffer.from('offer'),
    });
    const approval = await json(await post(`${server.url}/api/mkt/deals/${deal.id}/approval`, {}, key));
    const buyer = await signInFromInvitation(server, buyerEmail);
    expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
    const switched = await fetch(`${server.url}/admin/marketplaces/${shop.id}`, {
      method: 'PATCH',
      headers: { ...admin(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: 'live' }),
    });
    expect(switched.status).toBe(200);
    const escrow = await post(`${server.url}/api/mkt/deals/${deal.id}/escrow`, {}, key);
    expect(escrow.status).toBe(400);
    expect((await json(escrow)).code).toBe('currency_not_supported');
    const state = await json(await fetch(`${server.url}/api/mkt/deals/${deal.id}`, { headers: key }));
    expect(state).toMatchObject({ status: 'approved', payments: [] });
  });

  it('is documented as the list of codes, on the API and the widget', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    for (const path of ['/api/mkt/deals', '/api/mkt/widget/deals']) {
      const currency = document.paths[path].post.requestBody.content['application/json'].schema.properties.currency;
      expect(currency, path).toMatchObject({
        type: 'string',
        default: 'RUB',
        description: expect.stringContaining('ISO 4217'),
      });
      expect(currency.enum).toEqual([...CURRENCIES]);
      expect(currency.enum).not.toContain('XXX');
    }
  });
});
