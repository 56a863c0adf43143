// The one page layout every web page shares (the cabinet and SSO, and the operators' console as another site), with
// the signed-in person's sections, and the form pieces.
import { html, type SafeHtml } from '../http/html.ts';
import { translator, type Lang, type MessageKey, type Translate } from './i18n.ts';

export const STYLESHEET_PATH = '/cabinet/assets/cabinet.css';

/** The signed-in user's sections: the header links to each (pages under /cabinet/view are the web twins of JSON routes). */
export const SECTIONS = [
  ['/cabinet', 'navDeals'],
  ['/cabinet/view/payouts', 'navPayouts'],
  ['/cabinet/view/profile', 'navProfile'],
  ['/cabinet/view/security', 'navSecurity'],
  ['/cabinet/view/data-keys', 'navDataKeys'],
  ['/cabinet/view/connected-sites', 'navSites'],
] as const satisfies readonly (readonly [string, MessageKey])[];

/** What differs between the sites that share the layout: their name, home, sign-in and sign-out, and sections. */
export interface Site {
  brand(lang: Lang): string;
  home: string;
  signIn: string;
  signOut: string;
  sections(lang: Lang): readonly (readonly [href: string, label: string])[];
}

export const CABINET_SITE: Site = {
  brand: (lang) => translator(lang)('appName'),
  home: '/cabinet',
  signIn: '/cabinet/sign-in',
  signOut: '/cabinet/sign-out',
  sections: (lang) => SECTIONS.map(([href, key]) => [href, translator(lang)(key)] as const),
};

export interface LayoutOptions {
  lang: Lang;
  t: Translate;
  title: string;
  body: SafeHtml;
  /** The language switch links here with `lang` set; the GET address of this page. */
  langHref: string;
  /** Shown with a sign-out button when signed in. */
  signedIn?: { email: string; csrf: string };
  site?: Site;
}

export function layout({ lang, t, title, body, langHref, signedIn, site = CABINET_SITE }: LayoutOptions): string {
  return `<!doctype html>\n${
    html`<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · ${site.brand(lang)}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<header class="top">
<a class="brand" href="${site.home}">${site.brand(lang)}</a>
<nav>
<a href="${langHref}" lang="${lang === 'ru' ? 'en' : 'ru'}">${t('switchLanguage')}</a>
${
  signedIn &&
  html`<span class="who">${t('signedInAs', { email: signedIn.email })}</span>
<form method="post" action="${site.signOut}" class="inline">${csrfField(signedIn.csrf)}<button type="submit" class="link">${t('signOut')}</button></form>`
}
</nav>
${signedIn && html`<nav class="sections" aria-label="${site.brand(lang)}">${site.sections(lang).map(([href, label]) => html`<a href="${href}">${label}</a>`)}</nav>`}
</header>
<main>
${body}
</main>
</body>
</html>`.value
  }\n`;
}

export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}

/** A notice or an error at the top of a page; role=alert so screen readers announce errors. */
export function message(kind: 'notice' | 'error', text: string | undefined): SafeHtml | undefined {
  if (!text) return undefined;
  return kind === 'error'
    ? html`<p class="error" role="alert">${text}</p>`
    : html`<p class="notice" role="status">${text}</p>`;
}
