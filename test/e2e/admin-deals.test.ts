// Deals and disputes for administrators: every marketplace's deals searched and paged, one deal with its webhook
// events, deliveries and its workflow's address in the Temporal Web UI, the disputes queue oldest first, the files,
// and what each role may do (arbiter decides, support reads and resends invitations).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, type TestAdministrator } from '../console-helpers.ts';
import {
  createDealViaApi,
  insertHeldDeal,
  insertMarketplace,
  type CreatedDeal,
  type TestMarketplace,
} from '../factories.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import { json, post, startTestServer, uniqueEmail, type TestServer } from '../helpers.ts';

let server: TestServer;
let receiver: Receiver;
let arbiter: TestAdministrator;
let support: TestAdministrator;
const shops: TestMarketplace[] = [];

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { TEMPORAL_UI_URL: 'http://temporal-ui.example:8080/' } });
  receiver = await startReceiver();
  for (const name of ['Deal search shop A', 'Deal search shop B']) {
    shops.push(await insertMarketplace(server.services, { name }));
  }
  await post(`${server.url}/api/mkt/webhook`, { url: receiver.url }, { 'X-Svc-Key': shops[0].secret_key });
  arbiter = await administrator(server, 'arbiter');
  support = await administrator(server, 'support');
});
afterAll(async () => {
  await receiver?.stop();
  await server?.stop();
});

const bootstrap = () => ({ Authorization: `Bearer ${server.adminToken}` });
const get = async (path: string, headers: Record<string, string> = bootstrap()) =>
  fetch(`${server.url}${path}`, { headers });
const list = async (query: Record<string, string>) => {
  const response = await get(`/admin/deals?${new URLSearchParams(query)}`);
  expect(response.status).toBe(200);
  return (await json(response)) as { items: { id: string; external_id: string }[]; has_more: boolean };
};
const ids = (page: { items: { id: string }[] }) => page.items.map((item) => item.id);

describe('GET /admin/deals', () => {
  let a1: CreatedDeal;
  let a2: CreatedDeal;
  let b1: CreatedDeal;
  let between: string;
  const buyer = uniqueEmail('searched');

  beforeAll(async () => {
    a1 = await createDealViaApi(server, shops[0], { buyer_email: buyer, amount: 700 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 30));
    a2 = await createDealViaApi(server, shops[0], { buyer_email: uniqueEmail('other'), amount: 700 });
    b1 = await createDealViaApi(server, shops[1], { buyer_email: buyer.toUpperCase(), amount: 700 });
  });

  it('narrows by marketplace, buyer e-mail (in any case), external id, status and dates', async () => {
    expect(ids(await list({ marketplace_id: shops[0].id, limit: '100' }))).toEqual(
      expect.arrayContaining([a1.id, a2.id]),
    );
    expect(ids(await list({ marketplace_id: shops[0].id, limit: '100' }))).not.toContain(b1.id);
    expect(ids(await list({ buyer_email: buyer }))).toEqual([b1.id, a1.id]);
    expect(ids(await list({ external_id: a2.external_id }))).toEqual([a2.id]);
    expect(ids(await list({ buyer_email: buyer, marketplace_id: shops[1].id }))).toEqual([b1.id]);
    expect(ids(await list({ buyer_email: buyer, created_gte: between }))).toEqual([b1.id]);
    expect(ids(await list({ buyer_email: buyer, created_lte: between }))).toEqual([a1.id]);
    expect(ids(await list({ buyer_email: buyer, status: 'created' }))).toEqual([b1.id, a1.id]);
    expect(ids(await list({ buyer_email: buyer, status: 'escrow_hold' }))).toEqual([]);
    const held = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    expect(ids(await list({ status: 'escrow_hold', limit: '100' }))).toContain(held.dealId);
    expect(ids(await list({ status: 'created', limit: '100' }))).not.toContain(held.dealId);
    const item = (await list({ external_id: a1.external_id })).items[0];
    expect(item).toMatchObject({
      id: a1.id,
      marketplace_id: shops[0].id,
      buyer_email: buyer,
      amount: 700,
      status: 'created',
    });
  });

  it('pages newest first with limit and starting_after', async () => {
    const first = await list({ marketplace_id: shops[0].id, limit: '1' });
    expect(ids(first)).toEqual([a2.id]);
    expect(first.has_more).toBe(true);
    const second = await list({ marketplace_id: shops[0].id, limit: '1', starting_after: a2.id });
    expect(ids(second)).toEqual([a1.id]);
    const last = await list({ buyer_email: buyer, starting_after: b1.id });
    expect(ids(last)).toEqual([a1.id]);
    expect(last.has_more).toBe(false);
  });

  it('refuses bad filters with 400 and the field named', async () => {
    for (const [query, field] of [
      ['status=sold', 'status'],
      ['buyer_email=not-an-address', 'buyer_email'],
      ['marketplace_id=shop-a', 'marketplace_id'],
      ['created_gte=yesterday', 'created_gte'],
      ['limit=0', 'limit'],
      ['colour=red', 'colour'],
    ] as const) {
      const response = await get(`/admin/deals?${query}`);
      expect(response.status, query).toBe(400);
      const problem = await json(response);
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors.map((error: { path: string }) => error.path)).toContain(field);
    }
    const cursor = await get(`/admin/deals?starting_after=${crypto.randomUUID()}`);
    expect(cursor.status).toBe(400);
    expect((await json(cursor)).code).toBe('invalid_cursor');
  });

  it('needs an administrator token; every role reads', async () => {
    expect((await get('/admin/deals', {})).status).toBe(401);
    expect((await get(`/admin/deals?external_id=${a1.external_id}`, support.headers)).status).toBe(200);
  });
});

describe('GET /admin/deals/{id}', () => {
  it('adds the webhook events, their deliveries and the workflow in the Temporal Web UI', async () => {
    const deal = await createDealViaApi(server, shops[0], { buyer_email: uniqueEmail('timeline'), amount: 700 });
    await fetch(`${server.url}/api/mkt/deals/${deal.id}/documents?kind=offer&name=offer.pdf`, {
      method: 'POST',
      headers: { 'X-Svc-Key': shops[0].secret_key, 'Content-Type': 'application/pdf' },
      body: Buffer.from('%PDF offer'),
    });
    let body: any;
    await expect
      .poll(
        async () => {
          body = await json(await get(`/admin/deals/${deal.id}`));
          return body.deliveries
            .filter((row: { status: string }) => row.status === 'delivered')
            .map((row: { event: string }) => row.event);
        },
        { timeout: 20_000 },
      )
      .toEqual(['deal.created', 'deal.docs']);
    expect(body.events).toEqual([
      { type: 'deal.created', created_at: expect.any(String), actor: 'marketplace', reason: null },
      { type: 'deal.docs', created_at: expect.any(String), actor: 'marketplace', reason: null },
    ]);
    expect(body.deliveries[0]).toMatchObject({
      event: 'deal.created',
      attempt: 1,
      status: 'delivered',
      http_status: 200,
      error: null,
    });
    expect(body.temporal_url).toBe(
      `http://temporal-ui.example:8080/namespaces/default/workflows/${encodeURIComponent(`deal/${shops[0].id}/${deal.external_id}`)}`,
    );
    // The console's "Open in Temporal" link is the same address.
    const consolePage = await (await get(`/admin/view/deals/${deal.id}?lang=en`, { Cookie: arbiter.cookie })).text();
    expect(consolePage).toContain(`href="${body.temporal_url}"`);
    expect(consolePage).not.toContain(':8233');
    expect(body).toMatchObject({
      id: deal.id,
      marketplace_id: shops[0].id,
      status: 'docs',
      documents: [{ name: 'offer.pdf' }],
    });
    expect(body.allowed_actions).toEqual(['cancel']);

    // Any administrator downloads the document; nobody else does.
    const documentId = body.documents[0].id;
    const file = await get(`/admin/documents/${documentId}/content`, support.headers);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).toString()).toBe('%PDF offer');
    expect(file.headers.get('content-disposition')).toContain('offer.pdf');
    expect((await get(`/admin/documents/${documentId}/content`, { Cookie: arbiter.cookie })).status).toBe(200);
    expect((await get(`/admin/documents/${documentId}/content`, {})).status).toBe(401);
    expect((await get(`/admin/documents/${crypto.randomUUID()}/content`)).status).toBe(404);
  });

  it('is 404 for a deal that does not exist', async () => {
    expect((await get(`/admin/deals/${crypto.randomUUID()}`)).status).toBe(404);
  });
});

describe('disputes and roles', () => {
  const held = () => insertHeldDeal(server.services);
  const act = (dealId: string, path: string, body: unknown, headers: Record<string, string>) =>
    post(`${server.url}/admin/deals/${dealId}${path}`, body, headers);

  it('lists open disputes oldest first, and decided ones with their decision', async () => {
    const first = await held();
    const second = await held();
    expect((await act(first.dealId, '/escrow/dispute', { reason: 'Never arrived' }, arbiter.headers)).status).toBe(200);
    expect((await act(second.dealId, '/escrow/dispute', { reason: 'Wrong colour' }, bootstrap())).status).toBe(200);

    const open = await json(await get('/admin/disputes?status=open&limit=100'));
    const order = open.items.map((item: { deal_id: string }) => item.deal_id);
    expect(order.indexOf(first.dealId)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(first.dealId)).toBeLessThan(order.indexOf(second.dealId));
    expect(open.items.find((item: { deal_id: string }) => item.deal_id === first.dealId)).toMatchObject({
      external_id: first.externalId,
      status: 'open',
      reason: 'Never arrived',
      messages_count: 0,
      amount: 2500,
      decision: null,
    });
    const after = await json(await get(`/admin/disputes?starting_after=${first.dealId}&limit=100`, support.headers));
    expect(after.items.map((item: { deal_id: string }) => item.deal_id)).toContain(second.dealId);
    expect(after.items.map((item: { deal_id: string }) => item.deal_id)).not.toContain(first.dealId);

    // The arbiter writes and decides; the queue no longer has the dispute, the decided list has it.
    expect(
      (await act(first.dealId, '/dispute/messages', { text: 'Please send the tracking number' }, arbiter.headers))
        .status,
    ).toBe(201);
    const resolved = await act(
      first.dealId,
      '/escrow/resolve',
      { outcome: 'refund', reason: 'No proof of delivery' },
      arbiter.headers,
    );
    expect(resolved.status).toBe(200);
    expect((await json(resolved)).status).toBe('refunded');
    const reopened = await json(await get('/admin/disputes?status=open&limit=100'));
    expect(reopened.items.map((item: { deal_id: string }) => item.deal_id)).not.toContain(first.dealId);
    const decided = await json(await get('/admin/disputes?status=decided&limit=100'));
    expect(decided.items.find((item: { deal_id: string }) => item.deal_id === first.dealId)).toMatchObject({
      status: 'decided',
      messages_count: 1,
      decision: { outcome: 'refund', reason: 'No proof of delivery' },
    });
    expect((await json(await get(`/admin/deals/${first.dealId}`))).status).toBe('refunded');
    // A closed deal's console page offers no invitation: the server would refuse it (deal_closed).
    const closedPage = await (
      await get(`/admin/view/deals/${first.dealId}?lang=en`, { Cookie: arbiter.cookie })
    ).text();
    expect(closedPage).toContain('refunded');
    expect(closedPage).not.toContain(`/admin/view/deals/${first.dealId}/invitation`);
    const openPage = await (await get(`/admin/view/deals/${second.dealId}?lang=en`, { Cookie: arbiter.cookie })).text();
    expect(openPage).toContain(`/admin/view/deals/${second.dealId}/invitation`);

    const audit = await json(await get(`/admin/audit?object_id=${first.dealId}&action=adminResolveDispute`));
    expect(audit.items[0]).toMatchObject({
      actor: arbiter.email,
      object_type: 'deal',
      before: { status: 'disputed' },
      after: { status: 'refunded' },
    });

    expect((await get('/admin/disputes?status=closed')).status).toBe(400);
    const cursor = await get(`/admin/disputes?status=decided&starting_after=${second.dealId}`);
    expect(cursor.status).toBe(400);
    expect((await json(cursor)).code).toBe('invalid_cursor');
  });

  it('refuses every money move, message and cancellation to support with 403 forbidden, changing nothing', async () => {
    const deal = await held();
    for (const [path, body] of [
      ['/escrow/release', {}],
      ['/escrow/refund', {}],
      ['/escrow/dispute', { reason: 'x' }],
      ['/escrow/resolve', { outcome: 'release', reason: 'x' }],
      ['/dispute/messages', { text: 'x' }],
      ['/cancel', {}],
    ] as const) {
      const response = await act(deal.dealId, path, body, support.headers);
      expect(response.status, path).toBe(403);
      expect((await json(response)).code).toBe('forbidden');
    }
    expect((await json(await get(`/admin/deals/${deal.dealId}`))).status).toBe('escrow_hold');
    // The arbiter may move money.
    const released = await act(deal.dealId, '/escrow/release', {}, arbiter.headers);
    expect(released.status).toBe(200);
    // Paid once the payout the release started went through.
    await expect.poll(async () => (await json(await get(`/admin/deals/${deal.dealId}`))).status).toBe('paid');
  });

  it('lets support resend the invitation, under the marketplace limit of 3 an hour', async () => {
    const email = uniqueEmail('invited');
    const deal = await createDealViaApi(server, shops[1], { buyer_email: email, amount: 700 });
    const mails = async () => (await json(await get(`/admin/mail?to=${encodeURIComponent(email)}`))).items.length;
    await expect.poll(mails, { timeout: 20_000 }).toBe(1);
    for (let i = 0; i < 3; i++) expect((await act(deal.id, '/invitation', {}, support.headers)).status).toBe(202);
    expect(await mails()).toBe(4);
    const limited = await act(deal.id, '/invitation', {}, support.headers);
    expect(limited.status).toBe(429);
    expect((await json(limited)).code).toBe('too_many_invitations');
    const audit = await json(await get(`/admin/audit?object_id=${deal.id}&action=adminResendInvitation`));
    expect(audit.items).toHaveLength(3);
    expect(audit.items[0].actor).toBe(support.email);
    expect((await act(crypto.randomUUID(), '/invitation', {}, support.headers)).status).toBe(404);
  });
});

describe('the console pages', () => {
  const page = (path: string, who: TestAdministrator) =>
    fetch(`${server.url}${path}`, { headers: { Cookie: who.cookie, 'Accept-Language': 'en' }, redirect: 'manual' });
  const form = (path: string, who: TestAdministrator, fields: Record<string, string>) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { Cookie: who.cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'en' },
      body: new URLSearchParams({ _csrf: who.csrf, ...fields }),
      redirect: 'manual',
    });

  it('searches the list, and shows support no money buttons and refuses them', async () => {
    const email = uniqueEmail('paged');
    const deal = await createDealViaApi(server, shops[0], { buyer_email: email, amount: 700 });
    const found = await page(`/admin/view/deals?buyer_email=${encodeURIComponent(email)}&status=`, support);
    expect(found.status).toBe(200);
    const text = await found.text();
    expect(text).toContain(deal.external_id);
    expect(text).toContain('Deal search shop A');
    // Part of the external id, or part of the e-mail in another case, finds it, with its title in the results.
    const byId = await (
      await page(`/admin/view/deals?external_id=${encodeURIComponent(deal.external_id.slice(3, -2))}&lang=en`, support)
    ).text();
    expect(byId).toContain(`<a href="/admin/view/deals/${deal.id}"><strong>`);
    expect(byId).toContain(`<strong>${deal.body.title}</strong>`);
    const local = email.split('@')[0];
    const byEmail = await (
      await page(`/admin/view/deals?buyer_email=${encodeURIComponent(local.slice(2).toUpperCase())}`, support)
    ).text();
    expect(byEmail).toContain(`/admin/view/deals/${deal.id}"`);
    // A wildcard character is a character: "%" finds no deal (no external id or e-mail has one).
    expect(await (await page('/admin/view/deals?external_id=%25&lang=en', support)).text()).toContain(
      'Nothing matches these filters.',
    );
    const bad = await page('/admin/view/deals?created_from=31.12.2024', support);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Check these filters: Created on or after');

    const held = await insertHeldDeal(server.services, { holdExpiresAt: new Date(Date.now() + 86_400_000) });
    const supportView = await (await page(`/admin/view/deals/${held.dealId}`, support)).text();
    expect(supportView).not.toContain('/confirm/');
    expect(supportView).toContain('money moves are for the admin and arbiter roles');
    expect((await form(`/admin/view/deals/${held.dealId}/confirm/release`, support, {})).status).toBe(403);
    expect((await page(`/admin/view/deals/${held.dealId}/confirm/release`, support)).status).toBe(403);

    const arbiterView = await (await page(`/admin/view/deals/${held.dealId}`, arbiter)).text();
    for (const move of ['release', 'refund', 'dispute'])
      expect(arbiterView).toContain(`/admin/view/deals/${held.dealId}/confirm/${move}`);
    expect(arbiterView).not.toContain('/confirm/cancel');

    // A dispute needs its reason: asked again, nothing changed; then done, in words.
    const empty = await form(`/admin/view/deals/${held.dealId}/confirm/dispute`, arbiter, { reason: ' ' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('write the reason');
    expect((await json(await get(`/admin/deals/${held.dealId}`))).status).toBe('escrow_hold');
    const opened = await form(`/admin/view/deals/${held.dealId}/confirm/dispute`, arbiter, {
      reason: 'Checking the delivery',
    });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe(`/admin/view/deals/${held.dealId}?done=dispute`);
    expect(await (await page(opened.headers.get('location')!, arbiter)).text()).toContain('Done: a dispute is open');
    expect((await json(await get(`/admin/deals/${held.dealId}`))).status).toBe('disputed');
    // The status is a badge: its words on the colour of a deal that needs an arbiter.
    expect(await (await page(`/admin/view/deals/${held.dealId}?lang=en`, arbiter)).text()).toMatch(
      /<dd class="status"><span class="badge badge-bad">[^<]+<\/span> <code>disputed<\/code>/,
    );
    const audit = await json(await get(`/admin/audit?object_id=${held.dealId}&action=adminEscrowDispute`));
    expect(audit.items[0]).toMatchObject({ actor: arbiter.email, before: { status: 'escrow_hold' } });

    // Support resends the invitation from the deal page.
    const sent = await form(`/admin/view/deals/${deal.id}/invitation`, support, {});
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`/admin/view/deals/${deal.id}?done=invitation`);
  });
});
