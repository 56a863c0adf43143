// A deal's creation checks the marketplace's secret key inside its own insert, from the marketplace each server
// remembers for a key it looked up lately (src/marketplaces/marketplaces.ts, RememberedKey): one round trip to
// PostgreSQL instead of two. Remembering must never let a key work longer: a key revoked, expired or of a deactivated
// marketplace on another instance is 401 at once on the server that remembers it, with nothing stored and whatever the
// body; a marketplace changed since it was read decides the creation as it is now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMarketplaceViaApi } from '../factories.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';

let server: TestServer;
let second: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  second = await startTestServer();
});
afterAll(async () => {
  await second?.stop();
  await server?.stop();
});

const admin = () => ({ Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' });
const adminPost = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: admin(), body: JSON.stringify(body) });
const patchMarketplace = (id: string, body: unknown) =>
  fetch(`${server.url}/admin/marketplaces/${id}`, { method: 'PATCH', headers: admin(), body: JSON.stringify(body) });
const dealBody = (fields: Record<string, unknown> = {}) => ({
  external_id: uniqueId('order'),
  buyer_email: uniqueEmail('buyer'),
  amount: 100,
  ...fields,
});
/** A creation on the second server, which remembers the key after its first creation. */
const create = (key: string, body: Record<string, unknown>) =>
  post(`${second.url}/api/mkt/deals`, body, { 'X-Svc-Key': key });
const stored = async (marketplaceId: string, externalId: string) =>
  (
    await server.services.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM deals WHERE marketplace_id = $1 AND external_id = $2',
      [marketplaceId, externalId],
    )
  ).rows[0].n;

/** A marketplace whose secret key the second server has used twice: looked up, then remembered. */
async function rememberedShop(fields: Record<string, unknown> = {}) {
  const shop = await createMarketplaceViaApi(server, fields);
  for (let round = 0; round < 2; round++) expect((await create(shop.secret_key, dealBody())).status).toBe(201);
  return shop;
}

async function expectUnauthorized(response: Response) {
  expect(response.status).toBe(401);
  expect((await json(response)).code).toBe('unauthorized');
}

describe("a deal's creation from a remembered key", () => {
  it('is 401 at once once the key is revoked on another instance, and stores nothing', async () => {
    const shop = await rememberedShop();
    const rotated = await adminPost(`/admin/marketplaces/${shop.id}/rotate-secret-key`, {
      expire_previous_after_seconds: 0,
    });
    expect(rotated.status).toBe(200);
    const body = dealBody();
    await expectUnauthorized(await create(shop.secret_key, body));
    expect(await stored(shop.id, body.external_id)).toBe(0);
    expect((await create((await json(rotated)).secret_key, body)).status).toBe(201);
  });

  it('is 401, not 400, for a body it would refuse once the key is revoked: the key comes first', async () => {
    const shop = await rememberedShop();
    await adminPost(`/admin/marketplaces/${shop.id}/rotate-secret-key`, { expire_previous_after_seconds: 0 });
    await expectUnauthorized(await create(shop.secret_key, dealBody({ amount: -1 })));
  });

  it('is 401 once the key expired at the end of its overlap, by the database clock', async () => {
    const shop = await rememberedShop();
    await adminPost(`/admin/marketplaces/${shop.id}/rotate-secret-key`, { expire_previous_after_seconds: 1 });
    expect((await create(shop.secret_key, dealBody())).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const body = dealBody();
    await expectUnauthorized(await create(shop.secret_key, body));
    expect(await stored(shop.id, body.external_id)).toBe(0);
  });

  it('is 401 once the marketplace is deactivated, and works again once it is activated', async () => {
    const shop = await rememberedShop();
    expect((await adminPost(`/admin/marketplaces/${shop.id}/deactivate`, {})).status).toBe(200);
    await expectUnauthorized(await create(shop.secret_key, dealBody()));
    expect((await adminPost(`/admin/marketplaces/${shop.id}/activate`, {})).status).toBe(200);
    expect((await create(shop.secret_key, dealBody())).status).toBe(201);
  });

  it('decides from the marketplace as it is now: its mode (the currencies it takes) and its fee', async () => {
    // Sandbox takes dollars; once live (roubles only) a dollar deal is refused, although the server read it sandbox.
    const sandbox = await rememberedShop();
    expect((await patchMarketplace(sandbox.id, { mode: 'live' })).status).toBe(200);
    const refused = await create(sandbox.secret_key, dealBody({ currency: 'USD' }));
    expect(refused.status).toBe(400);
    expect((await json(refused)).errors).toEqual([expect.objectContaining({ path: 'currency' })]);

    // Live refuses dollars; once sandbox, the refusal the server would make from what it read does not stand.
    const live = await rememberedShop({ mode: 'live' });
    expect((await create(live.secret_key, dealBody({ currency: 'USD' }))).status).toBe(400);
    expect((await patchMarketplace(live.id, { mode: 'sandbox' })).status).toBe(200);
    expect((await create(live.secret_key, dealBody({ currency: 'USD' }))).status).toBe(201);

    // A fee schedule set since the key was remembered is the new deal's.
    expect((await patchMarketplace(live.id, { fee_schedule: { fixed: 7 } })).status).toBe(200);
    const created = await json(await create(live.secret_key, dealBody()));
    const deal = await json(
      await fetch(`${second.url}/api/mkt/deals/${created.id}`, { headers: { 'X-Svc-Key': live.secret_key } }),
    );
    expect(deal).toMatchObject({ amount: 100, fee: 7 });
  });

  it('answers a repeat of a creation as before: the same deal, or 409 naming the fields that differ', async () => {
    const shop = await rememberedShop();
    const body = dealBody({ title: 'Lamp' });
    const first = await create(shop.secret_key, body);
    expect(first.status).toBe(201);
    const again = await create(shop.secret_key, body);
    expect(again.status).toBe(200);
    expect((await json(again)).id).toBe((await json(first)).id);
    const conflict = await create(shop.secret_key, { ...body, title: 'Chair' });
    expect(conflict.status).toBe(409);
    expect(await json(conflict)).toMatchObject({ code: 'deal_conflict', fields: ['title'] });
  });
});
