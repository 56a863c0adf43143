// The YooKassa provider against a local double of YooKassa API v3: two-stage payments, idempotence keys, and the
// line between refusals (final) and transient failures (retried).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { escrowProvider } from '../../src/escrow/providers.ts';
import { YooKassaProvider, money } from '../../src/escrow/yookassa.ts';
import type { CreatePaymentInput, EscrowProvider } from '../../src/escrow/provider.ts';
import { createEscrowActivities } from '../../activities/deals/escrow.ts';
import { testConfig } from '../helpers.ts';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';

let double: YooKassaDouble;
let provider: EscrowProvider;

beforeAll(async () => {
  double = await startYooKassaDouble({ shopId: '424242', secretKey: 'test_Sx9' });
  provider = escrowProvider('yookassa', yookassaConfig());
});
afterAll(async () => {
  await double?.close();
});

function yookassaConfig() {
  return testConfig({ YOOKASSA_API_URL: double.apiUrl, YOOKASSA_SHOP_ID: '424242', YOOKASSA_SECRET_KEY: 'test_Sx9' });
}

function input(overrides: Partial<CreatePaymentInput> = {}): CreatePaymentInput {
  return {
    paymentId: randomUUID(),
    dealId: randomUUID(),
    amount: 1234.5,
    currency: 'RUB',
    description: 'Deal 42: 10 pallets',
    returnUrl: 'https://shop.example/deals/42',
    ...overrides,
  };
}

/** A payment the buyer has paid: held, waiting for capture. */
async function heldPayment(): Promise<string> {
  const created = await provider.createPayment(input());
  await double.pay(created.providerPaymentId);
  return created.providerPaymentId;
}

async function refusal(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  const failure = error as ApplicationFailure;
  expect(failure.nonRetryable).toBe(true);
  expect(failure.type).toBe('acquirer_refused');
  return failure;
}

async function transient(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  expect(error).not.toBeInstanceOf(ApplicationFailure);
  return error as Error;
}

describe('createPayment', () => {
  it('creates a two-stage payment and returns the payment page', async () => {
    const request = input();
    const created = await provider.createPayment(request);
    expect(created).toEqual({
      status: 'pending',
      providerPaymentId: expect.any(String),
      paymentUrl: `${double.url}/checkout/payments/${created.providerPaymentId}`,
    });
    const [sent] = double
      .requestsTo('POST', '/v3/payments')
      .filter((r) => r.headers['idempotence-key'] === request.paymentId);
    expect(sent.headers.authorization).toBe(`Basic ${Buffer.from('424242:test_Sx9').toString('base64')}`);
    expect(sent.body).toEqual({
      amount: { value: '1234.50', currency: 'RUB' },
      capture: false,
      confirmation: { type: 'redirect', return_url: 'https://shop.example/deals/42' },
      description: 'Deal 42: 10 pallets',
      metadata: { deal_id: request.dealId, payment_id: request.paymentId },
    });
    expect(double.payments.get(created.providerPaymentId)).toMatchObject({
      status: 'pending',
      paid: false,
      test: true,
    });
    expect(await provider.getPayment(created.providerPaymentId)).toEqual({
      providerPaymentId: created.providerPaymentId,
      status: 'pending',
      amount: 1234.5,
      currency: 'RUB',
    });
  });

  it('gives the same payment for the same paymentId, however often it is retried', async () => {
    const request = input();
    const results = await Promise.all([1, 2, 3].map(() => provider.createPayment(request)));
    expect(new Set(results.map((result) => result.providerPaymentId)).size).toBe(1);
    const made = [...double.payments.values()].filter((payment) => payment.metadata.payment_id === request.paymentId);
    expect(made).toHaveLength(1);
  });

  it('refuses the same paymentId for a different payment (a reused Idempotence-Key)', async () => {
    const request = input();
    await provider.createPayment(request);
    const failure = await refusal(provider.createPayment({ ...request, amount: 99 }));
    expect(failure.message).toMatch(/Idempotence key duplicated/);
  });

  it('cuts the description to YooKassa’s 128 characters and sends no empty one', async () => {
    const long = await provider.createPayment(input({ description: 'Ж'.repeat(200) }));
    expect(double.payments.get(long.providerPaymentId)!.description).toBe('Ж'.repeat(128));
    const none = await provider.createPayment(input({ description: '' }));
    expect(double.payments.get(none.providerPaymentId)).not.toHaveProperty('description');
  });

  it('turns YooKassa’s 400 for a bad request into a refusal naming the parameter', async () => {
    const failure = await refusal(provider.createPayment(input({ amount: 0 })));
    expect(failure.message).toMatch(/HTTP 400, invalid_request, parameter amount\.value/);
  });
});

describe('capture (release)', () => {
  it('releases a held payment with the amount and the key given', async () => {
    const id = await heldPayment();
    expect((await provider.getPayment(id)).status).toBe('hold');
    const key = `${randomUUID()}/release`;
    await provider.capture(id, 1234.5, 'RUB', key);
    expect((await provider.getPayment(id)).status).toBe('released');
    const [sent] = double.requestsTo('POST', `/v3/payments/${id}/capture`);
    expect(sent.headers['idempotence-key']).toBe(key);
    expect(sent.headers.authorization).toMatch(/^Basic /);
    expect(sent.body).toEqual({ amount: { value: '1234.50', currency: 'RUB' } });
  });

  it('captures once when retried with the same key, and a late retry under another key changes nothing', async () => {
    const id = await heldPayment();
    const key = randomUUID();
    await provider.capture(id, 1234.5, 'RUB', key);
    const capturedAt = double.payments.get(id)!.captured_at;
    await provider.capture(id, 1234.5, 'RUB', key); // the activity retried after a lost answer
    await provider.capture(id, 1234.5, 'RUB', randomUUID()); // beyond YooKassa's 24-hour key memory
    expect(double.payments.get(id)).toMatchObject({
      status: 'succeeded',
      captured_at: capturedAt,
      amount: { value: '1234.50' },
    });
    expect(double.requestsTo('POST', `/v3/payments/${id}/capture`)).toHaveLength(3);
  });

  it('is refused, for good, while the buyer has not paid', async () => {
    const { providerPaymentId } = await provider.createPayment(input());
    const failure = await refusal(provider.capture(providerPaymentId, 1234.5, 'RUB', randomUUID()));
    expect(failure.message).toMatch(/waiting_for_capture/);
    expect(double.payments.get(providerPaymentId)!.status).toBe('pending');
  });

  it('is refused after the hold lapsed', async () => {
    const id = await heldPayment();
    await double.expire(id);
    const failure = await refusal(provider.capture(id, 1234.5, 'RUB', randomUUID()));
    expect(failure.message).toMatch(/canceled/);
  });
});

describe('cancel (refund)', () => {
  it('returns held money and is idempotent', async () => {
    const id = await heldPayment();
    const key = `${randomUUID()}/refund`;
    await provider.cancel(id, key);
    expect((await provider.getPayment(id)).status).toBe('refunded');
    expect(double.payments.get(id)!.cancellation_details).toEqual({
      party: 'merchant',
      reason: 'canceled_by_merchant',
    });
    await provider.cancel(id, key);
    const posts = double.requestsTo('POST', `/v3/payments/${id}/cancel`);
    expect(posts).toHaveLength(1);
    expect(posts[0].headers['idempotence-key']).toBe(key);
  });

  it('leaves an unpaid payment to lapse (YooKassa cancels only waiting_for_capture) and cancels it once paid', async () => {
    const { providerPaymentId: id } = await provider.createPayment(input());
    const key = randomUUID();
    await provider.cancel(id, key);
    expect(double.requestsTo('POST', `/v3/payments/${id}/cancel`)).toHaveLength(0);
    expect((await provider.getPayment(id)).status).toBe('pending');
    // The buyer pays anyway: the deal hears of the hold and cancels again with the same key.
    await double.pay(id);
    await provider.cancel(id, key);
    expect((await provider.getPayment(id)).status).toBe('refunded');
  });

  it('refuses to cancel a captured payment', async () => {
    const id = await heldPayment();
    await provider.capture(id, 1234.5, 'RUB', randomUUID());
    const failure = await refusal(provider.cancel(id, randomUUID()));
    expect(failure.message).toMatch(/already captured/);
  });
});

describe('failures', () => {
  it('treats 500 and 429 as transient: plain errors, and the same call succeeds afterwards', async () => {
    const id = await heldPayment();
    double.failNext(1, 500);
    expect((await transient(provider.getPayment(id))).message).toMatch(/HTTP 500, internal_server_error/);
    double.failNext(1, 429);
    const key = randomUUID();
    expect((await transient(provider.capture(id, 1234.5, 'RUB', key))).message).toMatch(/HTTP 429/);
    expect(double.payments.get(id)!.status).toBe('waiting_for_capture');
    await provider.capture(id, 1234.5, 'RUB', key);
    expect(double.payments.get(id)!.status).toBe('succeeded');
  });

  it('refuses for good on wrong credentials and on an unknown payment', async () => {
    const wrong = new YooKassaProvider({ apiUrl: double.apiUrl, shopId: '424242', secretKey: 'wrong' });
    expect((await refusal(wrong.getPayment(randomUUID()))).message).toMatch(/HTTP 401, invalid_credentials/);
    expect((await refusal(provider.getPayment(randomUUID()))).message).toMatch(/HTTP 404, not_found/);
  });

  it('treats an unreachable or silent YooKassa as transient', async () => {
    const silent = http.createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const slow = new YooKassaProvider({
        apiUrl: `http://127.0.0.1:${port}/v3`,
        shopId: 's',
        secretKey: 'k',
        timeoutMs: 200,
      });
      expect((await transient(slow.getPayment('x'))).message).toMatch(/did not answer/);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    const closed = new YooKassaProvider({ apiUrl: 'http://127.0.0.1:1/v3', shopId: 's', secretKey: 'k' });
    expect((await transient(closed.getPayment('x'))).message).toMatch(/did not answer/);
  });
});

describe('the double keeps YooKassa’s rules', () => {
  const auth = () => `Basic ${Buffer.from('424242:test_Sx9').toString('base64')}`;

  it('requires Basic auth and an Idempotence-Key on POST', async () => {
    const body = JSON.stringify({
      amount: { value: '1.00', currency: 'RUB' },
      confirmation: { type: 'redirect', return_url: 'https://x.example' },
    });
    const noAuth = await fetch(`${double.apiUrl}/payments`, {
      method: 'POST',
      headers: { 'Idempotence-Key': randomUUID(), 'Content-Type': 'application/json' },
      body,
    });
    expect(noAuth.status).toBe(401);
    expect(await noAuth.json()).toMatchObject({ type: 'error', code: 'invalid_credentials' });
    const noKey = await fetch(`${double.apiUrl}/payments`, {
      method: 'POST',
      headers: { Authorization: auth(), 'Content-Type': 'application/json' },
      body,
    });
    expect(noKey.status).toBe(400);
    expect(await noKey.json()).toMatchObject({ type: 'error', code: 'invalid_request', parameter: 'Idempotence-Key' });
  });
});

describe('amounts and activities', () => {
  it('formats money with two decimals as a string', () => {
    expect(money(1234.5, 'rub')).toEqual({ value: '1234.50', currency: 'RUB' });
    expect(money(0.1 + 0.2, 'RUB').value).toBe('0.30');
    expect(money(100, 'EUR').value).toBe('100.00');
    expect(() => money(Number.NaN, 'RUB')).toThrow(ApplicationFailure);
  });

  it('runs a whole live payment through the activities', async () => {
    const activities = createEscrowActivities({ config: yookassaConfig() });
    const request = input();
    const created = await activities.createEscrowPayment('yookassa', request);
    expect(created.status).toBe('pending');
    await double.pay(created.providerPaymentId);
    expect((await activities.getEscrowPayment('yookassa', created.providerPaymentId)).status).toBe('hold');
    await activities.captureEscrowPayment(
      'yookassa',
      created.providerPaymentId,
      1234.5,
      'RUB',
      `${request.paymentId}/release`,
    );
    expect(double.payments.get(created.providerPaymentId)!.status).toBe('succeeded');
  });
});
