// The buyer cabinet's JSON operations (the web pages use the same ones): sign-in, invitations, approvals, deals,
// documents and escrow moves. A user sees only deals where they are the buyer or the approver (404 otherwise).
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { badRequest, notFound, unauthorized } from '../http/problem.ts';
import { EmailSchema, findLogin, personalOrganization, setPassword, type User } from '../accounts/users.ts';
import { MIN_PASSWORD_LENGTH, verifyPassword } from '../accounts/passwords.ts';
import { loadSnapshot } from '../deals/store.ts';
import { updateDeal } from '../deals/commands.ts';
import { ApprovalView, DealView, PaymentView, dealView, paymentView } from '../deals/views.ts';
import { decideUpdate, movePaymentUpdate, type PaymentAction } from '../../workflows/deal-messages.ts';
import { consumeInvitation } from './invitations.ts';
import { createSession, requireCabinetUser } from './sessions.ts';

const Session = z.object({ token: z.string().describe('The cabinet token (ct_…)'), expires_at: z.iso.datetime() });
const Password = z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200);
const IdParams = z.object({ id: z.string() });

/** Deals the user may see: as the buyer, or as the approver of one of its approvals. */
async function visibleDealIds(services: Services, user: User): Promise<string[]> {
  const result = await services.db.query<{ id: string }>(
    `SELECT id FROM deals WHERE lower(buyer_email) = lower($1)
     UNION SELECT deal_id FROM deal_approvals WHERE lower(approver) = lower($1)`,
    [user.email],
  );
  return result.rows.map((row) => row.id);
}

async function userDeal(services: Services, user: User, dealId: string) {
  const ids = z.uuid().safeParse(dealId).success ? await visibleDealIds(services, user) : [];
  if (!ids.includes(dealId)) throw notFound('No such deal.');
  return (await loadSnapshot(services.db, dealId))!;
}

export function cabinetRoutes(api: Api, services: Services): void {
  const { db, config } = services;
  const auth = requireCabinetUser(db);
  const signedIn = { tags: ['Cabinet'], security: ['cabinetToken'], use: [auth] };

  api.route({
    method: 'post',
    path: '/cabinet/login',
    operationId: 'cabinetLogin',
    summary: 'Sign in with e-mail and password',
    tags: ['Cabinet'],
    body: z.object({ email: EmailSchema, password: z.string().min(1).max(200) }),
    responses: { 200: { description: 'The cabinet token', schema: Session } },
    handler: async (ctx, { body }) => {
      const login = await findLogin(db, body.email);
      const valid = await verifyPassword(login?.password_hash ?? null, body.password);
      if (!login || !valid) throw unauthorized('The e-mail or the password is wrong.', 'Bearer realm="cabinet"');
      ctx.body = await createSession(db, login.id, config.CABINET_TOKEN_TTL_SECONDS);
    },
  });

  api.route({
    method: 'post',
    path: '/cabinet/invite/accept',
    operationId: 'acceptInvitation',
    summary: 'Set a password from an invitation link and sign in',
    tags: ['Cabinet'],
    body: z.object({ token: z.string().min(1).max(200), password: Password }),
    responses: { 200: { description: 'The cabinet token', schema: Session } },
    handler: async (ctx, { body }) => {
      const userId = await consumeInvitation(db, services.masterKey, body.token);
      if (!userId) throw badRequest('invalid_invitation', 'The invitation link is not valid, was already used or has expired. Ask for a new one.');
      await setPassword(db, userId, body.password);
      ctx.body = await createSession(db, userId, config.CABINET_TOKEN_TTL_SECONDS);
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
      const user = ctx.state.user as User;
      const org = (await personalOrganization(db, user.id))!;
      ctx.body = { svc_id: user.id, email: user.email, name: user.name, org: { id: org.id, name: org.name } };
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
      const user = ctx.state.user as User;
      const result = await db.query<{ id: string; deal_id: string }>(
        `SELECT id, deal_id FROM deal_approvals WHERE lower(approver) = lower($1) ORDER BY created_at DESC, id DESC LIMIT 200`,
        [user.email],
      );
      const items = [];
      for (const row of result.rows) {
        const deal = dealView((await loadSnapshot(db, row.deal_id))!);
        items.push({ ...deal.approvals.find((approval) => approval.id === row.id)!, deal });
      }
      ctx.body = { items };
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
        const user = ctx.state.user as User;
        const found = z.uuid().safeParse(params.id).success
          ? await db.query<{ deal_id: string }>('SELECT deal_id FROM deal_approvals WHERE id = $1 AND lower(approver) = lower($2)', [
              params.id,
              user.email,
            ])
          : { rows: [] };
        if (!found.rows[0]) throw notFound('No such approval.');
        const snapshot = (await loadSnapshot(db, found.rows[0].deal_id))!;
        ctx.body = await updateDeal(services, snapshot, decideUpdate, {
          approval_id: params.id,
          decision,
          comment: body.comment,
          actor: user.email,
        });
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
      const ids = await visibleDealIds(services, ctx.state.user as User);
      const snapshots = await Promise.all(ids.map((id) => loadSnapshot(db, id)));
      const items = snapshots.map((snapshot) => dealView(snapshot!));
      ctx.body = { items: items.sort((a, b) => b.created_at.localeCompare(a.created_at)) };
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
    method: 'get',
    path: '/cabinet/documents/{id}/content',
    operationId: 'cabinetDocumentContent',
    summary: 'The bytes of a document of one of my deals',
    params: IdParams,
    responses: { 200: { description: 'The file', contentType: 'application/octet-stream' } },
    handler: async (ctx, { params }) => {
      const user = ctx.state.user as User;
      const found = z.uuid().safeParse(params.id).success
        ? await db.query<{ deal_id: string; name: string; content_type: string; storage_key: string }>(
            'SELECT deal_id, name, content_type, storage_key FROM deal_documents WHERE id = $1',
            [params.id],
          )
        : { rows: [] };
      const document = found.rows[0];
      if (!document || !(await visibleDealIds(services, user)).includes(document.deal_id)) throw notFound('No such document.');
      ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(document.name)}`);
      ctx.set('Cache-Control', 'private, no-store');
      ctx.type = document.content_type;
      ctx.body = await services.documents.get(document.storage_key);
    },
  });

  for (const action of ['release', 'refund', 'dispute'] as const satisfies readonly PaymentAction[]) {
    api.route({
      ...signedIn,
      method: 'post',
      path: `/cabinet/deals/{id}/escrow/${action}`,
      operationId: `cabinetEscrow${action[0]!.toUpperCase()}${action.slice(1)}`,
      summary: { release: 'Release the held money to the seller', refund: 'Cancel and return the money', dispute: 'Open a dispute' }[action],
      params: IdParams,
      responses: { 200: { description: 'The payment after the move', schema: PaymentView } },
      handler: async (ctx, { params }) => {
        const user = ctx.state.user as User;
        const snapshot = await userDeal(services, user, params.id);
        if (snapshot.deal.buyer_email.toLowerCase() !== user.email.toLowerCase()) throw notFound('No such deal.');
        ctx.body = paymentView(await updateDeal(services, snapshot, movePaymentUpdate, { action, actor: 'buyer' }));
      },
    });
  }
}
