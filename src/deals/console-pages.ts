// The console's deals and disputes: the searched list, the deal page (timeline, documents, approvals, payments,
// webhook deliveries, its workflow in Temporal), money moves behind a confirmation, the buyer's invitation again, and
// the disputes queue where an arbiter reads both sides, writes to them and decides with a reason. Every change calls
// the deal service as the JSON operation does and is audited under that operation's id.
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { Problem, problem } from '../http/problem.ts';
import { problemStatus } from '../http/problem-catalog.ts';
import { redirect, send } from '../web/page.ts';
import { formatMoney } from '../web/i18n.ts';
import { consolePage, type ConsolePage } from '../admin/console.ts';
import { formText, pagePlace, pager, queryText } from '../admin/console-kit.ts';
import { isUuid } from '../uuid.ts';
import { ANSWERED, consoleAction, type Answered, type ConsoleAction } from '../admin/console-actions.ts';
import { forbiddenFor, type AdminRole } from '../admin/auth.ts';
import type { DealSnapshot } from './model.ts';
import { refusal } from './rules.ts';
import {
  addDisputeMessage,
  administratorDeal,
  administratorDeals,
  administratorResendInvitation,
  cancelDeal,
  dealFor,
  disputeQueue,
  moveEscrow,
  resolveDispute,
  type DealActor,
} from './service.ts';
import { marketplaceNames } from './store.ts';
import { Money, paymentView, dealView } from './views.ts';
import { dealPostingsSection } from '../money/console-pages.ts';
import {
  AdminDealQuery,
  DEAL_MOVERS,
  DisputeQuery,
  INVITATION_SENDERS,
  auditedDeal,
  dealFilter,
} from './admin-routes.ts';
import { dealConsoleTranslator, type DealConsoleMessage } from './console-i18n.ts';
import {
  MESSAGE_MAX,
  DECISIONS,
  MONEY_MOVES,
  REASON_MAX,
  dealBody,
  dealListBody,
  dealPath,
  decideConfirmBody,
  disputePageBody,
  disputePath,
  disputesBody,
  moveConfirmBody,
  type DealConsolePage,
  type DealFilterForm,
  type Decision,
  type MoneyMove,
  type SplitAmounts,
} from './console-views.ts';

const ADMINISTRATOR: DealActor = { kind: 'administrator' };
const LIST_PAGE = 25;
const FILTER_FIELDS = ['marketplace_id', 'status', 'external_id', 'buyer_email', 'created_from', 'created_to'] as const;
const DONE = [
  'release',
  'refund',
  'dispute',
  'cancel',
  'invitation',
  'decided_release',
  'decided_refund',
  'decided_split',
  'message',
] as const;
/** The JSON operation each console change is audited as. */
const MOVE_ACTION: Record<MoneyMove, string> = {
  release: 'adminEscrowRelease',
  refund: 'adminEscrowRefund',
  dispute: 'adminEscrowDispute',
  cancel: 'adminCancelDeal',
};
/** Refusals a page explains in its own words; any other is told in general. */
const EXPLAINED = [
  'reason_required',
  'deal_closed',
  'invalid_payment_state',
  'deal_not_cancellable',
  'no_open_dispute',
  'dispute_open',
  'invalid_refund_amount',
] as const;

const mayMove = (role: AdminRole) => (DEAL_MOVERS as readonly AdminRole[]).includes(role);
const isMove = (value: unknown): value is MoneyMove => MONEY_MOVES.includes(value as MoneyMove);
const isDecision = (value: unknown): value is Decision => DECISIONS.includes(value as Decision);

/**
 * An amount as an arbiter writes it: spaces between thousands and a decimal comma are taken (the Russian way), then
 * it is the API's Money (at most two decimals). Undefined when it is not one.
 */
function amountField(value: string | null): number | undefined {
  const text = (value ?? '').replace(/[\s\u00a0\u202f]/g, '').replace(',', '.');
  if (!/^\d{1,14}(\.\d{1,2})?$/.test(text)) return undefined;
  const parsed = Money.safeParse(Number(text));
  return parsed.success ? parsed.data : undefined;
}

/** Both parts of a split from its form, or undefined when either is missing or not an amount. */
function splitOf(form: URLSearchParams): SplitAmounts | undefined {
  const release = amountField(form.get('release_amount'));
  const refund = amountField(form.get('refund_amount'));
  return release === undefined || refund === undefined ? undefined : { release_amount: release, refund_amount: refund };
}
const withWords = (p: ConsolePage): DealConsolePage => ({ ...p, d: dealConsoleTranslator(p.lang) });
/** `?done=` names one of a fixed set of outcomes; anything else says nothing. */
const doneNotice = (p: DealConsolePage) => {
  const done = queryText(p.ctx.query, 'done', 320);
  return (DONE as readonly string[]).includes(done) ? p.d(`done_${done}` as DealConsoleMessage) : undefined;
};

/** Why a change was refused, in the page's words; errors that are not a refusal go on to the error page. */
function refusalWords(p: DealConsolePage, error: unknown): string {
  if (!(error instanceof Problem) || error.status >= 500 || error.status === 404 || error.status === 403) throw error;
  const code = (EXPLAINED as readonly string[]).includes(error.code) ? error.code : 'other';
  return p.d(`why_${code}` as DealConsoleMessage);
}

export function dealConsolePages(api: Api, services: Services): void {
  const router = api.router;
  const page = (handler: (p: DealConsolePage) => Promise<void>, may?: readonly AdminRole[]) =>
    consolePage(services, (p) => handler(withWords(p)), { may });

  router.get(
    '/admin/view/deals',
    page(async (p) => {
      const form = Object.fromEntries(
        FILTER_FIELDS.map((name) => [name, queryText(p.ctx.query, name, 320)]),
      ) as unknown as DealFilterForm;
      const query = Object.fromEntries(
        Object.entries({
          marketplace_id: form.marketplace_id,
          status: form.status,
          // The form picks days; the list takes moments: the whole of each day, in UTC as the page says.
          created_gte: form.created_from && `${form.created_from}T00:00:00Z`,
          created_lte: form.created_to && `${form.created_to}T23:59:59.999Z`,
          starting_after: queryText(p.ctx.query, 'starting_after', 320),
          limit: String(LIST_PAGE),
        }).filter(([, value]) => value !== ''),
      );
      const marketplaces = await marketplaceNames(services.db);
      const parsed = AdminDealQuery.safeParse(query);
      if (!parsed.success) {
        const labels = {
          marketplace_id: 'marketplace',
          status: 'status',
          external_id: 'externalId',
          buyer_email: 'buyerEmail',
          created_gte: 'createdFrom',
          created_lte: 'createdTo',
          starting_after: 'nextPage',
          limit: 'nextPage',
        } as const;
        const fields = [
          ...new Set(parsed.error.issues.map((issue) => p.d(labels[issue.path[0] as keyof typeof labels] ?? 'search'))),
        ];
        return send(
          p,
          400,
          p.d('dealsTitle'),
          dealListBody(p, {
            form,
            marketplaces,
            snapshots: [],
            error: p.d('badFilters', { fields: fields.join(', ') }),
          }),
          undefined,
          p.admin,
        );
      }
      // The console finds a deal by part of its external id or of the buyer's or seller's e-mail, in any case.
      const filter = {
        ...dealFilter(parsed.data),
        externalIdPart: form.external_id || undefined,
        emailPart: form.buyer_email || undefined,
      };
      const result = await administratorDeals(services, filter).catch((error: unknown) => {
        if (error instanceof Problem && error.code === 'invalid_cursor') return undefined;
        throw error;
      });
      if (!result)
        return send(
          p,
          400,
          p.d('dealsTitle'),
          dealListBody(p, { form, marketplaces, snapshots: [], error: p.d('badFilters', { fields: p.d('nextPage') }) }),
          undefined,
          p.admin,
        );
      const pages = pager(p.lang, {
        path: '/admin/view/deals',
        filters: form,
        place: pagePlace(p.ctx.query, isUuid),
        last: result.hasMore ? result.snapshots.at(-1)!.deal.id : undefined,
      });
      // Marketplaces beyond the filter's first 500 are still named in the rows.
      const missing = result.snapshots.map((s) => s.deal.marketplace_id).filter((id) => !marketplaces.has(id));
      const names =
        missing.length > 0
          ? new Map([...marketplaces, ...(await marketplaceNames(services.db, missing))])
          : marketplaces;
      send(
        p,
        200,
        p.d('dealsTitle'),
        dealListBody(p, { form, marketplaces: names, snapshots: result.snapshots, pages }),
        undefined,
        p.admin,
      );
    }),
  );

  /** The deal page, with a notice or an error and the status to answer with. */
  const showDeal = async (p: DealConsolePage, id: string, status = 200, error?: string) => {
    const found = await administratorDeal(services, id);
    const [names, postings] = await Promise.all([
      marketplaceNames(services.db, [found.snapshot.deal.marketplace_id]),
      dealPostingsSection(services, found.snapshot.deal.id, p.lang),
    ]);
    const marketplace = names.get(found.snapshot.deal.marketplace_id) ?? '';
    const failed =
      queryText(p.ctx.query, 'failed', 320) === 'too_many_invitations' ? p.d('failed_too_many_invitations') : undefined;
    const body = dealBody(p, {
      ...found,
      marketplace,
      postings,
      mayMove: mayMove(p.admin.role),
      notice: doneNotice(p),
      error: error ?? failed,
    });
    send(p, status, p.d('dealTitle', { external_id: found.snapshot.deal.external_id }), body, dealPath(id), p.admin);
  };

  router.get(
    '/admin/view/deals/:id',
    page(async (p) => showDeal(p, String(p.ctx.params.id))),
  );

  router.get(
    '/admin/view/deals/:id/confirm/:move',
    page(async (p) => {
      const move = p.ctx.params.move;
      if (!isMove(move)) throw problem('not_found', 'No such move.');
      if (!mayMove(p.admin.role)) throw forbiddenFor(p.admin.role);
      const { snapshot, role } = await dealFor(services, ADMINISTRATOR, String(p.ctx.params.id));
      const refused = refusal(snapshot, move, role);
      const why =
        refused &&
        p.d(
          `why_${(EXPLAINED as readonly string[]).includes(refused.code) ? refused.code : 'other'}` as DealConsoleMessage,
        );
      send(
        p,
        refused ? problemStatus(refused.code) : 200,
        p.d(`confirm_${move}`),
        moveConfirmBody(p, { snapshot, move, refusal: why }),
        undefined,
        p.admin,
      );
    }),
  );

  router.post(
    '/admin/view/deals/:id/confirm/:move',
    consoleAction(services, {
      may: DEAL_MOVERS,
      page: withWords,
      load: async (p) => {
        const move = p.ctx.params.move;
        if (!isMove(move)) throw problem('not_found', 'No such move.');
        return { id: String(p.ctx.params.id), move };
      },
      path: ({ id, move }) => `${dealPath(id)}/confirm/${move}`,
      action: async (p, { id, move }, form) => {
        const reason = (form.get('reason') ?? '').slice(0, REASON_MAX);
        const { snapshot } = await dealFor(services, ADMINISTRATOR, id);
        return {
          run: async () => ({
            audit: {
              action: MOVE_ACTION[move],
              object_type: 'deal',
              object_id: id,
              before: auditedDeal(snapshot),
              after:
                move === 'cancel'
                  ? dealView(await cancelDeal(services, ADMINISTRATOR, id, reason.trim()))
                  : paymentView(await moveEscrow(services, ADMINISTRATOR, id, move, reason)),
            },
            location: `${dealPath(id)}?done=${move}`,
          }),
          refused: async (error): Promise<Answered> => {
            const why = refusalWords(p, error);
            // Refused because the deal changed since the page was read (a dispute opened, say): no form to send again.
            const { snapshot: current, role } = await dealFor(services, ADMINISTRATOR, id);
            const body = refusal(current, move, role)
              ? moveConfirmBody(p, { snapshot: current, move, refusal: why })
              : moveConfirmBody(p, { snapshot: current, move, reason, error: p.d('notDone', { why }) });
            send(p, 400, p.d(`confirm_${move}`), body, dealPath(id), p.admin);
            return ANSWERED;
          },
        };
      },
    }),
  );

  router.post(
    '/admin/view/deals/:id/invitation',
    consoleAction(services, {
      may: INVITATION_SENDERS,
      page: withWords,
      load: async (p) => String(p.ctx.params.id),
      path: (id) => dealPath(id),
      action: (p, id) => ({
        run: async () => {
          await administratorResendInvitation(services, id);
          return {
            audit: { action: 'adminResendInvitation', object_type: 'deal', object_id: id, after: { ok: true } },
            location: `${dealPath(id)}?done=invitation`,
          };
        },
        refused: (error) => {
          if (!(error instanceof Problem && error.code === 'too_many_invitations')) return undefined;
          redirect(p.ctx, `${dealPath(id)}?failed=too_many_invitations`);
          return ANSWERED;
        },
      }),
    }),
  );

  router.get(
    '/admin/view/disputes',
    page(async (p) => {
      const parsed = DisputeQuery.safeParse({
        status: queryText(p.ctx.query, 'status', 320) || undefined,
        starting_after: queryText(p.ctx.query, 'starting_after', 320) || undefined,
        limit: String(LIST_PAGE),
      });
      const query = parsed.success
        ? parsed.data
        : { status: 'open' as const, limit: LIST_PAGE, starting_after: undefined };
      // The filter's choices are every marketplace by name; an id of none of them (or not an id) shows every dispute.
      const marketplaces = await marketplaceNames(services.db);
      const wanted = queryText(p.ctx.query, 'marketplace_id', 36);
      const marketplaceId = marketplaces.has(wanted) ? wanted : undefined;
      const result = await disputeQueue(services, {
        status: query.status,
        limit: query.limit,
        startingAfter: query.starting_after,
        marketplaceId,
      }).catch((error: unknown) => {
        if (error instanceof Problem && error.code === 'invalid_cursor')
          return disputeQueue(services, { status: query.status, limit: query.limit, marketplaceId });
        throw error;
      });
      const pages = pager(p.lang, {
        path: '/admin/view/disputes',
        filters: { status: query.status, marketplace_id: marketplaceId },
        place: pagePlace(p.ctx.query, isUuid),
        last: result.hasMore ? result.items.at(-1)!.deal_id : undefined,
      });
      // The choices stop at 500 names (as the deals list's): a disputed deal's marketplace beyond them is named too.
      const missing = result.items
        .map((item) => item.snapshot.deal.marketplace_id)
        .filter((id) => !marketplaces.has(id));
      const body = disputesBody(p, {
        status: query.status,
        marketplaceId: marketplaceId ?? '',
        items: result.items,
        marketplaces:
          missing.length > 0
            ? new Map([...marketplaces, ...(await marketplaceNames(services.db, missing))])
            : marketplaces,
        pages,
        mayDecide: mayMove(p.admin.role),
        notice: doneNotice(p),
      });
      send(p, 200, p.d('disputesTitle'), body, `/admin/view/disputes?status=${query.status}`, p.admin);
    }),
  );

  router.get(
    '/admin/view/disputes/:id',
    page(async (p) => {
      const id = String(p.ctx.params.id);
      const { snapshot } = await dealFor(services, ADMINISTRATOR, id);
      if (!snapshot.dispute) throw problem('not_found', 'This deal has no dispute.');
      const names = await marketplaceNames(services.db, [snapshot.deal.marketplace_id]);
      const body = disputePageBody(p, {
        snapshot,
        marketplace: names.get(snapshot.deal.marketplace_id) ?? snapshot.deal.marketplace_id,
        mayDecide: mayMove(p.admin.role),
        notice: doneNotice(p),
      });
      send(
        p,
        200,
        p.d('disputePageTitle', { title: snapshot.deal.title.trim() || p.d('untitled') }),
        body,
        disputePath(id),
        p.admin,
      );
    }),
  );

  router.post(
    '/admin/view/disputes/:id/messages',
    consoleAction(services, {
      may: DEAL_MOVERS,
      page: withWords,
      load: async (p) => String(p.ctx.params.id),
      path: (id) => disputePath(id),
      action: (_p, id, form) => {
        const text = formText(form, 'text');
        if (!text || text.length > MESSAGE_MAX)
          throw problem('validation_failed', 'Write the message (at most 5000 characters).');
        return {
          run: async () => {
            const message = await addDisputeMessage(services, ADMINISTRATOR, id, { text, files: [] });
            return {
              audit: {
                action: 'adminDisputeMessage',
                object_type: 'deal',
                object_id: id,
                after: { ...message, files: [] },
              },
              location: `${disputePath(id)}?done=message`,
            };
          },
        };
      },
    }),
  );

  router.post(
    '/admin/view/disputes/:id/decide',
    consoleAction(services, {
      may: DEAL_MOVERS,
      page: withWords,
      load: async (p) => String(p.ctx.params.id),
      path: (id) => `${disputePath(id)}/decide`,
      cancel: (id) => disputePath(id),
      action: async (p, id, form): Promise<ConsoleAction | Answered> => {
        const outcome = form.get('outcome');
        if (!isDecision(outcome)) throw problem('validation_failed', 'Choose release, refund or split.');
        const reason = (form.get('reason') ?? '').slice(0, REASON_MAX);
        const split = outcome === 'split' ? splitOf(form) : undefined;
        const { snapshot } = await dealFor(services, ADMINISTRATOR, id);
        // The decision's own confirmation page: it asks again for the reason and a split's parts, with what is held.
        const confirm = (status: number, error?: string, current: DealSnapshot = snapshot): Answered => {
          const body = decideConfirmBody(p, { snapshot: current, outcome, reason, split, error });
          const title =
            outcome === 'split'
              ? p.d('decide_split')
              : p.d(`confirmDecide_${outcome}`, {
                  amount: formatMoney(p.lang, current.deal.amount, current.deal.currency),
                });
          send(p, status, title, body, '/admin/view/disputes', p.admin);
          return ANSWERED;
        };
        if (!reason.trim()) return confirm(400, p.d('notDone', { why: p.d('why_reason_required') }));
        if (outcome === 'split' && !split) return confirm(400, p.d('notDone', { why: p.d('why_split_amounts') }));
        return {
          confirm: () => confirm(200),
          // The decision cannot be undone: a reload of the confirmed form goes where the first went.
          once: true,
          run: async () => ({
            audit: {
              action: 'adminResolveDispute',
              object_type: 'deal',
              object_id: id,
              before: auditedDeal(snapshot),
              after: paymentView(await resolveDispute(services, id, outcome, reason.trim(), split)),
            },
            location: `${dealPath(id)}?done=decided_${outcome}`,
          }),
          refused: async (error): Promise<Answered> =>
            confirm(
              400,
              p.d('notDone', { why: refusalWords(p, error) }),
              (await dealFor(services, ADMINISTRATOR, id)).snapshot,
            ),
        };
      },
    }),
  );
}
