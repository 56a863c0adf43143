// Every activity the worker registers, built over the process's services.
import type { Services } from '../src/services.ts';
import { createDealActivities } from './deals/records.ts';
import { createWebhookActivities } from './webhooks/delivery.ts';
import { createEscrowActivities } from './deals/escrow.ts';
import { createDataSyncActivities } from './data/data-sync.ts';
import { createContractActivities } from './deals/contracts.ts';
import { createReconciliationActivities } from './money/reconciliation.ts';
import { createPayoutActivities } from './deals/payouts.ts';

export function createActivities(services: Services) {
  return {
    ...createDealActivities(services),
    ...createWebhookActivities(services),
    ...createEscrowActivities(services),
    ...createDataSyncActivities(services),
    ...createContractActivities(services),
    ...createReconciliationActivities(services),
    ...createPayoutActivities(services),
  };
}

export type Activities = ReturnType<typeof createActivities>;
