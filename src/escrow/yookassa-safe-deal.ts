// YooKassa Safe Deal (Безопасная сделка). Being built in this session: see src/escrow/provider.ts for the interface.
import type { EscrowProvider } from './provider.ts';
import { HOLD_LIMIT_SECONDS, PAYOUT_LIMIT_MINOR, type YooKassaOptions } from './yookassa.ts';

const notYet = async (): Promise<never> => {
  throw new Error('YooKassa Safe Deal is not built yet.');
};

export class YooKassaSafeDealProvider implements EscrowProvider {
  readonly name = 'yookassa_safe_deal' as const;
  readonly holdLimitSeconds = HOLD_LIMIT_SECONDS;
  readonly paysOut = true;
  readonly payoutLimitMinor = PAYOUT_LIMIT_MINOR;
  constructor(readonly options: YooKassaOptions) {}
  createPayment = notYet;
  capture = notYet;
  cancel = notYet;
  getPayment = notYet;
  refund = notYet;
  createPayout = notYet;
  getPayout = notYet;
  getDeal = notYet;
}
