// The cabinet's web pages for buyers, sellers and approvers: server-rendered HTML over the same operations as the
// JSON routes (src/accounts/operations.ts for the account, the deal service for deals), working with JavaScript off. Forms post
// urlencoded bodies (multipart for a dispute message with files) with a CSRF token and answer 303
// (post/redirect/get); errors become pages in the reader's language, never JSON. Money moves only from a page that
// says what will happen: a confirmation page for release, refund and dispute; the deal page's Pay, with its line.
import { readFileSync } from 'node:fs';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import { notFound, Problem, problem } from '../http/problem.ts';
import { problemStatus } from '../http/problem-catalog.ts';
import { STYLESHEET_PATH } from '../web/layout.ts';
import {
  COMMENT_MAX,
  PAYOUTS_PATH,
  SHIP_FIELD_MAX,
  confirmBody,
  dealBody,
  destinationWords,
  homeBody,
  inviteBody,
  inviteInvalidBody,
  type InvitedDeal,
  payoutsBody,
  shipConfirmBody,
  signInBody,
  type HomeDealFilter,
} from './page-views.ts';
import { pagePlace, pager, queryText } from '../admin/console-kit.ts';
import { DEAL_STATUSES, dealStatus } from '../deals/model.ts';
import { tokenUserId } from '../accounts/tokens.ts';
import { findUserById } from '../accounts/users.ts';
import { passwordProblem } from '../accounts/pages.ts';
import { accountTranslator } from '../accounts/i18n.ts';
import { acceptInvitation, limitedByAccount, passwordStep, type Session } from '../accounts/operations.ts';
import { secondFactorHref, startPendingSignIn } from '../mfa/pending.ts';
import { mfaTranslator } from '../mfa/i18n.ts';
import { mayChangePayouts, mayMoveMoney, moneyFactorPolicy, moneyNeedsFactor } from '../mfa/escrow-policy.ts';
import { hadSecondFactor } from '../mfa/factors.ts';
import { VERIFY_PATH } from '../mfa/page-views.ts';
import {
  actionsFor,
  addDisputeMessage,
  approvalsOfUser,
  dealFor,
  dealsOfUser,
  decideApproval,
  moveEscrow,
  payDeal,
  setSellerPayoutDestination,
  shipDeal,
  type DealActor,
} from '../deals/service.ts';
import { payoutView } from '../deals/views.ts';
import { DESTINATION_TYPES, sellerDestination } from '../money/destinations.ts';
import { findMarketplace } from '../marketplaces/marketplaces.ts';
import { paymentPageOrigins, providerFor } from '../escrow/providers.ts';
import { refusal, roleMay, type PaymentAction } from '../deals/rules.ts';
import { dealOfApproval, dealsOfPerson, loadSnapshot } from '../deals/store.ts';
import { DISPUTE_REASON_MAX as REASON_MAX, PAYMENT_ACTIONS } from './routes.ts';
import {
  EVIDENCE_FILE_LIMIT_BYTES,
  EVIDENCE_FILES_MAX,
  MESSAGE_TEXT_MAX,
  parseMessageForm,
  readMessageFormValues,
} from './dispute-form.ts';
import {
  endPageSession,
  pageUser,
  preSessionCsrf,
  sameToken,
  startPageSession,
  validPreSessionCsrf,
} from '../web/session.ts';
import {
  csrfFailed,
  page,
  problemWords,
  readForm,
  redirect,
  safeNext,
  send,
  signedInForm,
  signedInOrRedirect,
  type Page,
  type SignedIn,
} from '../web/page.ts';

/** Deals on a page of the cabinet's home. */
const HOME_DEALS = 10;
const STYLESHEET = readFileSync(new URL('./cabinet.css', import.meta.url), 'utf8');
const DONE = {
  approve: 'approved',
  reject: 'rejected',
  pay: 'test_payment_held',
  release: 'released',
  refund: 'refunded',
  dispute: 'disputed',
  message: 'message_sent',
  ship: 'shipped',
} as const;
const person = (signed: SignedIn) => ({ kind: 'person', user: signed.user }) satisfies DealActor;

export function cabinetPages(api: Api, services: Services): void {
  const router = api.router;
  const base = () => services.config.BASE_URL; // read per request: tests and proxies set it after start

  router.get(STYLESHEET_PATH, (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = STYLESHEET;
  });

  router.get(
    '/cabinet/sign-in',
    page(services, async (p) => {
      const next = safeNext(p.ctx.query.next, base());
      if (await pageUser(p.ctx, services)) return redirect(p.ctx, next);
      const signedOut = p.ctx.query.signed_out;
      const notice =
        signedOut === 'everywhere'
          ? accountTranslator(p.lang)('signedOutEverywhere')
          : signedOut
            ? p.t('signedOut')
            : undefined;
      // Back from the second page after its ten minutes ran out.
      const error = p.ctx.query.expired ? mfaTranslator(p.lang)('secondExpired') : undefined;
      const csrf = preSessionCsrf(p.ctx, services);
      send(p, 200, p.t('signInTitle'), signInBody(p, { email: '', next, csrf, notice, error }));
    }),
  );

  router.post(
    '/cabinet/sign-in',
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const next = safeNext(form.get('next'), base());
      const email = (form.get('email') ?? '').slice(0, 320);
      const password = form.get('password') ?? '';
      const userAgent = p.ctx.get('User-Agent');
      let step: Awaited<ReturnType<typeof passwordStep>>;
      try {
        if (password.length > 200) throw problem('unauthorized', 'Wrong credentials.');
        step = await limitedByAccount(services, email, p.ctx.ip, () =>
          passwordStep(services, email, password, userAgent),
        );
      } catch (error) {
        if (!(error instanceof Problem) || (error.status !== 401 && error.status !== 429)) throw error;
        const limited = error.status === 429;
        if (limited) p.ctx.set('Retry-After', error.headers['Retry-After']);
        const minutes = Math.ceil(Number(error.headers['Retry-After']) / 60);
        const message = limited ? p.t('tooManyAttempts', { minutes }) : p.t('wrongCredentials');
        const body = signInBody(p, { email, next, csrf: preSessionCsrf(p.ctx, services), error: message });
        return send(p, error.status, p.t('signInTitle'), body, '/cabinet/sign-in');
      }
      // An account with a second factor: the second page asks for it, then goes on to `next`.
      if ('secondFactor' in step) {
        await startPendingSignIn(p.ctx, services, step.secondFactor.userId, userAgent);
        return redirect(p.ctx, secondFactorHref(next));
      }
      await startPageSession(p.ctx, services, step.session);
      redirect(p.ctx, next);
    }),
  );

  router.get(
    '/cabinet/invite',
    page(services, async (p) => {
      const token = typeof p.ctx.query.token === 'string' ? p.ctx.query.token : '';
      const userId = await tokenUserId(services.db, services.masterKey, 'invitation', token);
      if (!userId) return invalidInvitation(p);
      const deal = await invitedDeal(services, userId);
      send(p, 200, p.t('inviteTitle'), inviteBody(p, { token, csrf: preSessionCsrf(p.ctx, services), deal }));
    }),
  );

  router.post(
    '/cabinet/invite',
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      if (!validPreSessionCsrf(p.ctx, services, form.get('_csrf') ?? undefined)) throw csrfFailed();
      const token = form.get('token') ?? '';
      const userId = await tokenUserId(services.db, services.masterKey, 'invitation', token);
      if (!userId) return invalidInvitation(p);
      const deal = await invitedDeal(services, userId);
      const password = form.get('password') ?? '';
      const problem = passwordProblem(p.t, password, form.get('password_confirm') ?? '');
      if (problem) {
        const body = inviteBody(p, { token, csrf: preSessionCsrf(p.ctx, services), error: problem, deal });
        return send(p, 400, p.t('inviteTitle'), body, `/cabinet/invite?token=${encodeURIComponent(token)}`);
      }
      let session: Session;
      try {
        session = await acceptInvitation(services, token, password, p.ctx.get('User-Agent'));
      } catch (error) {
        if (error instanceof Problem && error.code === 'invalid_invitation') return invalidInvitation(p); // used meanwhile
        throw error;
      }
      await startPageSession(p.ctx, services, session);
      // Back to the deal the invitation was about, which is why the person came.
      redirect(p.ctx, deal ? `/cabinet/view/deals/${deal.id}` : '/cabinet');
    }),
  );

  router.post(
    '/cabinet/sign-out',
    page(services, async (p) => {
      const form = await readForm(p.ctx);
      const signed = await pageUser(p.ctx, services);
      if (signed && !sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
      await endPageSession(p.ctx, services);
      redirect(p.ctx, '/cabinet/sign-in?signed_out=1');
    }),
  );

  router.get(
    '/cabinet',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const [approvals, deals] = await Promise.all([
        approvalsOfUser(services, signed.user),
        dealsOfUser(services, signed.user),
      ]);
      // Pending first; otherwise newest first as the service returns them (sort is stable).
      approvals.sort((a, b) => Number(b.approval.status === 'pending') - Number(a.approval.status === 'pending'));
      const filter: HomeDealFilter = {
        q: queryText(p.ctx.query, 'q', 200),
        status: DEAL_STATUSES.find((status) => status === p.ctx.query.status) ?? '',
        role: (['buyer', 'seller'] as const).find((role) => role === p.ctx.query.role) ?? '',
      };
      const words = filter.q.toLowerCase();
      const matching = deals.filter(
        ({ snapshot, role }) =>
          (!filter.status || dealStatus(snapshot) === filter.status) &&
          (!filter.role || role === filter.role) &&
          (!words ||
            snapshot.deal.title.toLowerCase().includes(words) ||
            snapshot.deal.external_id.toLowerCase().includes(words)),
      );
      // A person's deals are read whole (the service lists them so); the page is cut after the cursor's deal, and a
      // cursor no longer among them starts from the first.
      const place = pagePlace(p.ctx.query, isUuid);
      const start = place.after ? matching.findIndex(({ snapshot }) => snapshot.deal.id === place.after) + 1 : 0;
      const shown = matching.slice(start, start + HOME_DEALS);
      const pages = pager(p.lang, {
        path: '/cabinet',
        filters: filter,
        place,
        last: start + HOME_DEALS < matching.length ? shown.at(-1)!.snapshot.deal.id : undefined,
        hash: '#deals',
      });
      // Only a buyer or an approver approves: a seller with nothing to approve is not shown an empty section.
      const approves = approvals.length > 0 || deals.some(({ role }) => role !== 'seller');
      const body = homeBody(p, { approvals, deals: shown, approves, filter, pages, csrf: signed.csrf });
      send(p, 200, p.t('homeTitle'), body, undefined, signed);
    }),
  );

  router.get(
    '/cabinet/view/deals/:id',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const done = Object.values(DONE).find((value) => value === p.ctx.query.done);
      await dealPage(p, services, signed, p.ctx.params.id, 200, { notice: done && p.t(`done_${done}`) });
    }),
  );

  for (const decision of ['approve', 'reject'] as const) {
    router.post(
      `/cabinet/view/approvals/:id/${decision}`,
      page(services, async (p) => {
        const posted = await signedInForm(p, services, '/cabinet');
        if (!posted) return;
        const { form, signed } = posted;
        const approvalId = p.ctx.params.id!;
        const dealId = await dealOfApprovalFor(services, signed, approvalId);
        // Checked here too: a post without the tick (a script, an old page) approves nothing and says why.
        if (decision === 'approve' && form.get('read_contract') !== 'yes') {
          return dealPage(p, services, signed, dealId, 400, { error: p.t('readContractRequired') });
        }
        const comment = decision === 'reject' ? (form.get('comment') ?? '').trim() : '';
        if (comment.length > COMMENT_MAX) {
          return dealPage(p, services, signed, dealId, 400, { error: p.t('commentTooLong', { max: COMMENT_MAX }) });
        }
        await orDealPage(
          p,
          services,
          signed,
          dealId,
          () => decideApproval(services, signed.user, approvalId, decision, comment),
          DONE[decision],
        );
      }),
    );
  }

  for (const action of PAYMENT_ACTIONS) {
    const path = `/cabinet/view/deals/:id/escrow/${action}`;
    // The confirmation: what the move does, in words; nothing moves until its form is sent.
    router.get(
      path,
      page(services, async (p) => {
        const signed = await signedInOrRedirect(p, services);
        if (!signed) return;
        if (action !== 'dispute' && !(await factorOrVerify(p, services, signed, p.ctx.params.id, p.ctx.path))) return;
        await confirmPage(p, services, signed, p.ctx.params.id, action, 200, {});
      }),
    );

    router.post(
      path,
      page(services, async (p) => {
        const dealId = p.ctx.params.id!;
        const posted = await signedInForm(p, services, `/cabinet/view/deals/${encodeURIComponent(dealId)}`);
        if (!posted) return;
        const { form, signed } = posted;
        const confirmation = `/cabinet/view/deals/${encodeURIComponent(dealId)}/escrow/${action}`;
        if (action !== 'dispute' && !(await factorOrVerify(p, services, signed, dealId, confirmation))) return;
        // Only the confirmation page's form moves money; a form from anywhere else gets that page first.
        if (form.get('confirmed') !== 'yes') return confirmPage(p, services, signed, dealId, action, 200, {});
        const reason = action === 'dispute' ? (form.get('reason') ?? '').trim() : '';
        if (action === 'dispute' && (reason === '' || reason.length > REASON_MAX)) {
          const error = reason === '' ? p.t('reason_required') : p.t('reasonTooLong', { max: REASON_MAX });
          return confirmPage(p, services, signed, dealId, action, 400, { reason, error });
        }
        await orDealPage(
          p,
          services,
          signed,
          dealId,
          () => moveEscrow(services, person(signed), dealId, action, reason),
          DONE[action],
        );
      }),
    );
  }

  // The buyer's Pay: live, 303 to the acquirer's payment page (the one still pending, when there is one), which sends the
  // buyer back to the deal's page; sandbox, back to the deal's page with the money held and a notice that it was a test.
  router.post(
    '/cabinet/view/deals/:id/pay',
    page(services, async (p) => {
      const dealId = p.ctx.params.id!;
      const posted = await signedInForm(p, services, `/cabinet/view/deals/${encodeURIComponent(dealId)}`);
      if (!posted) return;
      const { signed } = posted;
      const dealPath = `/cabinet/view/deals/${encodeURIComponent(dealId)}`;
      if (!(await factorOrVerify(p, services, signed, dealId, dealPath))) return;
      await orDealPage(
        p,
        services,
        signed,
        dealId,
        () => payDeal(services, person(signed), dealId),
        ({ payment, snapshot }) => {
          if (payment.payment_url && /^https?:\/\//.test(payment.payment_url)) return payment.payment_url;
          const dealPath = `/cabinet/view/deals/${snapshot.deal.id}`;
          return payment.provider === 'sandbox' ? `${dealPath}?done=${DONE.pay}` : dealPath;
        },
        (refused) => (refused.code === 'invalid_payment_state' ? p.t('alreadyHeld') : undefined),
      );
    }),
  );

  // The seller's shipment: the deal page's form GETs this confirmation with the carrier and tracking number filled in;
  // only the confirmation's own form (confirmed=yes) marks the order shipped, which cannot be undone.
  router.get(
    '/cabinet/view/deals/:id/shipment',
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const field = (name: string) => (typeof p.ctx.query[name] === 'string' ? String(p.ctx.query[name]).trim() : '');
      await shipConfirmPage(p, services, signed, p.ctx.params.id, {
        carrier: field('carrier'),
        tracking: field('tracking'),
      });
    }),
  );

  router.post(
    '/cabinet/view/deals/:id/shipment',
    page(services, async (p) => {
      const dealId = p.ctx.params.id!;
      const posted = await signedInForm(p, services, `/cabinet/view/deals/${encodeURIComponent(dealId)}`);
      if (!posted) return;
      const { form, signed } = posted;
      const fields = { carrier: (form.get('carrier') ?? '').trim(), tracking: (form.get('tracking') ?? '').trim() };
      if (form.get('confirmed') !== 'yes' || tooLongShipment(fields))
        return shipConfirmPage(p, services, signed, dealId, fields);
      await orDealPage(
        p,
        services,
        signed,
        dealId,
        () => shipDeal(services, person(signed), dealId, fields),
        DONE.ship,
      );
    }),
  );

  router.get(
    PAYOUTS_PATH,
    page(services, async (p) => {
      const signed = await signedInOrRedirect(p, services);
      if (!signed) return;
      const saved = p.ctx.query.done === 'payout_saved';
      await payoutsPage(p, services, signed, 200, saved ? { saved: true } : {});
    }),
  );

  // A payout destination is reversible (a new one replaces it), so it is saved without a confirmation; the service
  // pays out again each deal of the seller's that waited for one or whose payout failed.
  router.post(
    PAYOUTS_PATH,
    page(services, async (p) => {
      const posted = await signedInForm(p, services, PAYOUTS_PATH);
      if (!posted) return;
      const { form, signed } = posted;
      // Where the money goes is a money move too: the step-up first where it is required, back to this page.
      if (!(await mayChangePayouts(services.db, signed.user, await pageUser(p.ctx, services))))
        return redirect(p.ctx, `${VERIFY_PATH}?next=${encodeURIComponent(PAYOUTS_PATH)}`);
      const type = DESTINATION_TYPES.find((known) => known === form.get('type'));
      if (!type) return payoutsPage(p, services, signed, 400, { error: p.t('badForm') });
      const given = (form.get('token') ?? '').trim();
      // People copy card numbers with spaces or dashes between the groups; a test card is its digits.
      const token = type === 'test_card' ? given.replace(/[\s-]/g, '') : given;
      // Only a test card is written back into the form: a live token or a wallet number is not shown again.
      const again = type === 'test_card' ? { type, token: given.slice(0, 23) } : { type, token: '' };
      if (token === '') return payoutsPage(p, services, signed, 400, { error: p.t('payoutEmpty'), form: again });
      // A live card is given as the payout widget's token, never by its number: a number typed here is not kept.
      if (type === 'bank_card' && /^\d{12,19}$/.test(token.replace(/[\s-]/g, ''))) {
        return payoutsPage(p, services, signed, 400, { error: p.t('payoutCardNumber'), form: again });
      }
      try {
        if (token.length > 200) throw problem('payout_destination_invalid', 'The token is at most 200 characters.');
        await setSellerPayoutDestination(services, signed.user, { type, token });
      } catch (error) {
        if (!(error instanceof Problem) || error.code !== 'payout_destination_invalid') throw error;
        return payoutsPage(p, services, signed, 400, { error: p.t(`payoutBad_${type}`), form: again });
      }
      redirect(p.ctx, `${PAYOUTS_PATH}?done=payout_saved`);
    }),
  );

  router.post(
    '/cabinet/view/deals/:id/dispute/messages',
    page(services, async (p) => {
      const dealId = p.ctx.params.id!;
      // Signed in and the deal theirs before a body of up to 25 MiB is read.
      const signed = await signedInOrRedirect(p, services, `/cabinet/view/deals/${encodeURIComponent(dealId)}`);
      if (!signed) return;
      await dealFor(services, person(signed), dealId);
      let values: Record<string, unknown>;
      try {
        values = await readMessageFormValues(p.ctx);
      } catch (error) {
        if (error instanceof Problem && error.status === 413)
          return dealPage(p, services, signed, dealId, 413, { error: p.t('payload_too_large') });
        throw error;
      }
      const { _csrf: csrf, ...fields } = values;
      if (!sameToken(signed.csrf, typeof csrf === 'string' ? csrf : undefined)) throw csrfFailed();
      await orDealPage(
        p,
        services,
        signed,
        dealId,
        async () => addDisputeMessage(services, person(signed), dealId, parseMessageForm(fields)),
        DONE.message,
      );
    }),
  );
}

/**
 * Runs a deal change; on success 303 to the deal page with a notice (or where `done` says from the change's result), on
 * a refusal the deal page with its words (`words` may put a refusal of this change better).
 */
async function orDealPage<T>(
  p: Page,
  services: Services,
  signed: SignedIn,
  dealId: string,
  change: () => Promise<T>,
  done: string | ((result: T) => string),
  words?: (refused: Problem) => string | undefined,
) {
  let result: T;
  try {
    result = await change();
  } catch (error) {
    // A 404 stays a 404 page: the deal or the approval is not the user's.
    if (!(error instanceof Problem) || error.status === 404) throw error;
    for (const [name, value] of Object.entries(error.headers)) p.ctx.set(name, value);
    return dealPage(p, services, signed, dealId, error.status, { error: words?.(error) ?? changeWords(p, error) });
  }
  redirect(p.ctx, typeof done === 'string' ? `/cabinet/view/deals/${dealId}?done=${done}` : done(result));
}

/** The deal of an approval in a deal the user may see (the page to answer on), or 404. */
async function dealOfApprovalFor(services: Services, signed: SignedIn, approvalId: string): Promise<string> {
  const dealId = isUuid(approvalId) ? await dealOfApproval(services.db, approvalId) : undefined;
  if (!dealId) throw notFound('No such approval.');
  return (await dealFor(services, person(signed), dealId)).snapshot.deal.id;
}

/** A refusal in words; a dispute message's invalid fields each have their own (browsers' own checks catch most first). */
function changeWords(p: Page, problem: Problem): string {
  const first = problem.code === 'validation_failed' ? problem.errors?.[0] : undefined;
  const tooBig = first !== undefined && /too big/i.test(first.message);
  if (first?.path === 'text') return tooBig ? p.t('messageTooLong', { max: MESSAGE_TEXT_MAX }) : p.t('messageEmpty');
  if (first?.path === 'files' && tooBig) return p.t('tooManyFiles', { count: EVIDENCE_FILES_MAX });
  if (first?.path.startsWith('files.') && first.message.includes('MiB'))
    return p.t('fileTooLarge', { size: EVIDENCE_FILE_LIMIT_BYTES / 1024 / 1024 });
  return refusalWords(p, problem);
}

/** Refusals of the money and delivery rules that a buyer or a seller meets only here, in words; the rest as every page says them. */
const DEAL_REFUSALS = new Set(['shipped_dispute_instead', 'invalid_delivery_state'] as const);
function refusalWords(p: Page, problem: { code: string; status: number }): string {
  const code = [...DEAL_REFUSALS].find((known) => known === problem.code);
  return code ? p.t(code) : problemWords(p.t, problem);
}

async function dealPage(
  p: Page,
  services: Services,
  signed: SignedIn,
  dealId: string,
  status: number,
  words: { error?: string; notice?: string },
) {
  const actor = person(signed);
  const { snapshot, role } = await dealFor(services, actor, dealId);
  const actions = actionsFor(snapshot, role, actor);
  // Named on the page: the person dealt with the shop, and the deal is the shop's.
  const marketplace = await findMarketplace(services.db, snapshot.deal.marketplace_id);
  let sandbox = false;
  if (actions.includes('pay')) {
    // The Pay form's 303 leads to the acquirer's page: the page's form-action must let it through.
    const provider = marketplace && providerFor(marketplace);
    const pendingUrl = snapshot.payments.find((payment) => payment.status === 'pending')?.payment_url;
    const pendingOrigin = pendingUrl && /^https?:\/\//.test(pendingUrl) ? [new URL(pendingUrl).origin] : [];
    allowFormTargets(p, [...(provider ? paymentPageOrigins(provider, services.config) : []), ...pendingOrigin]);
    sandbox = provider === 'sandbox' && pendingOrigin.length === 0;
  }
  const body = dealBody(p, {
    snapshot,
    role,
    actions,
    csrf: signed.csrf,
    sandbox,
    marketplace: marketplace?.name ?? '',
    factorNote: await factorNote(p, services, snapshot.deal.marketplace_id, actions),
    ...words,
  });
  send(
    p,
    status,
    snapshot.deal.title.trim() || p.t('untitled'),
    body,
    `/cabinet/view/deals/${snapshot.deal.id}`,
    signed,
  );
}

/**
 * Where the marketplace or the operator requires a second factor before money moves and this session gave none: the
 * step-up page, which comes back to `back` (the move's confirmation, or the deal page for Pay); false after redirecting.
 */
async function factorOrVerify(
  p: Page,
  services: Services,
  signed: SignedIn,
  dealId: string,
  back: string,
): Promise<boolean> {
  const { snapshot } = await dealFor(services, person(signed), dealId);
  if (await mayMoveMoney(services.db, snapshot.deal.marketplace_id, await pageUser(p.ctx, services))) return true;
  redirect(p.ctx, `${VERIFY_PATH}?next=${encodeURIComponent(back)}`);
  return false;
}

/** The deal page's words on the second factor its money moves need, when they need one and the person may move money. */
async function factorNote(
  p: Page,
  services: Services,
  marketplaceId: string,
  actions: readonly string[],
): Promise<string | undefined> {
  if (!['pay', 'release', 'refund'].some((verb) => actions.includes(verb))) return undefined;
  if (!moneyNeedsFactor(await moneyFactorPolicy(services.db, marketplaceId))) return undefined;
  const signed = await pageUser(p.ctx, services);
  const m = mfaTranslator(p.lang);
  return signed && hadSecondFactor(signed) ? m('moneyFactorGiven') : m('moneyNeedsFactor');
}

/** Lets this page's forms lead to these origins too (by a 303 after the post), beside the site itself. */
function allowFormTargets(p: Page, origins: string[]): void {
  const policy = p.ctx.response.get('Content-Security-Policy');
  if (origins.length === 0 || !policy) return;
  const targets = [...new Set(origins)].join(' ');
  p.ctx.set('Content-Security-Policy', policy.replace(/(^|;)\s*form-action [^;]*/, `$1form-action 'self' ${targets}`));
}

/**
 * The confirmation of a move the user may make now. A move outside the user's part (a seller's release) is a 404,
 * as in the API; a move the deal refuses now is the deal page with the reason in words.
 */
async function confirmPage(
  p: Page,
  services: Services,
  signed: SignedIn,
  dealId: string,
  action: PaymentAction,
  status: number,
  form: { reason?: string; error?: string },
) {
  const actor = person(signed);
  const { snapshot, role } = await dealFor(services, actor, dealId);
  if (!roleMay(role, action)) throw notFound('No such deal.');
  const refused = refusal(snapshot, action, role);
  if (refused) {
    const status = problemStatus(refused.code);
    return dealPage(p, services, signed, dealId, status, { error: refusalWords(p, { code: refused.code, status }) });
  }
  const getPath = `/cabinet/view/deals/${snapshot.deal.id}/escrow/${action}`;
  send(
    p,
    status,
    p.t(`confirm_${action}_title`),
    confirmBody(p, { snapshot, action, csrf: signed.csrf, ...form }),
    getPath,
    signed,
  );
}

const tooLongShipment = (fields: { carrier: string; tracking: string }) =>
  fields.carrier.length > SHIP_FIELD_MAX || fields.tracking.length > SHIP_FIELD_MAX;

/**
 * The confirmation of the seller's shipment. Anyone but the seller gets a 404, as in the API; a shipment the deal
 * refuses now (already marked, the money not held) is the deal page with the reason in words.
 */
async function shipConfirmPage(
  p: Page,
  services: Services,
  signed: SignedIn,
  dealId: string,
  fields: { carrier: string; tracking: string },
) {
  const { snapshot, role } = await dealFor(services, person(signed), dealId);
  if (!roleMay(role, 'ship')) throw notFound('No such deal.');
  const refused = refusal(snapshot, 'ship', role);
  if (refused) {
    const status = problemStatus(refused.code);
    return dealPage(p, services, signed, dealId, status, { error: refusalWords(p, { code: refused.code, status }) });
  }
  const tooLong = tooLongShipment(fields);
  const shown = tooLong
    ? { carrier: fields.carrier.slice(0, SHIP_FIELD_MAX), tracking: fields.tracking.slice(0, SHIP_FIELD_MAX) }
    : fields;
  const error = tooLong ? p.t('shipFieldTooLong', { max: SHIP_FIELD_MAX }) : undefined;
  const body = shipConfirmBody(p, { snapshot, csrf: signed.csrf, ...shown, error });
  send(
    p,
    tooLong ? 400 : 200,
    p.t('confirm_ship_title'),
    body,
    `/cabinet/view/deals/${snapshot.deal.id}/shipment`,
    signed,
  );
}

/** The Payouts page: the seller's destination, its forms, and their deals whose payout waits for a destination or failed. */
async function payoutsPage(
  p: Page,
  services: Services,
  signed: SignedIn,
  status: number,
  words: { saved?: boolean; error?: string; form?: Parameters<typeof payoutsBody>[1]['form'] },
) {
  const [destination, deals] = await Promise.all([
    sellerDestination(services.db, signed.user.id),
    dealsOfUser(services, signed.user),
  ]);
  const waiting = deals.filter(
    ({ snapshot, role }) =>
      role === 'seller' && ['awaiting_destination', 'failed'].includes(payoutView(snapshot).status),
  );
  const notice =
    words.saved && destination ? p.t('done_payout_saved', { title: destinationWords(p.lang, destination) }) : undefined;
  const body = payoutsBody(p, {
    destination,
    waiting,
    csrf: signed.csrf,
    notice,
    error: words.error,
    form: words.form,
  });
  send(p, status, p.t('payoutsTitle'), body, PAYOUTS_PATH, signed);
}

/**
 * The deal an invitation is about: an invitation is the person's (one for all their deals), so it is the newest deal
 * they take part in, the one whose mail they most likely opened; with its marketplace's name, to say who opened it.
 */
async function invitedDeal(services: Services, userId: string): Promise<InvitedDeal | undefined> {
  const user = await findUserById(services.db, userId);
  const newest = user && (await dealsOfPerson(services.db, user.email))[0];
  const snapshot = newest && (await loadSnapshot(services.db, newest.id));
  if (!newest || !snapshot) return undefined;
  const marketplace = await findMarketplace(services.db, snapshot.deal.marketplace_id);
  return { id: snapshot.deal.id, role: newest.role, deal: snapshot.deal, marketplace: marketplace?.name ?? '' };
}

function invalidInvitation(p: Page): void {
  send(
    p,
    400,
    p.t('inviteInvalidTitle'),
    inviteInvalidBody(p),
    p.ctx.method === 'GET' ? undefined : '/cabinet/sign-in',
  );
}
