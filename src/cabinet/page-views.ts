// What each cabinet page shows, as HTML bodies. No logic beyond layout: pages.ts loads the data through
// operations.ts and decides which page and status to answer with.
import type { ApprovalRecord, DealSnapshot, DocumentRecord, PaymentRecord } from '../deals/model.ts';
import { dealStatus } from '../deals/model.ts';
import type { PaymentAction } from '../../workflows/deal-messages.ts';
import { MIN_PASSWORD_LENGTH } from '../accounts/passwords.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { csrfField, message } from './html.ts';
import { formatDate, formatMoney, kindWords, paymentWords, statusWords, type Lang, type Translate } from './i18n.ts';

export interface View {
  lang: Lang;
  t: Translate;
}

export const COMMENT_MAX = 2000;

export function signInBody({ t }: View, form: { email: string; next: string; csrf: string; error?: string; notice?: string }): SafeHtml {
  return html`<h1>${t('signInTitle')}</h1>
${message('notice', form.notice)}${message('error', form.error)}
<form method="post" action="/cabinet/sign-in">
${csrfField(form.csrf)}<input type="hidden" name="next" value="${form.next}">
${credentialFields(t, form.email)}
</form>
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

export function inviteBody({ t }: View, form: { token: string; csrf: string; error?: string }): SafeHtml {
  return html`<h1>${t('inviteTitle')}</h1>
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

export function errorBody({ t }: View, title: string, text: string, signedIn: boolean): SafeHtml {
  return html`<h1>${title}</h1>
<p>${text}</p>
<p><a href="${signedIn ? '/cabinet' : '/cabinet/sign-in'}">${signedIn ? t('backHome') : t('goToSignIn')}</a></p>`;
}

const dealTitle = (t: Translate, snapshot: DealSnapshot) => snapshot.deal.title.trim() || t('untitled');

function documentList({ t }: View, documents: DocumentRecord[]): SafeHtml {
  if (documents.length === 0) return html`<p class="muted">${t('noDocuments')}</p>`;
  return html`<ul class="plain">${documents.map(
    (document) => html`<li>${kindWords(t, document.kind)}: <a href="/cabinet/documents/${document.id}/content" download>${document.name}</a></li>`,
  )}</ul>`;
}

/** Approve and Reject for a pending approval; the decided state otherwise. */
function decision(view: View, approval: ApprovalRecord, csrf: string): SafeHtml {
  const { t, lang } = view;
  if (approval.status !== 'pending') {
    return html`<p><span class="status">${t(`approval_${approval.status}`)}</span>${
      approval.decided_at && html` <span class="muted">${t('decidedAt', { date: formatDate(lang, approval.decided_at) })}</span>`
    }</p>${approval.comment && html`<p>${t('comment')}: ${approval.comment}</p>`}`;
  }
  const commentId = `comment-${approval.id}`;
  return html`<div class="actions">
<form method="post" action="/cabinet/view/approvals/${approval.id}/approve">${csrfField(csrf)}<button type="submit">${t('approve')}</button></form>
<form method="post" action="/cabinet/view/approvals/${approval.id}/reject">${csrfField(csrf)}
<label for="${commentId}">${t('rejectComment')}</label>
<textarea id="${commentId}" name="comment" maxlength="${COMMENT_MAX}"></textarea>
<div><button type="submit" class="danger">${t('reject')}</button></div>
</form>
</div>`;
}

export function homeBody(
  view: View,
  data: { approvals: { approval: ApprovalRecord; snapshot: DealSnapshot }[]; deals: DealSnapshot[]; csrf: string },
): SafeHtml {
  const { t, lang } = view;
  const approvals = data.approvals.map(
    ({ approval, snapshot }) => html`<article class="card">
<h3><a href="/cabinet/view/deals/${snapshot.deal.id}">${dealTitle(t, snapshot)}</a></h3>
<p>${t('amount')}: ${formatMoney(lang, snapshot.deal.amount, snapshot.deal.currency)}</p>
${documentList(view, snapshot.documents)}
${decision(view, approval, data.csrf)}
</article>`,
  );
  const deals = data.deals.map(
    (snapshot) => html`<li class="card">
<h3><a href="/cabinet/view/deals/${snapshot.deal.id}">${dealTitle(t, snapshot)}</a></h3>
<p>${formatMoney(lang, snapshot.deal.amount, snapshot.deal.currency)} · <span class="status">${statusWords(t, dealStatus(snapshot))}</span></p>
<p><a href="/cabinet/view/deals/${snapshot.deal.id}">${t('openDeal')}</a></p>
</li>`,
  );
  return html`<h1>${t('homeTitle')}</h1>
<section aria-labelledby="approvals"><h2 id="approvals">${t('approvalsHeading')}</h2>
${approvals.length > 0 ? approvals : html`<p class="muted">${t('noApprovals')}</p>`}
</section>
<section aria-labelledby="deals"><h2 id="deals">${t('dealsHeading')}</h2>
${deals.length > 0 ? html`<ul class="plain">${deals}</ul>` : html`<p class="muted">${t('noDeals')}</p>`}
</section>`;
}

function paymentList({ t, lang }: View, payments: PaymentRecord[]): SafeHtml {
  if (payments.length === 0) return html`<p class="muted">${t('noPayments')}</p>`;
  return html`<ul class="plain">${payments.map(
    (payment) => html`<li>${formatMoney(lang, payment.amount, payment.currency)} · <span class="status">${paymentWords(t, payment.status)}</span> <span class="muted">${formatDate(lang, payment.updated_at)}</span></li>`,
  )}</ul>`;
}

const ACTION_HINT = { release: 'releaseHint', refund: 'refundHint', dispute: 'disputeHint' } as const;

/** The escrow section: what the buyer may do now, and for a live payment not yet paid, the way to pay. */
function escrow(view: View, snapshot: DealSnapshot, actions: PaymentAction[], csrf: string): SafeHtml | undefined {
  const { t } = view;
  const latest = snapshot.payments.at(-1);
  if (!latest) return undefined;
  const payLink =
    latest.status === 'pending' && latest.payment_url && /^https?:\/\//.test(latest.payment_url)
      ? html`<p><a href="${latest.payment_url}">${t('payNow')}</a></p><p class="hint">${t('pendingPaymentNote')}</p>`
      : undefined;
  const forms = actions.map(
    (action) => html`<form method="post" action="/cabinet/view/deals/${snapshot.deal.id}/escrow/${action}">${csrfField(csrf)}
<button type="submit" class="${{ release: 'primary', refund: 'secondary', dispute: 'danger' }[action]}">${t(action)}</button>
<p class="hint">${t(ACTION_HINT[action])}</p></form>`,
  );
  const idle = latest.status === 'disputed' ? t('disputeNote') : t('noEscrowActions');
  return html`<section aria-labelledby="escrow"><h2 id="escrow">${t('escrowHeading')}</h2>${payLink}
${forms.length > 0 ? html`<div class="actions">${forms}</div>` : !payLink && html`<p class="muted">${idle}</p>`}
</section>`;
}

export function dealBody(
  view: View,
  data: { snapshot: DealSnapshot; actions: PaymentAction[]; csrf: string; userEmail: string; error?: string; notice?: string },
): SafeHtml {
  const { t, lang } = view;
  const { snapshot } = data;
  const { deal } = snapshot;
  const approvals = [...snapshot.approvals].reverse().map(
    (approval) => html`<li class="card">
<p>${t('approver')}: ${approval.approver} <span class="muted">${t('startedAt', { date: formatDate(lang, approval.created_at) })}</span></p>
${approval.status === 'pending' && approval.approver.toLowerCase() !== data.userEmail.toLowerCase()
  ? html`<p class="status">${t('approval_pending')}</p>`
  : decision(view, approval, data.csrf)}
</li>`,
  );
  return html`<p><a href="/cabinet">${t('backHome')}</a></p>
<h1>${dealTitle(t, snapshot)}</h1>
${message('notice', data.notice)}${message('error', data.error)}
<dl>
<dt>${t('status')}</dt><dd class="status">${statusWords(t, dealStatus(snapshot))}</dd>
<dt>${t('amount')}</dt><dd>${formatMoney(lang, deal.amount, deal.currency)}</dd>
${deal.seller_email && html`<dt>${t('seller')}</dt><dd>${deal.seller_email}</dd>`}
${deal.description && html`<dt>${t('description')}</dt><dd>${deal.description}</dd>`}
</dl>
${escrow(view, snapshot, data.actions, data.csrf)}
<section aria-labelledby="documents"><h2 id="documents">${t('documents')}</h2>${documentList(view, snapshot.documents)}</section>
<section aria-labelledby="approvals"><h2 id="approvals">${t('approvalsHistory')}</h2>
${approvals.length > 0 ? html`<ul class="plain">${approvals}</ul>` : html`<p class="muted">${t('noApprovalHistory')}</p>`}
</section>
<section aria-labelledby="payments"><h2 id="payments">${t('paymentsHeading')}</h2>${paymentList(view, snapshot.payments)}</section>`;
}
