// GET /api/mkt/events, the marketplace's reconciliation list: order, both cursors, filters, isolation between
// marketplaces, strict query validation, and (through a real deal on the real worker and Temporal, whose outbox drainer
// sends the webhooks) the same ids and bodies as the webhooks, events of types the webhook does not take included. Events other than a test's own come
// from other tests and other marketplaces; each test reads only its own marketplace or filters by type.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertWebhookEvent } from '../../src/webhooks/events.ts';
import {
  json,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
} from '../helpers.ts';
import { insertMarketplace } from '../factories.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  receiver = await startReceiver();
});

afterAll(async () => {
  await server?.stop();
  await receiver?.stop();
});

/** A deal row, as the deal workflow makes it. */
async function dealRow(marketplaceId: string): Promise<string> {
  const id = randomUUID();
  await server.services.db.query(
    `INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, seller_email, amount, currency, status)
     VALUES ($1, $2, $3, 'Chair', $4, '', 10, 'RUB', 'approved')`,
    [id, marketplaceId, uniqueId('order'), uniqueEmail('buyer')],
  );
  return id;
}

/**
 * An event of a deal, written as the deal workflow's persistence activity writes it (for the worker's task queue, whose
 * drainer sends its delivery when the marketplace has a webhook); its event_id.
 */
async function event(marketplaceId: string, dealId: string, type: string, occurredAt: Date): Promise<string> {
  const eventId = randomUUID();
  await insertWebhookEvent(server.services.db, {
    eventId,
    deliveryId: randomUUID(),
    taskQueue: server.services.config.TEMPORAL_TASK_QUEUE,
    event: type,
    occurredAt: occurredAt.toISOString(),
    status: type.slice('deal.'.length),
    deal: {
      id: dealId,
      marketplace_id: marketplaceId,
      external_id: 'x',
      title: 'Chair',
      amount: 10,
      currency: 'RUB',
      buyer_email: 'b@example.com',
      seller_email: '',
    },
  });
  return eventId;
}

async function list(key: string, query = ''): Promise<Response> {
  return fetch(`${server.url}/api/mkt/events${query}`, { headers: { 'X-Svc-Key': key } });
}

async function page(key: string, query = ''): Promise<{ items: any[]; has_more: boolean }> {
  const response = await list(key, query);
  expect(response.status, await response.clone().text()).toBe(200);
  return json(response);
}

/** A marketplace with seven events over two deals, a minute apart; their ids newest first. */
async function sevenEvents() {
  const shop = await insertMarketplace(server.services);
  const [one, two] = [await dealRow(shop.id), await dealRow(shop.id)];
  const start = Date.now() - 3600_000;
  const plan: [string, string][] = [
    [one, 'deal.approved'],
    [two, 'deal.approved'],
    [one, 'deal.escrow_hold'],
    [two, 'deal.rejected'],
    [one, 'deal.disputed'],
    [two, 'deal.approved'],
    [one, 'deal.refunded'],
  ];
  const ids: string[] = [];
  for (const [index, [deal, type]] of plan.entries())
    ids.push(await event(shop.id, deal, type, new Date(start + index * 60_000)));
  return { shop, one, two, plan, newestFirst: ids.reverse(), plannedNewestFirst: [...plan].reverse() };
}

describe('GET /api/mkt/events', () => {
  it('refuses a request without a valid X-Svc-Key with 401', async () => {
    expect((await fetch(`${server.url}/api/mkt/events`)).status).toBe(401);
    expect((await list('mk_nope')).status).toBe(401);
  });

  it('lists the events newest first, with the stored body, 20 by default', async () => {
    const { shop, newestFirst, plannedNewestFirst } = await sevenEvents();
    const all = await page(shop.secret_key);
    expect(all.has_more).toBe(false);
    expect(all.items.map((item) => item.event_id)).toEqual(newestFirst);
    expect(all.items.map((item) => [item.deal_id, item.type])).toEqual(plannedNewestFirst);
    const [newest] = all.items;
    expect(newest).toEqual({
      event_id: newestFirst[0],
      type: 'deal.refunded',
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      deal_id: plannedNewestFirst[0][0],
      body: expect.objectContaining({
        event: 'deal.refunded',
        id: plannedNewestFirst[0][0],
        event_id: newestFirst[0],
        status: 'refunded',
      }),
    });
    expect(newest.body.occurred_at).toBe(newest.occurred_at);
    const stored = await server.services.db.query('SELECT body FROM webhook_events WHERE id = $1', [newest.event_id]);
    expect(JSON.stringify(newest.body)).toBe(stored.rows[0].body.toString('utf8'));

    const many = await insertMarketplace(server.services);
    const deal = await dealRow(many.id);
    for (let index = 0; index < 21; index += 1)
      await event(many.id, deal, 'deal.approved', new Date(Date.now() - index * 1000));
    const first = await page(many.secret_key);
    expect(first.items).toHaveLength(20);
    expect(first.has_more).toBe(true);
  });

  it('pages older with starting_after and newer with ending_before, has_more telling each direction', async () => {
    const { shop, newestFirst } = await sevenEvents();
    const first = await page(shop.secret_key, '?limit=3');
    expect(first.items.map((item) => item.event_id)).toEqual(newestFirst.slice(0, 3));
    expect(first.has_more).toBe(true);
    const second = await page(shop.secret_key, `?limit=3&starting_after=${first.items.at(-1).event_id}`);
    expect(second.items.map((item) => item.event_id)).toEqual(newestFirst.slice(3, 6));
    expect(second.has_more).toBe(true);
    const last = await page(shop.secret_key, `?limit=3&starting_after=${second.items.at(-1).event_id}`);
    expect(last.items.map((item) => item.event_id)).toEqual(newestFirst.slice(6));
    expect(last.has_more).toBe(false);

    // Back from the oldest: the page just before it (newer), still newest first.
    const back = await page(shop.secret_key, `?limit=3&ending_before=${newestFirst[6]}`);
    expect(back.items.map((item) => item.event_id)).toEqual(newestFirst.slice(3, 6));
    expect(back.has_more).toBe(true);
    const front = await page(shop.secret_key, `?limit=3&ending_before=${back.items[0].event_id}`);
    expect(front.items.map((item) => item.event_id)).toEqual(newestFirst.slice(0, 3));
    expect(front.has_more).toBe(false);
    expect(await page(shop.secret_key, `?ending_before=${newestFirst[0]}`)).toEqual({ items: [], has_more: false });
    expect(await page(shop.secret_key, `?starting_after=${newestFirst[6]}`)).toEqual({ items: [], has_more: false });
  });

  it('filters by deal_id and type, with cursors that may be events the filters leave out', async () => {
    const { shop, one, two, newestFirst, plannedNewestFirst } = await sevenEvents();
    const ofOne = await page(shop.secret_key, `?deal_id=${one}`);
    expect(ofOne.items.map((item) => item.type)).toEqual([
      'deal.refunded',
      'deal.disputed',
      'deal.escrow_hold',
      'deal.approved',
    ]);
    expect(ofOne.items.every((item) => item.deal_id === one && item.body.id === one)).toBe(true);

    const approved = await page(shop.secret_key, '?type=deal.approved');
    expect(approved.items.map((item) => item.event_id)).toEqual(
      newestFirst.filter((_, index) => plannedNewestFirst[index][1] === 'deal.approved'),
    );
    const approvedOfTwo = await page(shop.secret_key, `?type=deal.approved&deal_id=${two}&limit=1`);
    expect(approvedOfTwo.items.map((item) => [item.deal_id, item.type, item.event_id])).toEqual([
      [two, 'deal.approved', newestFirst[1]],
    ]);
    expect(approvedOfTwo.has_more).toBe(true);

    // newestFirst[2] is deal one's disputed event: after it, deal two's approvals older than it.
    const afterOther = await page(
      shop.secret_key,
      `?type=deal.approved&deal_id=${two}&starting_after=${newestFirst[2]}`,
    );
    expect(afterOther.items.map((item) => item.event_id)).toEqual([newestFirst[5]]);
    expect(afterOther.has_more).toBe(false);
    expect((await page(shop.secret_key, `?type=deal.paid`)).items).toEqual([]);
    expect((await page(shop.secret_key, `?deal_id=${randomUUID()}`)).items).toEqual([]);
  });

  it('orders events of the same millisecond as they were written', async () => {
    const shop = await insertMarketplace(server.services);
    const deal = await dealRow(shop.id);
    const at = new Date();
    const written = [];
    for (const type of ['deal.approved', 'deal.escrow_hold', 'deal.paid'])
      written.push(await event(shop.id, deal, type, at));
    const newestFirst = [...written].reverse();
    expect((await page(shop.secret_key)).items.map((item) => item.event_id)).toEqual(newestFirst);
    const older = await page(shop.secret_key, `?starting_after=${newestFirst[0]}&limit=1`);
    expect(older.items.map((item) => item.event_id)).toEqual([newestFirst[1]]);
    expect(older.has_more).toBe(true);
  });

  it('keeps events older than 30 days', async () => {
    const shop = await insertMarketplace(server.services);
    const deal = await dealRow(shop.id);
    const old = await event(shop.id, deal, 'deal.paid', new Date(Date.now() - 40 * 24 * 3600_000));
    expect((await page(shop.secret_key)).items.map((item) => item.event_id)).toEqual([old]);
  });

  it("shows only the marketplace's own events and refuses a cursor that is not one of them as invalid_cursor", async () => {
    const mine = await sevenEvents();
    const theirs = await sevenEvents();
    expect((await page(theirs.shop.secret_key)).items.map((item) => item.event_id)).toEqual(theirs.newestFirst);
    expect((await page(mine.shop.secret_key, `?deal_id=${theirs.one}`)).items).toEqual([]);

    for (const query of [`?starting_after=${theirs.newestFirst[0]}`, `?ending_before=${randomUUID()}`]) {
      const response = await list(mine.shop.secret_key, query);
      expect(response.status, query).toBe(400);
      const problem = await json(response);
      expect(problem).toMatchObject({
        code: 'invalid_cursor',
        detail: expect.stringMatching(/^(starting_after|ending_before) is not an event_id/),
      });
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    const both = await list(
      mine.shop.secret_key,
      `?starting_after=${mine.newestFirst[3]}&ending_before=${mine.newestFirst[1]}`,
    );
    expect(both.status).toBe(400);
    expect(await json(both)).toMatchObject({ code: 'invalid_cursor', detail: expect.stringContaining('not both') });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=0x10', 'limit'],
    ['starting_after=nope', 'starting_after'],
    ['ending_before=1', 'ending_before'],
    ['deal_id=42', 'deal_id'],
    ['type=deal.unknown', 'type'],
    ['type=webhook.test', 'type'],
    ['colour=red', 'colour'],
    ['limit=5&limit=6', 'limit'],
  ])('refuses ?%s as validation_failed naming %s', async (query, path) => {
    const shop = await insertMarketplace(server.services);
    const response = await list(shop.secret_key, `?${query}`);
    expect(response.status).toBe(400);
    const problem = await json(response);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain(path);
  });

  it('is documented with the marketplace key and its query parameters', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    const operation = document.paths['/api/mkt/events'].get;
    expect(operation.security).toEqual([{ marketplaceKey: [] }]);
    const parameters = Object.fromEntries(operation.parameters.map((parameter: any) => [parameter.name, parameter]));
    expect(Object.keys(parameters).sort()).toEqual(['deal_id', 'ending_before', 'limit', 'starting_after', 'type']);
    expect(parameters.limit).toMatchObject({ required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } });
    expect(parameters.type.schema.enum).toContain('deal.cancelled');
    expect(parameters.starting_after).toMatchObject({ in: 'query', required: false, schema: { format: 'uuid' } });
    expect(operation.responses['200'].content['application/json'].schema.properties.items.items.required).toEqual(
      expect.arrayContaining(['event_id', 'type', 'occurred_at', 'deal_id', 'body']),
    );
  });
});

describe('the events list and the webhooks agree', () => {
  it('lists the event a webhook carried with its id and exactly its body, and those of types it was not sent', async () => {
    const shop = await insertMarketplace(server.services);
    const registered = await post(
      `${server.url}/api/mkt/webhook`,
      { url: receiver.url, events: ['deal.paid'] },
      { 'X-Svc-Key': shop.secret_key },
    );
    expect(registered.status).toBe(200);
    const deal = await dealRow(shop.id);
    const unsent = await event(shop.id, deal, 'deal.escrow_hold', new Date(Date.now() - 1000));
    const eventId = randomUUID();
    const deliveryId = await insertWebhookEvent(server.services.db, {
      eventId,
      deliveryId: randomUUID(),
      taskQueue: server.services.config.TEMPORAL_TASK_QUEUE,
      event: 'deal.paid',
      occurredAt: new Date().toISOString(),
      status: 'paid',
      actor: 'buyer',
      deal: {
        id: deal,
        marketplace_id: shop.id,
        external_id: 'order-9',
        title: 'Lamp "Ö"',
        amount: 75.5,
        currency: 'EUR',
        buyer_email: 'b@example.com',
        seller_email: 's@example.com',
      },
    });
    expect(deliveryId).not.toBeNull();
    // The worker's drainer sends it from the commit on.
    await expect
      .poll(
        async () =>
          (await server.services.db.query('SELECT status FROM webhook_deliveries WHERE id = $1', [deliveryId])).rows[0]
            ?.status,
        { timeout: 20_000 },
      )
      .toBe('delivered');
    const delivered = receiver.received.filter((request) => request.headers['webhook-id'] === eventId);
    expect(delivered).toHaveLength(1);

    const listed = await page(shop.secret_key, `?deal_id=${deal}`);
    expect(listed.items.map((item) => [item.event_id, item.type])).toEqual([
      [eventId, 'deal.paid'],
      [unsent, 'deal.escrow_hold'],
    ]);
    expect(listed.items[0].body).toEqual(JSON.parse(delivered[0].body.toString('utf8')));
    expect(Buffer.from(JSON.stringify(listed.items[0].body), 'utf8').equals(delivered[0].body)).toBe(true);
    expect(listed.items[0].body).toMatchObject({ actor: 'buyer', amount: 75.5, title: 'Lamp "Ö"' });
    // The escrow_hold event, of a type the webhook does not take, got no delivery to send.
    expect(
      (await server.services.db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [unsent])).rowCount,
    ).toBe(0);
  });

  it('through a real deal: every event listed, only the subscribed type delivered, with the listed body', async () => {
    const shop = await insertMarketplace(server.services);
    const key = { 'X-Svc-Key': shop.secret_key };
    const registered = await post(
      `${server.url}/api/mkt/webhook`,
      { url: receiver.url, events: ['deal.escrow_hold'] },
      key,
    );
    expect(registered.status).toBe(200);
    expect((await json(registered)).events).toEqual(['deal.escrow_hold']);

    const api = (path: string) => `${server.url}/api/mkt${path}`;
    const buyerEmail = uniqueEmail('buyer');
    const deal = await json(
      await post(
        api('/deals'),
        { external_id: uniqueId('order'), buyer_email: buyerEmail, title: 'Lamp', amount: 75 },
        key,
      ),
    );
    await fetch(api(`/deals/${deal.id}/documents?kind=offer`), {
      method: 'POST',
      headers: key,
      body: Buffer.from('offer'),
    });
    const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, key));
    const buyer = await signInFromInvitation(server, buyerEmail);
    expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
    expect((await post(api(`/deals/${deal.id}/escrow`), {}, key)).status).toBe(201);

    const ofDeal = () =>
      receiver.received.filter((request) => JSON.parse(request.body.toString('utf8')).id === deal.id);
    await expect.poll(() => ofDeal().length, { timeout: 20_000 }).toBe(1);
    const [delivered] = ofDeal();
    expect(delivered.headers['x-svc-event']).toBe('deal.escrow_hold');

    const listed = await page(shop.secret_key, `?deal_id=${deal.id}`);
    const types = listed.items.map((item) => item.type);
    // deal.approved happened and is listed, though the webhook does not take it.
    expect(types.slice(0, 2)).toEqual(['deal.escrow_hold', 'deal.approved']);
    const held = listed.items[0];
    expect(held.event_id).toBe(delivered.headers['webhook-id']);
    expect(held.body).toEqual(JSON.parse(delivered.body.toString('utf8')));
    expect(Buffer.from(JSON.stringify(held.body), 'utf8').equals(delivered.body)).toBe(true);
    const approvedOnly = await page(shop.secret_key, `?deal_id=${deal.id}&type=deal.approved`);
    expect(approvedOnly.items).toHaveLength(1);
    expect(approvedOnly.items[0].body).toMatchObject({ event: 'deal.approved', id: deal.id, status: 'approved' });

    // No delivery was made for any other type of this deal.
    const deliveries = await server.services.db.query(
      'SELECT e.event FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.deal_id = $1',
      [deal.id],
    );
    expect(deliveries.rows).toEqual([{ event: 'deal.escrow_hold' }]);
    expect(ofDeal()).toHaveLength(1);
  });
});
