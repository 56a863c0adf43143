// YooKassa API v3 as a two-stage payment: create with capture=false (the buyer pays on YooKassa's page, the money
// is then held: waiting_for_capture), later capture (release) or cancel (refund). Every POST carries an
// Idempotence-Key, so a retried activity repeats the first answer instead of paying twice.
// Errors: a refusal (4xx other than 429) is final, an ApplicationFailure Temporal does not retry; 429, 5xx and
// network failures are plain Errors, retried with the same key, as YooKassa asks ("result unknown, repeat").
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type {
  CreatePaymentInput,
  CreatedPayment,
  EscrowProvider,
  ProviderDeal,
  ProviderPayment,
  ProviderPayout,
} from './provider.ts';
import { refuse } from '../temporal/refusal.ts';
import { YooKassaHttp, type YooKassaOptions } from './yookassa-http.ts';

export type { YooKassaOptions } from './yookassa-http.ts';

/**
 * What YooKassa takes in `amount.currency`: roubles. A shop registered in Russia gets rouble acquiring only, and a
 * payment in another currency is refused (https://yookassa.ru/questions/q219/: "для вас доступен только рублевый
 * эквайринг"); the shop's own account is in roubles too.
 */
export const YOOKASSA_CURRENCIES: readonly string[] = ['RUB'];

/** Card holds at YooKassa lapse (are cancelled by YooKassa) 7 days after the buyer pays. */
export const HOLD_LIMIT_SECONDS = 7 * 24 * 3600;

/** YooKassa pays out at most 150,000 ₽ to a card at once (and 20 payouts a day, 1.5 M ₽ a month per card). */
export const PAYOUT_LIMIT_MINOR = 150_000_00n;

const STATUS = {
  pending: 'pending',
  waiting_for_capture: 'hold',
  succeeded: 'released',
  canceled: 'refunded',
} as const satisfies Record<string, ProviderPayment['status']>;

/** The fields we read; YooKassa documents that objects may carry more, to be ignored. */
const PaymentSchema = z.looseObject({
  id: z.string().min(1),
  status: z.enum(['pending', 'waiting_for_capture', 'succeeded', 'canceled']),
  amount: z.object({ value: z.string(), currency: z.string() }),
  confirmation: z.looseObject({ confirmation_url: z.string().optional() }).optional(),
  cancellation_details: z.looseObject({ party: z.string(), reason: z.string() }).optional(),
});
type YooKassaPayment = z.infer<typeof PaymentSchema>;

const DESCRIPTION_MAX = 128;

export class YooKassaProvider implements EscrowProvider {
  readonly name = 'yookassa' as const;
  readonly holdLimitSeconds = HOLD_LIMIT_SECONDS;
  // A two-stage payment's release is its capture into the shop: no payouts, no partial refunds.
  readonly paysOut = false;
  readonly payoutLimitMinor = PAYOUT_LIMIT_MINOR;
  private readonly http: YooKassaHttp;

  constructor(options: YooKassaOptions) {
    this.http = new YooKassaHttp(options);
  }

  async createPayment(input: CreatePaymentInput): Promise<CreatedPayment> {
    const description = [...input.description].slice(0, DESCRIPTION_MAX).join('');
    const payment = await this.request('create the payment', 'POST', '/payments', input.paymentId, {
      amount: money(input.amount, input.currency),
      capture: false,
      confirmation: { type: 'redirect', return_url: input.returnUrl },
      ...(description ? { description } : {}),
      metadata: { deal_id: input.dealId, payment_id: input.paymentId },
    });
    if (payment.status === 'pending') {
      const url = payment.confirmation?.confirmation_url;
      // A replay of the same key returns the same answer, so retrying would not help: fail for good.
      if (!url) throw refused(`YooKassa created payment ${payment.id} without a confirmation_url.`);
      return { status: 'pending', providerPaymentId: payment.id, paymentUrl: url };
    }
    if (payment.status === 'waiting_for_capture') {
      return {
        status: 'hold',
        providerPaymentId: payment.id,
        paymentUrl: payment.confirmation?.confirmation_url ?? null,
      };
    }
    throw refused(`YooKassa answered the new payment ${payment.id} with status ${payment.status}${reason(payment)}.`);
  }

  async capture(providerPaymentId: string, amount: number, currency: string, idempotenceKey: string): Promise<void> {
    const path = `/payments/${encodeURIComponent(providerPaymentId)}/capture`;
    const body = { amount: money(amount, currency) };
    await this.settle('capture the payment', path, body, idempotenceKey, providerPaymentId, 'succeeded');
  }

  async cancel(providerPaymentId: string, idempotenceKey: string): Promise<void> {
    const current = await this.fetchPayment(providerPaymentId);
    if (current.status === 'canceled') return;
    // YooKassa cancels only waiting_for_capture. A pending payment holds no money and lapses unpaid on its own;
    // should the buyer still pay, the waiting_for_capture notification reaches the deal, which cancels it then.
    if (current.status === 'pending') return;
    if (current.status === 'succeeded') {
      throw refused(`YooKassa payment ${providerPaymentId} is already captured; it can no longer be cancelled.`);
    }
    const path = `/payments/${encodeURIComponent(providerPaymentId)}/cancel`;
    await this.settle('cancel the payment', path, {}, idempotenceKey, providerPaymentId, 'canceled');
  }

  async getPayment(providerPaymentId: string): Promise<ProviderPayment> {
    const payment = await this.fetchPayment(providerPaymentId);
    return {
      providerPaymentId: payment.id,
      status: STATUS[payment.status],
      amount: Number(payment.amount.value),
      currency: payment.amount.currency,
    };
  }

  async refund(): Promise<void> {
    throw twoStageOnly('refund part of a payment');
  }

  async createPayout(): Promise<ProviderPayout> {
    throw twoStageOnly('pay out');
  }

  async getPayout(): Promise<ProviderPayout> {
    throw twoStageOnly('read a payout');
  }

  async getDeal(): Promise<ProviderDeal> {
    throw twoStageOnly('read a deal');
  }

  /** A call whose answer is a payment. */
  private request(
    action: string,
    method: 'GET' | 'POST',
    path: string,
    idempotenceKey?: string,
    body?: object,
  ): Promise<YooKassaPayment> {
    return this.http.request(action, method, path, PaymentSchema, idempotenceKey, body);
  }

  private fetchPayment(providerPaymentId: string): Promise<YooKassaPayment> {
    return this.request('read the payment', 'GET', `/payments/${encodeURIComponent(providerPaymentId)}`);
  }

  /** Capture or cancel, done once the payment reaches `target`, also when an earlier attempt (another key,
   * or one older than YooKassa's 24-hour key memory) already got it there. */
  private async settle(
    action: string,
    path: string,
    body: object,
    idempotenceKey: string,
    providerPaymentId: string,
    target: 'succeeded' | 'canceled',
  ): Promise<void> {
    let answered: YooKassaPayment;
    try {
      answered = await this.request(action, 'POST', path, idempotenceKey, body);
    } catch (error) {
      if (!isRefusal(error)) throw error;
      const current = await this.fetchPayment(providerPaymentId).catch(() => undefined);
      if (current?.status === target) return;
      throw error;
    }
    if (answered.status === target) return;
    const current = await this.fetchPayment(providerPaymentId);
    if (current.status === target) return;
    if (current.status === 'succeeded' || current.status === 'canceled') {
      throw refused(`Could not ${action} ${providerPaymentId}: it is ${current.status}${reason(current)}.`);
    }
    throw new Error(`YooKassa has not finished: ${providerPaymentId} is still ${current.status}; retrying.`);
  }
}

/** YooKassa's money: a decimal string with two places, e.g. `{value: "123.45", currency: "RUB"}`. */
export function money(amount: number, currency: string): { value: string; currency: string } {
  if (!Number.isFinite(amount) || amount < 0) throw refused(`${amount} is not an amount of money.`);
  return { value: (Math.round(amount * 100) / 100).toFixed(2), currency: currency.toUpperCase() };
}

/** True for a failure a retry cannot fix (Temporal will not retry it either). */
export function isRefusal(error: unknown): boolean {
  return error instanceof ApplicationFailure && error.nonRetryable === true;
}

const refused = (message: string) => refuse('acquirer_refused', message);
const twoStageOnly = (what: string) =>
  refused(
    `A two-stage YooKassa payment cannot ${what}: it is captured into the shop or cancelled whole. Switch the marketplace to yookassa_safe_deal for new deals.`,
  );

function reason(payment: YooKassaPayment): string {
  const details = payment.cancellation_details;
  return details ? ` (${details.party}: ${details.reason})` : '';
}
