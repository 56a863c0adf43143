// The SSO pages: the login form, the consent page and the error page, in the cabinet's layout and stylesheet (same
// origin, nothing from other origins). Each names the service and where the user is going, so a look at the page
// tells them whom they sign in to and what that site gets.
import { csrfField, message } from '../web/layout.ts';
import { html, type SafeHtml } from '../http/html.ts';
import type { Translate } from '../web/i18n.ts';
import { credentialFields } from '../cabinet/page-views.ts';
import type { SsoTranslate } from './i18n.ts';
import type { ConsentScope } from './claims.ts';

export interface SsoView {
  t: Translate;
  st: SsoTranslate;
}

export function loginBody(
  { t, st }: SsoView,
  form: {
    title: string;
    targetHost: string;
    carried: Record<string, string>;
    lang: string;
    csrf: string;
    email: string;
    error?: string;
    signUpNext: string;
  },
): SafeHtml {
  return html`<h1>${form.title}</h1>
${message('error', form.error)}
<form method="post" action="/sso/authorize">
${csrfField(form.csrf)}${carriedFields(form)}
${credentialFields(t, form.email)}
</form>
<p><a href="/cabinet/forgot-password?next=${encodeURIComponent(form.signUpNext)}">${st('forgotPassword')}</a></p>
<p><a href="/cabinet/sign-up?next=${encodeURIComponent(form.signUpNext)}">${st('createAccount')}</a></p>
<p class="hint">${st('returnTo', { host: form.targetHost })}</p>`;
}

/** Whom the user lets in, where it returns them, and each thing it receives, with Allow and Cancel. */
export function consentBody(
  { t, st }: SsoView,
  form: {
    title: string;
    clientName: string;
    targetHost: string;
    user: { email: string; name: string; org: string };
    carried: Record<string, string>;
    lang: string;
    csrf: string;
    otherAccount: string;
    /** The data server's MCP tools, when the request names it as its resource (an agent); empty otherwise. */
    tools: readonly string[];
    /** The client registered itself (RFC 7591): its name is its own word. */
    selfRegistered: boolean;
    /** What the scope asks for (src/sso/claims.ts): each is listed, nothing else. */
    scopes: ReadonlySet<ConsentScope>;
    /** A pairwise client gets no organization, whatever it asks. */
    pairwise: boolean;
  },
): SafeHtml {
  const { user, scopes } = form;
  return html`<h1>${form.title}</h1>
<p>${st('signedInAs', { service: t('appName'), email: user.email })} <a href="${form.otherAccount}">${st('otherAccount')}</a></p>
<p>${st('consentReceives', { client: form.clientName, host: form.targetHost })}</p>
<ul class="receives">
<li data-scope="openid">${st('receivesSvcId')}</li>
${scopes.has('profile') ? html`<li data-scope="profile">${user.name ? st('receivesName', { name: user.name }) : st('receivesNoName')}</li>\n` : ''}${
    scopes.has('email') ? html`<li data-scope="email">${st('receivesEmail', { email: user.email })}</li>\n` : ''
  }${scopes.has('org') && !form.pairwise ? html`<li data-scope="org">${st('receivesOrg', { org: user.org })}</li>\n` : ''}${
    scopes.has('offline_access') ? html`<li data-scope="offline_access">${st('receivesOfflineAccess')}</li>\n` : ''
  }</ul>
${
  form.tools.length > 0
    ? html`<p>${st('consentTools', { client: form.clientName })}</p>
<ul class="tools">${form.tools.map((tool) => html`<li><code>${tool}</code></li>`)}</ul>
`
    : ''
}${
    form.selfRegistered
      ? html`<p class="hint" data-self-registered>${st('consentSelfRegistered', { service: t('appName') })}</p>
`
      : ''
  }<form method="post" action="/sso/consent">
${csrfField(form.csrf)}${carriedFields(form)}
<div class="actions"><button type="submit" name="decision" value="allow">${st('allow')}</button>
<button type="submit" name="decision" value="cancel" class="secondary">${st('cancel')}</button></div>
</form>
<p class="hint">${st('consentHint', { host: form.targetHost })}</p>`;
}

/** The authorization request in hidden fields, so the form's POST repeats exactly the request the page was shown for. */
function carriedFields(form: { carried: Record<string, string>; lang: string }): SafeHtml {
  return html`<input type="hidden" name="lang" value="${form.lang}">
${Object.entries(form.carried).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}`;
}

export function errorBody({ st }: SsoView, text: string, code: string): SafeHtml {
  // The code is there for support and for programs reading the page; people read the sentence.
  return html`<h1>${st('errorTitle')}</h1>
<p>${text}</p>
<p class="hint" data-code="${code}">${code}</p>`;
}
