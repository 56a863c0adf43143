// The one page layout every web page shares (cabinet, SSO), with the signed-in user's sections, and the form pieces.
import { html, type SafeHtml } from '../http/html.ts';
import type { Lang, MessageKey, Translate } from './i18n.ts';

export const STYLESHEET_PATH = '/cabinet/assets/cabinet.css';

/** The signed-in user's sections: the header links to each (pages under /cabinet/view are the web twins of JSON routes). */
export const SECTIONS = [
  ['/cabinet', 'navDeals'],
  ['/cabinet/view/profile', 'navProfile'],
  ['/cabinet/view/security', 'navSecurity'],
  ['/cabinet/view/data-keys', 'navDataKeys'],
  ['/cabinet/view/connected-sites', 'navSites'],
] as const satisfies readonly (readonly [string, MessageKey])[];

export interface LayoutOptions {
  lang: Lang;
  t: Translate;
  title: string;
  body: SafeHtml;
  /** The language switch links here with `lang` set; the GET address of this page. */
  langHref: string;
  /** Shown with a sign-out button when signed in. */
  signedIn?: { email: string; csrf: string };
}

export function layout({ lang, t, title, body, langHref, signedIn }: LayoutOptions): string {
  return `<!doctype html>\n${html`<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · ${t('appName')}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<header class="top">
<a class="brand" href="/cabinet">${t('appName')}</a>
<nav>
<a href="${langHref}" lang="${lang === 'ru' ? 'en' : 'ru'}">${t('switchLanguage')}</a>
${signedIn &&
  html`<span class="who">${t('signedInAs', { email: signedIn.email })}</span>
<form method="post" action="/cabinet/sign-out" class="inline">${csrfField(signedIn.csrf)}<button type="submit" class="link">${t('signOut')}</button></form>`}
</nav>
${signedIn && html`<nav class="sections" aria-label="${t('appName')}">${SECTIONS.map(([href, key]) => html`<a href="${href}">${t(key)}</a>`)}</nav>`}
</header>
<main>
${body}
</main>
</body>
</html>`.value}\n`;
}

export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}

/** A notice or an error at the top of a page; role=alert so screen readers announce errors. */
export function message(kind: 'notice' | 'error', text: string | undefined): SafeHtml | undefined {
  if (!text) return undefined;
  return kind === 'error' ? html`<p class="error" role="alert">${text}</p>` : html`<p class="notice" role="status">${text}</p>`;
}
