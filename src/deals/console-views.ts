// What the console's deal and dispute pages show, as HTML bodies. No logic beyond layout: console-pages.ts loads
// through the deal service and decides what to answer; the moves offered are the rules' (allowedActions).
import { html, type SafeHtml } from '../http/html.ts';
import { csrfField, message } from '../web/layout.ts';
import {
  formatDate,
  formatMoney,
  formatSize,
  kindWords,
  paymentWords,
  statusWords,
  type Translate,
} from '../web/i18n.ts';
import { sum, toMinor, toNumber } from '../money/amount.ts';
import type { ConsolePage } from '../admin/console.ts';
import { onceField } from '../admin/console-once.ts';
import { ageWords, badge, DEAL_TONES, emptyList } from '../admin/console-kit.ts';
import { DEAL_STATUSES, dealStatus, isFinal, type DealStatus, type DealSnapshot, type DisputeRecord } from './model.ts';
import type { DealVerb } from './rules.ts';
import type { DealDeliveryRecord, DealEventRecord, DisputeQueueRow } from './store.ts';
import type { DealConsoleTranslate } from './console-i18n.ts';
import { dealMoney, deliveryView, payoutView } from './views.ts';
import { dealMoneyState } from '../money/deal-money.ts';
import { destinationWords } from '../cabinet/page-views.ts';

export type DealConsolePage = ConsolePage & { d: DealConsoleTranslate };
export const MONEY_MOVES = ['release', 'refund', 'dispute', 'cancel'] as const;
export const DECISIONS = ['release', 'refund', 'split'] as const;
export type Decision = (typeof DECISIONS)[number];
/** The arbiter's split: what goes to the seller and what back to the buyer. */
export type SplitAmounts = { release_amount: number; refund_amount: number };
export type MoneyMove = (typeof MONEY_MOVES)[number];
export const REASON_MAX = 2000;
export const MESSAGE_MAX = 5000;
const MOVE_CLASS = { release: 'primary', refund: 'secondary', dispute: 'danger', cancel: 'danger' } as const;

export const dealPath = (id: string) => `/admin/view/deals/${id}`;
const fileHref = (id: string) => `/admin/documents/${id}/content`;
const when = (p: DealConsolePage, iso: string) => html`<time datetime="${iso}">${formatDate(p.lang, iso)}</time>`;
/** A deal's status as a badge: its words, coloured by what it asks of an operator. */
const dealBadge = (t: Translate, status: DealStatus) => badge(DEAL_TONES[status], statusWords(t, status));
const amountOf = (p: DealConsolePage, snapshot: DealSnapshot) =>
  formatMoney(p.lang, snapshot.deal.amount, snapshot.deal.currency);
const fileLink = (id: string, name: string) => html`<a href="${fileHref(id)}" download>${name}</a>`;

export interface DealFilterForm {
  marketplace_id: string;
  status: string;
  external_id: string;
  buyer_email: string;
  created_from: string;
  created_to: string;
}

export function dealListBody(
  p: DealConsolePage,
  data: {
    form: DealFilterForm;
    marketplaces: Map<string, string>;
    snapshots: DealSnapshot[];
    /** The list's previous and next links (console-kit's pager). */
    pages?: SafeHtml;
    error?: string;
  },
): SafeHtml {
  const { d, t } = p;
  const { form } = data;
  const filtered = Object.values(form).some(Boolean);
  const text = (name: keyof DealFilterForm, label: string, type = 'text') =>
    html`<div><label for="${name}">${label}</label><input id="${name}" name="${name}" type="${type}" value="${form[name]}" maxlength="254"></div>`;
  const option = (value: string, label: string, current: string) =>
    html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
  const rows = data.snapshots.map(
    (
      snapshot,
    ) => html`<tr><td data-label="${d('dealColumn')}"><a href="${dealPath(snapshot.deal.id)}"><strong>${snapshot.deal.title.trim() || d('untitled')}</strong></a><br><span class="hint">${snapshot.deal.external_id}</span></td>
<td data-label="${d('marketplace')}">${data.marketplaces.get(snapshot.deal.marketplace_id) ?? snapshot.deal.marketplace_id}</td><td data-label="${d('buyerEmail')}">${snapshot.deal.buyer_email}</td>
<td data-label="${d('amount')}">${amountOf(p, snapshot)}</td><td data-label="${d('status')}">${dealBadge(t, dealStatus(snapshot))}</td><td data-label="${d('created')}">${when(p, snapshot.deal.created_at)}</td></tr>`,
  );
  return html`<h1>${d('dealsTitle')}</h1><p class="muted">${d('dealsIntro')}</p>
${message('error', data.error)}
<form method="get" action="/admin/view/deals" class="filters">
<div><label for="marketplace_id">${d('marketplace')}</label><select id="marketplace_id" name="marketplace_id">${option('', d('anyMarketplace'), form.marketplace_id)}${[
    ...data.marketplaces,
  ].map(([id, name]) => option(id, name, form.marketplace_id))}</select></div>
<div><label for="status">${d('status')}</label><select id="status" name="status">${option('', d('anyStatus'), form.status)}${DEAL_STATUSES.map(
    (status) => option(status, statusWords(t, status), form.status),
  )}</select></div>
${text('external_id', d('externalIdPart'))}${text('buyer_email', d('emailPart'), 'search')}${text('created_from', d('createdFrom'), 'date')}${text('created_to', d('createdTo'), 'date')}
<div><button type="submit">${d('search')}</button> <a href="/admin/view/deals">${d('clearFilters')}</a></div>
</form>
${
  rows.length === 0
    ? emptyList(p.lang, { filtered, none: d('noDeals'), path: '/admin/view/deals' })
    : html`<div class="table" tabindex="0"><table class="stack" id="deal-list">
<thead><tr><th>${d('dealColumn')}</th><th>${d('marketplace')}</th><th>${d('buyerEmail')}</th><th>${d('amount')}</th><th>${d('status')}</th><th>${d('created')}</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${data.pages}`;
}

export interface DealPageData {
  snapshot: DealSnapshot;
  marketplace: string;
  actions: DealVerb[];
  events: DealEventRecord[];
  deliveries: DealDeliveryRecord[];
  temporalUrl: string;
  /** The deal's ledger postings (src/money/console-pages.ts dealPostingsSection). */
  postings: SafeHtml;
  mayMove: boolean;
  notice?: string;
  error?: string;
}

export function dealBody(p: DealConsolePage, data: DealPageData): SafeHtml {
  const { d, t, lang } = p;
  const { snapshot } = data;
  const { deal } = snapshot;
  const money = dealMoneyState(snapshot);
  return html`<h1>${d('dealTitle', { external_id: deal.external_id })}</h1>
${message('notice', data.notice)}${message('error', data.error)}
<dl>
<dt>${d('status')}</dt><dd class="status">${dealBadge(t, dealStatus(snapshot))} <code>${dealStatus(snapshot)}</code></dd>
<dt>${d('title')}</dt><dd>${deal.title.trim() || d('untitled')}</dd>
<dt>${d('marketplace')}</dt><dd>${data.marketplace}</dd>
<dt>${d('buyer')}</dt><dd>${deal.buyer_name ? `${deal.buyer_name} · ` : ''}${deal.buyer_email}</dd>
<dt>${d('seller')}</dt><dd>${deal.seller_email || d('none')}</dd>
<dt>${d('amount')}</dt><dd>${amountOf(p, snapshot)}</dd>
<dt>${d('fee')}</dt><dd>${formatMoney(p.lang, dealMoney(deal).fee, deal.currency)}</dd>
<dt>${d('sellerAmount')}</dt><dd>${formatMoney(p.lang, dealMoney(deal).seller_amount, deal.currency)}</dd>
<dt>${d('releasedAmount')}</dt><dd id="released-amount">${formatMoney(p.lang, money.released_amount, deal.currency)}</dd>
<dt>${d('refundedAmount')}</dt><dd id="refunded-amount">${formatMoney(p.lang, money.refunded_amount, deal.currency)}</dd>
<dt>${d('created')}</dt><dd>${when(p, deal.created_at)}</dd>
<dt>id</dt><dd><code>${deal.id}</code></dd>
</dl>
<p><a href="${data.temporalUrl}" rel="noopener">${d('openInTemporal')}</a></p><p class="hint">${d('temporalHint')}</p>
${actionsSection(p, data)}
<section aria-labelledby="documents"><h2 id="documents">${d('documentsHeading')}</h2>
${
  snapshot.documents.length === 0
    ? html`<p class="muted">${d('noDocuments')}</p>`
    : html`<ul class="plain">${snapshot.documents.map(
        (document) =>
          html`<li>${kindWords(t, document.kind)}: ${fileLink(document.id, document.name)} <span class="muted">${formatSize(lang, document.size)} · ${formatDate(lang, document.created_at)}</span></li>`,
      )}</ul>`
}</section>
<section aria-labelledby="approvals"><h2 id="approvals">${d('approvalsHeading')}</h2>
${
  snapshot.approvals.length === 0
    ? html`<p class="muted">${d('noApprovals')}</p>`
    : html`<ul class="plain">${snapshot.approvals.map(
        (approval) =>
          html`<li>${approval.approver} · <span class="status">${t(`approval_${approval.status}`)}</span> <span class="muted">${formatDate(lang, approval.decided_at ?? approval.created_at)}</span>${
            approval.comment && html`<br><span class="text">${approval.comment}</span>`
          }</li>`,
      )}</ul>`
}</section>
<section aria-labelledby="payments"><h2 id="payments">${d('paymentsHeading')}</h2>
${
  snapshot.payments.length === 0
    ? html`<p class="muted">${d('noPayments')}</p>`
    : html`<ul class="plain">${snapshot.payments.map(
        (payment) =>
          html`<li>${formatMoney(lang, payment.amount, payment.currency)} · ${payment.provider} · <span class="status">${paymentWords(t, payment.status)}</span> <span class="muted">${formatDate(lang, payment.updated_at)}${
            payment.hold_expires_at && payment.status === 'hold'
              ? html` · ${d('holdUntil', { date: formatDate(lang, payment.hold_expires_at) })}`
              : ''
          }</span></li>`,
      )}</ul>`
}</section>
${deliverySection(p, snapshot)}
${payoutSection(p, snapshot)}
${data.postings}
${
  snapshot.dispute &&
  html`<section aria-labelledby="dispute"><h2 id="dispute">${d('disputeHeading')}</h2>${disputeDetails(p, snapshot.dispute)}
${snapshot.dispute.status === 'open' && html`<p><a href="${disputePath(deal.id)}">${d('goToQueue')}</a></p>`}</section>`
}
${
  snapshot.cancellation &&
  html`<section aria-labelledby="cancellation"><h2 id="cancellation">${d('cancellationHeading')}</h2>
<p>${d('cancelledBy', { actor: d(`actor_${snapshot.cancellation.actor}`), date: formatDate(lang, snapshot.cancellation.cancelled_at) })}</p>
${snapshot.cancellation.reason && html`<p class="text">${d('reason')}: ${snapshot.cancellation.reason}</p>`}</section>`
}
<section aria-labelledby="timeline"><h2 id="timeline">${d('timelineHeading')}</h2>
${
  data.events.length === 0
    ? html`<p class="muted">${d('noEvents')}</p>`
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${d('when')}</th><th>${d('event')}</th><th>${d('who')}</th><th>${d('reason')}</th></tr></thead>
<tbody>${data.events.map(
        (event) =>
          html`<tr><td>${when(p, event.created_at)}</td><td><code>${event.type}</code></td><td>${event.actor ? d(`actor_${event.actor}`) : d('actor_unknown')}</td><td class="text">${event.reason ?? ''}</td></tr>`,
      )}</tbody></table></div>`
}</section>
<section aria-labelledby="deliveries"><h2 id="deliveries">${d('deliveriesHeading')}</h2>
${
  data.deliveries.length === 0
    ? html`<p class="muted">${d('noDeliveries')}</p>`
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${d('when')}</th><th>${d('event')}</th><th>${d('attempt')}</th><th>${d('status')}</th><th>${d('httpStatus')}</th><th>${d('error')}</th></tr></thead>
<tbody>${data.deliveries.map(
        (
          row,
        ) => html`<tr><td>${when(p, row.at)}</td><td><code>${row.event}</code></td><td>${row.attempt === 0 ? d('notAttempted') : String(row.attempt)}</td>
<td>${d(`delivery_${row.status}`)}</td><td>${row.http_status === null ? '' : String(row.http_status)}</td><td class="text">${row.error ?? ''}</td></tr>`,
      )}</tbody></table></div>`
}</section>`;
}

/** Shipment and delivery as marked, and the buyer's inspection window (its end, or none: released at delivery). */
function deliverySection(p: DealConsolePage, snapshot: DealSnapshot): SafeHtml {
  const { d } = p;
  const delivery = deliveryView(snapshot);
  const body =
    delivery.status === 'none'
      ? html`<p class="muted">${d('notShipped')}</p>`
      : html`<dl>
<dt>${d('status')}</dt><dd class="status" id="delivery-status">${d(`shipment_${delivery.status}`)} <code>${delivery.status}</code></dd>
<dt>${d('carrier')}</dt><dd>${delivery.carrier || d('none')}</dd>
<dt>${d('tracking')}</dt><dd>${delivery.tracking || d('none')}</dd>
<dt>${d('shippedAt')}</dt><dd>${delivery.shipped_at ? when(p, delivery.shipped_at) : d('none')}</dd>
<dt>${d('deliveredAt')}</dt><dd>${delivery.delivered_at ? when(p, delivery.delivered_at) : d('none')}</dd>
${delivery.delivered_at && html`<dt>${d('inspectionEndsAt')}</dt><dd>${delivery.inspection_ends_at ? when(p, delivery.inspection_ends_at) : d('inspectionNone')}</dd>`}
</dl>`;
  return html`<section aria-labelledby="delivery"><h2 id="delivery">${d('deliveryHeading')}</h2>${body}</section>`;
}

/** Where the payout of the released money stands, where it went, and each transfer with why it failed. */
function payoutSection(p: DealConsolePage, snapshot: DealSnapshot): SafeHtml {
  const { d, lang } = p;
  const payout = payoutView(snapshot);
  const payouts = snapshot.payouts ?? [];
  return html`<section aria-labelledby="payout"><h2 id="payout">${d('payoutHeading')}</h2>
<dl><dt>${d('payoutStatus')}</dt><dd class="status" id="payout-status">${d(`payout_${payout.status}`)} <code>${payout.status}</code></dd>
${payout.destination && html`<dt>${d('payoutDestination')}</dt><dd>${destinationWords(lang, payout.destination)}</dd>`}</dl>
${
  payouts.length === 0
    ? html`<p class="muted">${d('noPayouts')}</p>`
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${d('when')}</th><th>${d('amount')}</th><th>${d('payoutTo')}</th><th>${d('status')}</th><th>${d('failureReason')}</th></tr></thead>
<tbody>${payouts.map(
        (item) =>
          html`<tr><td>${when(p, item.created_at)}</td><td>${formatMoney(lang, item.amount, item.currency)}</td><td>${
            item.destination.title ? destinationWords(lang, item.destination) : d('none')
          }</td><td>${d(`payoutItem_${item.status}`)}</td><td>${item.failure_reason ? html`<code>${item.failure_reason}</code>` : ''}</td></tr>`,
      )}</tbody></table></div>`
}
</section>`;
}

/** Links to the confirmation of each money move the rules allow now (for admin and arbiter), and the invitation. */
function actionsSection(p: DealConsolePage, data: DealPageData): SafeHtml {
  const { d } = p;
  const id = data.snapshot.deal.id;
  const moves = MONEY_MOVES.filter((move) => data.actions.includes(move));
  const money = !data.mayMove
    ? html`<p class="muted">${d('readOnlyMoney')}</p>`
    : moves.length === 0
      ? html`<p class="muted">${d('noMoves')}</p>`
      : html`<div class="actions">${moves.map((move) => html`<a class="button ${MOVE_CLASS[move]}" href="${dealPath(id)}/confirm/${move}">${d(`move_${move}`)}</a>`)}</div>`;
  // A closed deal asks nothing more of the buyer: the server refuses the invitation (deal_closed), so none is offered.
  const invitation =
    !isFinal(dealStatus(data.snapshot)) &&
    html`<form method="post" action="${dealPath(id)}/invitation">${csrfField(p.admin.csrf)}<button type="submit" class="secondary">${d('resendInvitation')}</button>
<p class="hint">${d('invitationHint')}</p></form>`;
  return html`<section aria-labelledby="actions"><h2 id="actions">${d('actionsHeading')}</h2>${money}
${invitation}</section>`;
}

/**
 * The confirmation of a money move: what it does, and the reason when one is needed. A disputed payment has no move
 * here (the rules refuse it: dispute_open); the arbiter decides it from the disputes queue (decideConfirmBody).
 */
export function moveConfirmBody(
  p: DealConsolePage,
  data: { snapshot: DealSnapshot; move: MoneyMove; refusal?: string; error?: string; reason?: string },
): SafeHtml {
  const { d } = p;
  const { snapshot, move } = data;
  const reasonNeeded = move === 'dispute';
  const back = html`<a class="button secondary" href="${dealPath(snapshot.deal.id)}">${d('backToDeal')}</a>`;
  const head = html`<h1>${d(`confirm_${move}`)}</h1>
<p>${d('dealTitle', { external_id: snapshot.deal.external_id })} · ${snapshot.deal.title.trim() || d('untitled')} · ${amountOf(p, snapshot)}</p>`;
  if (data.refusal)
    return html`${head}${message('error', d('notNow', { why: data.refusal }))}<div class="actions">${back}</div>`;
  return html`${head}${message('error', data.error)}
<p class="consequence">${d(`consequence_${move}`, { amount: amountOf(p, snapshot) })}</p>
<form method="post" action="${dealPath(snapshot.deal.id)}/confirm/${move}">${csrfField(p.admin.csrf)}
<label for="reason">${reasonNeeded ? d('reasonRequired') : d('reasonOptional')}</label>
<textarea id="reason" name="reason" maxlength="${REASON_MAX}"${reasonNeeded ? html` required` : ''}>${data.reason ?? ''}</textarea>
<div class="actions"><button type="submit" class="${MOVE_CLASS[move] === 'primary' ? 'primary' : 'danger'}">${d(`confirmButton_${move}`)}</button> ${back}</div>
</form>`;
}

/** The dispute's reason, both sides' messages with their evidence, and the decision once made. */
function disputeDetails(p: DealConsolePage, dispute: DisputeRecord): SafeHtml {
  const { d, t, lang } = p;
  return html`<dl><dt>${d('status')}</dt><dd class="status">${t(`dispute_${dispute.status}`)}</dd>
<dt>${d('reason')}</dt><dd class="text">${dispute.reason}</dd><dt>${d('openedAt')}</dt><dd>${when(p, dispute.opened_at)}</dd></dl>
${
  dispute.decision &&
  html`<div class="card decision"><h3>${d('decisionHeading')}</h3><p class="status">${t(`outcome_${dispute.decision.outcome}`)}</p>
<p class="text">${d('reason')}: ${dispute.decision.reason}</p><p class="muted">${d('decidedAt', { date: formatDate(lang, dispute.decision.decided_at) })}</p></div>`
}
<h3>${d('messagesHeading')}</h3>
${
  dispute.messages.length === 0
    ? html`<p class="muted">${d('noMessages')}</p>`
    : html`<ul class="plain">${dispute.messages.map(
        (
          item,
        ) => html`<li class="card message"><p><strong>${t(`author_${item.author}`)}</strong> <span class="muted">${formatDate(lang, item.created_at)}</span></p>
<p class="text">${item.text}</p>${
          item.files.length > 0 &&
          html`<ul class="plain files">${item.files.map(
            (file) =>
              html`<li>${fileLink(file.id, file.name)} <span class="muted">${formatSize(lang, file.size)}</span></li>`,
          )}</ul>`
        }</li>`,
      )}</ul>`
}`;
}

export function disputesBody(
  p: DealConsolePage,
  data: {
    status: 'open' | 'decided';
    /** The marketplace filter's id ('' for any), kept by the tabs and the pager. */
    marketplaceId: string;
    items: (DisputeQueueRow & { snapshot: DealSnapshot })[];
    marketplaces: Map<string, string>;
    /** The queue's previous and next links (console-kit's pager). */
    pages: SafeHtml;
    mayDecide: boolean;
    notice?: string;
  },
): SafeHtml {
  const { d } = p;
  const tab = (status: 'open' | 'decided', label: string) =>
    status === data.status
      ? html`<strong>${label}</strong>`
      : html`<a href="/admin/view/disputes?status=${status}${data.marketplaceId && `&marketplace_id=${data.marketplaceId}`}">${label}</a>`;
  const option = (value: string, label: string) =>
    html`<option value="${value}"${value === data.marketplaceId ? html` selected` : ''}>${label}</option>`;
  const rows = data.items.map(({ snapshot, messages_count, opened_at, decided_at }) => {
    const deal = snapshot.deal;
    const contract =
      snapshot.documents.find((document) => document.kind === 'contract') ??
      snapshot.documents.find((document) => document.kind === 'offer');
    const marketplace = data.marketplaces.get(deal.marketplace_id) ?? deal.marketplace_id;
    return html`<tr id="dispute-${deal.id}">
<td data-label="${d('disputeColumn')}"><a href="${disputePath(deal.id)}"><strong>${deal.title.trim() || d('untitled')}</strong></a><br><span class="hint">${snapshot.dispute?.reason ?? ''}</span></td>
<td data-label="${d('ageColumn')}">${ageWords(p.lang, Date.now() - new Date(opened_at).getTime())}<br><span class="hint">${when(p, opened_at)}</span>${decided_at && html`<br><span class="hint">${d('decidedAt', { date: formatDate(p.lang, decided_at) })}</span>`}</td>
<td data-label="${d('marketplace')}"><a href="/admin/view/marketplaces/${deal.marketplace_id}">${marketplace}</a></td>
<td data-label="${d('dealColumn')}"><a href="${dealPath(deal.id)}">${deal.external_id}</a> · ${amountOf(p, snapshot)}</td>
<td data-label="${d('contractColumn')}">${contract ? fileLink(contract.id, contract.name) : html`<span class="muted">${d('noContract')}</span>`}</td>
<td data-label="${d('messagesColumn')}">${messages_count}</td></tr>`;
  });
  return html`<h1>${d('disputesTitle')}</h1>
${message('notice', data.notice)}
<p>${tab('open', d('tabOpen'))} · ${tab('decided', d('tabDecided'))}</p>
<p class="muted">${data.status === 'open' ? d('disputesIntro') : d('decidedIntro')}</p>
${data.status === 'open' && !data.mayDecide && html`<p class="muted">${d('readOnlyDisputes')}</p>`}
<form method="get" action="/admin/view/disputes" class="filters" id="dispute-filters"><input type="hidden" name="status" value="${data.status}">
<div><label for="marketplace_id">${d('marketplace')}</label><select id="marketplace_id" name="marketplace_id">${option('', d('anyMarketplace'))}${[
    ...data.marketplaces,
  ].map(([id, name]) => option(id, name))}</select></div>
<div><button type="submit">${d('search')}</button></div></form>
${
  rows.length === 0
    ? emptyList(p.lang, {
        filtered: data.marketplaceId !== '',
        none: data.status === 'open' ? d('noOpenDisputes') : d('noDecidedDisputes'),
        path: '/admin/view/disputes',
      })
    : html`<div class="table" tabindex="0"><table class="stack" id="dispute-queue">
<thead><tr><th>${d('disputeColumn')}</th><th>${d('ageColumn')}</th><th>${d('marketplace')}</th><th>${d('dealColumn')}</th><th>${d('contractColumn')}</th><th>${d('messagesColumn')}</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${data.pages}`;
}

export const disputePath = (id: string) => `/admin/view/disputes/${id}`;

/** A dispute's own page: the deal in brief, the reason, both sides' thread with evidence, and the arbiter's forms. */
export function disputePageBody(
  p: DealConsolePage,
  data: { snapshot: DealSnapshot; marketplace: string; mayDecide: boolean; notice?: string },
): SafeHtml {
  const { d } = p;
  const { snapshot } = data;
  const deal = snapshot.deal;
  const dispute = snapshot.dispute!;
  return html`<p><a href="/admin/view/disputes">${d('allDisputes')}</a></p>
<article id="dispute-${deal.id}" aria-labelledby="dispute-title">
<h1 id="dispute-title">${d('disputePageTitle', { title: deal.title.trim() || d('untitled') })}</h1>
${message('notice', data.notice)}
<dl><dt>${d('dealColumn')}</dt><dd><a href="${dealPath(deal.id)}">${d('dealTitle', { external_id: deal.external_id })}</a> · ${amountOf(p, snapshot)} ${dealBadge(p.t, dealStatus(snapshot))}</dd>
<dt>${d('marketplace')}</dt><dd><a href="/admin/view/marketplaces/${deal.marketplace_id}">${data.marketplace}</a></dd>
<dt>${d('buyer')}</dt><dd>${deal.buyer_email}</dd><dt>${d('seller')}</dt><dd>${deal.seller_email || d('none')}</dd>
<dt>${d('ageColumn')}</dt><dd>${ageWords(p.lang, Date.now() - new Date(dispute.opened_at).getTime())}</dd></dl>
${disputeDetails(p, dispute)}
${dispute.status === 'open' && data.mayDecide && decideForms(p, snapshot)}
${dispute.status === 'open' && !data.mayDecide && html`<p class="muted">${d('readOnlyDisputes')}</p>`}
</article>`;
}

function decideForms(p: DealConsolePage, snapshot: DealSnapshot): SafeHtml {
  const { d } = p;
  const id = snapshot.deal.id;
  const held = heldAmount(p, snapshot);
  return html`<form method="post" action="/admin/view/disputes/${id}/messages">${csrfField(p.admin.csrf)}
<h3>${d('addMessage')}</h3><label for="text-${id}">${d('messageText')}</label>
<textarea id="text-${id}" name="text" required maxlength="${MESSAGE_MAX}"></textarea>
<div><button type="submit" class="secondary">${d('sendMessage')}</button></div></form>
<form method="post" action="/admin/view/disputes/${id}/decide">${csrfField(p.admin.csrf)}
<h3>${d('decideHeading')}</h3>
<fieldset><legend>${d('decision')}</legend>
<label><input type="radio" name="outcome" value="release" required> ${d('decide_release')}</label>
<label><input type="radio" name="outcome" value="refund" required> ${d('decide_refund')}</label>
<label><input type="radio" name="outcome" value="split" required> ${d('decide_split')}</label>
<div class="filters"><div><label for="release-${id}">${d('splitRelease')}</label><input id="release-${id}" name="release_amount" type="text" inputmode="decimal" maxlength="20" size="12"></div>
<div><label for="refund-${id}">${d('splitRefund')}</label><input id="refund-${id}" name="refund_amount" type="text" inputmode="decimal" maxlength="20" size="12"></div></div>
<p class="hint">${d('splitHint', { amount: held })}</p></fieldset>
<label for="reason-${id}">${d('decisionReason')}</label>
<textarea id="reason-${id}" name="reason" required maxlength="${REASON_MAX}"></textarea>
<div><button type="submit">${d('decideButton')}</button></div></form>`;
}

/** The money a decision moves: what the latest payment still holds (paid, less the parts refunded while held). */
function heldAmount(p: DealConsolePage, snapshot: DealSnapshot): string {
  const payment = snapshot.payments.at(-1);
  if (!payment) return amountOf(p, snapshot);
  const refunded = (snapshot.refunds ?? [])
    .filter((refund) => refund.payment_id === payment.id)
    .map((refund) => toMinor(refund.amount));
  return formatMoney(p.lang, toNumber(toMinor(payment.amount) - sum(refunded)), payment.currency);
}

/**
 * The confirmation of a decision: who gets the money (a split names both parts), the reason as both sides will read
 * it, and the last step. A split's parts go with the form again.
 */
export function decideConfirmBody(
  p: DealConsolePage,
  data: { snapshot: DealSnapshot; outcome: Decision; reason: string; split?: SplitAmounts; error?: string },
): SafeHtml {
  const { d } = p;
  const { snapshot, outcome } = data;
  const money = (value: number) => formatMoney(p.lang, value, snapshot.deal.currency);
  const amounts = {
    amount: heldAmount(p, snapshot),
    release: data.split ? money(data.split.release_amount) : '',
    refund: data.split ? money(data.split.refund_amount) : '',
  };
  const consequence =
    outcome === 'split' && !data.split
      ? undefined
      : html`<p class="consequence">${d(`consequence_${outcome}`, amounts)}</p>`;
  return html`<h1>${outcome === 'split' && !data.split ? d('decide_split') : d(`confirmDecide_${outcome}`, amounts)}</h1>
<p>${d('dealTitle', { external_id: snapshot.deal.external_id })} · ${snapshot.deal.title.trim() || d('untitled')}</p>
${message('error', data.error)}
${consequence}
<p>${d('decidesDispute')}</p>
<form method="post" action="/admin/view/disputes/${snapshot.deal.id}/decide">${csrfField(p.admin.csrf)}${onceField()}
<input type="hidden" name="outcome" value="${outcome}"><input type="hidden" name="confirmed" value="yes">
${
  outcome === 'split' &&
  html`<div class="filters"><div><label for="release_amount">${d('splitRelease')}</label><input id="release_amount" name="release_amount" type="text" inputmode="decimal" maxlength="20" size="12" required value="${data.split ? String(data.split.release_amount) : ''}"></div>
<div><label for="refund_amount">${d('splitRefund')}</label><input id="refund_amount" name="refund_amount" type="text" inputmode="decimal" maxlength="20" size="12" required value="${data.split ? String(data.split.refund_amount) : ''}"></div></div>
<p class="hint">${d('splitHint', { amount: amounts.amount })}</p>`
}
<label for="reason">${d('yourReason')}</label>
<textarea id="reason" name="reason" required maxlength="${REASON_MAX}">${data.reason}</textarea>
<div class="actions"><button type="submit" class="danger">${d('confirmDecideButton')}</button> <a class="button secondary" href="${disputePath(snapshot.deal.id)}">${d('backToQueue')}</a></div>
</form>`;
}
