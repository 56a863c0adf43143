// The marketplace deal API (`/api/mkt/deals`, X-Svc-Key). A marketplace sees only its own deals (404 otherwise).
import type { Context } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { idempotency } from '../http/idempotency.ts';
import type { Services } from '../services.ts';
import { problem, notFound } from '../http/problem.ts';
import { readRawBody } from '../http/body.ts';
import { EmailSchema } from '../accounts/users.ts';
import {
  requireSecretKey,
  requireSecretKeyCheckedByWrite,
  type Marketplace,
  type RememberedKey,
} from '../marketplaces/marketplaces.ts';
import { nonBlank } from '../http/text.ts';
import { PayoutDestinationInput } from '../money/destinations.ts';
import { QueryTimestamp, queryInt } from '../http/query-values.ts';
import { DEAL_STATUSES, dealStatus, DOCUMENT_KINDS } from './model.ts';
import { findDeal, loadSnapshot } from './store.ts';
import {
  addDisputeMessage,
  addDocument,
  cancelDeal,
  createDeal,
  dealFor,
  deliverDeal,
  marketplaceDeals,
  partialRefund,
  resendInvitation,
  setDealPayoutDestination,
  shipDeal,
  startApproval,
  startEscrow,
  type DealActor,
} from './service.ts';
import {
  ApprovalView,
  DealConflictProblem,
  DealCreated,
  DealView,
  DisputeView,
  DocumentView,
  EscrowResponse,
  MarketplaceDealFields,
  StoredDestinationView,
  Money,
  dealView,
  escrowResponse,
} from './views.ts';

export const DOCUMENT_LIMIT_BYTES = 25 * 1024 * 1024;

const DealParams = z.object({ deal_id: z.string().describe('The deal id') });

const DealList = z.object({ items: z.array(DealView), has_more: z.boolean() });

/** The marketplace as an actor: its key authenticated it (requireSecretKey). */
const asMarketplace = (ctx: Context): DealActor & { marketplace: Marketplace } => ({
  kind: 'marketplace',
  marketplace: ctx.state.marketplace as Marketplace,
});

export function dealRoutes(api: Api, services: Services): void {
  const auth = requireSecretKey(services.db);
  const common = { tags: ['Deals'], security: ['marketplaceKey'], use: [auth] };

  api.route({
    ...common,
    // The creation's insert checks the key in its own statement: one round trip to PostgreSQL, not two.
    use: [requireSecretKeyCheckedByWrite(services.db)],
    method: 'post',
    path: '/api/mkt/deals',
    operationId: 'createDeal',
    summary: 'Register a deal (idempotent on external_id)',
    description:
      'The buyer and the seller get a svc ID and a personal organization when they have none, and an invitation. The ' +
      "deal's `fee` is fixed now: the one given, or the marketplace's fee schedule applied to the amount.",
    body: MarketplaceDealFields,
    bodyExample: {
      external_id: 'order-1042',
      title: 'Touring bicycle Aris 28',
      buyer_email: 'anna@example.com',
      buyer_name: 'Anna Petrova',
      seller_email: 'ivan@example.com',
      amount: 25000,
      currency: 'RUB',
      description: 'Used one season, with a new chain',
      buyer_locale: 'ru',
    },
    responses: {
      201: { description: 'A new deal', schema: DealCreated },
      200: {
        description: 'The deal this external_id already names, unchanged: the request gave no field another value',
        schema: DealCreated,
      },
      409: {
        description: 'deal_conflict: this external_id names a deal with other values of the fields in `fields`',
        contentType: 'application/problem+json',
        schema: DealConflictProblem,
      },
    },
    handler: async (ctx, { body }) => {
      const { snapshot, created } = await createDeal(
        services,
        ctx.state.marketplace,
        body,
        ctx.state.secretKey as RememberedKey | undefined,
      );
      ctx.status = created ? 201 : 200;
      ctx.body = { id: snapshot.deal.id, external_id: snapshot.deal.external_id, status: dealStatus(snapshot) };
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/api/mkt/deals',
    operationId: 'listDeals',
    summary: 'Find a deal by its external_id, or list the deals, newest first',
    description:
      'With `external_id`: that deal (404 when none has it), and no other parameter. Without: a page of deals, ' +
      'newest first; pass the last item’s id as `starting_after` for the next page while `has_more` is true.',
    query: z.object({
      external_id: z
        .string()
        .min(1)
        .max(128)
        .optional()
        .describe('The deal with this external_id, as the full deal state'),
      limit: queryInt(1, 100).default(20).describe('Deals per page'),
      starting_after: z.string().min(1).max(64).optional().describe('A deal id: the page starts after it'),
      status: z.enum(DEAL_STATUSES).optional(),
      created_gte: QueryTimestamp.optional().describe('Created at or after (ISO 8601)'),
      created_lte: QueryTimestamp.optional().describe('Created at or before (ISO 8601)'),
    }),
    responses: {
      200: {
        description: 'With external_id: the full deal state. Without: `{items, has_more}`',
        schema: z.union([DealView, DealList]),
      },
    },
    handler: async (ctx, { query }) => {
      const marketplace = ctx.state.marketplace as Marketplace;
      if (query.external_id !== undefined) {
        const deal = await findDeal(services.db, { marketplaceId: marketplace.id, externalId: query.external_id });
        if (!deal) throw notFound(`No deal has external_id ${JSON.stringify(query.external_id)}.`);
        ctx.body = dealView((await loadSnapshot(services.db, deal.id))!);
        return;
      }
      const page = await marketplaceDeals(services, marketplace, {
        limit: query.limit,
        startingAfter: query.starting_after,
        status: query.status,
        createdGte: query.created_gte,
        createdLte: query.created_lte,
      });
      ctx.body = { items: page.snapshots.map(dealView), has_more: page.hasMore };
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/api/mkt/deals/{deal_id}',
    operationId: 'getDeal',
    summary: 'The full deal state',
    params: DealParams,
    responses: { 200: { description: 'The deal', schema: DealView } },
    handler: async (ctx, { params }) => {
      ctx.body = dealView((await dealFor(services, asMarketplace(ctx), params.deal_id)).snapshot);
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/documents',
    operationId: 'addDocument',
    summary: "Attach a document; it is stored in the buyer's cloud",
    params: DealParams,
    query: z.object({
      kind: z.enum(DOCUMENT_KINDS),
      name: z.string().trim().min(1).max(255).optional().describe('Defaults to the kind'),
    }),
    rawBody: {
      contentType: '*/*',
      description: `The file, up to ${DOCUMENT_LIMIT_BYTES / 1024 / 1024} MiB; its type from Content-Type`,
    },
    bodyLimitBytes: DOCUMENT_LIMIT_BYTES,
    responses: { 201: { description: 'The document', schema: DocumentView } },
    handler: async (ctx, { params, query }) => {
      const actor = asMarketplace(ctx);
      // The deal first: a request for another marketplace's deal is 404 before its body is read.
      await dealFor(services, actor, params.deal_id);
      const bytes = await readRawBody(ctx, DOCUMENT_LIMIT_BYTES);
      if (bytes.length === 0) throw problem('empty_document', 'The body is empty; send the file as the request body.');
      ctx.status = 201;
      ctx.body = await addDocument(services, actor, params.deal_id, {
        kind: query.kind,
        name: query.name ?? query.kind,
        contentType: ctx.get('Content-Type') || 'application/octet-stream',
        bytes,
      });
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/approval',
    operationId: 'startApproval',
    summary: "Start the buyer's approval",
    params: DealParams,
    body: z.object({
      approver_email: z
        .union([EmailSchema, z.literal('')])
        .default('')
        .describe('Defaults to the buyer'),
      comment: z.string().max(2000).default(''),
    }),
    responses: {
      201: { description: 'The approval started', schema: ApprovalView },
      200: { description: 'The approval already pending', schema: ApprovalView },
    },
    handler: async (ctx, { params, body }) => {
      const { approval, created } = await startApproval(services, asMarketplace(ctx), params.deal_id, {
        approver: body.approver_email,
        comment: body.comment,
      });
      ctx.status = created ? 201 : 200;
      ctx.body = approval;
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/escrow',
    idempotent: idempotency(services),
    operationId: 'startEscrow',
    summary: 'Hold the money in escrow (the deal must be approved)',
    params: DealParams,
    body: z.object({
      amount: Money.describe('0 or absent: the deal amount').default(0),
      description: z.string().max(128).default(''),
    }),
    responses: {
      201: {
        description: 'A new payment: held at once (sandbox) or pending with payment_url (live)',
        schema: EscrowResponse,
      },
      200: { description: 'The live payment still pending', schema: EscrowResponse },
    },
    handler: async (ctx, { params, body }) => {
      const { payment, created } = await startEscrow(services, asMarketplace(ctx), params.deal_id, body);
      ctx.status = created ? 201 : 200;
      ctx.body = escrowResponse(payment);
    },
  });
  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/cancel',
    idempotent: idempotency(services),
    operationId: 'cancelDeal',
    summary: 'Cancel the deal before money is held',
    description:
      'A live payment still pending is cancelled at the acquirer. Once money is held or paid: 400 deal_not_cancellable; ' +
      'while a dispute is open: 400 dispute_open (only the arbiter moves disputed money).',
    params: DealParams,
    body: z
      .object({
        reason: z.string().max(2000).default('').describe('Told to the buyer and in the deal.cancelled webhook'),
      })
      .optional(),
    responses: { 200: { description: 'The full deal state, status cancelled', schema: DealView } },
    handler: async (ctx, { params, body }) => {
      ctx.body = dealView(await cancelDeal(services, asMarketplace(ctx), params.deal_id, body?.reason.trim() ?? ''));
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/invitation',
    operationId: 'resendInvitation',
    summary: "Mail the buyer's invitation again",
    description:
      'A fresh invitation (14 days again) when the buyer has not set a password yet, otherwise a link to the deal. ' +
      'At most 3 an hour per deal (429 too_many_invitations with Retry-After). A closed deal (paid, refunded or ' +
      'cancelled): 400 deal_closed, nothing sent.',
    params: DealParams,
    responses: { 202: { description: 'The mail is on its way', schema: z.object({ ok: z.literal(true) }) } },
    handler: async (ctx, { params }) => {
      await resendInvitation(services, ctx.state.marketplace as Marketplace, params.deal_id);
      ctx.status = 202;
      ctx.body = { ok: true };
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/dispute/messages',
    operationId: 'addDisputeMessage',
    summary: "A message in the deal's open dispute",
    description: 'Buyer, seller and the arbiter read it; 400 no_open_dispute when the deal has none.',
    params: DealParams,
    body: z.object({ text: nonBlank(5000) }),
    responses: { 201: { description: 'The message', schema: DisputeView.shape.messages.element } },
    handler: async (ctx, { params, body }) => {
      const message = await addDisputeMessage(services, asMarketplace(ctx), params.deal_id, {
        text: body.text,
        files: [],
      });
      ctx.status = 201;
      ctx.body = { ...message, files: [] };
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/shipment',
    operationId: 'markShipped',
    summary: 'Mark the order shipped (with the carrier and tracking number, if any)',
    description:
      'While the money is held, once (400 invalid_delivery_state otherwise). From now on the buyer can no longer refund alone: ' +
      'only a dispute stops the release. Sends deal.shipped and mails the buyer.',
    params: DealParams,
    body: z.object({ carrier: z.string().max(100).default(''), tracking: z.string().max(100).default('') }).optional(),
    responses: { 200: { description: 'The full deal state', schema: DealView } },
    handler: async (ctx, { params, body }) => {
      ctx.body = dealView(
        await shipDeal(services, asMarketplace(ctx), params.deal_id, {
          carrier: body?.carrier.trim() ?? '',
          tracking: body?.tracking.trim() ?? '',
        }),
      );
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/delivery',
    operationId: 'markDelivered',
    summary: "Mark the order delivered: the buyer's inspection window starts",
    description:
      "The buyer has the marketplace's inspection_days (default 3) to open a dispute; a day before it ends they are reminded; " +
      'then the money is released to the seller automatically (by `system`). With inspection_days 0 it is released at once. ' +
      'Sends deal.delivered.',
    params: DealParams,
    responses: { 200: { description: 'The full deal state', schema: DealView } },
    handler: async (ctx, { params }) => {
      ctx.body = dealView(await deliverDeal(services, asMarketplace(ctx), params.deal_id));
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/api/mkt/deals/{deal_id}/escrow/partial-refund',
    idempotent: idempotency(services),
    operationId: 'partialRefund',
    summary: 'Return part of the held money to the buyer, as buyer and seller agreed',
    description:
      'While the money is held (not disputed). The amount is more than 0 and leaves the seller more than nothing: less than ' +
      'the held money less the fee (400 invalid_refund_amount otherwise). A two-stage YooKassa payment refunds whole only. ' +
      'Sends deal.partially_refunded.',
    params: DealParams,
    body: z.object({
      amount: Money.describe('The part to return, two decimals'),
      reason: z.string().max(2000).default(''),
    }),
    responses: { 200: { description: 'The full deal state', schema: DealView } },
    handler: async (ctx, { params, body }) => {
      ctx.body = dealView(
        await partialRefund(services, asMarketplace(ctx), params.deal_id, {
          amount: body.amount,
          reason: body.reason.trim(),
        }),
      );
    },
  });

  api.route({
    ...common,
    method: 'put',
    path: '/api/mkt/deals/{deal_id}/payout-destination',
    idempotent: idempotency(services),
    operationId: 'setDealPayoutDestination',
    summary: "Where to pay this deal's seller (before the seller's own destination)",
    description:
      'Sandbox: `{type: "test_card", token: "4111111111111111"}` (the payout succeeds) or `4000000000000002` (declined). ' +
      "Live: `bank_card` with the synonym of YooKassa's payout widget, or `yoo_money` with a wallet number. The token is " +
      'kept encrypted and never shown again. A payout that waited for a destination, or failed, is made again.',
    params: DealParams,
    body: PayoutDestinationInput,
    responses: { 200: { description: 'The destination as pages show it', schema: StoredDestinationView } },
    handler: async (ctx, { params, body }) => {
      ctx.body = await setDealPayoutDestination(services, asMarketplace(ctx), params.deal_id, body);
    },
  });
}
