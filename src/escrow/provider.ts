// The acquirer behind escrow, chosen per marketplace mode: `sandbox` holds at once; `yookassa` (live) is a two-stage
// payment. Every call carries an idempotence key the workflow chose, so a retried activity never pays twice.

export interface CreatePaymentInput {
  /** Our payment id (a UUID chosen by the workflow); also the idempotence key of the creation. */
  paymentId: string;
  dealId: string;
  amount: number;
  currency: string;
  description: string;
  /** Where the acquirer sends the buyer back after paying. */
  returnUrl: string;
}

export interface CreatedPayment {
  status: 'pending' | 'hold';
  providerPaymentId: string;
  /** The acquirer's payment page (live), or null when the money is held at once (sandbox). */
  paymentUrl: string | null;
}

export interface ProviderPayment {
  providerPaymentId: string;
  /** Normalised: `pending` (not paid yet), `hold` (authorised, waiting for capture), `released` (captured),
   * `refunded` (cancelled). */
  status: 'pending' | 'hold' | 'released' | 'refunded';
  amount: number;
  currency: string;
}

export interface EscrowProvider {
  readonly name: 'sandbox' | 'yookassa';
  /** How long the acquirer holds authorised money before it lapses (7 days for cards at YooKassa). */
  readonly holdLimitSeconds: number;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  /** Releases held money to the seller (YooKassa: capture). */
  capture(providerPaymentId: string, amount: number, currency: string, idempotenceKey: string): Promise<void>;
  /** Returns held or pending money to the buyer (YooKassa: cancel). */
  cancel(providerPaymentId: string, idempotenceKey: string): Promise<void>;
  /** Re-reads a payment from the acquirer (its notifications are not signed, so we never trust their body). */
  getPayment(providerPaymentId: string): Promise<ProviderPayment>;
}
