// What each cabinet page shows, as HTML bodies. No logic beyond layout: pages.ts loads the data through the deal
// service and decides which page and status to answer with; the actions offered are the service's (actionsFor).
import { passkeySignIn } from '../mfa/page-views.ts';
import { mfaTranslator } from '../mfa/i18n.ts';
import type {
  ApprovalRecord,
  DealSnapshot,
  DisputeRecord,
  DocumentRecord,
  PaymentRecord,
  PayoutRecord,
} from '../deals/model.ts';
import { DEAL_STATUSES, dealStatus, isFinal, type DealStatus } from '../deals/model.ts';
import { badge, DEAL_TONES, emptyList } from '../admin/console-kit.ts';
import { payoutView } from '../deals/views.ts';
import { dealMoneyState } from '../money/deal-money.ts';
import { sum, toMinor, toNumber } from '../money/amount.ts';
import { destinationTitle, DESTINATION_TYPES, type StoredDestination } from '../money/destinations.ts';
import type { DealRole, DealVerb, PaymentAction } from '../deals/rules.ts';
import type { DealInContext } from '../deals/service.ts';
import { MIN_PASSWORD_LENGTH } from '../accounts/passwords.ts';
import { accountTranslator } from '../accounts/i18n.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { csrfField, message } from '../web/layout.ts';
import type { View } from '../web/page.ts';
import {
  formatDate,
  formatMoney,
  formatSize,
  kindWords,
  paymentWords,
  statusWords,
  type Lang,
  type Translate,
} from '../web/i18n.ts';
import { EVIDENCE_FILE_LIMIT_BYTES, EVIDENCE_FILES_MAX, MESSAGE_TEXT_MAX, isPreviewable } from './dispute-form.ts';
import { DISPUTE_REASON_MAX as REASON_MAX, PAYMENT_ACTIONS } from './routes.ts';

export const COMMENT_MAX = 2000;
/** What the shipment's carrier and tracking number may be, as the JSON route takes them. */
export const SHIP_FIELD_MAX = 100;
export const PAYOUTS_PATH = '/cabinet/view/payouts';
const BUTTON_CLASS = { release: 'primary', refund: 'secondary', dispute: 'danger' } as const;

export function signInBody(
  { t, lang }: View,
  form: { email: string; next: string; csrf: string; error?: string; notice?: string },
): SafeHtml {
  const a = accountTranslator(lang);
  // A new account comes back here (to an SSO sign-in, say) once its address is confirmed.
  const carried = form.next === '/cabinet' ? '' : `?next=${encodeURIComponent(form.next)}`;
  const signUpHref = `/cabinet/sign-up${carried}`;
  // A reset keeps it too: the new password leads back to where the person was going.
  const forgotHref = `/cabinet/forgot-password${carried}`;
  return html`<h1>${t('signInTitle')}</h1>
${message('notice', form.notice)}${message('error', form.error)}
<form method="post" action="/cabinet/sign-in">
${csrfField(form.csrf)}<input type="hidden" name="next" value="${form.next}">
${credentialFields(t, form.email)}
</form>
${passkeySignIn(mfaTranslator(lang), form.csrf, form.next)}
<p><a href="${forgotHref}">${a('forgotPasswordLink')}</a> · <a href="${signUpHref}">${a('createAccountLink')}</a></p>
<p class="hint">${t('signInHint')}</p>`;
}

/** E-mail, password and the sign-in button: the cabinet's form and the SSO login form share them. */
export function credentialFields(t: Translate, email: string): SafeHtml {
  return html`<label for="email">${t('email')}</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${email}">
<label for="password">${t('password')}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div><button type="submit">${t('signInButton')}</button></div>`;
}

/** The deal an invitation is about, as its page names it. */
export interface InvitedDeal {
  id: string;
  role: 'buyer' | 'seller' | 'approver';
  deal: DealSnapshot['deal'];
  marketplace: string;
}

export function inviteBody(
  { t, lang }: View,
  form: { token: string; csrf: string; error?: string; deal?: InvitedDeal },
): SafeHtml {
  const invited = form.deal;
  const about = invited
    ? html`<p class="consequence" id="invited-deal">${t(`inviteDeal_${invited.role}`, {
        marketplace: invited.marketplace,
        title: invited.deal.title.trim() || t('untitled'),
        amount: formatMoney(lang, invited.deal.amount, invited.deal.currency),
      })} ${t('inviteNext')}</p>`
    : undefined;
  return html`<h1>${t('inviteTitle')}</h1>
${about}
<p>${t('inviteIntro')}</p>
${message('error', form.error)}
<form method="post" action="/cabinet/invite">
${csrfField(form.csrf)}<input type="hidden" name="token" value="${form.token}">
<label for="password">${t('newPassword')}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="200" aria-describedby="password-hint">
<p class="hint" id="password-hint">${t('passwordHint', { min: MIN_PASSWORD_LENGTH })}</p>
<label for="password_confirm">${t('confirmPassword')}</label>
<input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="200">
<div><button type="submit">${t('setPasswordButton')}</button></div>
</form>`;
}

export function inviteInvalidBody({ t }: View): SafeHtml {
  return html`<h1>${t('inviteInvalidTitle')}</h1>
<p>${t('inviteInvalidText')}</p>
<ul>
<li>${t('inviteInvalidSignIn')} <a href="/cabinet/sign-in">${t('goToSignIn')}</a></li>
<li>${t('inviteInvalidAsk')}</li>
</ul>`;
}

/** The deal's status in words; money the arbiter sent back reads as the arbiter's decision, not as a cancellation. */
function dealStatusWords(t: Translate, snapshot: DealSnapshot): string {
  const status = dealStatus(snapshot);
  if (status === 'refunded' && snapshot.dispute?.decision?.outcome === 'refund') return t('status_refunded_by_arbiter');
  return statusWords(t, status);
}

const dealTitle = (t: Translate, snapshot: DealSnapshot) => snapshot.deal.title.trim() || t('untitled');
const dealPath = (snapshot: DealSnapshot) => `/cabinet/view/deals/${snapshot.deal.id}`;
/** The words for a part in a deal; an approver who is not the buyer only approves. */
const roleWords = (t: Translate, role: DealRole) =>
  t(role === 'seller' ? 'role_seller' : role === 'buyer' ? 'role_buyer' : 'role_approver');

function fileLink(href: string, name: string): SafeHtml {
  return html`<a href="${href}" download>${name}</a>`;
}

/**
 * A photo's preview beside its download link: the image opens in full in a new tab, so evidence is seen without
 * downloading it. Other files (PDF, documents) are downloaded only.
 */
function preview(file: { id: string; name: string; content_type: string }): SafeHtml | undefined {
  if (!isPreviewable(file.content_type)) return undefined;
  const href = `/cabinet/documents/${file.id}/content?view=inline`;
  return html`<a class="thumb" href="${href}" target="_blank" rel="noopener"><img src="${href}" alt="${file.name}" loading="lazy"></a>`;
}

function documentList({ t }: View, documents: DocumentRecord[]): SafeHtml {
  if (documents.length === 0) return html`<p class="muted">${t('noDocuments')}</p>`;
  return html`<ul class="plain">${documents.map(
    (document) =>
      html`<li>${preview(document)}${kindWords(t, document.kind)}: ${fileLink(`/cabinet/documents/${document.id}/content`, document.name)}</li>`,
  )}</ul>`;
}

/** Approve and Reject for a pending approval the user may decide; the decided (or awaited) state otherwise. */
function decision(view: View, approval: ApprovalRecord, csrf: string, mayDecide: boolean): SafeHtml {
  const { t, lang, timeZone } = view;
  if (approval.status === 'pending' && !mayDecide) return html`<p class="status">${t('approval_pending')}</p>`;
  if (approval.status !== 'pending') {
    return html`<p><span class="status">${t(`approval_${approval.status}`)}</span>${
      approval.decided_at &&
      html` <span class="muted">${t('decidedAt', { date: formatDate(lang, approval.decided_at, timeZone) })}</span>`
    }</p>${approval.comment && html`<p>${t('comment')}: ${approval.comment}</p>`}`;
  }
  const commentId = `comment-${approval.id}`;
  const readId = `read-contract-${approval.id}`;
  // Approving binds the person to the contract: they say they read it (the server checks it too, pages.ts).
  return html`<div class="actions">
<form method="post" action="/cabinet/view/approvals/${approval.id}/approve" class="approve-form">${csrfField(csrf)}
<label class="check" for="${readId}"><input type="checkbox" id="${readId}" name="read_contract" value="yes" required> ${t('readContract')}</label>
<div><button type="submit">${t('approve')}</button></div></form>
<form method="post" action="/cabinet/view/approvals/${approval.id}/reject">${csrfField(csrf)}
<label for="${commentId}">${t('rejectComment')}</label>
<textarea id="${commentId}" name="comment" maxlength="${COMMENT_MAX}"></textarea>
<div><button type="submit" class="danger">${t('reject')}</button></div>
</form>
</div>`;
}

/** The filters of the person's deals as the form has them ('' for any). */
export interface HomeDealFilter {
  q: string;
  status: DealStatus | '';
  role: 'buyer' | 'seller' | '';
}

export function homeBody(
  view: View,
  data: {
    approvals: { approval: ApprovalRecord; snapshot: DealSnapshot }[];
    /** This page of the deals that match the filter. */
    deals: DealInContext[];
    /** The person approves in some deal (a seller alone is not shown an empty Approvals section). */
    approves: boolean;
    filter: HomeDealFilter;
    /** The deals' previous and next links (console-kit's pager). */
    pages: SafeHtml;
    csrf: string;
  },
): SafeHtml {
  const { t, lang } = view;
  const approvals = data.approvals.map(
    ({ approval, snapshot }) => html`<article class="card">
<h3><a href="${dealPath(snapshot)}">${dealTitle(t, snapshot)}</a></h3>
<p>${t('amount')}: ${formatMoney(lang, snapshot.deal.amount, snapshot.deal.currency)}</p>
${documentList(view, snapshot.documents)}
${decision(view, approval, data.csrf, true)}
</article>`,
  );
  const deals = data.deals.map(
    ({ snapshot, role }) => html`<li class="card">
<h3><a href="${dealPath(snapshot)}">${dealTitle(t, snapshot)}</a></h3>
<p><span class="role">${t('yourRole')}: ${roleWords(t, role)}</span></p>
<p>${formatMoney(lang, snapshot.deal.amount, snapshot.deal.currency)} · ${badge(DEAL_TONES[dealStatus(snapshot)], dealStatusWords(t, snapshot))}</p>
<p><a href="${dealPath(snapshot)}">${t('openDeal')}</a></p>
</li>`,
  );
  const { filter } = data;
  const option = (value: string, label: string, current: string) =>
    html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
  return html`<h1>${t('homeTitle')}</h1>
${
  data.approves
    ? html`<section aria-labelledby="approvals"><h2 id="approvals">${t('approvalsHeading')}</h2>
${approvals.length > 0 ? approvals : html`<p class="muted">${t('noApprovals')}</p>`}
</section>`
    : undefined
}
<section aria-labelledby="deals"><h2 id="deals">${t('dealsHeading')}</h2>
<form method="get" action="/cabinet#deals" class="filters" id="deal-filters">
<div><label for="q">${t('dealsSearch')}</label><input id="q" name="q" type="search" class="field" value="${filter.q}" maxlength="200"></div>
<div><label for="f-status">${t('status')}</label><select id="f-status" name="status" class="field">${option('', t('anyStatus'), filter.status)}${DEAL_STATUSES.map((status) => option(status, status === 'refunded' ? t('filterRefunded') : statusWords(t, status), filter.status))}</select></div>
<div><label for="f-role">${t('yourRole')}</label><select id="f-role" name="role" class="field">${option('', t('anyRole'), filter.role)}${option('buyer', t('role_buyer'), filter.role)}${option('seller', t('role_seller'), filter.role)}</select></div>
<div><button type="submit">${t('showDeals')}</button></div></form>
${
  deals.length > 0
    ? html`<ul class="plain" id="deal-list">${deals}</ul>`
    : emptyList(lang, { filtered: Object.values(filter).some(Boolean), none: t('noDeals'), path: '/cabinet#deals' })
}
${data.pages}
</section>`;
}

function paymentList({ t, lang, timeZone }: View, payments: PaymentRecord[]): SafeHtml {
  if (payments.length === 0) return html`<p class="muted">${t('noPayments')}</p>`;
  return html`<ul class="plain">${payments.map(
    (payment) =>
      html`<li>${formatMoney(lang, payment.amount, payment.currency)} · <span class="status">${paymentWords(t, payment.status)}</span>${
        payment.provider === 'sandbox' ? html` · <span class="test">${t('testPayment')}</span>` : undefined
      } <span class="muted">${formatDate(lang, payment.updated_at, timeZone)}</span></li>`,
  )}</ul>`;
}

const ACTION_HINT = { release: 'releaseHint', refund: 'refundHint', dispute: 'disputeHint' } as const;

/**
 * The escrow section: the buyer's Pay while the rules allow it (a form, as it starts a payment: to the acquirer's page
 * when live, held at once in a sandbox, which it says), and links to the confirmation of each move the user may make
 * now (plain links, so they work without JavaScript and move nothing by themselves).
 */
function escrow(
  view: View,
  snapshot: DealSnapshot,
  role: DealRole,
  actions: DealVerb[],
  csrf: string,
  sandbox: boolean,
): SafeHtml | undefined {
  const { t, lang } = view;
  const latest = snapshot.payments.at(-1);
  const pending = latest?.status === 'pending' ? latest : undefined;
  const pay = actions.includes('pay')
    ? html`<div class="move"><form method="post" action="${dealPath(snapshot)}/pay">${csrfField(csrf)}<button type="submit">${t(
        'payButton',
        {
          amount: formatMoney(lang, pending?.amount ?? snapshot.deal.amount, snapshot.deal.currency),
        },
      )}</button></form>
<p class="hint">${t('payHint')}</p>${sandbox ? html`<p class="hint test">${t('paySandboxHint')}</p>` : undefined}${
        pending ? html`<p class="hint">${t('pendingPaymentNote')}</p>` : undefined
      }</div>`
    : undefined;
  if (!latest && !pay) return undefined;
  const moves = PAYMENT_ACTIONS.filter((action) => actions.includes(action)).map(
    (
      action,
    ) => html`<div class="move"><a class="button ${BUTTON_CLASS[action]}" href="${dealPath(snapshot)}/escrow/${action}">${t(action)}</a>
<p class="hint">${t(ACTION_HINT[action])}</p></div>`,
  );
  const idle =
    latest?.status === 'disputed'
      ? t('disputeNote')
      : role === 'seller' && latest?.status === 'hold'
        ? t('sellerEscrowNote')
        : t('noEscrowActions');
  return html`<section aria-labelledby="escrow"><h2 id="escrow">${t('escrowHeading')}</h2>
${pay || moves.length > 0 ? html`<div class="actions">${pay}${moves}</div>` : html`<p class="muted">${idle}</p>`}
</section>`;
}

/** The dispute's reason, its thread with evidence files, the arbiter's decision, and the form to add a message. */
function disputeSection(
  view: View,
  snapshot: DealSnapshot,
  dispute: DisputeRecord,
  role: DealRole,
  canMessage: boolean,
  csrf: string,
): SafeHtml {
  const { t, lang, timeZone } = view;
  const messages = dispute.messages.map(
    (item) => html`<li class="card message">
<p><strong>${t(`author_${item.author}`)}</strong>${item.author === role ? html` <span class="muted">${t('you')}</span>` : undefined} <span class="muted">${formatDate(lang, item.created_at, timeZone)}</span></p>
${item.text && html`<p class="text">${item.text}</p>`}
${
  item.files.length > 0
    ? html`<ul class="plain files">${item.files.map(
        (file) =>
          html`<li>${preview(file)}${fileLink(`/cabinet/documents/${file.id}/content`, file.name)} <span class="muted">${formatSize(lang, file.size)}</span></li>`,
      )}</ul>`
    : undefined
}
</li>`,
  );
  const decided = dispute.decision;
  const form = canMessage
    ? html`<form method="post" action="${dealPath(snapshot)}/dispute/messages" enctype="multipart/form-data">${csrfField(csrf)}
<h3>${t('addMessageHeading')}</h3>
<label for="message-text">${t('messageTextOptional')}</label>
<textarea id="message-text" name="text" maxlength="${MESSAGE_TEXT_MAX}" aria-describedby="message-hint"></textarea>
<p class="hint" id="message-hint">${t('textLimitHint', { max: MESSAGE_TEXT_MAX })}</p>
<label for="message-files">${t('messageFiles', { count: EVIDENCE_FILES_MAX, size: EVIDENCE_FILE_LIMIT_BYTES / 1024 / 1024 })}</label>
<input id="message-files" name="files" type="file" multiple>
<div><button type="submit">${t('sendMessage')}</button></div>
</form>`
    : undefined;
  return html`<section aria-labelledby="dispute"><h2 id="dispute">${t('disputeHeading')}</h2>
<dl>
<dt>${t('status')}</dt><dd class="status">${t(`dispute_${dispute.status}`)}</dd>
<dt>${t('reason')}</dt><dd class="text">${dispute.reason}</dd>
<dt>${t('disputeOpened')}</dt><dd>${formatDate(lang, dispute.opened_at, timeZone)}</dd>
</dl>
${
  decided &&
  html`<div class="card decision"><h3>${t('decisionHeading')}</h3>
<p class="status">${t(`outcome_${decided.outcome}`)}</p>
<p class="text">${t('reason')}: ${decided.reason}</p>
<p class="muted">${t('decidedAt', { date: formatDate(lang, decided.decided_at, timeZone) })}</p></div>`
}
<h3>${t('messagesHeading')}</h3>
${messages.length > 0 ? html`<ul class="plain">${messages}</ul>` : html`<p class="muted">${t('noMessages')}</p>`}
${form}
</section>`;
}

/**
 * A destination's title in the reader's language. The stored title is written once, in English, when it is given
 * (destinations.ts); its kind and its last four characters are all it says, so the title is made again from those.
 */
export function destinationWords(lang: Lang, destination: { type: string; title: string }): string {
  const type = DESTINATION_TYPES.find((known) => known === destination.type);
  return type ? destinationTitle({ type, token: destination.title.slice(-4) }, lang) : destination.title;
}

type PayoutFormType = (typeof DESTINATION_TYPES)[number];

/**
 * The Payouts page: where the seller's money goes now, a form for a sandbox test card (the two cards explained) and one
 * for a live card token from YooKassa's payout widget or a YooMoney wallet, and the deals still waiting for a payout.
 * A live token is a secret and is never written back into the form; a test card number is not one.
 */
export function payoutsBody(
  view: View,
  data: {
    destination?: StoredDestination;
    waiting: DealInContext[];
    csrf: string;
    error?: string;
    notice?: string;
    form?: { type: PayoutFormType; token: string };
  },
): SafeHtml {
  const { t, lang, timeZone } = view;
  const current = data.destination
    ? html`<p class="status" id="payout-current">${t('payoutCurrent', { title: destinationWords(lang, data.destination) })}</p>
<p class="muted">${t('payoutCurrentSince', { date: formatDate(lang, data.destination.updated_at, timeZone) })}</p>`
    : html`<p class="status" id="payout-current">${t('payoutNone')}</p>`;
  const testValue = data.form?.type === 'test_card' ? data.form.token : '';
  const liveType = data.form && data.form.type !== 'test_card' ? data.form.type : 'bank_card';
  const option = (type: Exclude<PayoutFormType, 'test_card'>) =>
    html`<option value="${type}"${type === liveType ? html` selected` : undefined}>${t(`payoutType_${type}`)}</option>`;
  const waiting = data.waiting.map(
    ({ snapshot }) =>
      html`<li><a href="${dealPath(snapshot)}">${dealTitle(t, snapshot)}</a> · ${formatMoney(lang, snapshot.deal.amount, snapshot.deal.currency)} · <span class="status">${t(
        `payout_${payoutView(snapshot).status === 'failed' ? 'failed' : 'awaiting_destination'}`,
        { reason: failureWords(view, snapshot.payouts?.at(-1)) },
      )}</span></li>`,
  );
  return html`<h1>${t('payoutsTitle')}</h1>
${message('notice', data.notice)}${message('error', data.error)}
<p>${t('payoutsIntro')}</p>
${current}
<section aria-labelledby="payout-test"><h2 id="payout-test">${t('payoutTestHeading')}</h2>
<p>${t('payoutTestText')}</p>
<ul><li>${t('payoutTestGood')}</li><li>${t('payoutTestDeclined')}</li></ul>
<form method="post" action="${PAYOUTS_PATH}" id="payout-test-form">${csrfField(data.csrf)}<input type="hidden" name="type" value="test_card">
<label for="test-card">${t('payoutTestCard')}</label>
<input class="field" id="test-card" name="token" type="text" inputmode="numeric" autocomplete="off" required maxlength="23" value="${testValue}">
<div><button type="submit">${t('payoutSave')}</button></div>
</form>
</section>
<section aria-labelledby="payout-live"><h2 id="payout-live">${t('payoutLiveHeading')}</h2>
<p>${t('payoutLiveText')}</p>
<form method="post" action="${PAYOUTS_PATH}" id="payout-live-form">${csrfField(data.csrf)}
<label for="live-type">${t('payoutLiveType')}</label>
<select class="field" id="live-type" name="type">${option('bank_card')}${option('yoo_money')}</select>
<label for="live-token">${t('payoutToken')}</label>
<input class="field" id="live-token" name="token" type="text" autocomplete="off" spellcheck="false" required maxlength="200" aria-describedby="live-token-hint">
<p class="hint" id="live-token-hint">${t('payoutSecretHint')}</p>
<div><button type="submit">${t('payoutSave')}</button></div>
</form>
</section>
<section aria-labelledby="payout-waiting"><h2 id="payout-waiting">${t('payoutWaitingHeading')}</h2>
${waiting.length > 0 ? html`<ul class="plain">${waiting}</ul>` : html`<p class="muted">${t('payoutWaitingNone')}</p>`}
</section>`;
}

/** Why a payout failed, in words where the reason is known, with the acquirer's code beside them. */
function failureWords({ t }: View, payout: PayoutRecord | undefined): string {
  const reason = payout?.failure_reason ?? '';
  return reason === 'card_declined' ? `${t('payoutReason_card_declined')} (${reason})` : reason || '—';
}

/**
 * Shipment and delivery: when the order left and with whom, when it arrived, and until when the buyer may still open a
 * dispute before the money goes to the seller by itself. The seller marks the shipment here while the rules allow it
 * (a GET form: the next page asks to confirm, and only that page's form changes the deal).
 */
function deliverySection(
  view: View,
  snapshot: DealSnapshot,
  role: DealRole,
  actions: DealVerb[],
): SafeHtml | undefined {
  const { t, lang, timeZone } = view;
  const { delivery } = snapshot;
  const mayShip = actions.includes('ship');
  if (!delivery && !mayShip) return undefined;
  const held = snapshot.payments.at(-1)?.status === 'hold' && !isFinal(dealStatus(snapshot));
  const facts = delivery
    ? html`<dl>
<dt>${t('status')}</dt><dd class="status" id="delivery-status">${t('shippedOn', { date: formatDate(lang, delivery.shipped_at, timeZone) })}${
        delivery.delivered_at
          ? html` · ${t('deliveredOn', { date: formatDate(lang, delivery.delivered_at, timeZone) })}`
          : html` · ${t('notDeliveredYet')}`
      }</dd>
${delivery.carrier && html`<dt>${t('carrier')}</dt><dd>${delivery.carrier}</dd>`}
${delivery.tracking && html`<dt>${t('tracking')}</dt><dd>${delivery.tracking}</dd>`}
</dl>`
    : html`<p class="muted">${t('notShippedYet')}</p>`;
  const ends =
    delivery?.status === 'delivered' && delivery.inspection_ends_at && held ? delivery.inspection_ends_at : undefined;
  const inspection =
    ends && (role === 'buyer' || role === 'seller')
      ? html`<p class="consequence" id="inspection">${t(role === 'buyer' ? 'inspectionBuyer' : 'inspectionSeller', { date: formatDate(lang, ends, timeZone) })}</p>`
      : undefined;
  const buyerNote =
    delivery && held && role === 'buyer' && !ends ? html`<p class="hint">${t('shippedBuyerNote')}</p>` : undefined;
  const ship = mayShip
    ? html`<form method="get" action="${dealPath(snapshot)}/shipment" id="ship-form">
<h3>${t('shipHeading')}</h3>
<label for="carrier">${t('shipCarrier')}</label>
<input class="field" id="carrier" name="carrier" type="text" maxlength="${SHIP_FIELD_MAX}">
<label for="tracking">${t('shipTracking')}</label>
<input class="field" id="tracking" name="tracking" type="text" maxlength="${SHIP_FIELD_MAX}">
<div><button type="submit">${t('shipButton')}</button></div>
<p class="hint">${t('shipHint')}</p>
</form>`
    : undefined;
  return html`<section aria-labelledby="delivery"><h2 id="delivery">${t('deliveryHeading')}</h2>
${facts}${inspection}${buyerNote}${ship}
</section>`;
}

/**
 * The seller's payout of the released money: waiting for their card (with the way to give one), on its way, paid out
 * (where to), or failed (why, and the way to give another card); each transfer below.
 */
function payoutSection(view: View, snapshot: DealSnapshot): SafeHtml | undefined {
  const { t, lang, timeZone } = view;
  const payout = payoutView(snapshot);
  if (payout.status === 'none') return undefined;
  const payouts = snapshot.payouts ?? [];
  const { currency } = snapshot.deal;
  const total = (status: PayoutRecord['status']) =>
    formatMoney(
      lang,
      toNumber(sum(payouts.filter((item) => item.status === status).map((item) => toMinor(item.amount)))),
      currency,
    );
  const title = payout.destination ? destinationWords(lang, payout.destination) : '';
  const link = (key: 'payout_addCard' | 'payout_giveAnother') =>
    html`<p><a class="button" href="${PAYOUTS_PATH}">${t(key)}</a></p>`;
  const state = {
    awaiting_destination: html`<p class="status">${t('payout_awaiting_destination')}</p>${link('payout_addCard')}`,
    pending: html`<p class="status">${t('payout_pending', { amount: total('pending'), title })}</p>`,
    succeeded: html`<p class="status">${t('payout_succeeded', { amount: total('succeeded'), title })}</p>`,
    failed: html`<p class="status">${t('payout_failed', { reason: failureWords(view, payouts.at(-1)) })}</p>
<p class="hint">${t('payout_failedHint')}</p>${link('payout_giveAnother')}`,
  }[payout.status];
  const items =
    payouts.length > 0
      ? html`<ul class="plain">${payouts.map(
          (item) =>
            html`<li>${formatMoney(lang, item.amount, item.currency)} · ${item.destination.title ? destinationWords(lang, item.destination) : '—'} · <span class="status">${t(
              `payoutItem_${item.status}`,
            )}</span> <span class="muted">${formatDate(lang, item.updated_at, timeZone)}</span></li>`,
        )}</ul>`
      : undefined;
  return html`<section aria-labelledby="payout"><h2 id="payout">${t('payoutHeading')}</h2>
<div id="payout-state">${state}</div>
${items}
</section>`;
}

export function dealBody(
  view: View,
  data: {
    snapshot: DealSnapshot;
    role: DealRole;
    actions: DealVerb[];
    csrf: string;
    error?: string;
    notice?: string;
    sandbox?: boolean;
    /** The marketplace's name: the shop the deal is with. */
    marketplace?: string;
    /** Said beside the money moves when the marketplace or the operator requires a second factor for them. */
    factorNote?: string;
  },
): SafeHtml {
  const { t, lang, timeZone } = view;
  const { snapshot, role, actions } = data;
  const { deal } = snapshot;
  const money = dealMoneyState(snapshot);
  const approvals = [...snapshot.approvals].reverse().map(
    (approval) => html`<li class="card">
<p>${t('approver')}: ${approval.approver} <span class="muted">${t('startedAt', { date: formatDate(lang, approval.created_at, timeZone) })}</span></p>
${decision(view, approval, data.csrf, actions.includes('decide_approval'))}
</li>`,
  );
  return html`<p><a href="/cabinet">${t('backHome')}</a></p>
<h1>${dealTitle(t, snapshot)}</h1>
${message('notice', data.notice)}${message('error', data.error)}
<dl>
${data.marketplace && html`<dt>${t('marketplace')}</dt><dd id="marketplace">${data.marketplace}</dd>`}
<dt>${t('yourRole')}</dt><dd class="role">${roleWords(t, role)}</dd>
<dt>${t('status')}</dt><dd class="status">${badge(DEAL_TONES[dealStatus(snapshot)], dealStatusWords(t, snapshot))}</dd>
<dt>${t('amount')}</dt><dd>${formatMoney(lang, deal.amount, deal.currency)}</dd>
${role === 'buyer' ? undefined : html`<dt>${t('buyer')}</dt><dd>${deal.buyer_name ? `${deal.buyer_name} <${deal.buyer_email}>` : deal.buyer_email}</dd>`}
${deal.seller_email && role !== 'seller' ? html`<dt>${t('seller')}</dt><dd>${deal.seller_email}</dd>` : undefined}
${deal.description && html`<dt>${t('description')}</dt><dd>${deal.description}</dd>`}
${money.released_amount > 0 && html`<dt>${t('releasedAmount')}</dt><dd id="released-amount">${formatMoney(lang, money.released_amount, deal.currency)}</dd>`}
${money.refunded_amount > 0 && html`<dt>${t('refundedAmount')}</dt><dd id="refunded-amount">${formatMoney(lang, money.refunded_amount, deal.currency)}</dd>`}
</dl>
${data.factorNote && html`<p class="hint" id="second-factor-note">${data.factorNote}</p>`}
${escrow(view, snapshot, role, actions, data.csrf, data.sandbox ?? false)}
${deliverySection(view, snapshot, role, actions)}
${role === 'seller' ? payoutSection(view, snapshot) : undefined}
${snapshot.dispute ? disputeSection(view, snapshot, snapshot.dispute, role, actions.includes('message'), data.csrf) : undefined}
<section aria-labelledby="documents"><h2 id="documents">${t('documents')}</h2>${documentList(view, snapshot.documents)}</section>
${
  approvals.length > 0 || role !== 'seller'
    ? html`<section aria-labelledby="approvals"><h2 id="approvals">${t('approvalsHistory')}</h2>
${approvals.length > 0 ? html`<ul class="plain">${approvals}</ul>` : html`<p class="muted">${t('noApprovalHistory')}</p>`}
</section>`
    : undefined
}
<section aria-labelledby="payments"><h2 id="payments">${t('paymentsHeading')}</h2>${paymentList(view, snapshot.payments)}</section>`;
}

/**
 * The confirmation of an escrow move: what will happen, in words, before anything moves. The form posts with
 * `confirmed=yes`; a dispute asks for its reason here.
 */
export function confirmBody(
  view: View,
  data: { snapshot: DealSnapshot; action: PaymentAction; csrf: string; reason?: string; error?: string },
): SafeHtml {
  const { t, lang } = view;
  const { snapshot, action } = data;
  const amount = formatMoney(lang, snapshot.payments.at(-1)?.amount ?? snapshot.deal.amount, snapshot.deal.currency);
  const reason =
    action === 'dispute'
      ? html`<label for="reason">${t('disputeReason')}</label>
<textarea id="reason" name="reason" required maxlength="${REASON_MAX}" aria-describedby="reason-hint">${data.reason ?? ''}</textarea>
<p class="hint" id="reason-hint">${t('textLimitHint', { max: REASON_MAX })}</p>`
      : undefined;
  return html`<p><a href="${dealPath(snapshot)}">${dealTitle(t, snapshot)}</a></p>
<h1>${t(`confirm_${action}_title`)}</h1>
${message('error', data.error)}
<p class="consequence">${t(`confirm_${action}_text`, { amount })}</p>
<form method="post" action="${dealPath(snapshot)}/escrow/${action}">${csrfField(data.csrf)}<input type="hidden" name="confirmed" value="yes">
${reason}
<div class="actions"><button type="submit" class="${BUTTON_CLASS[action]}">${t(`confirm_${action}_button`)}</button>
<a class="button secondary" href="${dealPath(snapshot)}">${t('confirmCancel')}</a></div>
</form>`;
}

/**
 * The confirmation of the seller's shipment: the carrier and tracking number as they will be told, and what it changes
 * (the buyer can then only dispute). The form posts them again with `confirmed=yes`.
 */
export function shipConfirmBody(
  view: View,
  data: { snapshot: DealSnapshot; csrf: string; carrier: string; tracking: string; error?: string },
): SafeHtml {
  const { t } = view;
  const { snapshot } = data;
  return html`<p><a href="${dealPath(snapshot)}">${dealTitle(t, snapshot)}</a></p>
<h1>${t('confirm_ship_title')}</h1>
${message('error', data.error)}
<p class="consequence">${t('confirm_ship_text')}</p>
<form method="post" action="${dealPath(snapshot)}/shipment">${csrfField(data.csrf)}<input type="hidden" name="confirmed" value="yes">
<label for="carrier">${t('shipCarrier')}</label>
<input class="field" id="carrier" name="carrier" type="text" maxlength="${SHIP_FIELD_MAX}" value="${data.carrier}">
<label for="tracking">${t('shipTracking')}</label>
<input class="field" id="tracking" name="tracking" type="text" maxlength="${SHIP_FIELD_MAX}" value="${data.tracking}">
<div class="actions"><button type="submit">${t('confirm_ship_button')}</button>
<a class="button secondary" href="${dealPath(snapshot)}">${t('confirmCancel')}</a></div>
</form>`;
}
