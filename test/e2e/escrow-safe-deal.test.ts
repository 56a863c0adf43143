// The YooKassa Safe Deal provider against the local double of YooKassa API v3: a deal and a payment in it, refunds
// inside the deal, payouts to the seller, idempotence keys through lost answers, the line between refusals (final) and
// transient failures (retried); and the notifications route for a safe deal's payments and payouts, over real HTTP on
// the main server with a stand-in workflow receiving the signals (as test/escrow-notifications.test.ts does).
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { escrowProvider } from '../../src/escrow/providers.ts';
import { SAFE_DEAL_HOLD_LIMIT_SECONDS, YooKassaSafeDealProvider } from '../../src/escrow/yookassa-safe-deal.ts';
import type { CreatePaymentInput, CreatePayoutInput, EscrowProvider } from '../../src/escrow/provider.ts';
import { createMarketplace } from '../../src/marketplaces/marketplaces.ts';
import { dealWorkflowId } from '../../src/deals/model.ts';
import { json, post, startTestServer, testConfig, uniqueEmail, uniqueId, type TestServer } from '../helpers.ts';
import { startYooKassaDouble, type YooKassaDouble } from '../doubles/yookassa.ts';

let double: YooKassaDouble;
let provider: EscrowProvider;

beforeAll(async () => {
  double = await startYooKassaDouble({ shopId: '515151', secretKey: 'test_SafeDeal' });
  provider = escrowProvider(
    'yookassa_safe_deal',
    testConfig({ YOOKASSA_API_URL: double.apiUrl, YOOKASSA_SHOP_ID: '515151', YOOKASSA_SECRET_KEY: 'test_SafeDeal' }),
  );
});
afterAll(async () => {
  await double?.close();
});
afterEach(() => {
  double.holdPayouts(false);
});

function input(overrides: Partial<CreatePaymentInput> = {}): CreatePaymentInput {
  return {
    paymentId: randomUUID(),
    dealId: randomUUID(),
    amount: 10_000,
    currency: 'RUB',
    description: 'Deal 7: a tractor tyre',
    returnUrl: 'https://shop.example/deals/7',
    fee: '500.00',
    feeMoment: 'close',
    ...overrides,
  };
}

/** A payment the buyer has paid into its deal. */
async function held(overrides: Partial<CreatePaymentInput> = {}) {
  const request = input(overrides);
  const created = await provider.createPayment(request);
  await double.pay(created.providerPaymentId);
  return { request, providerPaymentId: created.providerPaymentId, providerDealId: created.providerDealId! };
}

function payout(providerDealId: string, overrides: Partial<CreatePayoutInput> = {}): CreatePayoutInput {
  return {
    payoutId: randomUUID(),
    dealId: randomUUID(),
    providerDealId,
    amount: '9500.00',
    currency: 'RUB',
    destination: { type: 'bank_card', token: `card-synonym-${randomUUID()}` },
    description: 'Deal 7: payout to the seller',
    ...overrides,
  };
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

const dealOf = (id: string) => double.deals().find((deal) => deal.id === id);

describe('the provider', () => {
  it('is a paying-out provider whose money lives as long as a safe deal', () => {
    expect(provider).toBeInstanceOf(YooKassaSafeDealProvider);
    expect(provider).toMatchObject({ name: 'yookassa_safe_deal', paysOut: true, payoutLimitMinor: 150_000_00n });
    expect(provider.holdLimitSeconds).toBe(SAFE_DEAL_HOLD_LIMIT_SECONDS);
    expect(SAFE_DEAL_HOLD_LIMIT_SECONDS).toBe(90 * 24 * 3600);
  });
});

describe('createPayment', () => {
  it('opens a safe deal and makes a payment in it that pays the seller the amount less the fee', async () => {
    const request = input();
    const created = await provider.createPayment(request);
    expect(created).toEqual({
      status: 'pending',
      providerPaymentId: expect.any(String),
      providerDealId: expect.stringMatching(/^dl-/),
      paymentUrl: `${double.url}/checkout/payments/${created.providerPaymentId}`,
    });

    const [deal] = double
      .requestsTo('POST', '/v3/deals')
      .filter((r) => r.headers['idempotence-key'] === `${request.paymentId}/deal`);
    expect(deal.headers.authorization).toBe(`Basic ${Buffer.from('515151:test_SafeDeal').toString('base64')}`);
    expect(deal.body).toEqual({
      type: 'safe_deal',
      fee_moment: 'deal_closed',
      description: 'Deal 7: a tractor tyre',
      metadata: { deal_id: request.dealId, payment_id: request.paymentId },
    });
    const [payment] = double
      .requestsTo('POST', '/v3/payments')
      .filter((r) => r.headers['idempotence-key'] === request.paymentId);
    expect(payment.body).toEqual({
      amount: { value: '10000.00', currency: 'RUB' },
      capture: true,
      confirmation: { type: 'redirect', return_url: 'https://shop.example/deals/7' },
      description: 'Deal 7: a tractor tyre',
      metadata: { deal_id: request.dealId, payment_id: request.paymentId },
      deal: {
        id: created.providerDealId,
        settlements: [{ type: 'payout', amount: { value: '9500.00', currency: 'RUB' } }],
      },
    });

    expect(await provider.getPayment(created.providerPaymentId)).toEqual({
      providerPaymentId: created.providerPaymentId,
      status: 'pending',
      amount: 10_000,
      currency: 'RUB',
    });
    expect(await provider.getDeal(created.providerDealId!)).toEqual({
      providerDealId: created.providerDealId,
      status: 'opened',
      balance: '0.00',
      payoutBalance: '0.00',
    });
  });

  it('takes the fee at payment when the marketplace says so, and with no fee pays the seller everything', async () => {
    const atPayment = input({ feeMoment: 'payment' });
    await provider.createPayment(atPayment);
    const [deal] = double
      .requestsTo('POST', '/v3/deals')
      .filter((r) => r.headers['idempotence-key'] === `${atPayment.paymentId}/deal`);
    expect(deal.body).toMatchObject({ fee_moment: 'payment_succeeded' });

    const noFee = input({ fee: undefined, feeMoment: undefined, amount: 1234.5 });
    await provider.createPayment(noFee);
    const [payment] = double
      .requestsTo('POST', '/v3/payments')
      .filter((r) => r.headers['idempotence-key'] === noFee.paymentId);
    expect(payment.body).toMatchObject({
      deal: { settlements: [{ type: 'payout', amount: { value: '1234.50', currency: 'RUB' } }] },
    });
  });

  it('gives the same deal and payment for the same paymentId, however often it is retried', async () => {
    const request = input();
    const results = await Promise.all([1, 2, 3].map(() => provider.createPayment(request)));
    expect(new Set(results.map((result) => result.providerPaymentId)).size).toBe(1);
    expect(new Set(results.map((result) => result.providerDealId)).size).toBe(1);
    expect(
      [...double.payments.values()].filter((payment) => payment.metadata.payment_id === request.paymentId),
    ).toHaveLength(1);
    expect(
      [...double.dealsById.values()].filter((deal) => deal.metadata.payment_id === request.paymentId),
    ).toHaveLength(1);
  });

  it('opens one deal when the answer to its opening was lost', async () => {
    const request = input();
    double.crashAfterApplying(1, 'drop');
    expect((await transient(provider.createPayment(request))).message).toMatch(
      /did not answer the request to open the safe deal/,
    );
    const created = await provider.createPayment(request);
    expect(
      [...double.dealsById.values()].filter((deal) => deal.metadata.payment_id === request.paymentId),
    ).toHaveLength(1);
    expect(double.payments.get(created.providerPaymentId)!.deal!.id).toBe(created.providerDealId);
  });

  it('refuses a fee that leaves the seller nothing, before asking YooKassa', async () => {
    const request = input({ fee: '10000.00' });
    expect((await refusal(provider.createPayment(request))).message).toMatch(/leaves nothing to pay out/);
    expect(
      double
        .requestsTo('POST', '/v3/deals')
        .filter((r) => r.headers['idempotence-key'] === `${request.paymentId}/deal`),
    ).toHaveLength(0);
  });

  it('holds the money once the buyer paid: the whole payment in the deal, the seller’s part to pay out', async () => {
    const { providerPaymentId, providerDealId } = await held();
    expect(double.payments.get(providerPaymentId)).toMatchObject({ status: 'succeeded', paid: true });
    expect((await provider.getPayment(providerPaymentId)).status).toBe('hold');
    expect(await provider.getDeal(providerDealId)).toEqual({
      providerDealId,
      status: 'opened',
      balance: '10000.00',
      payoutBalance: '9500.00',
    });

    // With the fee taken at payment, it leaves the deal at once.
    const early = await held({ feeMoment: 'payment' });
    expect(await provider.getDeal(early.providerDealId)).toMatchObject({
      balance: '9500.00',
      payoutBalance: '9500.00',
    });
  });

  it('has no capture: a safe deal releases by payouts', async () => {
    const { providerPaymentId } = await held();
    expect((await refusal(provider.capture(providerPaymentId, 10_000, 'RUB', randomUUID()))).message).toMatch(
      /no capture/,
    );
    expect(double.requestsTo('POST', `/v3/payments/${providerPaymentId}/capture`)).toHaveLength(0);
  });
});

describe('refund', () => {
  it('refunds part of the held money from the seller’s part, then pays out the rest and the deal closes', async () => {
    const { request, providerPaymentId, providerDealId } = await held();
    const refundId = randomUUID();
    await provider.refund({ refundId, providerPaymentId, providerDealId, amount: '2000.00', currency: 'RUB' });
    const [sent] = double.requestsTo('POST', '/v3/refunds').filter((r) => r.headers['idempotence-key'] === refundId);
    expect(sent.body).toEqual({
      payment_id: providerPaymentId,
      amount: { value: '2000.00', currency: 'RUB' },
      metadata: { refund_id: refundId },
      deal: { refund_settlements: [{ type: 'payout', amount: { value: '2000.00', currency: 'RUB' } }] },
    });
    expect(await provider.getDeal(providerDealId)).toMatchObject({
      status: 'opened',
      balance: '8000.00',
      payoutBalance: '7500.00',
    });
    expect((await provider.getPayment(providerPaymentId)).status).toBe('hold');

    const rest = await provider.createPayout(payout(providerDealId, { dealId: request.dealId, amount: '7500.00' }));
    expect(rest).toEqual({ providerPayoutId: expect.stringMatching(/^po-/), status: 'succeeded', failureReason: null });
    // Nothing left to pay out: YooKassa closes the deal and the marketplace's fee leaves it.
    expect(await provider.getDeal(providerDealId)).toEqual({
      providerDealId,
      status: 'closed',
      balance: '0.00',
      payoutBalance: '0.00',
    });
  });

  it('refunds once when the answer was lost, although the deal’s balance changed in between', async () => {
    const { providerPaymentId, providerDealId } = await held();
    const refundId = randomUUID();
    const refund = { refundId, providerPaymentId, providerDealId, amount: '10000.00', currency: 'RUB' };
    double.crashAfterApplying(1, 500);
    expect((await transient(provider.refund(refund))).message).toMatch(/HTTP 500/);
    await provider.refund(refund);
    await provider.refund(refund);
    expect([...double.refunds.values()].filter((item) => item.payment_id === providerPaymentId)).toHaveLength(1);
    expect(
      double.requestsTo('POST', '/v3/refunds').filter((r) => r.headers['idempotence-key'] === refundId),
    ).toHaveLength(1);
    expect((await provider.getPayment(providerPaymentId)).status).toBe('refunded');
  });

  it('refuses more than is left of the payment', async () => {
    const { providerPaymentId, providerDealId } = await held();
    const failure = await refusal(
      provider.refund({
        refundId: randomUUID(),
        providerPaymentId,
        providerDealId,
        amount: '10000.01',
        currency: 'RUB',
      }),
    );
    expect(failure.message).toMatch(/10000\.00 of it is left/);
  });

  it('is refused by YooKassa after a payout of the deal', async () => {
    const { providerPaymentId, providerDealId } = await held();
    await provider.createPayout(payout(providerDealId, { amount: '1000.00' }));
    const failure = await refusal(
      provider.refund({ refundId: randomUUID(), providerPaymentId, providerDealId, amount: '100.00', currency: 'RUB' }),
    );
    expect(failure.message).toMatch(/only before a payout.*HTTP 400/);
  });
});

describe('cancel', () => {
  it('refunds the whole payment, the marketplace’s fee too, and is idempotent', async () => {
    const { providerPaymentId, providerDealId } = await held();
    const key = `${randomUUID()}/refund`;
    await provider.cancel(providerPaymentId, key);
    const [sent] = double.requestsTo('POST', '/v3/refunds').filter((r) => r.headers['idempotence-key'] === key);
    expect(sent.body).toMatchObject({
      amount: { value: '10000.00', currency: 'RUB' },
      deal: { refund_settlements: [{ type: 'payout', amount: { value: '9500.00', currency: 'RUB' } }] },
    });
    expect((await provider.getPayment(providerPaymentId)).status).toBe('refunded');
    expect(await provider.getDeal(providerDealId)).toEqual({
      providerDealId,
      status: 'closed',
      balance: '0.00',
      payoutBalance: '0.00',
    });
    await provider.cancel(providerPaymentId, key);
    expect(double.requestsTo('POST', '/v3/refunds').filter((r) => r.headers['idempotence-key'] === key)).toHaveLength(
      1,
    );
  });

  it('refunds what is left after a partial refund', async () => {
    const { providerPaymentId, providerDealId } = await held();
    await provider.refund({
      refundId: randomUUID(),
      providerPaymentId,
      providerDealId,
      amount: '3000.00',
      currency: 'RUB',
    });
    await provider.cancel(providerPaymentId, randomUUID());
    expect(double.payments.get(providerPaymentId)!.refunded_amount).toEqual({ value: '10000.00', currency: 'RUB' });
    expect(dealOf(providerDealId)).toMatchObject({ status: 'closed', balance: '0.00', payoutBalance: '0.00' });
  });

  it('leaves an unpaid payment to lapse, and refunds it with the same key once paid', async () => {
    const { providerPaymentId, providerDealId } = await provider.createPayment(input());
    const key = randomUUID();
    await provider.cancel(providerPaymentId, key);
    expect((await provider.getPayment(providerPaymentId)).status).toBe('pending');
    expect(double.requestsTo('POST', '/v3/refunds').filter((r) => r.headers['idempotence-key'] === key)).toHaveLength(
      0,
    );
    await double.pay(providerPaymentId);
    await provider.cancel(providerPaymentId, key);
    expect((await provider.getPayment(providerPaymentId)).status).toBe('refunded');
    expect(dealOf(providerDealId!)).toMatchObject({ status: 'closed' });
  });

  it('cannot give back a fee YooKassa paid out at payment, and says so', async () => {
    const { providerPaymentId, providerDealId } = await held({ feeMoment: 'payment' });
    const failure = await refusal(provider.cancel(providerPaymentId, randomUUID()));
    expect(failure.message).toMatch(/fee_moment payment_succeeded.*9500\.00, not 10000\.00/);
    // The seller's part can still go back.
    await provider.refund({
      refundId: randomUUID(),
      providerPaymentId,
      providerDealId,
      amount: '9500.00',
      currency: 'RUB',
    });
    expect(dealOf(providerDealId)).toMatchObject({ status: 'closed', balance: '0.00' });
  });
});

describe('createPayout', () => {
  it('pays the seller out of the deal to a card synonym, and getPayout reads it', async () => {
    const { request, providerDealId } = await held();
    const order = payout(providerDealId, { dealId: request.dealId, amount: '4000.00' });
    const paid = await provider.createPayout(order);
    expect(paid).toEqual({ providerPayoutId: expect.stringMatching(/^po-/), status: 'succeeded', failureReason: null });
    const [sent] = double
      .requestsTo('POST', '/v3/payouts')
      .filter((r) => r.headers['idempotence-key'] === order.payoutId);
    expect(sent.body).toEqual({
      amount: { value: '4000.00', currency: 'RUB' },
      payout_token: order.destination.token,
      description: 'Deal 7: payout to the seller',
      deal: { id: providerDealId },
      metadata: { deal_id: request.dealId, payout_id: order.payoutId },
    });
    expect(await provider.getPayout(paid.providerPayoutId)).toEqual(paid);
    expect(await provider.getDeal(providerDealId)).toMatchObject({
      status: 'opened',
      balance: '6000.00',
      payoutBalance: '5500.00',
    });
  });

  it('pays out to a YooMoney wallet and never to a sandbox test card', async () => {
    const { providerDealId } = await held();
    const order = payout(providerDealId, {
      amount: '100.00',
      destination: { type: 'yoo_money', token: '4100116075156746' },
    });
    expect((await provider.createPayout(order)).status).toBe('succeeded');
    const [sent] = double
      .requestsTo('POST', '/v3/payouts')
      .filter((r) => r.headers['idempotence-key'] === order.payoutId);
    expect(sent.body).toMatchObject({
      payout_destination_data: { type: 'yoo_money', account_number: '4100116075156746' },
    });
    expect(sent.body).not.toHaveProperty('payout_token');

    const test = payout(providerDealId, {
      amount: '100.00',
      destination: { type: 'test_card', token: '4111111111111111' },
    });
    expect((await refusal(provider.createPayout(test))).message).toMatch(/sandbox test card/);
    expect(double.payoutsFor(test.payoutId)).toHaveLength(0);
  });

  it('pays out at most 150,000.00 at once: splitting is the workflow’s job, a larger part is refused before YooKassa', async () => {
    const { providerDealId } = await held({ amount: 300_001, fee: '0.99' });
    const exactly = await provider.createPayout(payout(providerDealId, { amount: '150000.00' }));
    expect(exactly.status).toBe('succeeded');
    const over = payout(providerDealId, { amount: '150000.01' });
    expect((await refusal(provider.createPayout(over))).message).toMatch(
      /at most 150000\.00 at once; 150000\.01 must be split/,
    );
    expect(
      double.requestsTo('POST', '/v3/payouts').filter((r) => r.headers['idempotence-key'] === over.payoutId),
    ).toHaveLength(0);
    const tooLittle = payout(providerDealId, { amount: '0.99' });
    expect((await refusal(provider.createPayout(tooLittle))).message).toMatch(/at least 1\.00/);
    expect(await provider.getDeal(providerDealId)).toMatchObject({ payoutBalance: '150000.01' });
  });

  it('is refused by YooKassa for more than the deal may still pay out', async () => {
    const { providerDealId } = await held();
    const failure = await refusal(provider.createPayout(payout(providerDealId, { amount: '9500.01' })));
    expect(failure.message).toMatch(/HTTP 400, invalid_request, parameter amount\.value/);
    expect(dealOf(providerDealId)).toMatchObject({ balance: '10000.00', payoutBalance: '9500.00' });
  });

  it('makes one payout for one payoutId, however often it is asked', async () => {
    const { providerDealId } = await held();
    const order = payout(providerDealId, { amount: '3000.00' });
    const first = await provider.createPayout(order);
    const again = await Promise.all([provider.createPayout(order), provider.createPayout(order)]);
    expect(again.map((item) => item.providerPayoutId)).toEqual([first.providerPayoutId, first.providerPayoutId]);
    expect(double.payoutsCreatedWith(order.payoutId)).toBe(1);
    expect(double.payoutsFor(order.payoutId)).toHaveLength(1);
    expect(dealOf(providerDealId)).toMatchObject({ payoutBalance: '6500.00' });
  });

  for (const how of ['drop', 500] as const) {
    it(`makes exactly one payout when YooKassa applied it but the answer was lost (${how === 'drop' ? 'connection dropped' : 'HTTP 500'})`, async () => {
      const { providerDealId } = await held();
      const order = payout(providerDealId, { amount: '9500.00' });
      double.crashAfterApplying(1, how);
      const lost = await transient(provider.createPayout(order));
      expect(lost.message).toMatch(
        how === 'drop' ? /did not answer the request to pay the seller out/ : /HTTP 500.*same Idempotence-Key is safe/,
      );
      // YooKassa did pay: the deal has nothing left to pay out.
      expect(dealOf(providerDealId)).toMatchObject({ status: 'closed', payoutBalance: '0.00' });
      const retried = await provider.createPayout(order);
      expect(retried.status).toBe('succeeded');
      expect(double.payoutsCreatedWith(order.payoutId)).toBe(1);
      expect(double.payoutsFor(order.payoutId)).toEqual([expect.objectContaining({ id: retried.providerPayoutId })]);
    });
  }

  it('treats 429 as transient: nothing is paid, and the retry pays once', async () => {
    const { providerDealId } = await held();
    const order = payout(providerDealId, { amount: '9500.00' });
    double.failNext(1, 429);
    expect((await transient(provider.createPayout(order))).message).toMatch(/HTTP 429, too_many_requests/);
    expect(double.payoutsFor(order.payoutId)).toHaveLength(0);
    expect((await provider.createPayout(order)).status).toBe('succeeded');
    expect(double.payoutsCreatedWith(order.payoutId)).toBe(1);
  });

  it('reports a declined payout as failed with YooKassa’s reason, and the money stays in the deal', async () => {
    const { providerDealId } = await held();
    double.declineNextPayout('rejected_by_payee');
    const declined = await provider.createPayout(payout(providerDealId));
    expect(declined).toEqual({
      providerPayoutId: expect.stringMatching(/^po-/),
      status: 'failed',
      failureReason: 'rejected_by_payee',
    });
    expect(await provider.getPayout(declined.providerPayoutId)).toEqual(declined);
    expect(dealOf(providerDealId)).toMatchObject({ status: 'opened', balance: '10000.00', payoutBalance: '9500.00' });
    // Another payout (another payoutId: to a card the seller gives again) goes through.
    expect((await provider.createPayout(payout(providerDealId))).status).toBe('succeeded');
  });

  it('reads a pending payout until it settles, either way', async () => {
    const { providerDealId } = await held();
    double.holdPayouts();
    const first = await provider.createPayout(payout(providerDealId, { amount: '5000.00' }));
    const second = await provider.createPayout(payout(providerDealId, { amount: '4500.00' }));
    expect([first.status, second.status]).toEqual(['pending', 'pending']);
    expect(dealOf(providerDealId)).toMatchObject({ status: 'opened', payoutBalance: '0.00' });

    await double.settlePayout(first.providerPayoutId, 'canceled', 'issuer_unavailable');
    expect(await provider.getPayout(first.providerPayoutId)).toEqual({
      providerPayoutId: first.providerPayoutId,
      status: 'failed',
      failureReason: 'issuer_unavailable',
    });
    expect(dealOf(providerDealId)).toMatchObject({ payoutBalance: '5000.00' });
    await double.settlePayout(second.providerPayoutId, 'succeeded');
    expect(await provider.getPayout(second.providerPayoutId)).toEqual({
      providerPayoutId: second.providerPayoutId,
      status: 'succeeded',
      failureReason: null,
    });
    expect(dealOf(providerDealId)).toMatchObject({ status: 'opened', balance: '5500.00', payoutBalance: '5000.00' });
  });

  it('refuses for good a payout with no deal, and an unknown payout', async () => {
    const failure = await refusal(provider.createPayout(payout('', { providerDealId: null })));
    expect(failure.message).toMatch(/names no YooKassa deal/);
    expect((await refusal(provider.getPayout(`po-${randomUUID()}`))).message).toMatch(/HTTP 404, not_found/);
  });
});

describe('the double keeps YooKassa’s payout limits', () => {
  const auth = `Basic ${Buffer.from('515151:test_SafeDeal').toString('base64')}`;
  async function rawPayout(dealId: string, amount: string, token: string) {
    const response = await fetch(`${double.apiUrl}/payouts`, {
      method: 'POST',
      headers: { Authorization: auth, 'Idempotence-Key': randomUUID(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount: { value: amount, currency: 'RUB' }, payout_token: token, deal: { id: dealId } }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { status: string; cancellation_details?: { party: string; reason: string } };
  }

  it('cancels a payout of more than 150,000.00 to a card (one_time_limit_exceeded)', async () => {
    const { providerDealId } = await held({ amount: 200_000, fee: '1000.00' });
    const answer = await rawPayout(providerDealId, '150000.01', 'card-one');
    expect(answer).toMatchObject({
      status: 'canceled',
      cancellation_details: { party: 'yoo_money', reason: 'one_time_limit_exceeded' },
    });
    expect(dealOf(providerDealId)).toMatchObject({ payoutBalance: '199000.00' });
  });

  it('cancels the 21st payout a day to one card (periodic_limit_exceeded), and pays another card', async () => {
    const { providerDealId } = await held({ amount: 1000, fee: '100.00' });
    const card = `card-${randomUUID()}`;
    for (let i = 0; i < 20; i += 1)
      expect(
        (
          await provider.createPayout(
            payout(providerDealId, { amount: '1.00', destination: { type: 'bank_card', token: card } }),
          )
        ).status,
      ).toBe('succeeded');
    const over = await provider.createPayout(
      payout(providerDealId, { amount: '1.00', destination: { type: 'bank_card', token: card } }),
    );
    expect(over).toMatchObject({ status: 'failed', failureReason: 'periodic_limit_exceeded' });
    expect((await provider.createPayout(payout(providerDealId, { amount: '1.00' }))).status).toBe('succeeded');
  });

  it('cancels a payout past 1,500,000.00 a month to one card, and counts afresh the next month', async () => {
    const card = `card-${randomUUID()}`;
    const clock = new Date('2026-03-10T12:00:00Z');
    double.now = () => clock;
    try {
      const { providerDealId } = await held({ amount: 1_700_000, fee: '50000.00' });
      for (let i = 0; i < 10; i += 1) {
        expect(
          (
            await provider.createPayout(
              payout(providerDealId, { amount: '150000.00', destination: { type: 'bank_card', token: card } }),
            )
          ).status,
        ).toBe('succeeded');
      }
      const over = await provider.createPayout(
        payout(providerDealId, { amount: '1.00', destination: { type: 'bank_card', token: card } }),
      );
      expect(over).toMatchObject({ status: 'failed', failureReason: 'periodic_limit_exceeded' });
      double.now = () => new Date('2026-04-01T00:00:00Z'); // 03:00 in Moscow: April there
      expect(
        (
          await provider.createPayout(
            payout(providerDealId, { amount: '150000.00', destination: { type: 'bank_card', token: card } }),
          )
        ).status,
      ).toBe('succeeded');
    } finally {
      double.now = () => new Date();
    }
  });
});

describe('notifications of a safe deal', () => {
  let server: TestServer;
  let notifications: string;
  const running: WorkflowHandle[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      env: { YOOKASSA_API_URL: double.apiUrl, YOOKASSA_SHOP_ID: double.shopId, YOOKASSA_SECRET_KEY: double.secretKey },
    });
    notifications = `${server.url}/api/escrow/yookassa/notifications`;
    double.notificationUrl = notifications;
  });
  afterAll(async () => {
    double.notificationUrl = undefined;
    await Promise.all(running.map((handle) => handle.terminate('test over').catch(() => {})));
    await server?.stop();
  });

  /** A live deal paying through a safe deal, as the deal workflow would have recorded it. */
  async function safeDealPayment() {
    const { marketplace } = await createMarketplace(server.services.db, { name: uniqueId('shop'), mode: 'live' });
    const dealId = randomUUID();
    const paymentId = randomUUID();
    const externalId = uniqueId('order');
    await server.services.db.query(
      `INSERT INTO deals (id, marketplace_id, external_id, buyer_email, amount) VALUES ($1, $2, $3, $4, 10000)`,
      [dealId, marketplace.id, externalId, uniqueEmail('buyer')],
    );
    const created = await provider.createPayment(input({ paymentId, dealId }));
    await server.services.db.query(
      `INSERT INTO deal_payments (id, deal_id, amount, currency, provider, status, payment_url, provider_payment_id, provider_deal_id)
       VALUES ($1, $2, 10000, 'RUB', 'yookassa_safe_deal', 'pending', $3, $4, $5)`,
      [paymentId, dealId, created.paymentUrl, created.providerPaymentId, created.providerDealId],
    );
    return { dealId, paymentId, ...created, workflowId: dealWorkflowId(marketplace.id, externalId) };
  }

  /** A pending payout of the held payment, recorded as the workflow records one. */
  async function pendingPayout(payment: Awaited<ReturnType<typeof safeDealPayment>>) {
    double.holdPayouts();
    const payoutId = randomUUID();
    const made = await provider.createPayout(
      payout(payment.providerDealId!, { payoutId, dealId: payment.dealId, amount: '9500.00' }),
    );
    expect(made.status).toBe('pending');
    await server.services.db.query(
      `INSERT INTO deal_payouts (id, deal_id, payment_id, amount, currency, status, destination_type, destination_title, provider_payout_id)
       VALUES ($1, $2, $3, 9500, 'RUB', 'pending', 'bank_card', 'Card •••• 4477', $4)`,
      [payoutId, payment.dealId, payment.paymentId, made.providerPayoutId],
    );
    return { payoutId, providerPayoutId: made.providerPayoutId };
  }

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

  it('re-reads a safe deal’s payment through its own provider and tells the deal the money is held', async () => {
    const payment = await safeDealPayment();
    const deal = await standIn(payment.workflowId);
    const sent = await double.pay(payment.providerPaymentId);
    expect(sent).toMatchObject({ event: 'payment.succeeded', status: 200 });
    expect(double.requestsTo('GET', `/v3/payments/${payment.providerPaymentId}`)).toHaveLength(1);
    // A two-stage provider would have read `succeeded` as released; the safe deal holds it.
    expect(await signals(deal)).toEqual([
      { name: 'acquirerNotification', input: { paymentId: payment.paymentId, status: 'hold' } },
    ]);
  });

  /** A paid safe deal watched by a stand-in, and a pending payout of it; the deal heard of the payment already. */
  async function watchedPayout() {
    const payment = await safeDealPayment();
    const deal = await standIn(payment.workflowId);
    await double.pay(payment.providerPaymentId);
    const { payoutId, providerPayoutId } = await pendingPayout(payment);
    const payoutNews = async () => (await signals(deal)).filter((signal) => signal.name === 'payoutNews');
    return { payoutId, providerPayoutId, payoutNews };
  }

  it('re-reads a payout that succeeded and tells the deal, by our payout id', async () => {
    const { payoutId, providerPayoutId, payoutNews } = await watchedPayout();
    const sent = await double.settlePayout(providerPayoutId, 'succeeded');
    expect(sent).toEqual({ event: 'payout.succeeded', payoutId: providerPayoutId, status: 200 });
    expect(double.requestsTo('GET', `/v3/payouts/${providerPayoutId}`)).toHaveLength(1);
    expect(await payoutNews()).toEqual([
      { name: 'payoutNews', input: { payoutId, status: 'succeeded', failureReason: null } },
    ]);
  });

  it('tells the deal a payout failed, with YooKassa’s reason', async () => {
    const { payoutId, providerPayoutId, payoutNews } = await watchedPayout();
    expect((await double.settlePayout(providerPayoutId, 'canceled', 'rejected_by_payee')).status).toBe(200);
    expect(await payoutNews()).toEqual([
      { name: 'payoutNews', input: { payoutId, status: 'failed', failureReason: 'rejected_by_payee' } },
    ]);
  });

  it('never trusts the body: a forged payout.succeeded for a payout still pending changes nothing', async () => {
    const { providerPayoutId, payoutNews } = await watchedPayout();
    const response = await post(notifications, {
      type: 'notification',
      event: 'payout.succeeded',
      object: { id: providerPayoutId, status: 'succeeded' },
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ ok: true });
    expect(double.requestsTo('GET', `/v3/payouts/${providerPayoutId}`)).toHaveLength(1);
    expect(await payoutNews()).toEqual([]);
  });

  it('answers 200 for a payout it does not know, without calling YooKassa', async () => {
    const id = `po-${randomUUID()}`;
    const response = await post(notifications, { type: 'notification', event: 'payout.canceled', object: { id } });
    expect(response.status).toBe(200);
    expect(double.requestsTo('GET', `/v3/payouts/${id}`)).toHaveLength(0);
  });

  it('answers 503 while the payout cannot be re-read, so YooKassa sends it again', async () => {
    const { payoutId, providerPayoutId, payoutNews } = await watchedPayout();
    double.failNext(1, 500);
    expect((await double.settlePayout(providerPayoutId, 'succeeded')).status).toBe(503);
    expect(await payoutNews()).toEqual([]);
    const again = await post(notifications, {
      type: 'notification',
      event: 'payout.succeeded',
      object: { id: providerPayoutId },
    });
    expect(again.status).toBe(200);
    expect(await payoutNews()).toEqual([
      { name: 'payoutNews', input: { payoutId, status: 'succeeded', failureReason: null } },
    ]);
  });
});
