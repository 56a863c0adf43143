// The SSO pages: the login form and the error page, in the cabinet's layout and stylesheet (same origin, nothing
// from other origins). Each names where the user is going, so a look at the page tells them whom they sign in to.
import { csrfField, message } from '../web/layout.ts';
import { html, type SafeHtml } from '../http/html.ts';
import type { Translate } from '../web/i18n.ts';
import { credentialFields } from '../cabinet/page-views.ts';
import type { SsoTranslate } from './i18n.ts';

export interface SsoView {
  t: Translate;
  st: SsoTranslate;
}

export function loginBody(
  { t, st }: SsoView,
  form: { clientName: string; targetHost: string; carried: Record<string, string>; lang: string; csrf: string; email: string; error?: string },
): SafeHtml {
  return html`<h1>${t('signInTitle')}</h1>
<p>${st('continueTo', { client: form.clientName })}</p>
${message('error', form.error)}
<form method="post" action="/sso/authorize">
${csrfField(form.csrf)}<input type="hidden" name="lang" value="${form.lang}">
${Object.entries(form.carried).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}
${credentialFields(t, form.email)}
</form>
<p class="hint">${st('returnTo', { host: form.targetHost })}</p>`;
}

export function errorBody({ st }: SsoView, text: string, code: string): SafeHtml {
  // The code is there for support and for programs reading the page; people read the sentence.
  return html`<h1>${st('errorTitle')}</h1>
<p>${text}</p>
<p class="hint" data-code="${code}">${code}</p>`;
}
