// The cabinet's JSON operations for buyers, sellers and approvers: sign-in and invitations (src/accounts/operations.ts), then
// approvals, deals, files, escrow moves and dispute messages, each a thin shell over the deal service
// (src/deals/service.ts), which the web pages (pages.ts) call too.
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { idempotency } from '../http/idempotency.ts';
import type { Services } from '../services.ts';
import { EmailSchema, type User } from '../accounts/users.ts';
import { Problem, problem } from '../http/problem.ts';
import { nonBlank } from '../http/text.ts';
import {
  ApprovalView,
  DealView,
  DisputeView,
  PaymentView,
  StoredDestinationView,
  dealView,
  paymentView,
} from '../deals/views.ts';
import { DEAL_VERBS, type PaymentAction } from '../deals/rules.ts';
import type { DisputeMessage } from '../deals/model.ts';
import {
  actionsFor,
  addDisputeMessage,
  approvalsOfUser,
  dealFor,
  dealsOfUser,
  decideApproval,
  fileFor,
  moveEscrow,
  payDeal,
  setSellerPayoutDestination,
  shipDeal,
  type DealActor,
} from '../deals/service.ts';
import { PayoutDestinationInput, sellerDestination } from '../money/destinations.ts';
import { PasswordSchema, acceptInvitation, profile, signInLimited } from '../accounts/operations.ts';
import {
  DisputeMessageForm,
  EVIDENCE_FILES_MAX,
  MESSAGE_FORM_LIMIT_BYTES,
  isPreviewable,
  parseMessageForm,
  readMessageFormValues,
} from './dispute-form.ts';
import { requireCabinetUser } from '../accounts/sessions.ts';
import { bearerOrPageSession } from '../web/session.ts';
import { mayChangePayouts, requireFactorForMoney } from '../mfa/escrow-policy.ts';
import { hadSecondFactor, type SignInFacts } from '../mfa/factors.ts';

const Session = z.object({ token: z.string().describe('The cabinet token (ct_…)'), expires_at: z.iso.datetime() });
const IdParams = z.object({ id: z.string() });
const Role = z.enum(['buyer', 'seller', 'approver']).describe("The user's part in the deal");
const CabinetDeal = DealView.extend({ role: Role });
const CabinetDealWithActions = CabinetDeal.extend({
  allowed_actions: z
    .array(z.enum(DEAL_VERBS))
    .describe('What the user may do now; a seller never gets pay, release, refund, dispute or approval'),
});
export const PAYMENT_ACTIONS = ['release', 'refund', 'dispute'] as const satisfies readonly PaymentAction[];
export const DISPUTE_REASON_MAX = 2000;
const DisputeReason = nonBlank(DISPUTE_REASON_MAX).describe(
  'Why the dispute is opened; the seller, the marketplace and the arbiter read it',
);

/**
 * A dispute without a reason (or with a blank one) is reason_required, as the deal service answers it, not a generic
 * validation failure: the messages recognised are the ones the schema itself gives a missing and a blank reason.
 */
const MISSING_REASON = new Set(
  [undefined, ' '].map((value) => DisputeReason.safeParse(value).error?.issues[0]?.message),
);
function reasonRequired(refused: Problem): Problem {
  const errors = refused.errors ?? [];
  const missing =
    refused.code === 'validation_failed' &&
    errors.length > 0 &&
    errors.every((e) => e.path === 'reason' && MISSING_REASON.has(e.message));
  return missing ? problem('reason_required', 'Say why you open the dispute: `reason` must not be empty.') : refused;
}

/** A message as the parties see it: where its files are stored stays inside. */
export function messageView(message: DisputeMessage) {
  return { ...message, files: message.files.map(({ id, name, size }) => ({ id, name, size })) };
}

const person = (ctx: { state: { user?: unknown } }) =>
  ({ kind: 'person', user: ctx.state.user as User }) satisfies DealActor;

/** What the buyer's Pay answers: where to pay (live), whether it is a test, and the deal as GET /cabinet/deals/{id} gives it. */
const PayResponse = z.object({
  payment_url: z
    .string()
    .nullable()
    .describe(
      "Live: the acquirer's payment page, which sends the buyer back to the deal's cabinet page. Null in sandbox: the money is already held",
    ),
  test: z.boolean().describe('True for a sandbox marketplace: the money is held at once and no real money moves'),
  deal: CabinetDealWithActions,
});

export function cabinetRoutes(api: Api, services: Services): void {
  const { db } = services;
  const signedIn = { tags: ['Cabinet'], security: ['cabinetToken'], use: [requireCabinetUser(db)] };
  /**
   * Where the marketplace or the operator requires it, money moves only in a session that gave a second factor. Checked
   * before the Idempotency-Key is claimed: the refusal is about the session, so the same key works after the step-up.
   */
  const factorForMoney: Middleware = async (ctx, next) => {
    const facts = ctx.state.signIn as SignInFacts | undefined;
    // A session that gave a second factor may move money wherever: no deal to read for its marketplace's rule.
    if (!facts || !hadSecondFactor(facts)) {
      const { snapshot } = await dealFor(services, person(ctx), String(ctx.params.id));
      await requireFactorForMoney(db, snapshot.deal.marketplace_id, facts);
    }
    await next();
  };
  const movesMoney = { ...signedIn, use: [...signedIn.use, factorForMoney] };
  const factorForPayouts: Middleware = async (ctx, next) => {
    if (!(await mayChangePayouts(db, ctx.state.user as User, ctx.state.signIn as SignInFacts | undefined)))
      throw problem(
        'second_factor_required',
        'A marketplace you sell in requires a second factor before your payout destination changes: give it ' +
          '(POST /cabinet/mfa/verify) and repeat the request.',
        { status: 403 },
      );
    await next();
  };

  api.route({
    method: 'post',
    path: '/cabinet/login',
    operationId: 'cabinetLogin',
    summary: 'Sign in with e-mail and password',
    tags: ['Cabinet'],
    body: z.object({
      email: EmailSchema,
      password: z.string().min(1).max(200),
      code: z
        .string()
        .min(1)
        .max(40)
        .optional()
        .describe('For an account with a second factor: the authenticator app’s 6 digits, or a recovery code'),
    }),
    description:
      'Wrong passwords (and wrong codes) are limited per account and per address (429 too_many_attempts with ' +
      'Retry-After). An account with a second factor needs `code` too: 401 second_factor_required without it, 401 ' +
      'wrong_second_factor when it is wrong or used. A passkey signs in on the cabinet’s page.',
    responses: { 200: { description: 'The cabinet token', schema: Session } },
    handler: async (ctx, { body }) => {
      ctx.body = await signInLimited(services, body.email, body.password, ctx.ip, ctx.get('User-Agent'), body.code);
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
      ctx.body = await acceptInvitation(services, body.token, body.password, ctx.get('User-Agent'));
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
        schema: z.object({
          svc_id: z.uuid(),
          email: z.string(),
          name: z.string(),
          org: z.object({ id: z.uuid(), name: z.string() }),
        }),
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
      const items = await approvalsOfUser(services, ctx.state.user as User);
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
    summary: 'My deals, as buyer, seller or approver, newest first',
    responses: {
      200: { description: 'The deals, each with my part in it', schema: z.object({ items: z.array(CabinetDeal) }) },
    },
    handler: async (ctx) => {
      const deals = await dealsOfUser(services, ctx.state.user as User);
      ctx.body = { items: deals.map(({ snapshot, role }) => ({ ...dealView(snapshot), role })) };
    },
  });

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/deals/{id}',
    operationId: 'cabinetDeal',
    summary: 'One of my deals, with my part in it and what I may do now',
    params: IdParams,
    responses: { 200: { description: 'The deal', schema: CabinetDealWithActions } },
    handler: async (ctx, { params }) => {
      const actor = person(ctx);
      const { snapshot, role } = await dealFor(services, actor, params.id);
      ctx.body = { ...dealView(snapshot), role, allowed_actions: actionsFor(snapshot, role, actor) };
    },
  });

  api.route({
    ...signedIn,
    // Also the web pages' download link: the page session cookie works here (a GET, so no CSRF token is needed).
    use: [bearerOrPageSession(services)],
    method: 'get',
    path: '/cabinet/documents/{id}/content',
    operationId: 'cabinetDocumentContent',
    summary: "The bytes of a document or of a dispute's evidence file of one of my deals",
    description:
      'Authorization: Bearer <cabinet token>, or the cabinet web session cookie. `view=inline` shows a photo (PNG, ' +
      'JPEG, GIF, WebP) in the browser instead of downloading it; any other file is downloaded all the same.',
    params: IdParams,
    query: z.object({
      view: z.enum(['inline']).optional().describe('`inline`: a photo is shown, not downloaded (the pages preview it)'),
    }),
    responses: { 200: { description: 'The file, with the content type it was uploaded with', contentType: '*/*' } },
    handler: async (ctx, { params, query }) => {
      const file = await fileFor(services, person(ctx), params.id);
      // Only raster photos are shown inline: a browser renders them as images only (an SVG, HTML or PDF could run
      // script or plugins as a page of this site), and their own policy forbids everything else.
      const inline = query.view === 'inline' && isPreviewable(file.content_type);
      ctx.set(
        'Content-Disposition',
        `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(file.name)}`,
      );
      if (inline) ctx.set('Content-Security-Policy', "default-src 'none'; img-src 'self'; sandbox");
      ctx.set('Cache-Control', 'private, no-store');
      // Evidence comes from the other side of a dispute: never let a browser run it as a page of this site.
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = file.content_type;
      ctx.body = file.body;
    },
  });

  for (const action of PAYMENT_ACTIONS) {
    const summary = {
      release: 'Release the held money to the seller',
      refund: 'Cancel and return the money',
      dispute: 'Open a dispute',
    }[action];
    api.route({
      ...(action === 'dispute' ? signedIn : movesMoney),
      method: 'post',
      path: `/cabinet/deals/{id}/escrow/${action}`,
      idempotent: idempotency(services),
      operationId: `cabinetEscrow${action[0].toUpperCase()}${action.slice(1)}`,
      summary,
      description:
        action === 'dispute'
          ? 'The buyer only. The money stays held until the arbiter decides; 400 reason_required without a reason.'
          : 'The buyer only (404 for anyone else). Takes no body. 403 second_factor_required when the marketplace or the ' +
            'operator requires a second factor and this session gave none.',
      params: IdParams,
      ...(action === 'dispute' ? { body: z.object({ reason: DisputeReason }), mapProblem: reasonRequired } : {}),
      responses: { 200: { description: 'The payment after the move', schema: PaymentView } },
      handler: async (ctx, { params, body }) => {
        const reason = (body as { reason?: string } | undefined)?.reason ?? '';
        ctx.body = paymentView(await moveEscrow(services, person(ctx), params.id, action, reason));
      },
    });
  }

  api.route({
    ...signedIn,
    method: 'get',
    path: '/cabinet/payout-destination',
    operationId: 'cabinetPayoutDestination',
    summary: 'Where my payouts as a seller go (null until I give one)',
    responses: {
      200: {
        description: 'The destination as pages show it',
        schema: z.object({ destination: StoredDestinationView.nullable() }),
      },
    },
    handler: async (ctx) => {
      ctx.body = { destination: (await sellerDestination(services.db, (ctx.state.user as User).id)) ?? null };
    },
  });

  api.route({
    ...signedIn,
    use: [...signedIn.use, factorForPayouts],
    method: 'put',
    path: '/cabinet/payout-destination',
    idempotent: idempotency(services),
    operationId: 'cabinetSetPayoutDestination',
    summary: 'Where to pay me as a seller, in every deal I sell in',
    description:
      'Sandbox deals pay out to a test card: `{type: "test_card", token: "4111111111111111"}` succeeds, `4000000000000002` ' +
      "is declined. Live deals: `bank_card` with the synonym of YooKassa's payout widget, or `yoo_money` with a wallet " +
      'number (400 payout_destination_invalid otherwise). The token is kept encrypted and never shown again. Each of my ' +
      'deals whose payout waited for a destination, or failed, is paid out again. 403 second_factor_required when the ' +
      'operator or a marketplace I sell in requires a second factor and this session gave none.',
    body: PayoutDestinationInput,
    responses: { 200: { description: 'The destination as pages show it', schema: StoredDestinationView } },
    handler: async (ctx, { body }) => {
      ctx.body = await setSellerPayoutDestination(services, ctx.state.user as User, body);
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/deals/{id}/shipment',
    operationId: 'cabinetShip',
    summary: 'As the seller: mark the order shipped',
    description:
      'The seller only (404 for anyone else), while the money is held, once (400 invalid_delivery_state otherwise).',
    params: IdParams,
    body: z.object({ carrier: z.string().max(100).default(''), tracking: z.string().max(100).default('') }).optional(),
    responses: { 200: { description: 'The full deal state', schema: DealView } },
    handler: async (ctx, { params, body }) => {
      ctx.body = dealView(
        await shipDeal(services, person(ctx), params.id, {
          carrier: body?.carrier.trim() ?? '',
          tracking: body?.tracking.trim() ?? '',
        }),
      );
    },
  });

  api.route({
    ...movesMoney,
    method: 'post',
    path: '/cabinet/deals/{id}/pay',
    idempotent: idempotency(services),
    operationId: 'cabinetPay',
    summary: 'Pay for the deal: hold its full amount in escrow until the buyer releases it',
    description:
      'The buyer only (404 for anyone else), once the terms are approved (400 deal_not_approved before; 400 ' +
      'invalid_payment_state once the money is held, so a second sandbox Pay is refused and pays nothing). Takes no body. ' +
      "Live: the acquirer's payment page in `payment_url`; while that payment is pending, a repeat answers the same page " +
      'and makes no second payment; the deal is `escrow_hold` once the acquirer says the buyer paid. Sandbox: the money ' +
      'is held at once (`test: true`, status `escrow_hold`, `payment_url` null).',
    params: IdParams,
    responses: { 200: { description: 'Where to pay (live), or the deal held (sandbox)', schema: PayResponse } },
    handler: async (ctx, { params }) => {
      const { payment, snapshot, role, actions } = await payDeal(services, person(ctx), params.id);
      ctx.body = {
        payment_url: payment.payment_url,
        test: payment.provider === 'sandbox',
        deal: { ...dealView(snapshot), role, allowed_actions: actions },
      };
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/deals/{id}/dispute/messages',
    operationId: 'cabinetDisputeMessage',
    summary: "A message with evidence files in the deal's open dispute",
    description:
      `By the buyer or the seller; 400 no_open_dispute when the deal has none. multipart/form-data: \`text\`, and \`files\` ` +
      `repeated for up to ${EVIDENCE_FILES_MAX} files; 413 when the whole form is above ${Math.floor(MESSAGE_FORM_LIMIT_BYTES / 1024 / 1024)} MiB.`,
    params: IdParams,
    rawBody: {
      contentType: 'multipart/form-data',
      description: 'The message and its evidence',
      schema: DisputeMessageForm,
    },
    bodyLimitBytes: MESSAGE_FORM_LIMIT_BYTES,
    responses: { 201: { description: 'The message', schema: DisputeView.shape.messages.element } },
    handler: async (ctx, { params }) => {
      const actor = person(ctx);
      // The deal first: a request for a deal that is not the user's is 404 before its body is read.
      await dealFor(services, actor, params.id);
      const input = parseMessageForm(await readMessageFormValues(ctx));
      ctx.status = 201;
      ctx.body = messageView(await addDisputeMessage(services, actor, params.id, input));
    },
  });
}
