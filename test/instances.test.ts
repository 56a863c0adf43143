// Two main server instances over the same database, as behind a load balancer: neither keeps state of its own, so a
// key revoked or a marketplace deactivated on one is refused by both at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../src/secrets.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from './helpers.ts';

let one: TestServer;
let two: TestServer;
beforeAll(async () => {
  [one, two] = await Promise.all([startTestServer(), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop()]);
});

async function marketplace(): Promise<{ id: string; secret_key: string; public_key: string }> {
  return json(await post(`${one.url}/admin/marketplaces`, { name: uniqueId('shop'), mode: 'sandbox' }, { Authorization: `Bearer ${one.adminToken}` }));
}

const ping = async (server: TestServer, key: string) => (await fetch(`${server.url}/api/mkt/ping`, { headers: { 'X-Svc-Key': key } })).status;
const widgetCreate = async (server: TestServer, publicKey: string) =>
  (await post(`${server.url}/api/mkt/widget/deals`, { public_key: publicKey, external_id: uniqueId('order'), buyer_email: uniqueEmail() })).status;

describe('two main server instances', () => {
  it('both refuse a revoked secret key at once, having both accepted it a moment before', async () => {
    const shop = await marketplace();
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([200, 200]);
    await one.services.db.query('UPDATE marketplace_keys SET revoked_at = now() WHERE key_hash = $1', [hashSecret(shop.secret_key)]);
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([401, 401]);
  });

  it('both refuse the secret and public keys of a deactivated marketplace at once', async () => {
    const shop = await marketplace();
    expect([await widgetCreate(one, shop.public_key), await widgetCreate(two, shop.public_key)]).toEqual([201, 201]);
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([200, 200]);
    await one.services.db.query('UPDATE marketplaces SET active = false WHERE id = $1', [shop.id]);
    expect([await widgetCreate(one, shop.public_key), await widgetCreate(two, shop.public_key)]).toEqual([401, 401]);
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([401, 401]);
  });
});
