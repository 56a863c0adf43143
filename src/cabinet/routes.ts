// The buyer cabinet's JSON operations: sign-in, invitations, approvals, deals, documents and escrow moves. Each route
// is a thin shell over operations.ts, which the web pages (pages.ts) call too.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { EmailSchema, type User } from '../accounts/users.ts';
import { ApprovalView, DealView, PaymentView, dealView, paymentView } from '../deals/views.ts';
import {
  PAYMENT_ACTIONS,
  PasswordSchema,
  acceptInvitation,
  decideApproval,
  moveEscrow,
  profile,
  signInLimited,
  userApprovals,
  userDeal,
  userDeals,
  userDocument,
} from './operations.ts';
import { requireCabinetUser } from './sessions.ts';
import { bearerOrPageSession } from './web-session.ts';

const Session = z.object({ token: z.string().describe('The cabinet token (ct_…)'), expires_at: z.iso.datetime() });
const IdParams = z.object({ id: z.string() });

export function cabinetRoutes(api: Api, services: Services): void {
  const { db } = services;
  const signedIn = { tags: ['Cabinet'], security: ['cabinetToken'], use: [requireCabinetUser(db)] };

  api.route({
    method: 'post',
    path: '/cabinet/login',
    operationId: 'cabinetLogin',
    summary: 'Sign in with e-mail and password',
    tags: ['Cabinet'],
    body: z.object({ email: EmailSchema, password: z.string().min(1).max(200) }),
    description: 'Wrong passwords are limited per account and per address (429 too_many_attempts with Retry-After).',
    responses: { 200: { description: 'The cabinet token', schema: Session } },
    handler: async (ctx, { body }) => {
      ctx.body = await signInLimited(services, body.email, body.password, ctx.ip);
    },
  });

  api.route({
    method: 'post',
    path: '/cabinet/invite/accept',
    operationId: 'acceptInvitation',
    summary: 'Set a password from an invitation link and sign in',
    tags: ['Cabinet'],
    body: z.object({ token: z.string().min(1).max(200), password: PasswordSchema }),
    responses: { 200: { description: 'The cabinet token', schema: Session } },
    handler: async (ctx, { body }) => {
      ctx.body = await acceptInvitation(services, body.token, body.password);
    },
  });

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/me',
    operationId: 'cabinetMe',
    summary: 'The signed-in user',
    responses: {
      200: {
        description: 'The profile',
        schema: z.object({ svc_id: z.uuid(), email: z.string(), name: z.string(), org: z.object({ id: z.uuid(), name: z.string() }) }),
      },
    },
    handler: async (ctx) => {
      ctx.body = await profile(services, ctx.state.user as User);
    },
  });

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/approvals',
    operationId: 'cabinetApprovals',
    summary: 'Approvals addressed to me, newest first',
    responses: {
      200: {
        description: 'The approvals with their deals',
        schema: z.object({ items: z.array(ApprovalView.extend({ deal: DealView })) }),
      },
    },
    handler: async (ctx) => {
      const items = await userApprovals(services, ctx.state.user as User);
      ctx.body = { items: items.map(({ approval, snapshot }) => ({ ...approval, deal: dealView(snapshot) })) };
    },
  });

  for (const decision of ['approve', 'reject'] as const) {
    api.route({
      ...signedIn,
      method: 'post',
      path: `/cabinet/approvals/{id}/${decision}`,
      operationId: `${decision}Approval`,
      summary: decision === 'approve' ? 'Approve the deal terms' : 'Reject the deal terms',
      params: IdParams,
      body: z.object({ comment: z.string().max(2000).default('') }),
      responses: { 200: { description: 'The decided approval', schema: ApprovalView } },
      handler: async (ctx, { params, body }) => {
        ctx.body = await decideApproval(services, ctx.state.user as User, params.id, decision, body.comment);
      },
    });
  }

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/deals',
    operationId: 'cabinetDeals',
    summary: 'My deals, newest first',
    responses: { 200: { description: 'The deals', schema: z.object({ items: z.array(DealView) }) } },
    handler: async (ctx) => {
      ctx.body = { items: (await userDeals(services, ctx.state.user as User)).map(dealView) };
    },
  });

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/deals/{id}',
    operationId: 'cabinetDeal',
    summary: 'One of my deals',
    params: IdParams,
    responses: { 200: { description: 'The deal', schema: DealView } },
    handler: async (ctx, { params }) => {
      ctx.body = dealView(await userDeal(services, ctx.state.user as User, params.id));
    },
  });

  api.route({
    ...signedIn,
    // Also the web pages' download link: the page session cookie works here (a GET, so no CSRF token is needed).
    use: [bearerOrPageSession(services)],
    method: 'get',
    path: '/cabinet/documents/{id}/content',
    operationId: 'cabinetDocumentContent',
    summary: 'The bytes of a document of one of my deals',
    description: 'Authorization: Bearer <cabinet token>, or the cabinet web session cookie.',
    params: IdParams,
    responses: { 200: { description: 'The file', contentType: 'application/octet-stream' } },
    handler: async (ctx, { params }) => {
      const document = await userDocument(services, ctx.state.user as User, params.id);
      ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(document.name)}`);
      ctx.set('Cache-Control', 'private, no-store');
      ctx.type = document.content_type;
      ctx.body = document.body;
    },
  });

  for (const action of PAYMENT_ACTIONS) {
    api.route({
      ...signedIn,
      method: 'post',
      path: `/cabinet/deals/{id}/escrow/${action}`,
      operationId: `cabinetEscrow${action[0]!.toUpperCase()}${action.slice(1)}`,
      summary: { release: 'Release the held money to the seller', refund: 'Cancel and return the money', dispute: 'Open a dispute' }[action],
      params: IdParams,
      responses: { 200: { description: 'The payment after the move', schema: PaymentView } },
      handler: async (ctx, { params }) => {
        ctx.body = paymentView(await moveEscrow(services, ctx.state.user as User, params.id, action));
      },
    });
  }
}
