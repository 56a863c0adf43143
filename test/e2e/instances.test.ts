// Two main server instances over the same database, as behind a load balancer: neither keeps state of its own, so a
// key revoked or a marketplace deactivated on one is refused by both at once, and a double click that lands on both
// does what one click does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/secrets.ts';
import { insertMarketplace } from '../factories.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';

let one: TestServer;
let two: TestServer;
beforeAll(async () => {
  [one, two] = await Promise.all([startTestServer(), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop()]);
});

const ping = async (server: TestServer, key: string) =>
  (await fetch(`${server.url}/api/mkt/ping`, { headers: { 'X-Svc-Key': key } })).status;
const widgetCreate = async (server: TestServer, publicKey: string) =>
  (
    await post(`${server.url}/api/mkt/widget/deals`, {
      public_key: publicKey,
      external_id: uniqueId('order'),
      buyer_email: uniqueEmail(),
    })
  ).status;

describe('two main server instances', () => {
  it('both refuse a revoked secret key at once, having both accepted it a moment before', async () => {
    const shop = await insertMarketplace(one.services);
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([200, 200]);
    await one.services.db.query('UPDATE marketplace_keys SET revoked_at = now() WHERE key_hash = $1', [
      hashSecret(shop.secret_key),
    ]);
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([401, 401]);
  });

  it('both refuse the secret and public keys of a deactivated marketplace at once', async () => {
    const shop = await insertMarketplace(one.services);
    expect([await widgetCreate(one, shop.public_key), await widgetCreate(two, shop.public_key)]).toEqual([201, 201]);
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([200, 200]);
    await one.services.db.query('UPDATE marketplaces SET active = false WHERE id = $1', [shop.id]);
    expect([await widgetCreate(one, shop.public_key), await widgetCreate(two, shop.public_key)]).toEqual([401, 401]);
    expect([await ping(one, shop.secret_key), await ping(two, shop.secret_key)]).toEqual([401, 401]);
  });

  it('a widget Continue pressed on both at once makes one contract and one approval', async () => {
    // The deal's workflow is the one writer whichever server takes the click: both servers on one task queue.
    const queue = uniqueId('queue');
    const [a, b] = await Promise.all([
      startTestServer({ env: { TEMPORAL_TASK_QUEUE: queue }, worker: true }),
      startTestServer({ env: { TEMPORAL_TASK_QUEUE: queue } }),
    ]);
    try {
      const shop = await insertMarketplace(one.services);
      const deal = await json(
        await post(`${a.url}/api/mkt/widget/deals`, {
          public_key: shop.public_key,
          external_id: uniqueId('order'),
          buyer_email: uniqueEmail(),
        }),
      );
      const press = (server: TestServer) =>
        post(
          `${server.url}/api/mkt/widget/deals/${deal.id}/start`,
          { locale: 'en' },
          { 'X-Svc-Widget-Token': deal.widget_token },
        );
      const answers = await Promise.all([press(a), press(b), press(a), press(b)]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const count = async (table: string) =>
        Number(
          (await a.services.db.query(`SELECT count(*) FROM ${table} WHERE deal_id = $1`, [deal.id])).rows[0].count,
        );
      expect([await count('deal_documents'), await count('deal_approvals')]).toEqual([1, 1]);
      expect((await json(answers[3])).status).toBe('approval');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
