// The console's data account pages: the accounts searched by e-mail with tariff, quota and this month's usage, and an
// account's card (keys issued, shown once, and revoked after a confirmation; the tariff changed; the account's own
// quota set or cleared). They call the functions of the JSON operations and write the same audit records.
import { emptyList, formText, pagePlace, pager, queryText, when } from '../admin/console-kit.ts';
import { ANSWERED, consoleActions, type Answered, type ConsoleAction } from '../admin/console-actions.ts';
import { formatDate } from '../web/i18n.ts';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { isUuid } from '../uuid.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { Problem, problem } from '../http/problem.ts';
import { onceField, type Reveal } from '../admin/console-once.ts';
import { consolePage, notInConsole, type ConsolePage } from '../admin/console.ts';
import { csrfField, message } from '../web/layout.ts';
import { send } from '../web/page.ts';
import {
  DATA_KEY_NAME_MAX,
  issueAccountKey,
  revokeDataKey,
  TARIFF_QUOTAS,
  TARIFFS,
  type DataKeyItem,
  type Tariff,
} from './keys.ts';
import { findDataAccount, listDataAccounts, updateDataAccount, type DataAccountItem } from './quota.ts';
import { MAX_QUOTA } from './admin-routes.ts';
import { dataConsoleTranslator, type DataConsoleTranslate } from './console-i18n.ts';

const LIST = '/admin/view/data-accounts';
const PAGE_SIZE = 20;
const DONE = ['tariff', 'quota', 'quota_cleared', 'revoked'] as const;
type Done = (typeof DONE)[number];

type DataPage = ConsolePage & { d: DataConsoleTranslate };
const withWords = (p: ConsolePage): DataPage => ({ ...p, d: dataConsoleTranslator(p.lang) });
const accountPath = (id: string) => `${LIST}/${id}`;
const isTariff = (value: unknown): value is Tariff => TARIFFS.includes(value as Tariff);

export function dataAccountConsolePages(api: Api, services: Services): void {
  const router = api.router;
  const { db } = services;

  router.get(
    LIST,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const filter: AccountFilter = {
        q: queryText(p.ctx.query, 'q', 320),
        tariff: TARIFFS.find((tariff) => tariff === p.ctx.query.tariff) ?? '',
      };
      const place = pagePlace(p.ctx.query, isUuid);
      const page = await listDataAccounts(db, {
        q: filter.q || undefined,
        tariff: filter.tariff || undefined,
        limit: PAGE_SIZE,
        starting_after: place.after,
      });
      const pages = pager(p.lang, {
        path: LIST,
        filters: filter,
        place,
        last: page.has_more ? page.items.at(-1)!.id : undefined,
      });
      send(p, 200, p.d('title'), listBody(p, filter, page, pages), undefined, p.admin);
    }),
  );

  router.get(
    `${LIST}/:id`,
    consolePage(services, async (cp) => {
      const p = withWords(cp);
      const account = await findOr404(String(p.ctx.params.id));
      const done = DONE.find((value) => value === p.ctx.query.done);
      send(
        p,
        200,
        p.d('accountTitle', { email: account.email }),
        accountBody(p, account, { notice: done && p.d(`done_${done}`) }),
        undefined,
        p.admin,
      );
    }),
  );

  router.post(
    `${LIST}/:id`,
    consoleActions(services, {
      page: withWords,
      load: (p) => findOr404(String(p.ctx.params.id)),
      path: (account) => accountPath(account.id),
      unknown: 'A tariff, a quota, a new key or a key to revoke.',
      actions: (p, account, form) => {
        const refuse = (status: number, error: string): Answered => {
          send(
            p,
            status,
            p.d('accountTitle', { email: account.email }),
            accountBody(p, account, { error }),
            accountPath(account.id),
            p.admin,
          );
          return ANSWERED;
        };
        const change = (changes: { tariff?: Tariff; monthly_quota?: number | null }, done: Done): ConsoleAction => ({
          run: async () => {
            const changed = await updateDataAccount(db, account.id, changes);
            if (!changed) throw notInConsole('data account');
            return {
              audit: {
                action: 'updateDataAccount',
                object_type: 'data_account',
                object_id: account.id,
                before: changed.before,
                after: changed.after,
              },
              location: `${accountPath(account.id)}?done=${done}`,
            };
          },
        });
        return {
          tariff: () => {
            const tariff = form.get('tariff');
            return isTariff(tariff) ? change({ tariff }, 'tariff') : refuse(400, p.d('badTariff'));
          },
          quota: () => {
            const text = formText(form, 'monthly_quota');
            const quota = /^[0-9]{1,13}$/.test(text) ? Number(text) : NaN;
            return Number.isInteger(quota) && quota <= MAX_QUOTA
              ? change({ monthly_quota: quota }, 'quota')
              : refuse(400, p.d('badQuota'));
          },
          'clear-quota': () => change({ monthly_quota: null }, 'quota_cleared'),
          'issue-key': () => {
            const name = formText(form, 'name');
            if (name.length > DATA_KEY_NAME_MAX) return refuse(400, p.d('badName', { max: DATA_KEY_NAME_MAX }));
            return {
              once: true,
              run: async () => {
                const issued = await issueAccountKey(db, account.id, name);
                return {
                  audit: {
                    action: 'issueDataAccountKey',
                    object_type: 'data_account',
                    object_id: account.id,
                    after: { id: issued.id, key: issued.key },
                  },
                  reveal: issuedReveal(p, account, issued.key),
                };
              },
              refused: (error) =>
                error instanceof Problem && error.code === 'too_many_data_keys'
                  ? refuse(409, p.d('tooManyKeys'))
                  : undefined,
            };
          },
          revoke: () => {
            const key = account.keys.find((candidate) => candidate.id === form.get('key_id'));
            if (!key) throw problem('not_found', 'No such data API key of this account.');
            return {
              confirm: () => ({
                title: p.d('revokeConfirmTitle', { name: keyName(p, key) }),
                text: p.d('revokeConfirmText'),
                button: p.d('revokeConfirmButton'),
                fields: { intent: 'revoke', key_id: key.id },
              }),
              run: async () => {
                const revoked = await revokeDataKey(db, account.id, key.id);
                return {
                  audit: {
                    action: 'revokeDataKey',
                    object_type: 'data_key',
                    object_id: key.id,
                    before: key,
                    after: { ...revoked, account_id: account.id },
                  },
                  location: `${accountPath(account.id)}?done=revoked`,
                };
              },
            };
          },
        };
      },
    }),
  );

  async function findOr404(id: string): Promise<DataAccountItem> {
    const account = await findDataAccount(db, id);
    if (!account) throw notInConsole('data account');
    return account;
  }
}

const canChange = (p: DataPage) => p.admin.role === 'admin';
const keyName = (p: DataPage, key: DataKeyItem) => key.name || p.d('noName');
const number = (p: DataPage, value: number) => value.toLocaleString(p.lang === 'ru' ? 'ru-RU' : 'en-US');
const quotaText = (p: DataPage, account: DataAccountItem) =>
  `${account.monthly_quota === null ? p.d('unlimited') : number(p, account.monthly_quota)} ${account.custom_quota ? p.d('ownQuota') : p.d('tariffQuota')}`;

/** The list's filters as the form has them ('' for any). */
interface AccountFilter {
  q: string;
  tariff: Tariff | '';
}

function listBody(
  p: DataPage,
  filter: AccountFilter,
  page: { items: DataAccountItem[]; has_more: boolean },
  pages: SafeHtml,
): SafeHtml {
  const { d } = p;
  const option = (value: string, label: string) =>
    html`<option value="${value}"${value === filter.tariff ? html` selected` : ''}>${label}</option>`;
  return html`<h1>${d('title')}</h1><p class="muted">${d('intro')}</p>
<form method="get" action="${LIST}" class="filters"><div><label for="q">${d('search')}</label><input id="q" name="q" type="search" maxlength="320" value="${filter.q}"></div>
<div><label for="f-tariff">${d('tariff')}</label><select id="f-tariff" name="tariff">${option('', d('anyTariff'))}${TARIFFS.map((tariff) => option(tariff, tariff))}</select></div>
<div><button type="submit">${d('searchButton')}</button></div></form>
${
  page.items.length === 0
    ? emptyList(p.lang, { filtered: Object.values(filter).some(Boolean), none: d('noAccounts'), path: LIST })
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${d('email')}</th><th>${d('tariff')}</th><th>${d('quota')}</th><th>${d('used')}</th><th>${d('activeKeys')}</th></tr></thead>
<tbody>${page.items.map(
        (
          account,
        ) => html`<tr><td><a href="${accountPath(account.id)}">${account.email}</a></td><td>${account.tariff}</td><td>${quotaText(p, account)}</td>
<td>${number(p, account.used)}</td><td>${account.keys.filter((key) => key.revoked_at === null).length}</td></tr>`,
      )}</tbody></table></div>`
}
${pages}`;
}

function accountBody(p: DataPage, account: DataAccountItem, state: { notice?: string; error?: string }): SafeHtml {
  const { d } = p;
  const path = accountPath(account.id);
  const form = (intent: string, body: SafeHtml, extra = '') =>
    html`<form method="post" action="${path}"${extra ? html` class="${extra}"` : ''}>${csrfField(p.admin.csrf)}<input type="hidden" name="intent" value="${intent}">${intent === 'issue-key' && onceField()}${body}</form>`;
  const tariffLabel = (tariff: Tariff) =>
    d('tariffOption', {
      tariff,
      quota: TARIFF_QUOTAS[tariff] === null ? d('unlimited') : number(p, TARIFF_QUOTAS[tariff]),
    });
  return html`<p><a href="${LIST}">${d('allAccounts')}</a></p>
<h1>${d('accountTitle', { email: account.email })}</h1>
${message('notice', state.notice)}${message('error', state.error)}
<dl>
<dt>${d('tariff')}</dt><dd id="account-tariff">${account.tariff}</dd>
<dt>${d('quota')}</dt><dd id="account-quota">${quotaText(p, account)}</dd>
<dt>${d('used')}</dt><dd id="account-used">${number(p, account.used)}</dd>
</dl>
<section aria-labelledby="keys"><h2 id="keys">${d('keysTitle')}</h2>
${
  account.keys.length === 0
    ? html`<p>${d('noKeys')}</p>`
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${d('keyName')}</th><th>${d('prefix')}</th><th>${d('created')}</th><th>${d('keyState')}</th><th></th></tr></thead>
<tbody>${account.keys.map(
        (
          key,
        ) => html`<tr><td>${keyName(p, key)}</td><td><code>${key.prefix ?? d('unknownPrefix')}</code></td><td>${when(p.lang, key.created_at)}</td>
<td>${key.revoked_at ? d('revokedOn', { date: formatDate(p.lang, key.revoked_at) }) : d('active')}</td>
<td>${key.revoked_at === null && canChange(p) && form('revoke', html`<input type="hidden" name="key_id" value="${key.id}"><button type="submit" class="danger">${d('revokeButton')}</button>`, 'inline')}</td></tr>`,
      )}</tbody></table></div>`
}
${
  canChange(p) &&
  html`<h3>${d('issueTitle')}</h3>${form(
    'issue-key',
    html`<label for="key-name">${d('issueName')}</label><input id="key-name" name="name" maxlength="${DATA_KEY_NAME_MAX}">
<div><button type="submit">${d('issueButton')}</button></div>`,
  )}`
}</section>
${
  canChange(p)
    ? html`<section aria-labelledby="tariff"><h2 id="tariff">${d('tariffTitle')}</h2>
${form(
  'tariff',
  html`<label for="tariff-select">${d('tariff')}</label><select id="tariff-select" name="tariff">${TARIFFS.map(
    (tariff) =>
      html`<option value="${tariff}"${tariff === account.tariff ? html` selected` : ''}>${tariffLabel(tariff)}</option>`,
  )}</select> <button type="submit">${d('changeTariff')}</button>`,
)}</section>
<section aria-labelledby="quota"><h2 id="quota">${d('quotaTitle')}</h2>
${form(
  'quota',
  html`<label for="monthly-quota">${d('quotaLabel')}</label><input id="monthly-quota" name="monthly_quota" type="number" min="0" max="${MAX_QUOTA}" step="1" required value="${account.custom_quota && account.monthly_quota !== null ? String(account.monthly_quota) : ''}" aria-describedby="quota-hint">
<p class="hint" id="quota-hint">${d('quotaHint')}</p><div><button type="submit">${d('setQuota')}</button></div>`,
)}
${account.custom_quota && form('clear-quota', html`<button type="submit" class="secondary">${d('clearQuota')}</button>`)}</section>`
    : html`<p class="muted">${d('readOnly')}</p>`
}`;
}

/** A new key, shown once on the page after the redirect (console-once.ts). */
function issuedReveal(p: DataPage, account: DataAccountItem, key: string): Reveal {
  return {
    title: p.d('issuedTitle', { email: account.email }),
    warning: p.d('issuedText'),
    items: [[p.d('issuedKey'), 'issued-key', key]],
    back: { href: accountPath(account.id), label: p.d('backToAccount') },
  };
}
