// YooKassa Safe Deal (Безопасная сделка), API v3: the buyer's money is paid into a deal at YooKassa and held there;
// release pays the seller out of the deal, a refund returns money to the buyer from it.
// https://yookassa.ru/developers/solutions-for-platforms/safe-deal/basics
//
// - createPayment opens a deal (POST /v3/deals, type safe_deal, with the marketplace's fee moment) and makes a payment
//   inside it (POST /v3/payments with `deal: {id, settlements: [{type: payout, amount: seller's part}]}`), captured at
//   once (capture: true): for a safe deal YooKassa's `succeeded` means "paid into the deal", which is our `hold`.
// - refund returns part or all of a paid payment inside its deal (POST /v3/refunds with `deal.refund_settlements`: the
//   part that comes out of the seller's payout balance). YooKassa refunds only before any payout of the deal.
// - createPayout pays the seller out of the deal (POST /v3/payouts with `deal: {id}`) to a card synonym from YooKassa's
//   payout widget (payout_token) or a YooMoney wallet; the workflow splits a release into payouts the limits allow.
// - There is no capture: the deal releases its money only by payouts.
//
// Every POST carries an Idempotence-Key made of our ids, so a retried activity repeats the first answer instead of
// opening, paying, refunding or paying out twice. Errors follow the two-stage provider (src/escrow/yookassa.ts): a
// refusal (4xx other than 429) is final, a non-retryable ApplicationFailure; 429, 5xx and network failures are plain
// Errors that Temporal retries with the same key, as YooKassa asks ("result unknown, repeat the request").
import { z } from 'zod';
import type {
  CreatePaymentInput,
  CreatedPayment,
  CreatePayoutInput,
  EscrowProvider,
  ProviderDeal,
  ProviderPayment,
  ProviderPayout,
  RefundInput,
} from './provider.ts';
import { PAYOUT_LIMIT_MINOR } from './yookassa.ts';
import { YooKassaHttp, type YooKassaOptions } from './yookassa-http.ts';
import { refuse } from '../temporal/refusal.ts';
import { AmountError, formatMinor, minOf, toMinor } from '../money/amount.ts';

/**
 * How long a safe deal lives at YooKassa: money not paid out or refunded by then is returned to the buyer and the deal
 * closed. The lifetime (1 to 180 days) is agreed per shop when Safe Deal is connected, not per request; 90 days is the
 * one YooKassa's documentation gives as its example, and this constant must match what the shop's contract says.
 */
export const SAFE_DEAL_LIFETIME_DAYS = 90;
export const SAFE_DEAL_HOLD_LIMIT_SECONDS = SAFE_DEAL_LIFETIME_DAYS * 24 * 3600;

/** The smallest payout YooKassa makes (1 ₽ to a card or a wallet), in kopecks. */
export const PAYOUT_MINIMUM_MINOR = 100n;

const DESCRIPTION_MAX = 128;

const Amount = z.looseObject({ value: z.string(), currency: z.string() });
const Settlement = z.looseObject({ type: z.string(), amount: Amount });
const Cancellation = z.looseObject({ party: z.string(), reason: z.string() });

/** The fields we read; YooKassa documents that objects may carry more, to be ignored. */
const PaymentSchema = z.looseObject({
  id: z.string().min(1),
  status: z.enum(['pending', 'waiting_for_capture', 'succeeded', 'canceled']),
  amount: Amount,
  refunded_amount: Amount.optional(),
  confirmation: z.looseObject({ confirmation_url: z.string().optional() }).optional(),
  deal: z.looseObject({ id: z.string().min(1), settlements: z.array(Settlement).optional() }).optional(),
  cancellation_details: Cancellation.optional(),
});
type YooKassaPayment = z.infer<typeof PaymentSchema>;

const DealSchema = z.looseObject({
  id: z.string().min(1),
  status: z.enum(['opened', 'closed']),
  fee_moment: z.enum(['payment_succeeded', 'deal_closed']).optional(),
  balance: Amount,
  payout_balance: Amount,
});
type YooKassaDeal = z.infer<typeof DealSchema>;

const PayoutSchema = z.looseObject({
  id: z.string().min(1),
  status: z.enum(['pending', 'succeeded', 'canceled']),
  amount: Amount,
  cancellation_details: Cancellation.optional(),
});
type YooKassaPayout = z.infer<typeof PayoutSchema>;

const RefundSchema = z.looseObject({
  id: z.string().min(1),
  status: z.enum(['pending', 'succeeded', 'canceled']),
  payment_id: z.string(),
  amount: Amount,
  metadata: z.record(z.string(), z.unknown()).optional(),
  cancellation_details: Cancellation.optional(),
});
type YooKassaRefund = z.infer<typeof RefundSchema>;

const RefundListSchema = z.looseObject({ items: z.array(RefundSchema), next_cursor: z.string().optional() });

export class YooKassaSafeDealProvider implements EscrowProvider {
  readonly name = 'yookassa_safe_deal' as const;
  readonly holdLimitSeconds = SAFE_DEAL_HOLD_LIMIT_SECONDS;
  // Release pays the seller out of the deal, one payout or several.
  readonly paysOut = true;
  readonly payoutLimitMinor = PAYOUT_LIMIT_MINOR;
  private readonly http: YooKassaHttp;

  constructor(options: YooKassaOptions) {
    this.http = new YooKassaHttp(options);
  }

  async createPayment(input: CreatePaymentInput): Promise<CreatedPayment> {
    const amount = minor(input.amount, 'the amount');
    const fee = input.fee === undefined ? 0n : minor(input.fee, 'the fee');
    const sellerPart = amount - fee;
    if (fee < 0n || sellerPart <= 0n) {
      throw refused(
        `A safe deal pays the seller the amount less the fee: ${formatMinor(amount)} less ${formatMinor(fee)} leaves nothing to pay out.`,
      );
    }
    const currency = input.currency.toUpperCase();
    const description = cut(input.description);
    const metadata = { deal_id: input.dealId, payment_id: input.paymentId };
    // The deal first, under a key of its own: a retry after a lost answer gets the same deal back, and so the payment's
    // body (which names the deal) is the same on every attempt, as its key requires.
    const deal = await this.http.request(
      'open the safe deal',
      'POST',
      '/deals',
      DealSchema,
      `${input.paymentId}/deal`,
      {
        type: 'safe_deal',
        // Without a moment the fee moves at the release, the service's default (src/money/fee.ts DEFAULT_FEE_MOMENT).
        fee_moment: input.feeMoment === 'payment' ? 'payment_succeeded' : 'deal_closed',
        ...(description ? { description } : {}),
        metadata,
      },
    );
    const payment = await this.http.request('create the payment', 'POST', '/payments', PaymentSchema, input.paymentId, {
      amount: { value: formatMinor(amount), currency },
      // Captured at once: the money goes into the deal's balance, where it is held until a payout or a refund.
      capture: true,
      confirmation: { type: 'redirect', return_url: input.returnUrl },
      ...(description ? { description } : {}),
      metadata,
      deal: { id: deal.id, settlements: [{ type: 'payout', amount: { value: formatMinor(sellerPart), currency } }] },
    });
    const url = payment.confirmation?.confirmation_url ?? null;
    if (payment.status === 'pending') {
      // A replay of the same key returns the same answer, so retrying would not help: fail for good.
      if (!url) throw refused(`YooKassa created payment ${payment.id} without a confirmation_url.`);
      return { status: 'pending', providerPaymentId: payment.id, providerDealId: deal.id, paymentUrl: url };
    }
    if (payment.status === 'succeeded' || payment.status === 'waiting_for_capture') {
      return { status: 'hold', providerPaymentId: payment.id, providerDealId: deal.id, paymentUrl: url };
    }
    throw refused(
      `YooKassa answered the new payment ${payment.id} with status ${payment.status}${reason(payment.cancellation_details)}.`,
    );
  }

  async capture(providerPaymentId: string): Promise<void> {
    throw refused(
      `A safe deal has no capture: payment ${providerPaymentId} is released by paying the seller out of its deal (createPayout).`,
    );
  }

  async cancel(providerPaymentId: string, idempotenceKey: string): Promise<void> {
    const payment = await this.fetchPayment(providerPaymentId);
    // An unpaid payment holds nothing and lapses on its own; should the buyer still pay, the payment.succeeded
    // notification reaches the deal, which cancels again with the same key and so refunds it then.
    if (payment.status === 'pending' || payment.status === 'canceled') return;
    if (payment.status === 'waiting_for_capture') {
      // Not made by this provider (it captures at once), but a two-stage payment inside a deal is cancelled, not refunded.
      const cancelled = await this.http.request(
        'cancel the payment',
        'POST',
        `/payments/${encodeURIComponent(providerPaymentId)}/cancel`,
        PaymentSchema,
        idempotenceKey,
        {},
      );
      if (cancelled.status !== 'canceled')
        throw new Error(`YooKassa has not cancelled ${providerPaymentId} yet (it is ${cancelled.status}); retrying.`);
      return;
    }
    const rest =
      minor(payment.amount.value, 'the payment') - minor(payment.refunded_amount?.value ?? '0', 'the refunded amount');
    // Refunded in full already: by an earlier attempt of this cancel, or by refunds that left nothing.
    if (rest <= 0n) return;
    await this.refund({
      refundId: idempotenceKey,
      providerPaymentId,
      providerDealId: payment.deal?.id ?? null,
      amount: formatMinor(rest),
      currency: payment.amount.currency,
    });
  }

  async getPayment(providerPaymentId: string): Promise<ProviderPayment> {
    const payment = await this.fetchPayment(providerPaymentId);
    return {
      providerPaymentId: payment.id,
      status: paymentStatus(payment),
      amount: Number(payment.amount.value),
      currency: payment.amount.currency,
    };
  }

  async refund(input: RefundInput): Promise<void> {
    const amount = minor(input.amount, 'the refund');
    if (amount <= 0n) throw refused(`A refund is more than 0; ${input.amount} was asked.`);
    // An earlier attempt whose answer was lost may have refunded already. Its body was computed from the deal's payout
    // balance before it, which that refund changed: computing it again would give another body under the same key, which
    // YooKassa refuses. So our refund is looked for first, by the id every refund of ours carries in its metadata.
    const earlier = await this.findRefund(input.providerPaymentId, input.refundId);
    if (earlier) return settledRefund(earlier);

    const payment = await this.fetchPayment(input.providerPaymentId);
    if (!payment.deal)
      throw refused(`YooKassa payment ${payment.id} is not in a safe deal; it cannot be refunded as one.`);
    if (input.providerDealId && input.providerDealId !== payment.deal.id) {
      throw refused(`YooKassa payment ${payment.id} is in deal ${payment.deal.id}, not ${input.providerDealId}.`);
    }
    if (payment.status !== 'succeeded') {
      throw refused(
        `YooKassa payment ${payment.id} is ${payment.status}: only money paid into the deal can be refunded.`,
      );
    }
    const rest =
      minor(payment.amount.value, 'the payment') - minor(payment.refunded_amount?.value ?? '0', 'the refunded amount');
    if (amount > rest)
      throw refused(
        `Cannot refund ${formatMinor(amount)} of YooKassa payment ${payment.id}: ${formatMinor(rest)} of it is left.`,
      );
    const deal = await this.fetchDeal(payment.deal.id);
    // The seller's part comes back first and in full; the rest of a refund is the marketplace's fee, which stays in the
    // deal until it closes (fee_moment deal_closed). With fee_moment payment_succeeded the fee left the deal when the
    // buyer paid, and YooKassa returns only what was meant for the seller.
    const payoutBalance = minor(deal.payout_balance.value, 'the payout balance');
    const fromSeller = minOf(amount, payoutBalance);
    if (fromSeller <= 0n) {
      throw refused(
        `YooKassa deal ${deal.id} has nothing left for the seller; a refund in it returns the seller's part, and none is left.`,
      );
    }
    if (fromSeller < amount && deal.fee_moment === 'payment_succeeded') {
      throw refused(
        `YooKassa deal ${deal.id} paid the marketplace's fee when the buyer paid (fee_moment payment_succeeded): it refunds at most the ` +
          `seller's ${formatMinor(payoutBalance)}, not ${formatMinor(amount)}.`,
      );
    }
    const currency = payment.amount.currency;
    const refund = await this.http.request('refund the payment', 'POST', '/refunds', RefundSchema, input.refundId, {
      payment_id: payment.id,
      amount: { value: formatMinor(amount), currency },
      metadata: { refund_id: input.refundId },
      deal: { refund_settlements: [{ type: 'payout', amount: { value: formatMinor(fromSeller), currency } }] },
    });
    settledRefund(refund);
  }

  async createPayout(input: CreatePayoutInput): Promise<ProviderPayout> {
    const destination = payoutDestination(input);
    if (!input.providerDealId) throw refused(`Payout ${input.payoutId} names no YooKassa deal to pay out of.`);
    const amount = minor(input.amount, 'the payout');
    // The workflow splits a release into payouts YooKassa takes; a part outside its limits is a bug there, stopped here
    // rather than sent to end as a cancelled payout.
    if (amount > this.payoutLimitMinor) {
      throw refused(
        `YooKassa pays out at most ${formatMinor(this.payoutLimitMinor)} at once; ${formatMinor(amount)} must be split into payouts.`,
      );
    }
    if (amount < PAYOUT_MINIMUM_MINOR) {
      throw refused(
        `YooKassa pays out at least ${formatMinor(PAYOUT_MINIMUM_MINOR)}; ${formatMinor(amount)} is too little for one payout.`,
      );
    }
    const description = cut(input.description);
    const payout = await this.http.request('pay the seller out', 'POST', '/payouts', PayoutSchema, input.payoutId, {
      amount: { value: formatMinor(amount), currency: input.currency.toUpperCase() },
      ...destination,
      ...(description ? { description } : {}),
      deal: { id: input.providerDealId },
      metadata: { deal_id: input.dealId, payout_id: input.payoutId },
    });
    return providerPayout(payout);
  }

  async getPayout(providerPayoutId: string): Promise<ProviderPayout> {
    return providerPayout(
      await this.http.request(
        'read the payout',
        'GET',
        `/payouts/${encodeURIComponent(providerPayoutId)}`,
        PayoutSchema,
      ),
    );
  }

  async getDeal(providerDealId: string): Promise<ProviderDeal> {
    const deal = await this.fetchDeal(providerDealId);
    return {
      providerDealId: deal.id,
      status: deal.status,
      balance: formatMinor(minor(deal.balance.value, 'the balance')),
      payoutBalance: formatMinor(minor(deal.payout_balance.value, 'the payout balance')),
    };
  }

  private fetchPayment(providerPaymentId: string): Promise<YooKassaPayment> {
    return this.http.request(
      'read the payment',
      'GET',
      `/payments/${encodeURIComponent(providerPaymentId)}`,
      PaymentSchema,
    );
  }

  private fetchDeal(providerDealId: string): Promise<YooKassaDeal> {
    return this.http.request('read the deal', 'GET', `/deals/${encodeURIComponent(providerDealId)}`, DealSchema);
  }

  /** Our refund of a payment, by the refund_id in its metadata, among the payment's refunds (GET /v3/refunds). */
  private async findRefund(providerPaymentId: string, refundId: string): Promise<YooKassaRefund | undefined> {
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ payment_id: providerPaymentId, limit: '100', ...(cursor ? { cursor } : {}) });
      const page = await this.http.request('list the payment’s refunds', 'GET', `/refunds?${query}`, RefundListSchema);
      const found = page.items.find((refund) => refund.metadata?.refund_id === refundId);
      if (found) return found;
      cursor = page.next_cursor;
    } while (cursor);
    return undefined;
  }
}

/**
 * A safe deal's payment as the deal sees it. `succeeded` is money paid into the deal: held. YooKassa keeps a refunded
 * payment `succeeded` and counts what went back in `refunded_amount`, so refunded in full is `refunded`. A payout does
 * not change the payment: the release is followed by the payouts, not by the payment's status.
 */
function paymentStatus(payment: YooKassaPayment): ProviderPayment['status'] {
  switch (payment.status) {
    case 'pending':
      return 'pending';
    // Not made by this provider (it captures at once); the money is authorised and held all the same.
    case 'waiting_for_capture':
      return 'hold';
    case 'canceled':
      return 'refunded';
    case 'succeeded': {
      const refunded = payment.refunded_amount ? toMinor(payment.refunded_amount.value) : 0n;
      return refunded >= toMinor(payment.amount.value) ? 'refunded' : 'hold';
    }
  }
}

function providerPayout(payout: YooKassaPayout): ProviderPayout {
  if (payout.status === 'canceled') {
    // The reason is YooKassa's code (rejected_by_payee, periodic_limit_exceeded, …), which pages can translate.
    return {
      providerPayoutId: payout.id,
      status: 'failed',
      failureReason: payout.cancellation_details?.reason ?? 'canceled',
    };
  }
  return { providerPayoutId: payout.id, status: payout.status, failureReason: null };
}

/** A refund in the deal is done once YooKassa has it: succeeded, or pending on its way back to the buyer. */
function settledRefund(refund: YooKassaRefund): void {
  if (refund.status === 'canceled') {
    throw refused(
      `YooKassa cancelled refund ${refund.id} of payment ${refund.payment_id}${reason(refund.cancellation_details)}.`,
    );
  }
}

/** Where YooKassa pays: a card by the synonym its payout widget gave, or a YooMoney wallet by its number. */
function payoutDestination(input: CreatePayoutInput): Record<string, unknown> {
  const { type, token } = input.destination;
  switch (type) {
    case 'bank_card':
      return { payout_token: token };
    case 'yoo_money':
      return { payout_destination_data: { type: 'yoo_money', account_number: token } };
    case 'test_card':
      throw refused(
        `Payout ${input.payoutId} goes to a sandbox test card; a YooKassa safe deal pays out only to a card or a YooMoney wallet.`,
      );
  }
}

/** Exact minor units of an amount handed over; an amount that is not one is a bug at the caller's, refused for good. */
function minor(value: string | number, what: string): bigint {
  try {
    return toMinor(value);
  } catch (error) {
    if (error instanceof AmountError) throw refused(`Not an amount of money for ${what}: ${error.message}`);
    throw error;
  }
}

/** YooKassa takes descriptions of at most 128 characters (code points, as it counts them), and no empty one. */
function cut(description: string): string {
  return [...description].slice(0, DESCRIPTION_MAX).join('');
}

const refused = (message: string) => refuse('acquirer_refused', message);

function reason(details: { party: string; reason: string } | undefined): string {
  return details ? ` (${details.party}: ${details.reason})` : '';
}
