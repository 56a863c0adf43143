// The HTML of the console's marketplace pages. Keys and secrets appear only once: on the page a creation, rotation or
// reveal redirects to (read once from console_once); never on the card itself, never in a URL.
import { badge, emptyList, pager, when, type BadgeTone, type PagePlace } from '../admin/console-kit.ts';
import { html, type SafeHtml } from '../http/html.ts';
import { csrfField, message } from '../web/layout.ts';
import type { ConsolePage } from '../admin/console.ts';
import { onceField, type Reveal } from '../admin/console-once.ts';
import type { WebhookEndpoint } from '../webhooks/endpoints.ts';
import { WEBHOOK_EVENTS } from '../webhooks/events.ts';
import type { AttemptLogItem } from '../webhooks/deliveries.ts';
import type { Marketplace } from './marketplaces.ts';
import type { MarketplaceCard } from './admin.ts';
import type { MarketplaceTranslate } from './console-i18n.ts';
import { LIVE_PROVIDERS } from '../escrow/providers.ts';
import { INSPECTION_DAYS_MAX } from './admin-routes.ts';

export type MarketplaceView = ConsolePage & { m: MarketplaceTranslate };

export const OVERLAPS = [0, 3600, 86_400, 604_800] as const;
export type Overlap = (typeof OVERLAPS)[number];

export interface LogFilter {
  status?: string;
  event?: string;
  deal_id?: string;
}

const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

/** The list's filters as the form has them ('' for any). */
export interface ListFilter {
  q: string;
  mode: '' | 'sandbox' | 'live';
  state: '' | 'active' | 'inactive';
}

export function listBody(
  p: MarketplaceView,
  filter: ListFilter,
  page: { items: Marketplace[]; has_more: boolean },
  pages: SafeHtml,
): SafeHtml {
  const { m } = p;
  const option = (value: string, label: string, current: string) =>
    html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
  return html`<h1>${m('listTitle')}</h1>
<p><a class="button" href="/admin/view/marketplaces/new">${m('activateLink')}</a></p>
<form method="get" action="/admin/view/marketplaces" class="filters"><div><label for="q">${m('search')}</label><input id="q" name="q" value="${filter.q}" maxlength="200"></div>
<div><label for="mode">${m('mode')}</label><select id="mode" name="mode">${option('', m('anyMode'), filter.mode)}${option('sandbox', m('mode_sandbox'), filter.mode)}${option('live', m('mode_live'), filter.mode)}</select></div>
<div><label for="state">${m('state')}</label><select id="state" name="state">${option('', m('anyState'), filter.state)}${option('active', m('active'), filter.state)}${option('inactive', m('inactive'), filter.state)}</select></div>
<div><button type="submit">${m('searchButton')}</button></div></form>
${
  page.items.length === 0
    ? emptyList(p.lang, {
        filtered: Object.values(filter).some(Boolean),
        none: m('noMarketplaces'),
        path: '/admin/view/marketplaces',
      })
    : html`<div class="table" tabindex="0"><table>
<thead><tr><th>${m('name')}</th><th>${m('mode')}</th><th>${m('state')}</th><th>${m('created')}</th><th>${m('id')}</th></tr></thead>
<tbody>${page.items.map(
        (
          item,
        ) => html`<tr><td><a href="/admin/view/marketplaces/${item.id}">${item.name}</a></td><td>${m(`mode_${item.mode}`)}</td>
<td>${item.active ? badge('ok', m('active')) : badge('muted', m('inactive'))}</td><td>${when(p.lang, item.created_at)}</td><td><code>${item.id}</code></td></tr>`,
      )}</tbody></table></div>`
}
${pages}`;
}

export interface MarketplaceFields {
  name: string;
  mode: string;
  allowed_origins: string;
  sso_redirect_uri: string;
}

function fields(p: MarketplaceView, values: MarketplaceFields): SafeHtml {
  const { m } = p;
  return html`<label for="name">${m('name')}</label><input id="name" name="name" required maxlength="200" value="${values.name}">
<label for="mode">${m('mode')}</label><select id="mode" name="mode">${(['sandbox', 'live'] as const).map(
    (mode) => html`<option value="${mode}"${values.mode === mode ? html` selected` : ''}>${m(`mode_${mode}`)}</option>`,
  )}</select>
<label for="allowed_origins">${m('origins')}</label><textarea id="allowed_origins" name="allowed_origins" aria-describedby="origins-hint">${values.allowed_origins}</textarea>
<p class="hint" id="origins-hint">${m('originsHint')}</p>
<label for="sso_redirect_uri">${m('ssoRedirectUri')}</label><input id="sso_redirect_uri" name="sso_redirect_uri" type="url" maxlength="2000" value="${values.sso_redirect_uri}" aria-describedby="sso-hint">
<p class="hint" id="sso-hint">${m('ssoRedirectHint')}</p>`;
}

/** The fee schedule's fields of the card's form, as typed (decimal text; empty for a part not set). */
export interface FeeFields {
  fee_percent: string;
  fee_fixed: string;
  fee_min: string;
  fee_max: string;
  fee_moment: string;
}

/** The acquirer and the inspection window, as typed (the window's days as text: a wrong one is shown back as typed). */
export interface EscrowFields {
  provider: string;
  inspection_days: string;
}

export type CardFields = MarketplaceFields & FeeFields & EscrowFields;

function escrowFields(p: MarketplaceView, values: EscrowFields): SafeHtml {
  const { m } = p;
  return html`<h3 id="escrow">${m('escrow')}</h3>
<label for="provider">${m('provider')}</label><select id="provider" name="provider" aria-describedby="provider-hint">${LIVE_PROVIDERS.map(
    (provider) =>
      html`<option value="${provider}"${values.provider === provider ? html` selected` : ''}>${m(`provider_${provider}`)}</option>`,
  )}</select>
<p class="hint" id="provider-hint">${m('providerHint')}</p>
<label for="inspection_days">${m('inspectionDays')}</label><input id="inspection_days" name="inspection_days" type="number" inputmode="numeric" min="0" max="${String(INSPECTION_DAYS_MAX)}" step="1" required value="${values.inspection_days}" aria-describedby="inspection-hint">
<p class="hint" id="inspection-hint">${m('inspectionHint', { max: INSPECTION_DAYS_MAX })}</p>`;
}

function feeFields(p: MarketplaceView, values: FeeFields): SafeHtml {
  const { m } = p;
  const amount = (name: keyof FeeFields, label: string) =>
    html`<label for="${name}">${label}</label><input id="${name}" name="${name}" inputmode="decimal" maxlength="20" pattern="[0-9]+([.,][0-9]{1,2})?" value="${values[name]}" aria-describedby="fee-hint">`;
  return html`<h3 id="fee">${m('feeSchedule')}</h3>
${amount('fee_percent', m('feePercent'))}${amount('fee_fixed', m('feeFixed'))}${amount('fee_min', m('feeMin'))}${amount('fee_max', m('feeMax'))}
<p class="hint" id="fee-hint">${m('feeHint')}</p>
<label for="fee_moment">${m('feeMoment')}</label><select id="fee_moment" name="fee_moment">${(
    ['close', 'payment'] as const
  ).map(
    (moment) =>
      html`<option value="${moment}"${values.fee_moment === moment ? html` selected` : ''}>${m(`feeMoment_${moment}`)}</option>`,
  )}</select>`;
}

export function activateBody(p: MarketplaceView, values: MarketplaceFields, error?: string): SafeHtml {
  return html`<h1>${p.m('activateTitle')}</h1>${message('error', error)}
<form method="post" action="/admin/view/marketplaces">${csrfField(p.admin.csrf)}${onceField()}${fields(p, values)}
<div><button type="submit">${p.m('activateButton')}</button></div></form>`;
}

/** The one time a key or secret is shown (on the page after the redirect): with the warning to copy it now. */
export function shownOnce(
  p: MarketplaceView,
  title: string,
  items: [label: string, id: string, value: string][],
  cardId: string,
  note?: string,
): Reveal {
  return {
    title,
    warning: p.m('keysOnce'),
    items,
    note,
    back: { href: `/admin/view/marketplaces/${cardId}`, label: p.m('toCard') },
  };
}

/** A replayed delivery's link to the one it replaced (the same event's delivery before it). */
export interface Replaced {
  delivery_id: string;
  status: string;
  created_at: Date;
}

/** A delivery started but not attempted yet (a replay or a test a moment ago). */
export interface Sending {
  delivery_id: string;
  event: string;
  created_at: Date;
  replaces?: Replaced;
}

const ATTEMPT_TONES = { delivered: 'ok', retrying: 'warn', failed: 'bad' } as const satisfies Record<
  AttemptLogItem['status'],
  BadgeTone
>;

function replacesLink(p: MarketplaceView, replaced: Replaced): SafeHtml {
  return html`${p.m('replaces')} <a href="#delivery-${replaced.delivery_id}">${p.m(`delivery_${replaced.status}` as 'delivery_failed')} · ${when(p.lang, replaced.created_at)}</a>`;
}

export interface CardState {
  card: MarketplaceCard;
  /** Deliveries on this page of the log that replay an earlier one, by delivery id. */
  replaces: Map<string, Replaced>;
  sending: Sending[];
  /** The webhook form as typed, when it is shown again with an error. */
  webhook?: { url: string; events: readonly string[] };
  endpoint: WebhookEndpoint | undefined;
  log: { items: AttemptLogItem[]; has_more: boolean };
  /** Which page of the log this is (console-kit's pager). */
  place: PagePlace;
  filter: LogFilter;
  events: readonly string[];
  values?: CardFields;
  notice?: string;
  error?: string;
}

export function cardBody(p: MarketplaceView, s: CardState): SafeHtml {
  const { m } = p;
  const { card } = s;
  const action = `/admin/view/marketplaces/${card.id}`;
  const intent = (name: string) => html`${csrfField(p.admin.csrf)}${hidden('intent', name)}`;
  const values = s.values ?? {
    name: card.name,
    mode: card.mode,
    allowed_origins: card.allowed_origins.join('\n'),
    sso_redirect_uri: card.sso_redirect_uri ?? '',
    fee_percent: card.fee_schedule.percent ?? '',
    fee_fixed: card.fee_schedule.fixed ?? '',
    fee_min: card.fee_schedule.min ?? '',
    fee_max: card.fee_schedule.max ?? '',
    fee_moment: card.fee_moment,
    provider: card.provider,
    inspection_days: String(card.inspection_days),
  };
  return html`<h1>${card.name}</h1>
${message('notice', s.notice)}${message('error', s.error)}
${!card.active && html`<p class="error">${m('inactiveNote')}</p>`}
<dl><dt>${m('id')}</dt><dd><code>${card.id}</code></dd>
<dt>${m('state')}</dt><dd class="status">${card.active ? m('active') : m('inactive')}</dd>
<dt>${m('created')}</dt><dd>${when(p.lang, card.created_at)}</dd>
<dt>${m('ssoClient')}</dt><dd>${card.sso_client_id ? html`<a href="/admin/view/sso-clients/${card.sso_client_id}"><code>${card.sso_client_id}</code></a>` : m('none')}</dd></dl>

<h2 id="details">${m('details')}</h2>
<form method="post" action="${action}" id="details-form">${intent('save')}${fields(p, values)}${feeFields(p, values)}${escrowFields(p, values)}<div><button type="submit">${m('saveButton')}</button></div></form>

<h2 id="keys">${m('keys')}</h2>
<div class="table" tabindex="0"><table class="stack" id="key-list"><thead><tr><th>${m('keyKind')}</th><th>${m('prefix')}</th><th>${m('keyStatus')}</th><th>${m('created')}</th><th>${m('expires')}</th><th>${m('revoked')}</th></tr></thead>
<tbody>${card.keys.map(
    (
      key,
    ) => html`<tr><td data-label="${m('keyKind')}">${m(`kind_${key.kind}`)}</td><td data-label="${m('prefix')}">${key.prefix ? html`<code>${key.prefix}…</code>` : html`<span class="muted">${m('unknownPrefix')}</span>`}</td>
<td data-label="${m('keyStatus')}">${m(`status_${key.status}`)}</td><td data-label="${m('created')}">${when(p.lang, key.created_at)}</td><td data-label="${m('expires')}">${key.expires_at ? when(p.lang, key.expires_at) : '—'}</td><td data-label="${m('revoked')}">${key.revoked_at ? when(p.lang, key.revoked_at) : '—'}</td></tr>`,
  )}</tbody></table></div>
<div class="actions">
<form method="post" action="${action}" id="rotate-secret-key">${intent('rotate-secret-key')}
<label for="overlap">${m('overlap')}</label>${overlapSelect(p, 'overlap')}
<div><button type="submit" class="danger">${m('rotateSecretKey')}</button></div></form>
<form method="post" action="${action}" id="rotate-public-key">${intent('rotate-public-key')}<button type="submit" class="danger">${m('rotatePublicKey')}</button></form>
</div>

<h2 id="activation">${m('activation')}</h2>
<form method="post" action="${action}" id="activation-form">${intent(card.active ? 'deactivate' : 'activate')}
<button type="submit" class="${card.active ? 'danger' : 'secondary'}">${card.active ? m('deactivate') : m('reactivate')}</button></form>

<h2 id="webhook">${m('webhook')}</h2>
${s.endpoint ? webhookBlock(p, card.id, s.endpoint) : html`<p>${m('noWebhook')}</p>`}
${webhookForm(p, card.id, s)}

<h2 id="log">${m('log')}</h2>
${logBlock(p, card.id, s)}`;
}

export function overlapSelect(p: MarketplaceView, id: string, chosen: Overlap = 86_400): SafeHtml {
  return html`<select id="${id}" name="overlap">${OVERLAPS.map(
    (seconds) =>
      html`<option value="${String(seconds)}"${seconds === chosen ? html` selected` : ''}>${p.m(`overlap_${seconds}`)}</option>`,
  )}</select>`;
}

function webhookBlock(p: MarketplaceView, id: string, endpoint: WebhookEndpoint): SafeHtml {
  const { m } = p;
  const action = `/admin/view/marketplaces/${id}`;
  const intent = (name: string) => html`${csrfField(p.admin.csrf)}${hidden('intent', name)}`;
  return html`<dl><dt>${m('url')}</dt><dd><code>${endpoint.url}</code></dd>
<dt>${m('events')}</dt><dd>${endpoint.events.join(', ')}</dd>
<dt>${m('created')}</dt><dd>${when(p.lang, endpoint.created_at)}</dd>
<dt>${m('secret')}</dt><dd><span class="muted">${m('hiddenSecret')}</span></dd></dl>
<div class="actions">
<form method="post" action="${action}" id="reveal-webhook-secret">${intent('reveal-webhook-secret')}${onceField()}<button type="submit" class="secondary">${m('revealSecret')}</button></form>
<form method="post" action="${action}" id="test-webhook">${intent('test-webhook')}${onceField()}<button type="submit" class="secondary">${m('sendTest')}</button></form>
<form method="post" action="${action}" id="rotate-webhook-secret">${intent('rotate-webhook-secret')}
<label for="webhook-overlap">${m('webhookOverlap')}</label>${overlapSelect(p, 'webhook-overlap')}
<div><button type="submit" class="danger">${m('rotateWebhookSecret')}</button></div></form>
</div>`;
}

/** Register or change the webhook: its URL and the events sent (none chosen: all, those added later too). */
function webhookForm(p: MarketplaceView, id: string, s: CardState): SafeHtml {
  const { m } = p;
  const values = s.webhook ?? { url: s.endpoint?.url ?? '', events: s.endpoint?.events ?? [] };
  const all = values.events.length === 0 || values.events.length === WEBHOOK_EVENTS.length;
  return html`<form method="post" action="/admin/view/marketplaces/${id}" id="webhook-form">${csrfField(p.admin.csrf)}${hidden('intent', 'save-webhook')}
<h3>${s.endpoint ? m('changeWebhook') : m('registerWebhook')}</h3>
<label for="webhook_url">${m('url')}</label><input id="webhook_url" name="webhook_url" type="url" required maxlength="2048" value="${values.url}" aria-describedby="webhook-url-hint" placeholder="https://shop.example/hooks">
<p class="hint" id="webhook-url-hint">${m('webhookUrlHint')}</p>
<fieldset class="events"><legend>${m('events')}</legend>
<label class="check"><input type="checkbox" name="webhook_all" value="yes"${all ? html` checked` : ''}> ${m('allEvents')}</label>
<p class="hint">${m('eventsHint')}</p>
${WEBHOOK_EVENTS.map((event) => html`<label class="check"><input type="checkbox" name="webhook_events" value="${event}"${!all && values.events.includes(event) ? html` checked` : ''}> <code>${event}</code></label>`)}
</fieldset>
<div><button type="submit">${s.endpoint ? m('changeWebhookButton') : m('registerWebhookButton')}</button></div></form>`;
}

function logBlock(p: MarketplaceView, id: string, s: CardState): SafeHtml {
  const { m } = p;
  const action = `/admin/view/marketplaces/${id}`;
  const pages = pager(p.lang, {
    path: action,
    filters: s.filter,
    place: s.place,
    last: s.log.has_more ? s.log.items.at(-1)!.id : undefined,
    hash: '#log',
  });
  const option = (value: string, label: string, current?: string) =>
    html`<option value="${value}"${current === value ? html` selected` : ''}>${label}</option>`;
  return html`<p class="muted">${m('logIntro')}</p>
<form method="get" action="${action}" class="filters" id="log-filters">
<div><label for="f-status">${m('status')}</label><select id="f-status" name="status">${option('', m('any'), s.filter.status ?? '')}${(['delivered', 'retrying', 'failed'] as const).map((status) => option(status, m(`attempt_${status}`), s.filter.status))}</select></div>
<div><label for="f-event">${m('event')}</label><select id="f-event" name="event">${option('', m('any'), s.filter.event ?? '')}${s.events.map((event) => option(event, event, s.filter.event))}</select></div>
<div><label for="f-deal">${m('deal')}</label><input id="f-deal" name="deal_id" value="${s.filter.deal_id ?? ''}" maxlength="36" pattern="[0-9a-fA-F-]{36}"></div>
<div><button type="submit">${m('filterButton')}</button></div></form>
${
  s.sending.length > 0 &&
  html`<ul class="plain" id="sending">${s.sending.map(
    (row) =>
      html`<li>${badge('info', m('attempt_sending'))} ${row.event} · ${when(p.lang, row.created_at)}${row.replaces && html` · ${replacesLink(p, row.replaces)}`}</li>`,
  )}</ul>`
}
${
  s.log.items.length === 0
    ? emptyList(p.lang, {
        filtered: Object.values(s.filter).some(Boolean),
        none: m('noAttempts'),
        path: `${action}#log`,
      })
    : html`<div class="table" tabindex="0"><table id="webhook-log" class="stack">
<thead><tr><th>${m('at')}</th><th>${m('event')}</th><th>${m('deal')}</th><th>${m('attempt')}</th><th>${m('status')}</th><th>${m('httpStatus')}</th><th>${m('error')}</th><th>${m('duration')}</th><th>${m('body')}</th><th><span class="visually-hidden">${m('replay')}</span></th></tr></thead>
<tbody>${s.log.items.map((a, index) => {
        const first = s.log.items.findIndex((other) => other.delivery_id === a.delivery_id) === index;
        const replaces = s.replaces.get(a.delivery_id);
        return html`<tr data-attempt="${a.id}" data-delivery="${a.delivery_id}"${first ? html` id="delivery-${a.delivery_id}"` : ''}><td data-label="${m('at')}">${when(p.lang, a.attempted_at)}</td><td data-label="${m('event')}">${a.event}${replaces && html`<br><span class="hint">${replacesLink(p, replaces)}</span>`}</td>
<td data-label="${m('deal')}">${a.deal_id ? html`<a href="/admin/view/deals/${a.deal_id}"><code>${a.deal_id.slice(0, 8)}</code></a>` : '—'}</td><td data-label="${m('attempt')}">${a.attempt}</td>
<td data-label="${m('status')}">${badge(ATTEMPT_TONES[a.status], m(`attempt_${a.status}`))}</td><td data-label="${m('httpStatus')}">${a.http_status ?? '—'}</td><td data-label="${m('error')}" class="text">${a.error ?? ''}</td><td data-label="${m('duration')}">${m('ms', { ms: a.duration_ms })}</td>
<td data-label="${m('body')}"><details><summary>${m('body')}</summary><p>${m('requestBody')}</p><pre class="text">${a.request_body}</pre>
<p>${m('responseExcerpt')}</p><pre class="text">${a.response_excerpt ?? m('noAnswer')}</pre></details></td>
<td class="actions-cell"><form method="post" action="${action}">${csrfField(p.admin.csrf)}${hidden('intent', 'replay')}${hidden('attempt_id', a.id)}${onceField()}<button type="submit" class="secondary">${m('replay')}</button></form></td></tr>`;
      })}</tbody></table></div>`
}
${pages}
<form method="post" action="${action}" id="replay-since">${csrfField(p.admin.csrf)}${hidden('intent', 'replay-since')}
<label for="since">${m('replaySince')}</label><input id="since" name="since" type="datetime-local" step="1" required aria-describedby="since-hint">
<p class="hint" id="since-hint">${m('replaySinceHint')}</p>
<div><button type="submit" class="danger">${m('replaySinceButton')}</button></div></form>`;
}
