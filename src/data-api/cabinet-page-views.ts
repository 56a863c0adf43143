// What the cabinet's data keys pages show, as HTML bodies; cabinet-pages.ts loads the data and picks page and status.
import { html, type SafeHtml } from '../http/html.ts';
import { csrfField, message } from '../web/layout.ts';
import type { View } from '../web/page.ts';
import { formatDate, type Lang } from '../web/i18n.ts';
import type { DataKeysTranslate } from './cabinet-i18n.ts';
import { ACTIVE_DATA_KEYS_MAX, DATA_KEY_NAME_MAX, type DataKeyItem } from './keys.ts';
import type { AccountUsage } from './quota.ts';

export const KEYS_PATH = '/cabinet/view/data-keys';
export const revokePath = (id: string) => `${KEYS_PATH}/${id}/revoke`;

export interface KeysView extends View {
  d: DataKeysTranslate;
}

const count = (lang: Lang, value: number) => new Intl.NumberFormat(lang === 'ru' ? 'ru-RU' : 'en-GB').format(value);
const keyName = ({ d }: KeysView, key: DataKeyItem) => key.name || d('unnamed');
const keyPrefix = ({ d }: KeysView, key: DataKeyItem) => (key.prefix ? `${key.prefix}…` : d('prefixUnknown'));

export function keysBody(
  view: KeysView,
  data: {
    usage: AccountUsage;
    keys: DataKeyItem[];
    csrf: string;
    dataUrl: string;
    name?: string;
    error?: string;
    notice?: string;
  },
): SafeHtml {
  const { d } = view;
  const active = data.keys.filter((key) => key.revoked_at === null).length;
  return html`<h1>${d('title')}</h1>
${message('notice', data.notice)}${message('error', data.error)}
<p>${d('intro', { rest: `${data.dataUrl}/v1`, mcp: `${data.dataUrl}/mcp/` })}</p>
${usageSection(view, data.usage)}
<section aria-labelledby="issue"><h2 id="issue">${d('issueHeading')}</h2>
<form method="post" action="${KEYS_PATH}">
${csrfField(data.csrf)}
<label for="name">${d('name')}</label>
<input id="name" name="name" type="text" required maxlength="${DATA_KEY_NAME_MAX}" value="${data.name ?? ''}" aria-describedby="name-hint">
<p class="hint" id="name-hint">${d('nameHint', { max: DATA_KEY_NAME_MAX })}</p>
<div><button type="submit">${d('issueButton')}</button></div>
</form>
</section>
<section aria-labelledby="keys"><h2 id="keys">${d('keysHeading')}</h2>
<p class="muted">${d('activeCount', { count: active, max: ACTIVE_DATA_KEYS_MAX })}</p>
${data.keys.length === 0 ? html`<p class="muted">${d('noKeys')}</p>` : html`<ul class="plain">${data.keys.map((key) => keyCard(view, key))}</ul>`}
</section>`;
}

function usageSection(view: KeysView, usage: AccountUsage): SafeHtml {
  const { d, lang, timeZone } = view;
  const used =
    usage.monthly_quota === null
      ? d('usedUnlimited', { used: count(lang, usage.used) })
      : d('usedOfQuota', { used: count(lang, usage.used), quota: count(lang, usage.monthly_quota) });
  return html`<section aria-labelledby="usage"><h2 id="usage">${d('usageHeading')}</h2>
<dl>
<dt>${d('tariff')}</dt><dd>${d(`tariff_${usage.tariff}`)}</dd>
<dt>${d('usedThisMonth')}</dt><dd>${used}</dd>
${usage.remaining !== null && html`<dt>${d('remaining')}</dt><dd>${count(lang, usage.remaining)}</dd>`}
<dt>${d('resets')}</dt><dd>${formatDate(lang, usage.resets_at, timeZone)}</dd>
</dl>
<p class="hint">${d('usageHint')}</p>
</section>`;
}

function keyCard(view: KeysView, key: DataKeyItem): SafeHtml {
  const { d, lang, timeZone } = view;
  return html`<li class="card">
<h3>${keyName(view, key)}</h3>
<dl>
<dt>${d('prefix')}</dt><dd><code>${keyPrefix(view, key)}</code></dd>
<dt>${d('created')}</dt><dd>${formatDate(lang, key.created_at, timeZone)}</dd>
<dt>${d('state')}</dt><dd class="status">${key.revoked_at ? d('revokedOn', { date: formatDate(lang, key.revoked_at, timeZone) }) : d('active')}</dd>
</dl>
${key.revoked_at === null && html`<p><a href="${revokePath(key.id)}" aria-label="${d('revokeLink')} ${keyName(view, key)}">${d('revokeLink')}</a></p>`}
</li>`;
}

/** The key, once: in the answer to the form that issued it, never in an address. */
export function issuedBody(view: KeysView, issued: { name: string; key: string }): SafeHtml {
  const { d } = view;
  return html`<h1>${d('issuedTitle')}</h1>
${message('notice', d('issuedNotice', { name: issued.name }))}
<p class="consequence" role="alert">${d('copyNow')}</p>
<p><code class="text" id="new-key">${issued.key}</code></p>
<p class="hint">${d('lostKey')}</p>
<p><a class="button" href="${KEYS_PATH}">${d('backToKeys')}</a></p>`;
}

export function revokeBody(view: KeysView, data: { key: DataKeyItem; csrf: string }): SafeHtml {
  const { d } = view;
  const { key } = data;
  if (key.revoked_at !== null) {
    return html`<h1>${d('revokeTitle')}</h1>
${message('notice', d('revokeAlready'))}
<p><a href="${KEYS_PATH}">${d('toKeys')}</a></p>`;
  }
  return html`<h1>${d('revokeTitle')}</h1>
<p class="consequence">${d('revokeWhat', { name: keyName(view, key), prefix: keyPrefix(view, key) })}</p>
<form method="post" action="${revokePath(key.id)}">
${csrfField(data.csrf)}<input type="hidden" name="confirmed" value="yes">
<div class="actions"><button type="submit" class="danger">${d('revokeButton')}</button>
<a class="button secondary" href="${KEYS_PATH}">${d('cancel')}</a></div>
</form>`;
}
