// Administrators: every deal (listed, searched, with its timeline and webhook deliveries), the disputes queue, escrow
// moves and cancellation, disputes decided as the arbiter with a reason, and the buyer's invitation again. Every role
// reads; money moves, dispute messages and cancellation are for `admin` and `arbiter`; `support` may also resend.
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { idempotency } from '../http/idempotency.ts';
import type { Services } from '../services.ts';
import { nonBlank } from '../http/text.ts';
import { QueryTimestamp, queryInt } from '../http/query-values.ts';
import { EmailSchema } from '../accounts/users.ts';
import { requireAdmin } from '../admin/auth.ts';
import { consoleAdmin, consoleToken } from '../admin/console.ts';
import { DEAL_STATUSES, dealStatus, type DealSnapshot } from './model.ts';
import {
  addDisputeMessage,
  administratorDeal,
  administratorDeals,
  administratorResendInvitation,
  cancelDeal,
  dealFor,
  disputeQueue,
  fileFor,
  moveEscrow,
  resolveDispute,
  type DealActor,
} from './service.ts';
import {
  AdminDealListItem,
  AdminDealView,
  DealView,
  DisputeQueueItem,
  DisputeView,
  Money,
  PaymentView,
  adminDealListItem,
  dealView,
  disputeQueueItem,
  paymentView,
} from './views.ts';

const IdParams = z.object({ id: z.string() });
const ADMINISTRATOR: DealActor = { kind: 'administrator' };
/** Who may move money, write in a dispute or cancel; and who may also mail the invitation again. */
export const DEAL_MOVERS = ['admin', 'arbiter'] as const;
export const INVITATION_SENDERS = ['admin', 'arbiter', 'support'] as const;

export const AdminDealQuery = z.object({
  marketplace_id: z.uuid().optional(),
  status: z.enum(DEAL_STATUSES).optional(),
  external_id: z.string().min(1).max(128).optional(),
  buyer_email: EmailSchema.optional().describe("The buyer's whole address, in any case"),
  created_gte: QueryTimestamp.optional().describe('Created at or after (ISO 8601)'),
  created_lte: QueryTimestamp.optional().describe('Created at or before (ISO 8601)'),
  limit: queryInt(1, 100).default(20).describe('Deals per page'),
  starting_after: z.string().min(1).max(64).optional().describe('A deal id: the page starts after it'),
});

export const DisputeQuery = z.object({
  status: z
    .enum(['open', 'decided'])
    .default('open')
    .describe('open: the queue, oldest first; decided: newest decision first'),
  limit: queryInt(1, 100).default(20),
  starting_after: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('A deal id of the previous page: the page starts after it'),
});

/** What the audit log keeps of the deal before a change: its status and its latest payment. */
export function auditedDeal(snapshot: DealSnapshot) {
  const payment = snapshot.payments.at(-1);
  return { status: dealStatus(snapshot), payment: payment ? paymentView(payment) : null };
}

export function adminDealRoutes(api: Api, services: Services): void {
  const guard = (may?: readonly ('admin' | 'arbiter' | 'support')[]) => ({
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN, { may })],
  });
  const reader = guard();
  const mover = guard(DEAL_MOVERS);
  /** Keeps the deal as it was for the audit log's `before`. */
  const before = async (ctx: Context, id: string) => {
    ctx.state.auditBefore = auditedDeal((await dealFor(services, ADMINISTRATOR, id)).snapshot);
  };

  api.route({
    ...reader,
    method: 'get',
    path: '/admin/deals',
    operationId: 'adminListDeals',
    summary: "Every marketplace's deals, newest first, searched by marketplace, status, external id, buyer and dates",
    query: AdminDealQuery,
    responses: {
      200: {
        description: '`{items, has_more}`',
        schema: z.object({ items: z.array(AdminDealListItem), has_more: z.boolean() }),
      },
    },
    handler: async (ctx, { query }) => {
      const page = await administratorDeals(services, dealFilter(query));
      ctx.body = { items: page.snapshots.map(adminDealListItem), has_more: page.hasMore };
    },
  });

  api.route({
    ...reader,
    method: 'get',
    path: '/admin/deals/{id}',
    operationId: 'adminGetDeal',
    summary: 'Any deal, with its webhook events and deliveries and its workflow in the Temporal Web UI',
    params: IdParams,
    responses: { 200: { description: 'The deal', schema: AdminDealView } },
    handler: async (ctx, { params }) => {
      const found = await administratorDeal(services, params.id);
      ctx.body = {
        ...adminDealListItem(found.snapshot),
        allowed_actions: found.actions,
        events: found.events.map(({ id: _id, ...event }) => event),
        deliveries: found.deliveries,
        temporal_url: found.temporalUrl,
      };
    },
  });

  api.route({
    ...reader,
    method: 'get',
    path: '/admin/disputes',
    operationId: 'adminListDisputes',
    summary: 'Disputes: the open ones oldest first (the queue), or the decided ones',
    query: DisputeQuery,
    responses: {
      200: {
        description: '`{items, has_more}`',
        schema: z.object({ items: z.array(DisputeQueueItem), has_more: z.boolean() }),
      },
    },
    handler: async (ctx, { query }) => {
      const page = await disputeQueue(services, {
        status: query.status,
        limit: query.limit,
        startingAfter: query.starting_after,
      });
      ctx.body = { items: page.items.map(disputeQueueItem), has_more: page.hasMore };
    },
  });

  api.route({
    tags: ['Administration'],
    security: ['adminToken'],
    // Also the console's download link: its sign-in cookie works here (a GET, so no CSRF token is needed).
    use: [bearerOrConsole(services)],
    method: 'get',
    path: '/admin/documents/{id}/content',
    operationId: 'adminDocumentContent',
    summary: "The bytes of any deal's document or dispute evidence file",
    description: 'Authorization: Bearer <administrator token>, or the console sign-in cookie.',
    params: IdParams,
    responses: { 200: { description: 'The file, with the content type it was uploaded with', contentType: '*/*' } },
    handler: async (ctx, { params }) => {
      const file = await fileFor(services, ADMINISTRATOR, params.id);
      ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`);
      ctx.set('Cache-Control', 'private, no-store');
      // Evidence comes from a party to a dispute: never let a browser run it as a page of this site.
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = file.content_type;
      ctx.body = file.body;
    },
  });

  for (const action of ['release', 'refund', 'dispute'] as const) {
    api.route({
      ...mover,
      method: 'post',
      path: `/admin/deals/{id}/escrow/${action}`,
      idempotent: idempotency(services),
      operationId: `adminEscrow${action[0].toUpperCase()}${action.slice(1)}`,
      summary: `Escrow: ${action} (any deal)`,
      description:
        (action === 'dispute'
          ? 'Opens a dispute for the buyer; `reason` is required.'
          : 'Never decides a dispute: a disputed payment moves only by the arbiter’s decision (/escrow/resolve with a ' +
            'reason); this answers 400 dispute_open then, also when the dispute opened while this request was on its way.') +
        ' Roles admin and arbiter.',
      params: IdParams,
      body: z.object({ reason: z.string().max(2000).default('') }).optional(),
      responses: { 200: { description: 'The payment after the move', schema: PaymentView } },
      handler: async (ctx, { params, body }) => {
        await before(ctx, params.id);
        ctx.body = paymentView(await moveEscrow(services, ADMINISTRATOR, params.id, action, body?.reason ?? ''));
      },
    });
  }

  api.route({
    ...mover,
    method: 'post',
    path: '/admin/deals/{id}/escrow/resolve',
    idempotent: idempotency(services),
    operationId: 'adminResolveDispute',
    summary: 'Decide a dispute as the arbiter: release to the seller, refund the buyer, or split, with the reason',
    description:
      'Roles admin and arbiter. `split` releases `release_amount` and refunds `refund_amount`, which add up to the held money, ' +
      "the release covering the marketplace's fee (400 invalid_refund_amount otherwise); a two-stage YooKassa payment cannot be split.",
    params: IdParams,
    body: z.object({
      outcome: z.enum(['release', 'refund', 'split']),
      reason: nonBlank(2000).describe('Both sides and the marketplace read it'),
      release_amount: Money.optional().describe('split only: to the seller (before the fee)'),
      refund_amount: Money.optional().describe('split only: back to the buyer'),
    }),
    responses: { 200: { description: 'The payment after the decision', schema: PaymentView } },
    handler: async (ctx, { params, body }) => {
      await before(ctx, params.id);
      const split =
        body.outcome === 'split' && body.release_amount !== undefined && body.refund_amount !== undefined
          ? { release_amount: body.release_amount, refund_amount: body.refund_amount }
          : undefined;
      ctx.body = paymentView(await resolveDispute(services, params.id, body.outcome, body.reason, split));
    },
  });

  api.route({
    ...mover,
    method: 'post',
    path: '/admin/deals/{id}/dispute/messages',
    operationId: 'adminDisputeMessage',
    summary: "The arbiter's message in the deal's open dispute",
    description: 'Roles admin and arbiter.',
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
    ...mover,
    method: 'post',
    path: '/admin/deals/{id}/cancel',
    idempotent: idempotency(services),
    operationId: 'adminCancelDeal',
    summary: 'Cancel any deal before money is held',
    description: 'Roles admin and arbiter.',
    params: IdParams,
    body: z.object({ reason: z.string().max(2000).default('') }).optional(),
    responses: { 200: { description: 'The full deal state, status cancelled', schema: DealView } },
    handler: async (ctx, { params, body }) => {
      await before(ctx, params.id);
      ctx.body = dealView(await cancelDeal(services, ADMINISTRATOR, params.id, body?.reason.trim() ?? ''));
    },
  });

  api.route({
    ...guard(INVITATION_SENDERS),
    method: 'post',
    path: '/admin/deals/{id}/invitation',
    operationId: 'adminResendInvitation',
    summary: "Mail the buyer's invitation again, as the deal's marketplace would",
    description:
      'A fresh invitation when the buyer has not set a password yet, otherwise a link to the deal. Counted with the ' +
      "marketplace's resends: at most 3 an hour per deal (429 too_many_invitations with Retry-After). Every role.",
    params: IdParams,
    responses: { 202: { description: 'The mail is on its way', schema: z.object({ ok: z.literal(true) }) } },
    handler: async (ctx, { params }) => {
      await administratorResendInvitation(services, params.id);
      ctx.status = 202;
      ctx.body = { ok: true };
    },
  });
}

/** The list query as the deal store's filter (the JSON operation and the console page share it). */
export function dealFilter(query: z.output<typeof AdminDealQuery>) {
  return {
    marketplaceId: query.marketplace_id,
    status: query.status,
    externalId: query.external_id,
    buyerEmail: query.buyer_email,
    createdGte: query.created_gte,
    createdLte: query.created_lte,
    limit: query.limit,
    startingAfter: query.starting_after,
  };
}

/** An administrator's bearer token, or else the console's sign-in cookie (for links on its pages). */
function bearerOrConsole(services: Services): Middleware {
  const bearer = requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN);
  return async (ctx, next) => {
    if (ctx.get('Authorization') || !consoleToken(ctx)) return bearer(ctx, next);
    const admin = await consoleAdmin(ctx, services);
    if (!admin) return bearer(ctx, next);
    ctx.state.admin = { actor: admin.actor, role: admin.role, administratorId: admin.administratorId };
    await next();
  };
}
