// Deterministic workflow code only: the worker bundles this file and everything it imports.
// The deal workflows and the data-source sync workflows are exported from here.
export { dealWorkflow } from './deal.ts';
export * from './webhook-replay.ts';
export { dataSyncWorkflow } from './data-sync.ts';
