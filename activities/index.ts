// Every activity the worker registers, built over the process's services.
import type { Services } from '../src/services.ts';
import { createMailActivities } from './mail.ts';
import { createDealActivities } from './deals.ts';
import { createWebhookActivities } from './webhooks.ts';
import { createEscrowActivities } from './escrow.ts';
import { createDataSyncActivities } from './data-sync.ts';
import { createContractActivities } from './contracts.ts';

export function createActivities(services: Services) {
  return {
    ...createMailActivities(services.mailer),
    ...createDealActivities(services),
    ...createWebhookActivities(services),
    ...createEscrowActivities(services),
    ...createDataSyncActivities(services),
    ...createContractActivities(services),
  };
}

export type Activities = ReturnType<typeof createActivities>;
