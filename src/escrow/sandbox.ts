// The sandbox acquirer: money is "held" the moment a payment is created, and release and refund always succeed.
// It keeps no state, so it cannot say what became of a payment: getPayment refuses rather than guess.
import { ApplicationFailure } from '@temporalio/common';
import type { CreatePaymentInput, CreatedPayment, EscrowProvider, ProviderPayment } from './provider.ts';
import { refuse } from '../temporal/refusal.ts';
// The sandbox pretends YooKassa's hold limit, so integrators see live-like deadlines.
import { HOLD_LIMIT_SECONDS } from './yookassa.ts';

const PREFIX = 'sandbox_';

export class SandboxProvider implements EscrowProvider {
  readonly name = 'sandbox' as const;
  readonly holdLimitSeconds = HOLD_LIMIT_SECONDS;

  async createPayment(input: CreatePaymentInput): Promise<CreatedPayment> {
    return { status: 'hold', providerPaymentId: `${PREFIX}${input.paymentId}`, paymentUrl: null };
  }

  async capture(providerPaymentId: string): Promise<void> {
    assertOurs(providerPaymentId);
  }

  async cancel(providerPaymentId: string): Promise<void> {
    assertOurs(providerPaymentId);
  }

  async getPayment(providerPaymentId: string): Promise<ProviderPayment> {
    assertOurs(providerPaymentId);
    // Reconstructing would be a guess (held? released?); the deal's own record is the only truth in sandbox mode.
    throw ApplicationFailure.nonRetryable(
      'The sandbox acquirer keeps no state and sends no notifications, so it cannot re-read a payment.',
      'not_supported',
    );
  }
}

/** A live payment id handed to the sandbox means the provider was mixed up: fail loudly, never "succeed". */
function assertOurs(providerPaymentId: string): void {
  if (!providerPaymentId.startsWith(PREFIX)) {
    throw refuse('acquirer_refused', `${providerPaymentId} is not a sandbox payment.`);
  }
}
