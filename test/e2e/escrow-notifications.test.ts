// POST /api/escrow/yookassa/notifications over real HTTP on the main server, with the YooKassa double sending the
// notifications. A stand-in workflow (started under the deal's workflow id, with no worker) receives the signal,
// which its history then shows: the real Temporal server, no mocks.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { createMarketplace } from '../../src/marketplaces/marketplaces.ts';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { escrowProvider } from '../../src/escrow/providers.ts';
import type { EscrowProvider } from '../../src/escrow/provider.ts';
import { json, post, startTestServer, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';

let double: YooKassaDouble;
let server: TestServer;
let provider: EscrowProvider;
let notifications: string;
const running: WorkflowHandle[] = [];

beforeAll(async () => {
  double = await startYooKassaDouble();
  server = await startTestServer({
    env: { YOOKASSA_API_URL: double.apiUrl, YOOKASSA_SHOP_ID: double.shopId, YOOKASSA_SECRET_KEY: double.secretKey },
  });
  provider = escrowProvider('yookassa', server.services.config);
  notifications = `${server.url}/api/escrow/yookassa/notifications`;
  double.notificationUrl = notifications;
});
afterAll(async () => {
  await Promise.all(running.map((handle) => handle.terminate('test over').catch(() => {})));
  await server?.stop();
  await double?.close();
});

/** A live deal with a pending YooKassa payment, as the deal workflow would have recorded it. */
async function livePayment() {
  const { marketplace } = await createMarketplace(server.services.db, { name: uniqueId('shop'), mode: 'live' });
  const dealId = randomUUID();
  const paymentId = randomUUID();
  const externalId = uniqueId('order');
  await server.services.db.query(
    `INSERT INTO deals (id, marketplace_id, external_id, buyer_email, amount) VALUES ($1, $2, $3, $4, 500)`,
    [dealId, marketplace.id, externalId, uniqueEmail('buyer')],
  );
  const created = await provider.createPayment({
    paymentId,
    dealId,
    amount: 500,
    currency: 'RUB',
    description: 'Deal',
    returnUrl: 'https://shop.example/back',
  });
  await server.services.db.query(
    `INSERT INTO deal_payments (id, deal_id, amount, currency, provider, status, payment_url, provider_payment_id)
     VALUES ($1, $2, 500, 'RUB', 'yookassa', 'pending', $3, $4)`,
    [paymentId, dealId, created.paymentUrl, created.providerPaymentId],
  );
  return {
    paymentId,
    providerPaymentId: created.providerPaymentId,
    workflowId: dealWorkflowId(marketplace.id, externalId),
  };
}

/** Stands in for the deal workflow: it runs (no worker picks it up), so signals land in its history. */
async function standIn(workflowId: string): Promise<WorkflowHandle> {
  const handle = await server.services.temporal.workflow.start('dealWorkflowStandIn', {
    workflowId,
    taskQueue: uniqueId('nobody'),
    args: [],
  });
  running.push(handle);
  return handle;
}

async function signals(handle: WorkflowHandle): Promise<{ name: string; input: unknown }[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .map((event) => event.workflowExecutionSignaledEventAttributes)
    .filter((attributes) => attributes != null)
    .map((attributes) => ({
      name: attributes.signalName ?? '',
      input: defaultPayloadConverter.fromPayload(attributes.input!.payloads![0]),
    }));
}

function notification(event: string, id: string) {
  return { type: 'notification', event, object: { id, status: 'waiting_for_capture', paid: true } };
}

describe('YooKassa notifications', () => {
  it('re-reads the payment from YooKassa and tells the deal it is held', async () => {
    const payment = await livePayment();
    const deal = await standIn(payment.workflowId);
    const sent = await double.pay(payment.providerPaymentId);
    expect(sent.status).toBe(200);
    expect(double.requestsTo('GET', `/v3/payments/${payment.providerPaymentId}`)).toHaveLength(1);
    expect(await signals(deal)).toEqual([
      { name: 'acquirerNotification', input: { paymentId: payment.paymentId, status: 'hold' } },
    ]);
  });

  it('tells the deal when YooKassa cancelled the payment (a lapsed hold)', async () => {
    const payment = await livePayment();
    const deal = await standIn(payment.workflowId);
    await double.pay(payment.providerPaymentId);
    expect((await double.expire(payment.providerPaymentId)).status).toBe(200);
    expect((await signals(deal)).map((signal) => signal.input)).toEqual([
      { paymentId: payment.paymentId, status: 'hold' },
      { paymentId: payment.paymentId, status: 'refunded' },
    ]);
  });

  it('never trusts the body: a forged "paid" notification for an unpaid payment changes nothing', async () => {
    const payment = await livePayment();
    const deal = await standIn(payment.workflowId);
    const response = await post(notifications, notification('payment.waiting_for_capture', payment.providerPaymentId));
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ ok: true });
    expect(double.requestsTo('GET', `/v3/payments/${payment.providerPaymentId}`)).toHaveLength(1);
    expect(await signals(deal)).toEqual([]);
  });

  it('answers 200 for a payment it does not know, without calling YooKassa', async () => {
    const id = randomUUID();
    const response = await post(notifications, notification('payment.succeeded', id));
    expect(response.status).toBe(200);
    expect(double.requestsTo('GET', `/v3/payments/${id}`)).toHaveLength(0);
  });

  it('starts the deal workflow from the records when none runs, and gives it the news', async () => {
    const payment = await livePayment();
    const sent = await double.pay(payment.providerPaymentId);
    expect(sent.status).toBe(200);
    expect(double.requestsTo('GET', `/v3/payments/${payment.providerPaymentId}`)).toHaveLength(1);
    const handle = server.services.temporal.workflow.getHandle(payment.workflowId);
    running.push(handle);
    expect((await handle.describe()).type).toBe('dealWorkflow');
    expect((await signals(handle)).map((signal) => signal.input)).toEqual([
      { paymentId: payment.paymentId, status: 'hold' },
    ]);
  });

  it('answers 503 while YooKassa cannot be re-read, so YooKassa sends it again', async () => {
    const payment = await livePayment();
    const deal = await standIn(payment.workflowId);
    double.failNext(1, 500);
    const sent = await double.pay(payment.providerPaymentId);
    expect(sent.status).toBe(503);
    expect(await signals(deal)).toEqual([]);
    const again = await post(notifications, notification('payment.waiting_for_capture', payment.providerPaymentId));
    expect(again.status).toBe(200);
    expect((await signals(deal)).map((signal) => signal.input)).toEqual([
      { paymentId: payment.paymentId, status: 'hold' },
    ]);
  });

  it('answers 400 problems for malformed notifications', async () => {
    const missingId = await post(notifications, { type: 'notification', event: 'payment.succeeded', object: {} });
    expect(missingId.status).toBe(400);
    expect(missingId.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(await json(missingId)).toMatchObject({ code: 'validation_failed', errors: [{ path: 'object.id' }] });
    const otherEvent = await post(notifications, notification('refund.succeeded', randomUUID()));
    expect((await json(otherEvent)).errors[0].path).toBe('event');
    const broken = await post(notifications, '{"type": "notification",');
    expect(broken.status).toBe(400);
    expect((await json(broken)).code).toBe('invalid_json');
  });

  it('is in the OpenAPI document under Escrow', async () => {
    const document = await json(await fetch(`${server.url}/api/openapi.json`));
    expect(document.paths['/api/escrow/yookassa/notifications'].post).toMatchObject({ tags: ['Escrow'] });
  });
});
