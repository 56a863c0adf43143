// What each account page shows, as HTML bodies: sign-up and its confirmation, forgotten password and reset, profile,
// password and sessions. No logic beyond layout; pages.ts decides which page and status to answer with.
import { html, type SafeHtml } from '../http/html.ts';
import { csrfField, message } from '../web/layout.ts';
import type { View } from '../web/page.ts';
import { formatDate, READER_TIME_ZONE, TIME_ZONES, type Translate } from '../web/i18n.ts';
import { deviceOf } from './user-agent.ts';
import { MIN_PASSWORD_LENGTH } from './passwords.ts';
import type { SessionItem } from './sessions.ts';
import type { AccountTranslate } from './i18n.ts';
import { NAME_MAX } from './users.ts';

export interface AccountView extends View {
  a: AccountTranslate;
}

/** A new password twice, with the rule said next to it. */
function newPasswordFields(t: Translate, label: string): SafeHtml {
  return html`<label for="password">${label}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="200" aria-describedby="password-hint">
<p class="hint" id="password-hint">${t('passwordHint', { min: MIN_PASSWORD_LENGTH })}</p>
<label for="password_confirm">${t('confirmPassword')}</label>
<input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="200">`;
}

const signInHref = (next: string) =>
  next === '/cabinet' ? '/cabinet/sign-in' : `/cabinet/sign-in?next=${encodeURIComponent(next)}`;

export function signUpBody(
  { t, a }: AccountView,
  form: { email: string; name: string; next: string; csrf: string; error?: string; notice?: string },
): SafeHtml {
  // Once the mail is sent, the notice alone: a filled form below it would look as if nothing was sent.
  if (form.notice) {
    return html`<h1>${a('signUpTitle')}</h1>
${message('notice', form.notice)}
<p><a href="${signInHref(form.next)}">${t('goToSignIn')}</a></p>`;
  }
  return html`<h1>${a('signUpTitle')}</h1>
${message('error', form.error)}
<p>${a('signUpIntro')}</p>
<form method="post" action="/cabinet/sign-up">
${csrfField(form.csrf)}<input type="hidden" name="next" value="${form.next}">
<label for="email">${t('email')}</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${form.email}">
<label for="name">${a('nameOptional')}</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="${NAME_MAX}" value="${form.name}">
${newPasswordFields(t, t('password'))}
<div><button type="submit">${a('signUpButton')}</button></div>
</form>
<p>${a('haveAccount')} <a href="${signInHref(form.next)}">${t('signInTitle')}</a></p>`;
}

export function confirmSignUpBody({ a }: AccountView, form: { token: string; csrf: string }): SafeHtml {
  return html`<h1>${a('confirmTitle')}</h1>
<p>${a('confirmText')}</p>
<form method="post" action="/cabinet/sign-up/confirm">
${csrfField(form.csrf)}<input type="hidden" name="token" value="${form.token}">
<div><button type="submit">${a('confirmButton')}</button></div>
</form>`;
}

export function linkInvalidBody({ t, a }: AccountView): SafeHtml {
  return html`<h1>${a('linkInvalidTitle')}</h1>
<p>${a('linkInvalidText')}</p>
<ul>
<li>${a('linkInvalidSignIn')} <a href="/cabinet/sign-in">${t('goToSignIn')}</a></li>
<li>${a('linkInvalidAgain')} <a href="/cabinet/forgot-password">${a('forgotPasswordLink')}</a> · <a href="/cabinet/sign-up">${a('createAccountLink')}</a></li>
</ul>`;
}

export function forgotBody(
  { t, a }: AccountView,
  form: { email: string; next: string; csrf: string; error?: string; notice?: string },
): SafeHtml {
  // Once the mail is sent, the notice alone (and the way back to signing in, still going where the person was going).
  if (form.notice) {
    return html`<h1>${a('forgotTitle')}</h1>
${message('notice', form.notice)}
<p><a href="${signInHref(form.next)}">${t('goToSignIn')}</a></p>`;
  }
  return html`<h1>${a('forgotTitle')}</h1>
${message('error', form.error)}
<p>${a('forgotIntro')}</p>
<form method="post" action="/cabinet/forgot-password">
${csrfField(form.csrf)}<input type="hidden" name="next" value="${form.next}">
<label for="email">${t('email')}</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${form.email}">
<div><button type="submit">${a('forgotButton')}</button></div>
</form>
<p><a href="${signInHref(form.next)}">${t('goToSignIn')}</a></p>`;
}

export function resetBody({ t, a }: AccountView, form: { token: string; csrf: string; error?: string }): SafeHtml {
  return html`<h1>${a('resetTitle')}</h1>
<p>${a('resetIntro')}</p>
${message('error', form.error)}
<form method="post" action="/cabinet/reset-password">
${csrfField(form.csrf)}<input type="hidden" name="token" value="${form.token}">
${newPasswordFields(t, t('newPassword'))}
<div><button type="submit">${a('resetButton')}</button></div>
</form>`;
}

export function profileBody(
  { t, a }: AccountView,
  data: {
    svcId: string;
    email: string;
    name: string;
    locale: 'ru' | 'en';
    /** The zone the person chose; null: Moscow time. */
    timeZoneChoice: string | null;
    org: string;
    csrf: string;
    error?: string;
    notice?: string;
  },
): SafeHtml {
  const option = (value: 'ru' | 'en', label: string) =>
    html`<option value="${value}" lang="${value}"${data.locale === value ? html` selected` : undefined}>${label}</option>`;
  const zones = TIME_ZONES.filter((zone) => zone !== READER_TIME_ZONE).map(
    (zone) =>
      html`<option value="${zone}"${zone === data.timeZoneChoice ? html` selected` : undefined}>${zone.replace(/_/g, ' ')}</option>`,
  );
  return html`<h1>${a('profileTitle')}</h1>
${message('notice', data.notice)}${message('error', data.error)}
<dl>
<dt>${a('svcId')}</dt><dd><code>${data.svcId}</code></dd>
<dt>${t('email')}</dt><dd>${data.email}</dd>
<dt>${a('personalOrg')}</dt><dd>${data.org}</dd>
</dl>
<form method="post" action="/cabinet/view/profile">
${csrfField(data.csrf)}
<label for="name">${a('name')}</label>
<input class="field" id="name" name="name" type="text" autocomplete="name" maxlength="${NAME_MAX}" value="${data.name}">
<label for="locale">${a('language')}</label>
<select class="field" id="locale" name="locale">${option('ru', 'Русский')}${option('en', 'English')}</select>
<label for="time_zone">${a('timeZone')}</label>
<select class="field" id="time_zone" name="time_zone" aria-describedby="time-zone-hint"><option value=""${data.timeZoneChoice ? undefined : html` selected`}>${a('moscowTime')}</option>${zones}</select>
<p class="hint" id="time-zone-hint">${a('timeZoneHint')}</p>
<div><button type="submit">${a('save')}</button></div>
</form>`;
}

/** "Chrome on Windows", "Safari", "Android", or "Unknown browser": a device as a person names it. */
function deviceWords(a: AccountView['a'], userAgent: string): string {
  const { browser, os } = deviceOf(userAgent);
  if (browser && os) return a('browserOnSystem', { browser, os });
  return browser ?? os ?? a('unknownBrowser');
}

export function securityBody(
  { t, a, lang, timeZone }: AccountView,
  data: {
    /** This page of the person's live sessions. */
    sessions: SessionItem[];
    /** The sessions' previous and next links (console-kit's pager). */
    pages: SafeHtml;
    csrf: string;
    factors?: SafeHtml;
    error?: string;
    notice?: string;
  },
): SafeHtml {
  const sessions = data.sessions.map(
    (session) => html`<li class="card">
<p><strong title="${session.user_agent.slice(0, 500)}">${deviceWords(a, session.user_agent)}</strong>${session.current ? html` <span class="status">(${a('thisDevice')})</span>` : undefined}</p>
<p class="muted">${a('sessionTimes', { created: formatDate(lang, session.created_at, timeZone), used: formatDate(lang, session.last_used_at, timeZone) })}</p>
<form method="post" action="/cabinet/view/sessions/${session.id}/revoke">${csrfField(data.csrf)}<button type="submit" class="secondary">${a('revoke')}</button></form>
</li>`,
  );
  return html`<h1>${a('securityTitle')}</h1>
${message('notice', data.notice)}${message('error', data.error)}
<section aria-labelledby="change-password"><h2 id="change-password">${a('changePasswordHeading')}</h2>
<form method="post" action="/cabinet/view/security/password">
${csrfField(data.csrf)}
<label for="current_password">${a('currentPassword')}</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required maxlength="200">
${newPasswordFields(t, t('newPassword'))}
<div><button type="submit">${a('changePasswordButton')}</button></div>
</form>
</section>
${data.factors}
<section aria-labelledby="sessions"><h2 id="sessions">${a('sessionsHeading')}</h2>
<ul class="plain" id="session-list">${sessions}</ul>
${data.pages}
</section>
<section aria-labelledby="everywhere"><h2 id="everywhere">${a('everywhereHeading')}</h2>
<p>${a('everywhereHint')}</p>
<p><a href="/cabinet/view/security/sign-out-everywhere">${a('everywhereButton')}</a></p>
</section>`;
}

export function everywhereConfirmBody({ a }: AccountView, csrf: string): SafeHtml {
  return html`<h1>${a('everywhereHeading')}</h1>
<p>${a('everywhereConfirmText')}</p>
<form method="post" action="/cabinet/view/security/sign-out-everywhere">
${csrfField(csrf)}<input type="hidden" name="confirmed" value="yes">
<div class="actions"><button type="submit" class="danger">${a('everywhereConfirmButton')}</button> <a href="/cabinet/view/security">${a('cancel')}</a></div>
</form>`;
}
