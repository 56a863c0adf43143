// Administrators: any deal, escrow moves on it, cancellation, and disputes decided as the arbiter, with a reason.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { nonBlank } from '../http/text.ts';
import { requireAdmin } from '../accounts/admin.ts';
import { addDisputeMessage, cancelDeal, dealFor, moveEscrow, resolveDispute, type DealActor } from './service.ts';
import { DealView, DisputeView, PaymentView, dealView, paymentView } from './views.ts';

const IdParams = z.object({ id: z.string() });
const ADMINISTRATOR: DealActor = { kind: 'administrator' };

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
      const { snapshot } = await dealFor(services, ADMINISTRATOR, params.id);
      ctx.body = { ...dealView(snapshot), marketplace_id: snapshot.deal.marketplace_id };
    },
  });

  for (const action of ['release', 'refund', 'dispute'] as const) {
    api.route({
      ...admin,
      method: 'post',
      path: `/admin/deals/{id}/escrow/${action}`,
      operationId: `adminEscrow${action[0]!.toUpperCase()}${action.slice(1)}`,
      summary: `Escrow: ${action} (any deal)`,
      description:
        action === 'dispute'
          ? 'Opens a dispute for the buyer; `reason` is required.'
          : 'On a disputed payment this decides the dispute: `reason` is then required (see also /escrow/resolve).',
      params: IdParams,
      body: z.object({ reason: z.string().max(2000).default('') }).optional(),
      responses: { 200: { description: 'The payment after the move', schema: PaymentView } },
      handler: async (ctx, { params, body }) => {
        ctx.body = paymentView(await moveEscrow(services, ADMINISTRATOR, params.id, action, body?.reason ?? ''));
      },
    });
  }

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/deals/{id}/escrow/resolve',
    operationId: 'adminResolveDispute',
    summary: 'Decide a dispute as the arbiter: release to the seller or refund the buyer, with the reason',
    params: IdParams,
    body: z.object({ outcome: z.enum(['release', 'refund']), reason: nonBlank(2000).describe('Both sides and the marketplace read it') }),
    responses: { 200: { description: 'The payment after the decision', schema: PaymentView } },
    handler: async (ctx, { params, body }) => {
      ctx.body = paymentView(await resolveDispute(services, params.id, body.outcome, body.reason));
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/deals/{id}/dispute/messages',
    operationId: 'adminDisputeMessage',
    summary: "The arbiter's message in the deal's open dispute",
    params: IdParams,
    body: z.object({ text: nonBlank(5000) }),
    responses: { 201: { description: 'The message', schema: DisputeView.shape.messages.element } },
    handler: async (ctx, { params, body }) => {
      const message = await addDisputeMessage(services, ADMINISTRATOR, params.id, { text: body.text, files: [] });
      ctx.status = 201;
      ctx.body = { ...message, files: [] };
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/deals/{id}/cancel',
    operationId: 'adminCancelDeal',
    summary: 'Cancel any deal before money is held',
    params: IdParams,
    body: z.object({ reason: z.string().max(2000).default('') }).optional(),
    responses: { 200: { description: 'The full deal state, status cancelled', schema: DealView } },
    handler: async (ctx, { params, body }) => {
      ctx.body = dealView(await cancelDeal(services, ADMINISTRATOR, params.id, body?.reason.trim() ?? ''));
    },
  });
}
