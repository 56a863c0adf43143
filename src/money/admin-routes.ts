// The administrators' reconciliation operations: what the daily runs found (every role reads: support and arbiters
// answer sellers' questions with it), the runs themselves, and "run now" (the admin role's, audited as every change).
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { problem } from '../http/problem.ts';
import { queryInt } from '../http/query-values.ts';
import { requireAdmin, type AdminActor } from '../admin/auth.ts';
import {
  FINDING_KINDS,
  FINDING_STATUSES,
  findRun,
  listItems,
  listRuns,
  startReconciliation,
  type ItemRecord,
  type RunRecord,
} from './reconciliation.ts';

const KIND_WORDS =
  '`deal_balance`: a YooKassa Safe Deal’s balance against the ledger’s (the deal’s held money plus what is payable to ' +
  'its seller), amounts with two decimals; `payout_status`: a payout’s status (`pending`, `succeeded`, `failed`); ' +
  '`payment_status`: a two-stage payment’s status (ours: `pending`, `hold`, `released`, `refunded`, `disputed`; the ' +
  'acquirer’s: `pending`, `hold`, `released`, `refunded`)';

export const ReconciliationItem = z.object({
  id: z.string().describe('Increasing with time'),
  run_id: z.uuid(),
  checked_at: z.iso.datetime(),
  deal_id: z.uuid(),
  marketplace_id: z.uuid(),
  kind: z.enum(FINDING_KINDS).describe(KIND_WORDS),
  ref: z.string().describe('What was compared: the acquirer’s deal id (deal_balance), our payout id or our payment id'),
  currency: z.string().nullable().describe('ISO 4217, for deal_balance'),
  ours: z.string().describe('What our ledger or records say'),
  theirs: z.string().nullable().describe('What the acquirer says; null when it did not answer'),
  status: z
    .enum(FINDING_STATUSES)
    .describe('`mismatch`: the two differ; `error`: the acquirer could not be asked (detail says why)'),
  detail: z.string(),
});

export const ReconciliationRun = z.object({
  id: z.uuid(),
  trigger: z
    .enum(['schedule', 'manual'])
    .describe('`schedule`: the daily run (03:00 UTC); `manual`: an administrator’s'),
  started_by: z.string().nullable().describe('The administrator of a manual run'),
  workflow_id: z.string().describe('Its workflow in Temporal'),
  status: z.enum(['running', 'finished', 'failed']),
  started_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
  deals_checked: z.number().int(),
  checks: z.number().int().describe('Comparisons made: matches, mismatches and errors'),
  mismatches: z.number().int(),
  errors: z.number().int(),
  error: z.string().nullable().describe('Why a failed run stopped'),
});

export const itemJson = (item: ItemRecord) => ({ ...item, checked_at: item.checked_at.toISOString() });
export const runJson = (run: RunRecord) => ({
  ...run,
  started_at: run.started_at.toISOString(),
  finished_at: run.finished_at?.toISOString() ?? null,
});

export function reconciliationAdminRoutes(api: Api, services: Services): void {
  const { db } = services;
  const admin = {
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
  };

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/reconciliation',
    operationId: 'listReconciliationItems',
    summary: 'What the reconciliation with the acquirer found, newest first',
    description:
      'Every run compares each open or recently closed (7 days) live deal with the acquirer and keeps the differences ' +
      '(`mismatch`) and the checks the acquirer could not answer (`error`); matches are only counted in the run. Sandbox ' +
      'deals are not reconciled. Pass the last item’s id as `starting_after` for the next page while `has_more` is true.',
    query: z.object({
      status: z.enum(FINDING_STATUSES).optional().describe('Only mismatches, or only errors'),
      kind: z.enum(FINDING_KINDS).optional(),
      run_id: z.uuid().optional().describe('Only this run’s'),
      deal_id: z.uuid().optional().describe('Only this deal’s'),
      marketplace_id: z.uuid().optional().describe('Only this marketplace’s deals'),
      limit: queryInt(1, 100).default(50).describe('Items per page: 1 to 100, 50 when absent'),
      starting_after: z
        .string()
        .regex(/^[0-9]{1,18}$/, 'must be an item id')
        .optional()
        .describe('An item id: the page holds the items kept before it'),
    }),
    responses: {
      200: {
        description: 'A page of findings',
        schema: z.object({ items: z.array(ReconciliationItem), has_more: z.boolean() }),
      },
    },
    handler: async (ctx, { query }) => {
      const page = await listItems(db, {
        status: query.status,
        kind: query.kind,
        runId: query.run_id,
        dealId: query.deal_id,
        marketplaceId: query.marketplace_id,
        limit: query.limit,
        startingAfter: query.starting_after,
      });
      if (!page)
        throw problem(
          'invalid_cursor',
          'starting_after is not an item of the reconciliation; take it from a page of this list.',
        );
      ctx.body = { items: page.items.map(itemJson), has_more: page.hasMore };
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/reconciliation/runs',
    operationId: 'listReconciliationRuns',
    summary: 'The reconciliation runs, newest first, with what each found',
    description: 'Pass the last item’s id as `starting_after` for the next page while `has_more` is true.',
    query: z.object({
      limit: queryInt(1, 100).default(20).describe('Runs per page: 1 to 100, 20 when absent'),
      starting_after: z.uuid().optional().describe('A run id: the page holds the runs started before it'),
    }),
    responses: {
      200: {
        description: 'A page of runs',
        schema: z.object({ items: z.array(ReconciliationRun), has_more: z.boolean() }),
      },
    },
    handler: async (ctx, { query }) => {
      const page = await listRuns(db, { limit: query.limit, startingAfter: query.starting_after });
      if (!page)
        throw problem(
          'invalid_cursor',
          'starting_after is not a reconciliation run; take it from a page of this list.',
        );
      ctx.body = { items: page.items.map(runJson), has_more: page.hasMore };
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/reconciliation/runs/{id}',
    operationId: 'getReconciliationRun',
    summary: 'One reconciliation run: running, or what it found',
    params: z.object({ id: z.string() }),
    responses: { 200: { description: 'The run', schema: ReconciliationRun } },
    handler: async (ctx, { params }) => {
      const run = await findRun(db, params.id);
      if (!run) throw problem('not_found', 'No such reconciliation run.');
      ctx.body = runJson(run);
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/reconciliation/runs',
    operationId: 'runReconciliation',
    summary: 'Reconcile with the acquirer now, besides the daily run',
    description:
      'Starts a run at once (its own workflow, beside the daily one) and answers it while it runs: follow it with ' +
      '`GET /admin/reconciliation/runs/{id}`, and its findings with `GET /admin/reconciliation?run_id=`. The admin role’s.',
    responses: { 202: { description: 'The run, started', schema: ReconciliationRun } },
    handler: async (ctx) => {
      const run = await startReconciliation(services, (ctx.state.admin as AdminActor).actor);
      ctx.status = 202;
      ctx.set('Location', `/admin/reconciliation/runs/${run.id}`);
      ctx.body = runJson(run);
    },
  });
}
