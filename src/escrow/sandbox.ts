// The sandbox acquirer: a safe deal simulated at once. Money is "held" the moment a payment is created; release pays
// the seller out, refunds (whole or part) always succeed. Payouts go to documented test cards, like Stripe's:
// 4111111111111111 succeeds, 4000000000000002 fails as `card_declined`; any other card is refused when it is given
// (src/money/destinations.ts). It keeps no state: a payout's outcome is written into its id, so getPayout can answer;
// a payment it cannot re-read, and its deals have no balance to reconcile (the deal's own records are the truth).
import { ApplicationFailure } from '@temporalio/common';
import type {
  CreatePaymentInput,
  CreatedPayment,
  CreatePayoutInput,
  EscrowProvider,
  ProviderDeal,
  ProviderPayment,
  ProviderPayout,
} from './provider.ts';
import { refuse } from '../temporal/refusal.ts';
// The sandbox pretends YooKassa's limits, so integrators see live-like deadlines and split payouts.
import { HOLD_LIMIT_SECONDS, PAYOUT_LIMIT_MINOR } from './yookassa.ts';

const PREFIX = 'sandbox_';

/** The sandbox's test cards and what a payout to each does. */
export const SANDBOX_TEST_CARDS = {
  '4111111111111111': 'succeeds',
  '4000000000000002': 'card_declined',
} as const;

export class SandboxProvider implements EscrowProvider {
  readonly name = 'sandbox' as const;
  readonly holdLimitSeconds = HOLD_LIMIT_SECONDS;
  readonly paysOut = true;
  readonly payoutLimitMinor = PAYOUT_LIMIT_MINOR;

  async createPayment(input: CreatePaymentInput): Promise<CreatedPayment> {
    return {
      status: 'hold',
      providerPaymentId: `${PREFIX}${input.paymentId}`,
      providerDealId: `${PREFIX}deal_${input.paymentId}`,
      paymentUrl: null,
    };
  }

  async capture(providerPaymentId: string): Promise<void> {
    assertOurs(providerPaymentId);
  }

  async cancel(providerPaymentId: string): Promise<void> {
    assertOurs(providerPaymentId);
  }

  async refund(input: { providerPaymentId: string }): Promise<void> {
    assertOurs(input.providerPaymentId);
  }

  async createPayout(input: CreatePayoutInput): Promise<ProviderPayout> {
    const outcome = SANDBOX_TEST_CARDS[input.destination.token as keyof typeof SANDBOX_TEST_CARDS];
    if (input.destination.type !== 'test_card' || !outcome) {
      throw refuse(
        'acquirer_refused',
        'The sandbox pays out only to its test cards (4111111111111111 succeeds, 4000000000000002 is declined).',
      );
    }
    return this.getPayout(`${PREFIX}payout_${outcome === 'succeeds' ? 'ok' : 'declined'}_${input.payoutId}`);
  }

  async getPayout(providerPayoutId: string): Promise<ProviderPayout> {
    assertOurs(providerPayoutId);
    const declined = providerPayoutId.startsWith(`${PREFIX}payout_declined_`);
    return {
      providerPayoutId,
      status: declined ? 'failed' : 'succeeded',
      failureReason: declined ? 'card_declined' : null,
    };
  }

  async getPayment(providerPaymentId: string): Promise<ProviderPayment> {
    assertOurs(providerPaymentId);
    // Reconstructing would be a guess (held? released?); the deal's own record is the only truth in sandbox mode.
    throw notSupported('re-read a payment');
  }

  async getDeal(providerDealId: string): Promise<ProviderDeal> {
    assertOurs(providerDealId);
    throw notSupported('re-read a deal');
  }
}

function notSupported(what: string) {
  return ApplicationFailure.nonRetryable(
    `The sandbox acquirer keeps no state and sends no notifications, so it cannot ${what}.`,
    'not_supported',
  );
}

/** A live id handed to the sandbox means the provider was mixed up: fail loudly, never "succeed". */
function assertOurs(providerId: string): void {
  if (!providerId.startsWith(PREFIX)) {
    throw refuse('acquirer_refused', `${providerId} is not a sandbox payment.`);
  }
}
