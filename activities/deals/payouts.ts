// The deal workflow's payouts and refunds of part of the money. Safe to retry: each acquirer call is keyed by the id the
// workflow chose (the payout's, the refund's), so a retry after a timeout, a 5xx or a crashed worker answers the first
// call's result and never pays twice. The payout's destination is read here, from PostgreSQL, so its token never
// enters the workflow's history.
import type { Services } from '../../src/services.ts';
import type { EscrowProviderName } from '../../src/deals/model.ts';
import type { ProviderPayout } from '../../src/escrow/provider.ts';
import { providerCache } from '../../src/escrow/providers.ts';
import { destinationForPayout, destinationTitle } from '../../src/money/destinations.ts';

const SANDBOX_DEFAULT_CARD = '4111111111111111';
import { formatMinor, minOf, toMinor } from '../../src/money/amount.ts';

export interface SellerPayoutInput {
  dealId: string;
  payoutId: string;
  provider: EscrowProviderName;
  providerDealId: string | null;
  /** Decimal text: what is still owed to the seller; the payout is this, or the acquirer's per-payout limit if less. */
  owed: string;
  currency: string;
  description: string;
}

export type SellerPayoutResult =
  { destination: null } | (ProviderPayout & { destination: { type: string; title: string }; amount: string });

export function createPayoutActivities(services: Pick<Services, 'config' | 'db' | 'masterKey'>) {
  const provider = providerCache(services.config);

  /**
   * A sandbox deal without a seller (the marketplace sells itself) pays out to the succeeding test card when the
   * marketplace gave no destination, so an integrator sees release → paid without setting one up; a deal with a seller
   * waits for the seller's own, as a live one does.
   */
  async function sandboxDefault(input: SellerPayoutInput) {
    if (input.provider !== 'sandbox') return undefined;
    const deal = await services.db.query<{ seller_email: string }>('SELECT seller_email FROM deals WHERE id = $1', [
      input.dealId,
    ]);
    if (deal.rows[0]?.seller_email) return undefined;
    return {
      type: 'test_card' as const,
      token: SANDBOX_DEFAULT_CARD,
      title: destinationTitle({ type: 'test_card', token: SANDBOX_DEFAULT_CARD }),
    };
  }

  return {
    /**
     * Pays the seller what is owed, up to the acquirer's per-payout limit, to the deal's destination; `destination:
     * null` when there is none yet. The same payoutId answers the same payout at the acquirer.
     */
    async createSellerPayout(input: SellerPayoutInput): Promise<SellerPayoutResult> {
      // The payout's own destination from its first attempt on: a retry sends the acquirer the same body under its key.
      const destination = await destinationForPayout(
        services.db,
        services.masterKey,
        input.dealId,
        input.payoutId,
        () => sandboxDefault(input),
      );
      if (!destination) return { destination: null };
      const acquirer = provider(input.provider);
      const amount = formatMinor(minOf(toMinor(input.owed), acquirer.payoutLimitMinor));
      const payout = await acquirer.createPayout({
        payoutId: input.payoutId,
        dealId: input.dealId,
        providerDealId: input.providerDealId,
        amount,
        currency: input.currency,
        destination: { type: destination.type, token: destination.token },
        description: input.description,
      });
      return { ...payout, amount, destination: { type: destination.type, title: destination.title } };
    },
    async getSellerPayout(name: EscrowProviderName, providerPayoutId: string): Promise<ProviderPayout> {
      return provider(name).getPayout(providerPayoutId);
    },
    /** Returns part or all of the held money to the buyer (a paying-out provider), keyed by our refund id. */
    async refundEscrowPart(
      name: EscrowProviderName,
      input: {
        refundId: string;
        providerPaymentId: string;
        providerDealId: string | null;
        amount: string;
        currency: string;
      },
    ): Promise<void> {
      await provider(name).refund(input);
    },
  };
}
