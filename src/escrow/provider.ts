// The acquirer behind escrow, chosen per marketplace: `sandbox` (sandbox mode) simulates a safe deal at once;
// `yookassa_safe_deal` (live) keeps the buyer's money in a YooKassa Safe Deal and pays the seller out of it;
// `yookassa` (live, deals started before safe deals, or marketplaces that keep it) is a two-stage card payment
// captured into the shop. Every call carries an idempotence key the workflow chose, so a retried activity never pays
// twice. Amounts of payouts and refunds are decimal text with two places ("1234.50"): never a float.

export interface CreatePaymentInput {
  /** Our payment id (a UUID chosen by the workflow); also the idempotence key of the creation. */
  paymentId: string;
  dealId: string;
  amount: number;
  currency: string;
  description: string;
  /** Where the acquirer sends the buyer back after paying. */
  returnUrl: string;
  /**
   * The marketplace's fee and when the acquirer takes it (a safe deal's `fee_moment`); the seller's part is the amount
   * less the fee. Absent for two-stage payments.
   */
  fee?: string;
  feeMoment?: 'payment' | 'close';
}

export interface CreatedPayment {
  status: 'pending' | 'hold';
  providerPaymentId: string;
  /** The acquirer's deal that holds the money (a safe deal's id), or absent for a two-stage payment. */
  providerDealId?: string;
  /** The acquirer's payment page (live), or null when the money is held at once (sandbox). */
  paymentUrl: string | null;
}

export interface ProviderPayment {
  providerPaymentId: string;
  /**
   * Normalised: `pending` (not paid yet), `hold` (the money is held: authorised and waiting for capture, or paid into
   * a safe deal), `released` (captured into the shop, two-stage), `refunded` (cancelled, or refunded in full).
   */
  status: 'pending' | 'hold' | 'released' | 'refunded';
  amount: number;
  currency: string;
}

/** Where a payout goes. `token` is secret: a card synonym from YooKassa's payout widget, a wallet number, a test card. */
export interface PayoutDestination {
  type: 'test_card' | 'bank_card' | 'yoo_money';
  token: string;
}

export interface CreatePayoutInput {
  /** Our payout id (a UUID chosen by the workflow); also the idempotence key. */
  payoutId: string;
  dealId: string;
  /** The acquirer's deal the money is paid out of (CreatedPayment.providerDealId). */
  providerDealId: string | null;
  /** Decimal text, two places. */
  amount: string;
  currency: string;
  destination: PayoutDestination;
  description: string;
}

export interface ProviderPayout {
  providerPayoutId: string;
  status: 'pending' | 'succeeded' | 'failed';
  /** Why it failed, in the acquirer's words or code (`card_declined`, …). */
  failureReason: string | null;
}

export interface RefundInput {
  /** Our refund id (chosen by the workflow); also the idempotence key. */
  refundId: string;
  providerPaymentId: string;
  providerDealId: string | null;
  /** Decimal text, two places: part or all of what is still held. */
  amount: string;
  currency: string;
}

/** What the acquirer holds in one of its deals, for the daily reconciliation. */
export interface ProviderDeal {
  providerDealId: string;
  status: 'opened' | 'closed';
  /** Decimal text: the money in the deal. */
  balance: string;
  /** Decimal text: what may still be paid out of it to the seller. */
  payoutBalance: string;
}

export interface EscrowProvider {
  readonly name: 'sandbox' | 'yookassa' | 'yookassa_safe_deal';
  /** How long the acquirer holds the money before it lapses (7 days for a card hold, a safe deal's lifetime). */
  readonly holdLimitSeconds: number;
  /**
   * Whether release pays the seller out of the held money (a safe deal, the sandbox): the deal is paid once every
   * payout succeeded. A two-stage provider's release is its capture, and the deal is paid at once.
   */
  readonly paysOut: boolean;
  /** The largest single payout in minor units (YooKassa: 150,000 ₽ per payout to a card); larger ones are split. */
  readonly payoutLimitMinor: bigint;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  /** Two-stage: releases held money into the shop (YooKassa: capture). */
  capture(providerPaymentId: string, amount: number, currency: string, idempotenceKey: string): Promise<void>;
  /** Returns held or pending money to the buyer in full (two-stage: cancel; a payment still pending lapses). */
  cancel(providerPaymentId: string, idempotenceKey: string): Promise<void>;
  /** Re-reads a payment from the acquirer (its notifications are not signed, so we never trust their body). */
  getPayment(providerPaymentId: string): Promise<ProviderPayment>;
  /** Returns part or all of a paying-out provider's held money to the buyer. */
  refund(input: RefundInput): Promise<void>;
  /** Pays the seller out of the held money; the same payoutId answers the same payout. */
  createPayout(input: CreatePayoutInput): Promise<ProviderPayout>;
  /** Re-reads a payout (a pending one is asked again until it settles). */
  getPayout(providerPayoutId: string): Promise<ProviderPayout>;
  /** Re-reads the acquirer's deal, for reconciliation. */
  getDeal(providerDealId: string): Promise<ProviderDeal>;
}
