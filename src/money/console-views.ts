// What the console's money pages show, as HTML bodies: the ledger (filters, balances, postings), the reconciliation
// (runs, findings, "run now" and its confirmation), and a deal's postings for the deal's page. Amounts are written
// exactly from minor units (Intl formats the decimal text, never a float); times in UTC.
import { html, type SafeHtml } from '../http/html.ts';
import { csrfField, message } from '../web/layout.ts';
import { formatDate, type Lang } from '../web/i18n.ts';
import type { ConsoleAdmin } from '../admin/console.ts';
import { emptyList } from '../admin/console-kit.ts';
import { formatMinor, toMinor } from './amount.ts';
import { ACCOUNT, HELD_PREFIX, type PostingKind } from './ledger.ts';
import type { FindingStatus, ItemRecord, RunRecord } from './reconciliation.ts';
import type { MoneyConsoleMessage, MoneyConsoleTranslate } from './console-i18n.ts';

/** What every money view needs: the language and its words. */
export interface MoneyWords {
  lang: Lang;
  m: MoneyConsoleTranslate;
}

/** A posting as the pages show it: amounts as PostgreSQL's numeric text. */
export interface PostingRow {
  id: string;
  at: Date;
  marketplace_id: string;
  deal_id: string;
  kind: PostingKind;
  entries: { account: string; amount: string; currency: string }[];
}

export interface BalanceRow {
  marketplace_id: string;
  currency: string;
  /** Minor units of each part. */
  held: bigint;
  payable: bigint;
  paid_out: bigint;
  refunded: bigint;
  fees: bigint;
}

export const LEDGER_PATH = '/admin/view/ledger';
export const RECONCILIATION_PATH = '/admin/view/reconciliation';
const dealHref = (id: string) => `/admin/view/deals/${id}`;

/** An amount of minor units as people write it in this language ("1 234,50 ₽", "RUB 1,234.50"), exactly. */
export function exactMoney(lang: Lang, minor: bigint, currency: string): string {
  const decimal = formatMinor(minor);
  try {
    // Intl formats a decimal string exactly (no double in between), whatever its size.
    const format = new Intl.NumberFormat(lang === 'ru' ? 'ru-RU' : 'en-GB', {
      style: 'currency',
      currency,
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
    });
    return format.format(decimal as unknown as number);
  } catch {
    return `${decimal} ${currency}`;
  }
}

const when = (lang: Lang, date: Date) =>
  html`<time datetime="${date.toISOString()}">${formatDate(lang, date.toISOString())}</time>`;

const ACCOUNT_WORDS: Record<string, MoneyConsoleMessage> = {
  [ACCOUNT.buyer]: 'account_buyer',
  [ACCOUNT.sellerPayable]: 'account_seller_payable',
  [ACCOUNT.sellerPaidOut]: 'account_seller_paid_out',
  [ACCOUNT.marketplaceFee]: 'account_marketplace_fee',
  [ACCOUNT.refunded]: 'account_refunded',
  [ACCOUNT.acquirerFee]: 'account_acquirer_fee',
};

/** An account in words, its name as the API writes it on hover. */
function accountWords(m: MoneyConsoleTranslate, account: string): SafeHtml {
  const key = account.startsWith(HELD_PREFIX) ? 'account_held' : ACCOUNT_WORDS[account];
  return html`<span title="${account}">${key ? m(key) : account}</span>`;
}

function entriesList(w: MoneyWords, entries: PostingRow['entries']): SafeHtml {
  return html`<ul class="plain">${entries.map(
    (entry) =>
      html`<li>${accountWords(w.m, entry.account)}: <span class="amount" data-amount="${formatMinor(toMinor(entry.amount))}">${exactMoney(w.lang, toMinor(entry.amount), entry.currency)}</span></li>`,
  )}</ul>`;
}

/** The postings table; `marketplaces` names them (and adds the marketplace and deal columns) on the ledger page. */
export function postingsTable(w: MoneyWords, postings: PostingRow[], marketplaces?: Map<string, string>): SafeHtml {
  const { m, lang } = w;
  return html`<div class="table" tabindex="0"><table class="postings">
<thead><tr><th>${m('at')}</th>${marketplaces && html`<th>${m('marketplace')}</th><th>${m('deal')}</th>`}<th>${m('movement')}</th><th>${m('entries')}</th></tr></thead>
<tbody>${postings.map(
    (posting) =>
      html`<tr data-posting="${posting.id}"><td>${when(lang, posting.at)}</td>${
        marketplaces &&
        html`<td>${marketplaces.get(posting.marketplace_id) ?? posting.marketplace_id}</td><td><a href="${dealHref(posting.deal_id)}"><code>${posting.deal_id.slice(0, 8)}</code></a></td>`
      }<td>${m(`kind_${posting.kind}`)}</td><td>${entriesList(w, posting.entries)}</td></tr>`,
  )}</tbody></table></div>`;
}

export interface LedgerFilterForm {
  marketplace_id: string;
  deal_id: string;
}

export interface LedgerPageData {
  form: LedgerFilterForm;
  marketplaces: Map<string, string>;
  balances: BalanceRow[];
  postings: PostingRow[];
  /** The postings' previous and next links (console-kit's pager). */
  pages: SafeHtml;
  error?: string;
}

export function ledgerBody(w: MoneyWords, data: LedgerPageData): SafeHtml {
  const { m, lang } = w;
  const option = (value: string, label: string) =>
    html`<option value="${value}"${value === data.form.marketplace_id ? html` selected` : ''}>${label}</option>`;
  const money = (
    row: BalanceRow,
    part: keyof Pick<BalanceRow, 'held' | 'payable' | 'paid_out' | 'refunded' | 'fees'>,
  ) => html`<td data-part="${part}">${exactMoney(lang, row[part], row.currency)}</td>`;
  return html`<h1>${m('ledgerTitle')}</h1>
<p class="muted">${m('ledgerIntro')}</p>
<p><a href="${RECONCILIATION_PATH}">${m('toReconciliation')}</a></p>
${message('error', data.error)}
<form method="get" action="${LEDGER_PATH}" class="filters">
<div><label for="marketplace_id">${m('marketplace')}</label><select id="marketplace_id" name="marketplace_id">${option('', m('anyMarketplace'))}${[...data.marketplaces].map(([id, name]) => option(id, name))}</select></div>
<div><label for="deal_id">${m('dealId')}</label><input id="deal_id" name="deal_id" value="${data.form.deal_id}" maxlength="36" pattern="[0-9a-fA-F-]{36}"></div>
<div><button type="submit">${m('showButton')}</button> <a href="${LEDGER_PATH}">${m('clearFilters')}</a></div>
</form>
<section aria-labelledby="balances"><h2 id="balances">${m('balancesHeading')}</h2>
<p class="hint">${m('balancesIntro')}</p>
${
  data.balances.length === 0
    ? html`<p class="muted">${m('noBalances')}</p>`
    : html`<div class="table" tabindex="0"><table id="balances-table">
<thead><tr><th>${m('marketplace')}</th><th>${m('currency')}</th><th>${m('held')}</th><th>${m('payable')}</th><th>${m('paidOut')}</th><th>${m('refunded')}</th><th>${m('fees')}</th></tr></thead>
<tbody>${data.balances.map(
        (
          row,
        ) => html`<tr data-marketplace="${row.marketplace_id}" data-currency="${row.currency}"><td>${data.marketplaces.get(row.marketplace_id) ?? row.marketplace_id}</td><td>${row.currency}</td>
${money(row, 'held')}${money(row, 'payable')}${money(row, 'paid_out')}${money(row, 'refunded')}${money(row, 'fees')}</tr>`,
      )}</tbody></table></div>`
}
</section>
<section aria-labelledby="postings"><h2 id="postings">${m('postingsHeading')}</h2>
${
  data.postings.length === 0
    ? emptyList(w.lang, { filtered: Object.values(data.form).some(Boolean), none: m('noPostings'), path: LEDGER_PATH })
    : postingsTable(w, data.postings, data.marketplaces)
}
${data.pages}
</section>`;
}

/** A deal's postings, oldest first, for the deal's console page; a link to the same in the ledger. */
export function dealPostingsBody(w: MoneyWords, dealId: string, postings: PostingRow[]): SafeHtml {
  const { m } = w;
  return html`<section aria-labelledby="ledger-postings"><h2 id="ledger-postings">${m('dealPostingsHeading')}</h2>
${postings.length === 0 ? html`<p class="muted">${m('dealNoPostings')}</p>` : postingsTable(w, postings)}
<p><a href="${`${LEDGER_PATH}?${new URLSearchParams({ deal_id: dealId })}`}">${m('dealInLedger')}</a></p></section>`;
}

export interface ReconciliationPageData {
  admin: ConsoleAdmin;
  runs: RunRecord[];
  /** The run whose findings are shown, when one is chosen. */
  run?: RunRecord;
  status?: FindingStatus;
  items: ItemRecord[];
  /** The findings' previous and next links (console-kit's pager). */
  pages: SafeHtml;
  notice?: string;
  error?: string;
}

/** A finding's value: an amount of a balance in the page's words, a status as its code. */
function findingValue(w: MoneyWords, item: ItemRecord, value: string | null): SafeHtml {
  if (value === null) return html`<span class="muted">${w.m('noAnswer')}</span>`;
  if (item.kind === 'deal_balance' && item.currency) {
    try {
      return html`<span data-amount="${value}">${exactMoney(w.lang, toMinor(value), item.currency)}</span>`;
    } catch {
      // An acquirer's answer that is not an amount is shown as it came.
    }
  }
  return html`<code>${value}</code>`;
}

export function reconciliationBody(w: MoneyWords, data: ReconciliationPageData): SafeHtml {
  const { m, lang } = w;
  const findingsPath = (status?: string) =>
    `${RECONCILIATION_PATH}?${new URLSearchParams({ ...(data.run ? { run_id: data.run.id } : {}), ...(status ? { status } : {}) })}#findings`;
  const statusLink = (status: FindingStatus | undefined, label: string) =>
    status === data.status ? html`<strong>${label}</strong>` : html`<a href="${findingsPath(status)}">${label}</a>`;
  return html`<h1>${m('reconciliationTitle')}</h1>
<p class="muted">${m('reconciliationIntro')}</p>
<p><a href="${LEDGER_PATH}">${m('toLedger')}</a></p>
${message('notice', data.notice)}${message('error', data.error)}
${
  data.admin.role === 'admin'
    ? html`<form method="post" action="${RECONCILIATION_PATH}/runs" id="run-now">${csrfField(data.admin.csrf)}<button type="submit">${m('runNow')}</button>
<p class="hint">${m('runNowHint')}</p></form>`
    : html`<p class="hint">${m('runNowAdminsOnly')}</p>`
}
<section aria-labelledby="runs"><h2 id="runs">${m('runsHeading')}</h2>
${
  data.runs.length === 0
    ? html`<p class="muted">${m('noRuns')}</p>`
    : html`<div class="table" tabindex="0"><table id="runs-table">
<thead><tr><th>${m('started')}</th><th>${m('startedBy')}</th><th>${m('status')}</th><th>${m('finished')}</th><th>${m('dealsChecked')}</th><th>${m('checks')}</th><th>${m('mismatches')}</th><th>${m('errors')}</th><th></th></tr></thead>
<tbody>${data.runs.map(
        (
          run,
        ) => html`<tr data-run="${run.id}"><td>${when(lang, run.started_at)}</td><td>${run.trigger === 'schedule' ? m('trigger_schedule') : (run.started_by ?? '')}</td>
<td class="status">${m(`run_${run.status}`)}${run.error && html`<br><span class="muted">${run.error}</span>`}</td><td>${run.finished_at ? when(lang, run.finished_at) : '—'}</td>
<td>${run.deals_checked}</td><td>${run.checks}</td><td>${run.mismatches}</td><td>${run.errors}</td>
<td><a href="${`${RECONCILIATION_PATH}?${new URLSearchParams({ run_id: run.id })}#findings`}">${m('runFindings')}</a></td></tr>`,
      )}</tbody></table></div>`
}
</section>
<section aria-labelledby="findings"><h2 id="findings">${data.run ? m('findingsOfRun', { date: formatDate(lang, data.run.started_at.toISOString()) }) : m('findingsHeading')}</h2>
${data.run && html`<p><a href="${RECONCILIATION_PATH}#findings">${m('allRuns')}</a></p>`}
<p>${m('show')}: ${statusLink(undefined, m('status_any'))} · ${statusLink('mismatch', m('status_mismatch'))} · ${statusLink('error', m('status_error'))}</p>
${
  data.items.length === 0
    ? emptyList(lang, { filtered: !!data.status, none: m('noFindings'), path: `${RECONCILIATION_PATH}#findings` })
    : html`<div class="table" tabindex="0"><table id="findings-table">
<thead><tr><th>${m('checked')}</th><th>${m('deal')}</th><th>${m('what')}</th><th>${m('ours')}</th><th>${m('theirs')}</th><th>${m('status')}</th></tr></thead>
<tbody>${data.items.map(
        (
          item,
        ) => html`<tr data-item="${item.id}" data-deal="${item.deal_id}" data-kind="${item.kind}"><td>${when(lang, item.checked_at)}</td>
<td><a href="${dealHref(item.deal_id)}"><code>${item.deal_id.slice(0, 8)}</code></a></td>
<td>${m(`findingKind_${item.kind}`)} <code>${item.ref}</code></td><td>${findingValue(w, item, item.ours)}</td>
<td>${findingValue(w, item, item.theirs)}${item.status === 'error' && html`<br><span class="muted">${item.detail}</span>`}</td>
<td class="status">${m(`finding_${item.status}`)}</td></tr>`,
      )}</tbody></table></div>`
}
${data.pages}
</section>`;
}
