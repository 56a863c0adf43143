// The acquirer activities. Safe to retry: creation is keyed by our payment id, capture and cancel by the key the
// workflow passes. Refusals are non-retryable (refuse(), type `acquirer_refused`); transient failures are plain Errors
// that Temporal retries with the same key.
import type { Services } from '../../src/services.ts';
import type { EscrowProviderName } from '../../src/deals/model.ts';
import type { CreatePaymentInput, CreatedPayment, ProviderPayment } from '../../src/escrow/provider.ts';
import { providerCache } from '../../src/escrow/providers.ts';

export function createEscrowActivities(services: Pick<Services, 'config'>) {
  const provider = providerCache(services.config);

  return {
    async createEscrowPayment(name: EscrowProviderName, input: CreatePaymentInput): Promise<CreatedPayment> {
      return provider(name).createPayment(input);
    },
    async captureEscrowPayment(
      name: EscrowProviderName,
      providerPaymentId: string,
      amount: number,
      currency: string,
      idempotenceKey: string,
    ): Promise<void> {
      await provider(name).capture(providerPaymentId, amount, currency, idempotenceKey);
    },
    async cancelEscrowPayment(
      name: EscrowProviderName,
      providerPaymentId: string,
      idempotenceKey: string,
    ): Promise<void> {
      await provider(name).cancel(providerPaymentId, idempotenceKey);
    },
    /** Re-reads a live payment, e.g. to reconcile after a missed notification (not supported by the sandbox). */
    async getEscrowPayment(name: EscrowProviderName, providerPaymentId: string): Promise<ProviderPayment> {
      return provider(name).getPayment(providerPaymentId);
    },
  };
}
