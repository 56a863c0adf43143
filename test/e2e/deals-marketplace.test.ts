// What a marketplace does with its deals besides driving them: list and page them, cancel before payment, mail the
// buyer's invitation again, write in a dispute, and read who made each move in the webhooks and the deal state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDealViaApi, insertHeldDeal, insertMarketplace, type TestMarketplace } from '../factories.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import { json, post, signInFromInvitation, startTestServer, type TestServer } from '../helpers.ts';

let server: TestServer;
let receiver: Receiver;
let marketplace: TestMarketplace;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  receiver = await startReceiver();
  marketplace = await insertMarketplace(server.services, { name: 'People shop' });
  await post(`${server.url}/api/mkt/webhook`, { url: receiver.url }, mkt());
});
afterAll(async () => {
  await server?.stop();
  await receiver?.stop();
});

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const mkt = (key = marketplace.secret_key) => ({ 'X-Svc-Key': key });
const api = (path: string) => `${server.url}/api/mkt${path}`;
const get = async (path: string) => json(await fetch(api(path), { headers: mkt() }));

const upload = (dealId: string) =>
  fetch(api(`/deals/${dealId}/documents?kind=contract`), {
    method: 'POST',
    headers: { ...mkt(), 'Content-Type': 'application/pdf' },
    body: Buffer.from('%PDF terms'),
  });

async function approved(deal: { id: string; buyer_email: string }) {
  expect((await upload(deal.id)).status).toBe(201);
  const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, mkt()));
  const buyer = await signInFromInvitation(server, deal.buyer_email);
  expect((await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer)).status).toBe(200);
  return buyer;
}

const events = (dealId: string) =>
  receiver.received.map((request) => JSON.parse(request.body.toString())).filter((event) => event.id === dealId);

describe('the list of deals', () => {
  it('pages newest first with starting_after, filters by status, and refuses a cursor that is not its own', async () => {
    const made = [
      await createDealViaApi(server, marketplace, { seller: true }),
      await createDealViaApi(server, marketplace, { seller: true }),
      await createDealViaApi(server, marketplace, { seller: true }),
    ];
    const first = await get('/deals?limit=2');
    expect(first.items.map((item: { id: string }) => item.id)).toEqual([made[2].id, made[1].id]);
    expect(first.has_more).toBe(true);
    const second = await get(`/deals?limit=2&starting_after=${made[1].id}`);
    expect(second.items[0].id).toBe(made[0].id);

    await upload(made[0].id);
    const docs = await get('/deals?status=docs&limit=100');
    expect(docs.items.map((item: { id: string }) => item.id)).toEqual([made[0].id]);
    expect(docs.items[0]).toMatchObject({ status: 'docs', dispute: null, cancellation: null });

    const other = await insertMarketplace(server.services);
    const foreign = await fetch(api(`/deals?starting_after=${made[0].id}`), { headers: mkt(other.secret_key) });
    expect(foreign.status).toBe(400);
    expect((await json(foreign)).code).toBe('invalid_cursor');
    expect((await json(await fetch(api('/deals'), { headers: mkt(other.secret_key) }))).items).toEqual([]);
    // Moments PostgreSQL could not hold are refused by their documented shape, never a 500.
    for (const moment of ['0000-02-29T06:27:00Z', '2026-11-01T10:00:00-20:12']) {
      const impossible = await fetch(api(`/deals?created_gte=${encodeURIComponent(moment)}`), { headers: mkt() });
      expect(impossible.status, moment).toBe(400);
      expect((await json(impossible)).code).toBe('validation_failed');
    }
  });
});

describe('cancellation', () => {
  it('cancels before money is held, tells who and why, and closes the deal', async () => {
    const deal = await createDealViaApi(server, marketplace, { seller: true });
    await upload(deal.id);
    const cancelled = await post(api(`/deals/${deal.id}/cancel`), { reason: 'Out of stock' }, mkt());
    expect(cancelled.status).toBe(200);
    expect(await json(cancelled)).toMatchObject({
      status: 'cancelled',
      cancellation: { actor: 'marketplace', reason: 'Out of stock' },
    });
    await expect
      .poll(() => events(deal.id).map((event) => event.event), { timeout: 20_000 })
      .toEqual(['deal.created', 'deal.docs', 'deal.cancelled']);
    expect(events(deal.id)[2]).toMatchObject({ status: 'cancelled', actor: 'marketplace', reason: 'Out of stock' });

    const late = await upload(deal.id);
    expect(late.status).toBe(400);
    expect((await json(late)).code).toBe('deal_closed');
    expect((await get(`/deals/${deal.id}`)).documents).toHaveLength(1);
  });

  it('refuses once the money is held: 400 deal_not_cancellable, the deal unchanged', async () => {
    const { dealId } = await insertHeldDeal(server.services, { marketplaceId: marketplace.id });
    const refused = await post(api(`/deals/${dealId}/cancel`), {}, mkt());
    expect(refused.status).toBe(400);
    expect((await json(refused)).code).toBe('deal_not_cancellable');
    expect(await get(`/deals/${dealId}`)).toMatchObject({ status: 'escrow_hold', cancellation: null });
  });

  it('is not for another marketplace: 404', async () => {
    const deal = await createDealViaApi(server, marketplace, { seller: true });
    const other = await insertMarketplace(server.services);
    expect((await post(api(`/deals/${deal.id}/cancel`), {}, mkt(other.secret_key))).status).toBe(404);
    expect((await get(`/deals/${deal.id}`)).status).toBe('created');
  });
});

describe('documents while the buyer decides', () => {
  it('refuses a document while an approval is pending, and takes it again after a rejection', async () => {
    const deal = await createDealViaApi(server, marketplace, { seller: true });
    await upload(deal.id);
    const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, mkt()));
    const refused = await upload(deal.id);
    expect(refused.status).toBe(400);
    expect((await json(refused)).code).toBe('approval_pending');
    expect((await get(`/deals/${deal.id}`)).documents).toHaveLength(1);

    const buyer = await signInFromInvitation(server, deal.buyer_email);
    await post(`${server.url}/cabinet/approvals/${approval.id}/reject`, { comment: 'Wrong colour' }, buyer);
    expect((await upload(deal.id)).status).toBe(201);
  });
});

describe("the buyer's invitation, again", () => {
  it('mails a fresh invitation naming the marketplace, at most three times an hour', async () => {
    const deal = await createDealViaApi(server, marketplace, { seller: true });
    const mails = async () =>
      (
        await json(
          await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(deal.buyer_email)}`, { headers: admin() }),
        )
      ).items as { subject: string; text: string }[];
    await expect.poll(async () => (await mails()).length, { timeout: 20_000 }).toBe(1);
    for (let i = 0; i < 3; i++) expect((await post(api(`/deals/${deal.id}/invitation`), {}, mkt())).status).toBe(202);
    const sent = await mails();
    expect(sent).toHaveLength(4);
    expect(sent[0].subject).toContain(marketplace.name);
    expect(sent[0].text).toMatch(/\/cabinet\/invite\?token=inv_/);

    const fourth = await post(api(`/deals/${deal.id}/invitation`), {}, mkt());
    expect(fourth.status).toBe(429);
    expect((await json(fourth)).code).toBe('too_many_invitations');
    expect(Number(fourth.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(await mails()).toHaveLength(4);
  });
});

describe("the buyer's invitation on a closed deal", () => {
  it('is refused with 400 deal_closed and mails nothing', async () => {
    const deal = await createDealViaApi(server, marketplace);
    const mails = async () =>
      (
        await json(
          await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(deal.buyer_email)}`, { headers: admin() }),
        )
      ).items as unknown[];
    await expect.poll(async () => (await mails()).length, { timeout: 20_000 }).toBe(1);
    expect((await post(api(`/deals/${deal.id}/cancel`), { reason: 'Out of stock' }, mkt())).status).toBe(200);
    // The cancellation's own mail first (sent after the change commits), so only the invitation could add one.
    await expect.poll(async () => (await mails()).length, { timeout: 20_000 }).toBe(2);
    const again = await post(api(`/deals/${deal.id}/invitation`), {}, mkt());
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toBe('application/problem+json');
    expect((await json(again)).code).toBe('deal_closed');
    expect(await mails()).toHaveLength(2);
  });
});

describe('a dispute, as the marketplace sees and joins it', () => {
  it('takes messages only while a dispute is open, shows who wrote what, and tells the arbiter’s decision', async () => {
    const deal = await createDealViaApi(server, marketplace, { seller: true });
    const buyer = await approved(deal);
    expect((await post(api(`/deals/${deal.id}/escrow`), {}, mkt())).status).toBe(201);

    const early = await post(api(`/deals/${deal.id}/dispute/messages`), { text: 'Anything to add?' }, mkt());
    expect(early.status).toBe(400);
    expect((await json(early)).code).toBe('no_open_dispute');

    expect(
      (await post(`${server.url}/cabinet/deals/${deal.id}/escrow/dispute`, { reason: 'It does not switch on' }, buyer))
        .status,
    ).toBe(200);
    const written = await post(
      api(`/deals/${deal.id}/dispute/messages`),
      { text: 'The seller says it was tested' },
      mkt(),
    );
    expect(written.status).toBe(201);
    expect(await json(written)).toMatchObject({
      author: 'marketplace',
      text: 'The seller says it was tested',
      files: [],
    });
    expect(
      (await post(`${server.url}/admin/deals/${deal.id}/dispute/messages`, { text: 'Please send a video' }, admin()))
        .status,
    ).toBe(201);

    // Where to pay the seller once the arbiter releases: the marketplace's test card for this deal.
    const destination = await fetch(api(`/deals/${deal.id}/payout-destination`), {
      method: 'PUT',
      headers: { ...mkt(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'test_card', token: '4111111111111111' }),
    });
    expect(destination.status).toBe(200);
    const decided = await post(
      `${server.url}/admin/deals/${deal.id}/escrow/resolve`,
      { outcome: 'release', reason: 'The video shows it working' },
      admin(),
    );
    expect(decided.status).toBe(200);
    await expect.poll(async () => (await get(`/deals/${deal.id}`)).status).toBe('paid');
    const state = await get(`/deals/${deal.id}`);
    expect(state.dispute).toMatchObject({
      status: 'decided',
      reason: 'It does not switch on',
      messages: [{ author: 'marketplace' }, { author: 'arbiter', text: 'Please send a video' }],
      decision: { outcome: 'release', reason: 'The video shows it working' },
    });
    await expect
      .poll(() => events(deal.id).at(-1), { timeout: 20_000 })
      .toMatchObject({ event: 'deal.paid', actor: 'arbiter', reason: 'The video shows it working' });

    // The buyer hears of each step in their language, with the marketplace named.
    const mail = await json(
      await fetch(`${server.url}/admin/mail?to=${encodeURIComponent(deal.buyer_email)}`, { headers: admin() }),
    );
    expect(mail.items.length).toBeGreaterThanOrEqual(4);
    expect(mail.items.every((item: { subject: string }) => item.subject.includes(marketplace.name))).toBe(true);
  });
});
