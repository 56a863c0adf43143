// Which acquirer a deal's escrow goes through: sandbox marketplaces simulate a safe deal at once; live ones pay through
// YooKassa, as a Safe Deal (payouts to the seller) or, for marketplaces that keep it, a two-stage payment.
import type { Config } from '../config.ts';
import type { MarketplaceMode } from '../marketplaces/marketplaces.ts';
import type { EscrowProviderName } from '../deals/model.ts';
import type { EscrowProvider } from './provider.ts';
import { SandboxProvider } from './sandbox.ts';
import { YOOKASSA_CURRENCIES, YooKassaProvider } from './yookassa.ts';
import { YooKassaSafeDealProvider } from './yookassa-safe-deal.ts';
import { CURRENCIES } from '../deals/currencies.ts';
import { refuse } from '../temporal/refusal.ts';

/** Thrown when a live payment is needed but YooKassa is not configured. */
export class EscrowConfigError extends Error {}

/** A live marketplace's choice of acquirer for its new deals (the marketplaces table's `provider`). */
export type LiveProvider = 'yookassa_safe_deal' | 'yookassa_two_stage';
export const LIVE_PROVIDERS: readonly LiveProvider[] = ['yookassa_safe_deal', 'yookassa_two_stage'];

export function escrowProvider(name: EscrowProviderName, config: Config): EscrowProvider {
  if (name === 'sandbox') return new SandboxProvider();
  const missing = (['YOOKASSA_SHOP_ID', 'YOOKASSA_SECRET_KEY'] as const).filter((variable) => !config[variable]);
  if (missing.length > 0) {
    throw new EscrowConfigError(
      `Live escrow goes through YooKassa, which is not configured: set ${missing.join(' and ')} (and YOOKASSA_API_URL for a non-default endpoint).`,
    );
  }
  const options = {
    apiUrl: config.YOOKASSA_API_URL,
    shopId: config.YOOKASSA_SHOP_ID!,
    secretKey: config.YOOKASSA_SECRET_KEY!,
  };
  return name === 'yookassa_safe_deal' ? new YooKassaSafeDealProvider(options) : new YooKassaProvider(options);
}

/**
 * The providers an activity worker calls, each made once; a missing configuration fails the call for good
 * (`acquirer_not_configured`): retrying cannot fix it, and the API says why.
 */
export function providerCache(config: Config): (name: EscrowProviderName) => EscrowProvider {
  const providers = new Map<EscrowProviderName, EscrowProvider>();
  return (name) => {
    let found = providers.get(name);
    if (!found) {
      try {
        found = escrowProvider(name, config);
      } catch (error) {
        if (error instanceof EscrowConfigError) throw refuse('acquirer_not_configured', error.message);
        throw error;
      }
      providers.set(name, found);
    }
    return found;
  };
}

/** The acquirer of a marketplace's new deals: its mode, and in live mode its choice. */
export function providerFor(marketplace: { mode: MarketplaceMode; provider?: LiveProvider }): EscrowProviderName {
  if (marketplace.mode !== 'live') return 'sandbox';
  return marketplace.provider === 'yookassa_safe_deal' ? 'yookassa_safe_deal' : 'yookassa';
}

/**
 * Where the acquirer's payment pages are, for a page whose form leads there by a 303 (the cabinet's Pay): browsers hold
 * a form's redirects to the page's CSP form-action. YooKassa's confirmation_url is on yoomoney.ru; a stand-in set with
 * YOOKASSA_API_URL (a test double, a proxy) serves its pages from its own origin. The sandbox has none: it holds at once.
 */
export function paymentPageOrigins(provider: EscrowProviderName, config: Config): string[] {
  if (provider === 'sandbox') return [];
  return [...new Set(['https://yoomoney.ru', 'https://yookassa.ru', new URL(config.YOOKASSA_API_URL).origin])];
}

/** The currencies each acquirer takes: the sandbox any ISO 4217 code a deal may have, YooKassa roubles. */
export const PROVIDER_CURRENCIES: Record<EscrowProviderName, readonly string[]> = {
  sandbox: CURRENCIES,
  yookassa: YOOKASSA_CURRENCIES,
  yookassa_safe_deal: YOOKASSA_CURRENCIES,
};
