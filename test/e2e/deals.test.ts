// The deal lifecycle end to end over HTTP, against the real PostgreSQL, the Temporal dev server and our worker:
// each ending (paid; dispute then refund; rejected), with the buyer in the cabinet and webhooks at the marketplace.
import { createHash, createHmac } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { dealWorkflowId } from '../../src/deals/model.ts';
import type { FilesystemDocumentStore } from '../../src/documents/index.ts';
import { createDealViaApi, insertMarketplace, type TestMarketplace } from '../factories.ts';
import { startReceiver, type Receiver } from '../webhook-receiver.ts';
import {
  json,
  post,
  signInFromInvitation,
  startTestServer,
  uniqueEmail,
  uniqueId,
  type TestServer,
  UUID_PATTERN,
} from '../helpers.ts';

let server: TestServer;
let receiver: Receiver;
let marketplace: TestMarketplace;
let webhookSecret: string;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  receiver = await startReceiver();
  marketplace = await insertMarketplace(server.services, { name: 'Lifecycle shop' });
  webhookSecret = (await json(await post(`${server.url}/api/mkt/webhook`, { url: receiver.url }, mkt()))).secret;
});
afterAll(async () => {
  await server?.stop();
  await receiver?.stop();
});

const admin = () => ({ Authorization: `Bearer ${server.adminToken}` });
const mkt = (key = marketplace.secret_key) => ({ 'X-Svc-Key': key });
const api = (path: string) => `${server.url}/api/mkt${path}`;

/** The deal this file's lifecycles sell: a bicycle, with a seller. */
const BICYCLE = { seller: true, title: 'Bicycle', amount: 1500.5 };

const TERMS = Buffer.from('%PDF-1.4 terms of the deal');

async function uploadDocument(dealId: string, kind = 'contract', bytes = TERMS) {
  return fetch(api(`/deals/${dealId}/documents?kind=${kind}&name=Terms.pdf`), {
    method: 'POST',
    headers: { ...mkt(), 'Content-Type': 'application/pdf' },
    body: bytes,
  });
}

async function getDeal(dealId: string) {
  return json(await fetch(api(`/deals/${dealId}`), { headers: mkt() }));
}

const buyerSignsIn = (email: string) => signInFromInvitation(server, email);

async function toApproval(dealId: string) {
  expect((await uploadDocument(dealId)).status).toBe(201);
  const started = await post(api(`/deals/${dealId}/approval`), {}, mkt());
  expect(started.status).toBe(201);
  return json(started);
}

function eventsFor(dealId: string) {
  return receiver.received.map((request) => JSON.parse(request.body.toString())).filter((event) => event.id === dealId);
}

async function waitForEvents(dealId: string, events: string[]) {
  await expect.poll(() => eventsFor(dealId).map((event) => event.event), { timeout: 20_000 }).toEqual(events);
}

describe('a deal that is paid', () => {
  it('goes created → docs → approval → approved → escrow_hold → paid, with a signed webhook for each step', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    expect(deal.status).toBe('created');

    const upload = await uploadDocument(deal.id);
    expect(upload.status).toBe(201);
    const document = await json(upload);
    expect(document).toMatchObject({
      kind: 'contract',
      name: 'Terms.pdf',
      content_type: 'application/pdf',
      size: 26,
      sha256: createHash('sha256').update(TERMS).digest('hex'),
    });
    expect((await getDeal(deal.id)).status).toBe('docs');

    const approval = await json(await post(api(`/deals/${deal.id}/approval`), {}, mkt()));
    expect(approval).toMatchObject({ status: 'pending', approver: deal.buyer_email });
    const again = await post(api(`/deals/${deal.id}/approval`), {}, mkt());
    expect(again.status).toBe(200);
    expect((await json(again)).id).toBe(approval.id);
    expect((await getDeal(deal.id)).status).toBe('approval');

    const escrowTooEarly = await post(api(`/deals/${deal.id}/escrow`), {}, mkt());
    expect(escrowTooEarly.status).toBe(400);
    expect((await json(escrowTooEarly)).code).toBe('deal_not_approved');

    const buyer = await buyerSignsIn(deal.buyer_email);
    const { items } = await json(await fetch(`${server.url}/cabinet/approvals`, { headers: buyer }));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ id: approval.id, status: 'pending', deal: { id: deal.id, title: 'Bicycle' } });

    const content = await fetch(`${server.url}/cabinet/documents/${document.id}/content`, { headers: buyer });
    expect(content.headers.get('content-type')).toBe('application/pdf');
    expect(await content.text()).toBe('%PDF-1.4 terms of the deal');

    const approved = await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, { comment: 'Fine' }, buyer);
    expect(approved.status).toBe(200);
    expect(await json(approved)).toMatchObject({ id: approval.id, status: 'approved', comment: 'Fine' });
    expect((await getDeal(deal.id)).status).toBe('approved');

    // The escrow amount is money like the deal's: at most two decimals, at most 10^13.
    for (const amount of [1.005, 0.1 + 0.2, 1e13 + 0.01]) {
      const refused = await post(api(`/deals/${deal.id}/escrow`), { amount }, mkt());
      expect(refused.status, String(amount)).toBe(400);
      expect(await json(refused)).toMatchObject({ code: 'validation_failed', errors: [{ path: 'amount' }] });
    }
    expect((await getDeal(deal.id)).payments).toEqual([]);
    const tooMuch = await post(api(`/deals/${deal.id}/escrow`), { amount: 5000 }, mkt());
    expect(tooMuch.status).toBe(400);
    const escrow = await post(api(`/deals/${deal.id}/escrow`), {}, mkt());
    expect(escrow.status).toBe(201);
    const payment = await json(escrow);
    expect(payment).toEqual({
      ok: true,
      payment_id: expect.any(String),
      amount: 1500.5,
      provider: 'sandbox',
      status: 'hold',
    });
    expect((await getDeal(deal.id)).status).toBe('escrow_hold');

    // Where to pay the seller: the marketplace's test card for this deal (the seller has given none).
    const destination = await fetch(api(`/deals/${deal.id}/payout-destination`), {
      method: 'PUT',
      headers: { ...mkt(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'test_card', token: '4111111111111111' }),
    });
    expect(destination.status).toBe(200);
    const released = await post(`${server.url}/cabinet/deals/${deal.id}/escrow/release`, {}, buyer);
    expect(released.status).toBe(200);
    expect(await json(released)).toMatchObject({ id: payment.payment_id, status: 'released' });

    // Paid once the seller's payout, made after the release answered, went through.
    await expect.poll(async () => (await getDeal(deal.id)).status).toBe('paid');
    const final = await getDeal(deal.id);
    expect(final).toMatchObject({
      status: 'paid',
      external_id: deal.external_id,
      seller_email: expect.any(String),
      amount: 1500.5,
      currency: 'RUB',
    });
    expect(final.documents).toHaveLength(1);
    expect(final.approvals).toEqual([
      expect.objectContaining({ id: approval.id, status: 'approved', decided_at: expect.any(String) }),
    ]);
    expect(final.payments).toEqual([
      expect.objectContaining({ id: payment.payment_id, status: 'released', provider: 'sandbox' }),
    ]);

    // A paid deal takes no more documents, and the refused file is not left in the buyer's cloud.
    const late = await uploadDocument(deal.id, 'act', Buffer.from('%PDF-1.4 too late'));
    expect(late.status).toBe(400);
    expect((await json(late)).code).toBe('deal_closed');
    const { rows } = await server.services.db.query('SELECT storage_key FROM deal_documents WHERE deal_id = $1', [
      deal.id,
    ]);
    expect(rows).toHaveLength(1);
    const file = path.join((server.services.documents as FilesystemDocumentStore).root, rows[0].storage_key);
    expect(await readdir(path.dirname(file))).toEqual([path.basename(file)]);
    expect((await stat(file)).mode & 0o777).toBe(0o600); // the service user's alone

    await waitForEvents(deal.id, [
      'deal.created',
      'deal.docs',
      'deal.approval',
      'deal.approved',
      'deal.escrow_hold',
      'deal.payout_sent',
      'deal.paid',
    ]);
    const paid = eventsFor(deal.id).at(-1);
    expect(paid).toMatchObject({
      event: 'deal.paid',
      id: deal.id,
      external_id: deal.external_id,
      title: 'Bicycle',
      amount: 1500.5,
      currency: 'RUB',
      status: 'paid',
      buyer_email: deal.buyer_email,
      event_id: expect.any(String),
      occurred_at: expect.any(String),
    });
  });

  it('signs each webhook over the raw bytes, verifiable by a plain HMAC and by the Standard Webhooks library', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    const approval = await toApproval(deal.id);
    const buyer = await buyerSignsIn(deal.buyer_email);
    await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer);
    await waitForEvents(deal.id, ['deal.created', 'deal.docs', 'deal.approval', 'deal.approved']);
    const request = receiver.received.find(
      (candidate) =>
        JSON.parse(candidate.body.toString()).event === 'deal.approved' &&
        JSON.parse(candidate.body.toString()).id === deal.id,
    )!;
    const expected = createHmac('sha256', webhookSecret).update(request.body).digest('hex');
    expect(request.headers['x-svc-signature']).toBe(expected);
    expect(request.headers['x-svc-event']).toBe('deal.approved');
    expect(request.headers['x-svc-delivery']).toEqual(expect.any(String));
    const headers = Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, String(value)]));
    expect(new Webhook(webhookSecret).verify(request.body.toString(), headers)).toMatchObject({
      event: 'deal.approved',
      status: 'approved',
      actor: 'buyer',
    });
  });
});

describe('a deal that is disputed, then refunded', () => {
  it('lets the buyer open a dispute and the arbiter refund', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    const approval = await toApproval(deal.id);
    const buyer = await buyerSignsIn(deal.buyer_email);
    await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer);
    expect((await post(api(`/deals/${deal.id}/escrow`), { amount: 1000 }, mkt())).status).toBe(201);

    const reasonless = await post(`${server.url}/cabinet/deals/${deal.id}/escrow/dispute`, {}, buyer);
    expect(reasonless.status).toBe(400);
    expect((await getDeal(deal.id)).status).toBe('escrow_hold');
    expect(
      (
        await post(
          `${server.url}/cabinet/deals/${deal.id}/escrow/dispute`,
          { reason: 'The bicycle came without wheels' },
          buyer,
        )
      ).status,
    ).toBe(200);
    const disputed = await getDeal(deal.id);
    expect(disputed.status).toBe('disputed');
    expect(disputed.dispute).toMatchObject({
      status: 'open',
      reason: 'The bicycle came without wheels',
      decision: null,
    });

    const buyerRefund = await post(`${server.url}/cabinet/deals/${deal.id}/escrow/refund`, {}, buyer);
    expect(buyerRefund.status).toBe(400);
    expect((await json(buyerRefund)).code).toBe('dispute_open');

    const blind = await post(`${server.url}/admin/deals/${deal.id}/escrow/resolve`, { outcome: 'refund' }, admin());
    expect(blind.status).toBe(400);
    const resolved = await post(
      `${server.url}/admin/deals/${deal.id}/escrow/resolve`,
      { outcome: 'refund', reason: 'The seller sent no proof of delivery' },
      admin(),
    );
    expect(resolved.status).toBe(200);
    expect(await json(resolved)).toMatchObject({ status: 'refunded', amount: 1000 });
    const decided = await getDeal(deal.id);
    expect(decided.status).toBe('refunded');
    expect(decided.dispute).toMatchObject({
      status: 'decided',
      decision: { outcome: 'refund', reason: 'The seller sent no proof of delivery' },
    });

    const afterwards = await post(`${server.url}/admin/deals/${deal.id}/escrow/release`, {}, admin());
    expect(afterwards.status).toBe(400);
    expect((await json(afterwards)).code).toBe('deal_closed');
    await waitForEvents(deal.id, [
      'deal.created',
      'deal.docs',
      'deal.approval',
      'deal.approved',
      'deal.escrow_hold',
      'deal.disputed',
      'deal.refunded',
    ]);
    // The arbiter's refund is told apart from the buyer's cancellation: who, and why.
    const [opened, refunded] = eventsFor(deal.id).slice(-2);
    expect(opened).toMatchObject({ actor: 'buyer', reason: 'The bicycle came without wheels' });
    expect(refunded).toMatchObject({ actor: 'arbiter', reason: 'The seller sent no proof of delivery' });
  });
});

describe('a deal that is rejected', () => {
  it('records the comment, tells the marketplace, and lets a new approval start', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    const approval = await toApproval(deal.id);
    const buyer = await buyerSignsIn(deal.buyer_email);
    const rejected = await post(
      `${server.url}/cabinet/approvals/${approval.id}/reject`,
      { comment: 'Wrong size' },
      buyer,
    );
    expect(await json(rejected)).toMatchObject({ status: 'rejected', comment: 'Wrong size' });
    expect((await getDeal(deal.id)).status).toBe('rejected');

    const twice = await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer);
    expect(twice.status).toBe(400);
    expect((await json(twice)).code).toBe('approval_not_pending');

    const escrow = await post(api(`/deals/${deal.id}/escrow`), {}, mkt());
    expect((await json(escrow)).code).toBe('deal_not_approved');

    const second = await post(api(`/deals/${deal.id}/approval`), { comment: 'New size' }, mkt());
    expect(second.status).toBe(201);
    expect((await getDeal(deal.id)).status).toBe('approval');
    await waitForEvents(deal.id, ['deal.created', 'deal.docs', 'deal.approval', 'deal.rejected', 'deal.approval']);
    expect(eventsFor(deal.id)[3]).toMatchObject({ event: 'deal.rejected', actor: 'buyer', reason: 'Wrong size' });
  });
});

describe('creation', () => {
  it('is idempotent on external_id: thirty concurrent identical requests make one deal and one workflow', async () => {
    const body = { external_id: uniqueId('race'), buyer_email: uniqueEmail('racer'), amount: 10 };
    const responses = await Promise.all(Array.from({ length: 30 }, () => post(api('/deals'), body, mkt())));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(29);
    const ids = new Set(await Promise.all(responses.map(async (response) => (await json(response)).id)));
    expect(ids.size).toBe(1);
    const rows = await server.services.db.query(
      'SELECT count(*) FROM deals WHERE marketplace_id = $1 AND external_id = $2',
      [marketplace.id, body.external_id],
    );
    expect(rows.rows[0].count).toBe(1);
    const workflowId = dealWorkflowId(marketplace.id, body.external_id);
    const runs = [];
    for await (const execution of server.services.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runs.push(execution);
    expect(runs).toHaveLength(1);
  });

  it('answers a repeat with the same given fields 200 and the stored deal unchanged, fields left out or not', async () => {
    const deal = await createDealViaApi(server, marketplace, {
      ...BICYCLE,
      title: 'Original',
      amount: 5,
      currency: 'usd',
      buyer_name: 'Ivan',
    });
    const same = {
      external_id: deal.external_id,
      buyer_email: deal.buyer_email.toUpperCase(),
      title: 'Original',
      amount: 5.0,
      currency: 'USD',
    };
    for (const body of [same, { external_id: deal.external_id, buyer_email: deal.buyer_email }]) {
      const repeat = await post(api('/deals'), body, mkt());
      expect(repeat.status).toBe(200);
      expect(await json(repeat)).toEqual({ id: deal.id, external_id: deal.external_id, status: 'created' });
    }
    expect(await getDeal(deal.id)).toMatchObject({
      title: 'Original',
      amount: 5,
      currency: 'USD',
      buyer_name: 'Ivan',
      description: '',
    });
  });

  it('refuses a repeat that gives other values with 409 deal_conflict naming exactly those fields', async () => {
    const deal = await createDealViaApi(server, marketplace, {
      ...BICYCLE,
      title: 'Original',
      amount: 5,
      description: 'Blue',
    });
    const repeat = await post(
      api('/deals'),
      // title and currency left out (a default would differ from 'Original' but is not given), seller the same.
      {
        external_id: deal.external_id,
        buyer_email: uniqueEmail(),
        amount: 9,
        description: 'Blue',
        seller_email: (await getDeal(deal.id)).seller_email,
      },
      mkt(),
    );
    expect(repeat.status).toBe(409);
    expect(repeat.headers.get('content-type')).toContain('application/problem+json');
    expect(await json(repeat)).toMatchObject({
      status: 409,
      code: 'deal_conflict',
      fields: ['buyer_email', 'amount'],
      detail: expect.stringContaining('other values of: buyer_email, amount'),
    });
    // A given default is a value like any other: the stored description is 'Blue', not ''.
    const emptied = await post(
      api('/deals'),
      { external_id: deal.external_id, buyer_email: deal.buyer_email, description: '' },
      mkt(),
    );
    expect(await json(emptied)).toMatchObject({ code: 'deal_conflict', fields: ['description'] });
    expect(await getDeal(deal.id)).toMatchObject({
      title: 'Original',
      amount: 5,
      description: 'Blue',
      buyer_email: deal.buyer_email,
    });
  });

  it('makes one deal of concurrent creations that disagree: the first wins, the others are 409 or 200', async () => {
    const base = { external_id: uniqueId('race'), buyer_email: uniqueEmail('racer') };
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(api('/deals'), { ...base, amount: i % 2 === 0 ? 10 : 20 }, mkt())),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    const winner = (await getDeal((await json(responses[statuses.indexOf(201)])).id)).amount;
    for (const [i, status] of statuses.entries()) {
      if (status !== 201)
        expect(status, `amount ${i % 2 === 0 ? 10 : 20}`).toBe((i % 2 === 0 ? 10 : 20) === winner ? 200 : 409);
    }
    const rows = await server.services.db.query(
      'SELECT count(*) FROM deals WHERE marketplace_id = $1 AND external_id = $2',
      [marketplace.id, base.external_id],
    );
    expect(rows.rows[0].count).toBe(1);
  });

  it('gives the buyer and the seller a svc ID, a personal organization and an invitation', async () => {
    const deal = await createDealViaApi(server, marketplace, { ...BICYCLE, buyer_name: 'Ivan Petrov' });
    const { seller_email } = await getDeal(deal.id);
    for (const email of [deal.buyer_email, seller_email]) {
      await expect
        .poll(
          async () =>
            (
              await server.services.db.query(
                `SELECT 1 FROM mail_outbox WHERE recipient = $1 AND text_body LIKE '%/cabinet/invite?token=inv_%'`,
                [email],
              )
            ).rowCount,
          { timeout: 20_000 },
        )
        .toBe(1);
      const user = await server.services.db.query(
        `SELECT u.id, o.personal FROM users u JOIN organizations o ON o.owner_id = u.id WHERE lower(u.email) = lower($1)`,
        [email],
      );
      expect(user.rows).toEqual([{ id: expect.stringMatching(UUID_PATTERN), personal: true }]);
    }
  });

  it('finds a deal by external_id and hides other marketplaces’ deals', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    const found = await fetch(api(`/deals?external_id=${encodeURIComponent(deal.external_id)}`), { headers: mkt() });
    expect((await json(found)).id).toBe(deal.id);
    expect((await fetch(api('/deals?external_id=nope'), { headers: mkt() })).status).toBe(404);
    const listed = await json(await fetch(api('/deals?limit=100'), { headers: mkt() }));
    expect(listed.items.map((item: { id: string }) => item.id)).toContain(deal.id);

    const other = await json(await post(`${server.url}/admin/marketplaces`, { name: 'Other shop' }, admin()));
    for (const path of [`/deals/${deal.id}`, `/deals?external_id=${encodeURIComponent(deal.external_id)}`]) {
      const response = await fetch(api(path), { headers: mkt(other.secret_key) });
      expect(response.status, path).toBe(404);
    }
    expect((await post(api(`/deals/${deal.id}/approval`), {}, mkt(other.secret_key))).status).toBe(404);
  });

  it.each([
    [{ buyer_email: 'a@b.example' }, 'external_id'],
    [{ external_id: 'x'.repeat(129), buyer_email: 'a@b.example' }, 'external_id'],
    [{ external_id: 'ok' }, 'buyer_email'],
    [{ external_id: 'ok', buyer_email: 'not-mail' }, 'buyer_email'],
    [{ external_id: 'ok', buyer_email: 'a@b.example', amount: -1 }, 'amount'],
    [{ external_id: 'ok', buyer_email: 'a@b.example', amount: 1.005 }, 'amount'],
    [{ external_id: 'ok', buyer_email: 'a@b.example', amount: 0.30000000000000004 }, 'amount'],
    [{ external_id: 'ok', buyer_email: 'a@b.example', amount: 9999999999999.123 }, 'amount'],
    [{ external_id: 'ok', buyer_email: 'a@b.example', amount: 10000000000000.01 }, 'amount'],
    [{ external_id: 'ok', buyer_email: 'a@b.example', amount: 1e14 }, 'amount'],
    [{ external_id: 'ok', buyer_email: 'a@b.example', currency: 'RUBLES' }, 'currency'],
  ])('refuses %j (400 on %s) and makes nothing', async (body, field) => {
    // This marketplace's deals only: other files make deals in the same database at the same time.
    const count = async () =>
      (await server.services.db.query('SELECT count(*) FROM deals WHERE marketplace_id = $1', [marketplace.id])).rows[0]
        .count;
    const before = await count();
    const response = await post(api('/deals'), body, mkt());
    expect(response.status).toBe(400);
    expect((await json(response)).errors.map((error: { path: string }) => error.path)).toContain(field);
    expect(await count()).toBe(before);
  });

  it.each([0, 0.07, 0.29, 19.99, 1234567.89, 9999999999999.99, 1e13])(
    'keeps the amount %s to the cent',
    async (amount) => {
      const deal = await createDealViaApi(server, marketplace, { ...BICYCLE, amount });
      expect((await getDeal(deal.id)).amount).toBe(amount);
    },
  );

  it('documents amounts as multiples of 0.01 up to 10^13 in the OpenAPI document', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    const bodyOf = (path: string) => document.paths[path].post.requestBody.content['application/json'].schema;
    for (const path of ['/api/mkt/deals', '/api/mkt/deals/{deal_id}/escrow', '/api/mkt/widget/deals']) {
      expect(bodyOf(path).properties.amount, path).toMatchObject({
        type: 'number',
        minimum: 0,
        maximum: 1e13,
        multipleOf: 0.01,
      });
    }
    expect(bodyOf('/api/mkt/deals').properties).toMatchObject({
      title: { default: '' },
      currency: { default: 'RUB' },
      amount: { default: 0 },
    });
    expect(
      document.paths['/api/mkt/deals'].post.responses['409'].content['application/problem+json'].schema.properties
        .fields,
    ).toMatchObject({ type: 'array' });
  });

  it('upper-cases the currency', async () => {
    const deal = await createDealViaApi(server, marketplace, { ...BICYCLE, currency: 'usd' });
    expect((await getDeal(deal.id)).currency).toBe('USD');
  });
});

describe('documents and approvals', () => {
  it('needs a document before the approval, a known kind, and at most 25 MiB', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    const early = await post(api(`/deals/${deal.id}/approval`), {}, mkt());
    expect(early.status).toBe(400);
    expect((await json(early)).code).toBe('no_documents');

    const badKind = await uploadDocument(deal.id, 'receipt');
    expect(badKind.status).toBe(400);
    const tooBig = await uploadDocument(deal.id, 'invoice', Buffer.alloc(25 * 1024 * 1024 + 1));
    expect(tooBig.status).toBe(413);
    expect((await getDeal(deal.id)).documents).toEqual([]);

    const plain = await fetch(api(`/deals/${deal.id}/documents?kind=invoice`), {
      method: 'POST',
      headers: mkt(),
      body: Buffer.from('x'),
    });
    expect(await json(plain)).toMatchObject({ name: 'invoice', content_type: 'application/octet-stream', size: 1 });
  });

  it('invites an approver who is not the buyer, and only they decide', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    expect((await uploadDocument(deal.id)).status).toBe(201);
    const approverEmail = uniqueEmail('cfo');
    const started = await json(
      await post(api(`/deals/${deal.id}/approval`), { approver_email: approverEmail, comment: 'Please check' }, mkt()),
    );
    expect(started).toMatchObject({ status: 'pending', approver: approverEmail });
    const approver = await buyerSignsIn(approverEmail);
    const buyer = await buyerSignsIn(deal.buyer_email);
    const approvalId = started.id;
    expect((await post(`${server.url}/cabinet/approvals/${approvalId}/approve`, {}, buyer)).status).toBe(404);
    const { items } = await json(await fetch(`${server.url}/cabinet/approvals`, { headers: approver }));
    expect(items.map((item: { id: string }) => item.id)).toEqual([approvalId]);
    expect((await post(`${server.url}/cabinet/approvals/${approvalId}/approve`, {}, approver)).status).toBe(200);
    expect((await getDeal(deal.id)).status).toBe('approved');
  });

  it('lets only the approver decide', async () => {
    const deal = await createDealViaApi(server, marketplace, BICYCLE);
    const approval = await toApproval(deal.id);
    const stranger = await createDealViaApi(server, marketplace, BICYCLE);
    const strangerToken = await buyerSignsIn(stranger.buyer_email);
    const response = await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, strangerToken);
    expect(response.status).toBe(404);
    expect((await fetch(`${server.url}/cabinet/deals/${deal.id}`, { headers: strangerToken })).status).toBe(404);
    expect((await getDeal(deal.id)).status).toBe('approval');
  });
});

describe('the Temporal UI view', () => {
  it('finds a deal by DealStatus and carries its title in the memo', async () => {
    const deal = await createDealViaApi(server, marketplace, { ...BICYCLE, title: 'Searchable bike' });
    const approval = await toApproval(deal.id);
    const buyer = await buyerSignsIn(deal.buyer_email);
    await post(`${server.url}/cabinet/approvals/${approval.id}/approve`, {}, buyer);
    await post(api(`/deals/${deal.id}/escrow`), {}, mkt());
    const workflowId = dealWorkflowId(marketplace.id, deal.external_id);
    const query = `DealStatus = 'escrow_hold' AND ExternalId = '${deal.external_id}' AND MarketplaceId = '${marketplace.id}'`;
    await expect
      .poll(
        async () => {
          const found = [];
          for await (const execution of server.services.temporal.workflow.list({ query }))
            found.push(execution.workflowId);
          return found;
        },
        { timeout: 20_000 },
      )
      .toEqual([workflowId]);
    const description = await server.services.temporal.workflow.getHandle(workflowId).describe();
    expect(description.memo).toEqual({ title: 'Searchable bike' });
  });
});
