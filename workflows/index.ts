// Deterministic workflow code only: the worker bundles this file and everything it imports. Each feature keeps its
// workflows in its own folder (deals/, webhooks/, data/); the worker knows them by the names exported here.
export { dealWorkflow } from './deals/deal.ts';
export * from './webhooks/webhook-replay.ts';
export { dataSyncWorkflow } from './data/data-sync.ts';
export { reconciliationWorkflow } from './money/reconciliation.ts';
