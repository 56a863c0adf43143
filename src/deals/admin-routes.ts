// Administrators: any deal, escrow moves on it, and dispute resolution (the arbiter).
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { notFound, Problem } from '../http/problem.ts';
import { requireAdmin } from '../accounts/admin.ts';
import { movePaymentUpdate, type PaymentAction } from '../../workflows/deal-messages.ts';
import { loadSnapshot } from './store.ts';
import { updateDeal } from './commands.ts';
import { DealView, PaymentView, dealView, paymentView } from './views.ts';

const IdParams = z.object({ id: z.string() });

async function anyDeal(services: Services, id: string) {
  const snapshot = z.uuid().safeParse(id).success ? await loadSnapshot(services.db, id) : undefined;
  if (!snapshot) throw notFound('No such deal.');
  return snapshot;
}

export function adminDealRoutes(api: Api, services: Services): void {
  const admin = { tags: ['Administration'], security: ['adminToken'], use: [requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)] };

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/deals/{id}',
    operationId: 'adminGetDeal',
    summary: 'Any deal',
    params: IdParams,
    responses: { 200: { description: 'The deal', schema: DealView.extend({ marketplace_id: z.uuid() }) } },
    handler: async (ctx, { params }) => {
      const snapshot = await anyDeal(services, params.id);
      ctx.body = { ...dealView(snapshot), marketplace_id: snapshot.deal.marketplace_id };
    },
  });

  const move = (action: PaymentAction) => async (id: string) =>
    paymentView(await updateDeal(services, await anyDeal(services, id), movePaymentUpdate, { action, actor: 'admin' }));

  for (const action of ['release', 'refund', 'dispute'] as const) {
    api.route({
      ...admin,
      method: 'post',
      path: `/admin/deals/{id}/escrow/${action}`,
      operationId: `adminEscrow${action[0]!.toUpperCase()}${action.slice(1)}`,
      summary: `Escrow: ${action} (any deal)`,
      params: IdParams,
      responses: { 200: { description: 'The payment after the move', schema: PaymentView } },
      handler: async (ctx, { params }) => {
        ctx.body = await move(action)(params.id);
      },
    });
  }

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/deals/{id}/escrow/resolve',
    operationId: 'adminResolveDispute',
    summary: 'Resolve a dispute: release to the seller or refund the buyer',
    params: IdParams,
    body: z.object({ outcome: z.enum(['release', 'refund']) }),
    responses: { 200: { description: 'The payment after the decision', schema: PaymentView } },
    handler: async (ctx, { params, body }) => {
      const snapshot = await anyDeal(services, params.id);
      const payment = snapshot.payments.at(-1);
      if (payment?.status !== 'disputed') {
        throw new Problem(400, 'invalid_payment_state', 'Only a disputed payment can be resolved.');
      }
      ctx.body = await move(body.outcome)(params.id);
    },
  });
}
