// The marketplace's money settings through the servers: the live acquirer (`provider`) and the buyer's inspection
// window (`inspection_days`) on the card, changed by PATCH /admin/marketplaces/{id} (validated, audited with the card
// before and after, the admin role's only) and by the console's card form in English and Russian.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import { insertMarketplace } from '../factories.ts';
import { json, startTestServer, uniqueId, type TestServer } from '../helpers.ts';

let server: TestServer;
let admin: TestAdministrator;
let support: TestAdministrator;

beforeAll(async () => {
  server = await startTestServer();
  [admin, support] = [await administrator(server, 'admin'), await administrator(server, 'support')];
});
afterAll(async () => {
  await server?.stop();
});

const bearer = () => ({ Authorization: `Bearer ${server.adminToken}` });
const cardOf = async (id: string) => json(await fetch(`${server.url}/admin/marketplaces/${id}`, { headers: bearer() }));
const patch = (id: string, body: unknown, headers: Record<string, string> = bearer()) =>
  fetch(`${server.url}/admin/marketplaces/${id}`, {
    method: 'PATCH',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
const auditOf = async (id: string) =>
  (
    await json(
      await fetch(`${server.url}/admin/audit?${new URLSearchParams({ object_id: id, action: 'updateMarketplace' })}`, {
        headers: bearer(),
      }),
    )
  ).items;

describe('the acquirer and the inspection window over JSON', () => {
  it('starts as a two-stage payment with 3 days, and a PATCH changes both, keeps the rest and is audited', async () => {
    const shop = await insertMarketplace(server.services, { name: uniqueId('Settings shop'), mode: 'live' });
    expect(await cardOf(shop.id)).toMatchObject({
      provider: 'yookassa_two_stage',
      inspection_days: 3,
      fee_moment: 'close',
    });

    const changed = await patch(shop.id, { provider: 'yookassa_safe_deal', inspection_days: 14 });
    expect(changed.status).toBe(200);
    expect(await json(changed)).toMatchObject({
      provider: 'yookassa_safe_deal',
      inspection_days: 14,
      name: shop.name,
      mode: 'live',
    });
    expect(await cardOf(shop.id)).toMatchObject({
      provider: 'yookassa_safe_deal',
      inspection_days: 14,
      fee_moment: 'close',
    });

    // One field alone leaves the other as it is; 0 (release at delivery) and 60 are the bounds.
    expect((await patch(shop.id, { inspection_days: 0 })).status).toBe(200);
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_safe_deal', inspection_days: 0 });
    expect((await patch(shop.id, { inspection_days: 60 })).status).toBe(200);
    expect((await patch(shop.id, { provider: 'yookassa_two_stage' })).status).toBe(200);
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_two_stage', inspection_days: 60 });

    const audit = await auditOf(shop.id);
    expect(
      audit.map((entry: { after: { provider: string; inspection_days: number } }) => [
        entry.after.provider,
        entry.after.inspection_days,
      ]),
    ).toEqual([
      ['yookassa_two_stage', 60],
      ['yookassa_safe_deal', 60],
      ['yookassa_safe_deal', 0],
      ['yookassa_safe_deal', 14],
    ]);
    expect(audit.at(-1)).toMatchObject({
      actor: 'token:test',
      object_type: 'marketplace',
      before: { provider: 'yookassa_two_stage', inspection_days: 3 },
      after: { provider: 'yookassa_safe_deal', inspection_days: 14 },
    });
  });

  it('refuses an unknown acquirer and a window outside 0–60 whole days, naming the field, and changes nothing', async () => {
    const shop = await insertMarketplace(server.services, { name: uniqueId('Settings shop'), mode: 'live' });
    const wrong: [Record<string, unknown>, string][] = [
      [{ provider: 'stripe' }, 'provider'],
      [{ provider: 'sandbox' }, 'provider'],
      [{ provider: null }, 'provider'],
      [{ inspection_days: 61 }, 'inspection_days'],
      [{ inspection_days: -1 }, 'inspection_days'],
      [{ inspection_days: 2.5 }, 'inspection_days'],
      [{ inspection_days: '3' }, 'inspection_days'],
      [{ provider: 'yookassa_safe_deal', inspection_days: 100 }, 'inspection_days'],
    ];
    for (const [body, field] of wrong) {
      const refused = await patch(shop.id, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      const problem = await json(refused);
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors.map((error: { path: string }) => error.path)).toContain(field);
    }
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_two_stage', inspection_days: 3 });
    expect(await auditOf(shop.id)).toEqual([]);
  });

  it('is the admin role’s: support reads the settings but may not change them', async () => {
    const shop = await insertMarketplace(server.services, { name: uniqueId('Settings shop'), mode: 'live' });
    const read = await fetch(`${server.url}/admin/marketplaces/${shop.id}`, { headers: support.headers });
    expect(await json(read)).toMatchObject({ provider: 'yookassa_two_stage', inspection_days: 3 });
    const refused = await patch(shop.id, { provider: 'yookassa_safe_deal' }, support.headers);
    expect(refused.status).toBe(403);
    expect((await json(refused)).code).toBe('forbidden');
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_two_stage' });
  });

  it('documents both fields on the PATCH body and the card', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    const operation = document.paths['/admin/marketplaces/{id}'];
    const body = operation.patch.requestBody.content['application/json'].schema.properties;
    expect(body.provider.enum).toEqual(['yookassa_safe_deal', 'yookassa_two_stage']);
    expect(body.inspection_days).toMatchObject({ type: 'integer', minimum: 0, maximum: 60 });
    const card = operation.get.responses['200'].content['application/json'].schema;
    expect(card.required).toEqual(expect.arrayContaining(['provider', 'inspection_days']));
  });
});

describe("the console's marketplace card", () => {
  const page = (id: string, lang: 'en' | 'ru') =>
    fetch(`${server.url}/admin/view/marketplaces/${id}?lang=${lang}`, { headers: { Cookie: admin.cookie } });
  const save = (shop: { id: string; name: string }, fields: Record<string, string>, lang: 'en' | 'ru' = 'en') =>
    fetch(`${server.url}/admin/view/marketplaces/${shop.id}?lang=${lang}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: admin.cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        _csrf: admin.csrf,
        intent: 'save',
        name: shop.name,
        mode: 'live',
        allowed_origins: '',
        sso_redirect_uri: '',
        fee_percent: '',
        fee_fixed: '',
        fee_min: '',
        fee_max: '',
        fee_moment: 'close',
        ...fields,
      }),
    });

  it('shows the acquirer as a choice and the window as a number, in English and Russian', async () => {
    const shop = await insertMarketplace(server.services, { name: uniqueId('Settings shop'), mode: 'live' });
    expect((await patch(shop.id, { provider: 'yookassa_safe_deal', inspection_days: 7 })).status).toBe(200);
    const english = await (await page(shop.id, 'en')).text();
    expect(english).toContain('Acquirer of live payments');
    expect(english).toContain('Inspection days');
    expect(english).toMatch(/<option value="yookassa_safe_deal" selected>YooKassa Safe Deal/);
    expect(english).toMatch(/<option value="yookassa_two_stage">YooKassa two-stage payment/);
    expect(english).toMatch(
      /<input id="inspection_days" name="inspection_days" type="number"[^>]* min="0" max="60"[^>]* value="7"/,
    );
    const russian = await (await page(shop.id, 'ru')).text();
    expect(russian).toContain('Эквайер боевых платежей');
    expect(russian).toContain('Дней на проверку');
    expect(russian).toMatch(/<option value="yookassa_safe_deal" selected>ЮKassa, Безопасная сделка/);
  });

  it('saves both from the form, audited as the administrator, and shows a wrong window back in words', async () => {
    const shop = await insertMarketplace(server.services, { name: uniqueId('Settings shop'), mode: 'live' });
    const saved = await save(shop, { provider: 'yookassa_safe_deal', inspection_days: '21' });
    expect(saved.status).toBe(303);
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_safe_deal', inspection_days: 21 });
    expect((await auditOf(shop.id))[0]).toMatchObject({
      actor: admin.email,
      before: { provider: 'yookassa_two_stage', inspection_days: 3 },
      after: { provider: 'yookassa_safe_deal', inspection_days: 21 },
    });

    // A form that has no such fields (sent before they existed) keeps what the marketplace has.
    expect((await save(shop, {})).status).toBe(303);
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_safe_deal', inspection_days: 21 });

    for (const [fields, lang, words] of [
      [{ inspection_days: '61' }, 'en', 'Check the fields: Inspection days.'],
      [{ inspection_days: 'three' }, 'en', 'Check the fields: Inspection days.'],
      [{ inspection_days: '-1' }, 'ru', 'Проверьте поля: Дней на проверку.'],
      [{ provider: 'stripe' }, 'en', 'Check the fields: Acquirer of live payments.'],
      [{ provider: 'stripe' }, 'ru', 'Проверьте поля: Эквайер боевых платежей.'],
    ] as const) {
      const refused = await save(shop, fields, lang);
      expect(refused.status, JSON.stringify(fields)).toBe(400);
      const text = await refused.text();
      expect(text).toContain(words);
      // What was typed is shown back, so it can be corrected.
      if ('inspection_days' in fields) expect(text).toContain(`value="${fields.inspection_days}"`);
    }
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_safe_deal', inspection_days: 21 });
  });

  it('lets support see the card but not save it', async () => {
    const shop = await insertMarketplace(server.services, { name: uniqueId('Settings shop'), mode: 'live' });
    const read = await fetch(`${server.url}/admin/view/marketplaces/${shop.id}?lang=en`, {
      headers: { Cookie: support.cookie },
    });
    expect(read.status).toBe(200);
    const refused = await fetch(`${server.url}/admin/view/marketplaces/${shop.id}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: support.cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        _csrf: support.csrf,
        intent: 'save',
        name: shop.name,
        mode: 'live',
        provider: 'yookassa_safe_deal',
        inspection_days: '9',
      }),
    });
    expect(refused.status).toBe(403);
    expect(await cardOf(shop.id)).toMatchObject({ provider: 'yookassa_two_stage', inspection_days: 3 });
  });
});
