// What every page shares (the cabinet's, and the console's as another site): the language choice, the headers each page carries, errors rendered as pages in
// the reader's language (never JSON), redirects, form bodies, the signed-in check and the safe `next` rule.
import type { Context } from 'koa';
import type { Services } from '../services.ts';
import { chooseLocale, chosenLocale, type User } from '../accounts/users.ts';
import type { Logger } from '../log.ts';
import { Problem, problem } from '../http/problem.ts';
import { readUrlencodedForm } from '../http/body.ts';
import { isMessageKey, isLang, preferredLang, translator, type Lang, type MessageKey, type Translate } from './i18n.ts';
import type { SafeHtml } from '../http/html.ts';
import { CABINET_SITE, layout, type Site } from './layout.ts';
import { html } from '../http/html.ts';
import { LANG_COOKIE, pageUser, readCookie, sameToken, setCookie } from './session.ts';

const LANG_COOKIE_SECONDS = 365 * 24 * 3600;
/** Problem codes a buyer or a seller may meet on a page, each with its own words in the dictionary. */
const EXPLAINED = new Set<string>([
  'approval_not_pending',
  'reason_required',
  'no_open_dispute',
  'payload_too_large',
  'invalid_payment_state',
  'deal_closed',
  'deal_not_approved',
  'acquirer_refused',
  'acquirer_unavailable',
  'acquirer_not_configured',
  'currency_not_supported',
  'deal_engine_unavailable',
  'forbidden',
]);

export type SignedIn = { user: User; csrf: string };
export interface View {
  lang: Lang;
  t: Translate;
  /** The signed-in reader's time zone for the times a page shows (null or absent: Moscow time). */
  timeZone?: string | null;
}
export interface Page extends View {
  ctx: Context;
  site: Site;
}

/** The signed-in person a page's header names, with the CSRF token of its sign-out form. */
export type Signed = { email: string; csrf: string };

export interface PageOptions {
  site: Site;
  /** Who is signed in to this site (for the header of error pages). */
  signedIn(ctx: Context): Promise<Signed | undefined>;
}

/**
 * Only a path on this site: one leading '/', not '//' or '/\' (which browsers read as another host), no control
 * characters or whitespace (browsers strip tabs and newlines, so '/\t/evil' would become '//evil'), no backslash.
 */
export function safeNext(value: unknown, baseUrl: string): string {
  const fallback = '/cabinet';
  if (typeof value !== 'string' || value.length > 2000 || !value.startsWith('/')) return fallback;
  if (value.startsWith('//') || value.startsWith('/\\') || /[\\\s\u0000-\u001f\u007f]/.test(value)) return fallback;
  return new URL(value, baseUrl).origin === new URL(baseUrl).origin ? value : fallback;
}

/** Wraps a page handler: language, headers every page carries, and errors as pages. The cabinet's unless told. */
export function page(services: Services, handler: (p: Page) => Promise<void>, options?: PageOptions) {
  const site = options?.site ?? CABINET_SITE;
  const signedIn = options?.signedIn ?? (async (ctx: Context) => signedOf(await pageUser(ctx, services)));
  return async (ctx: Context) => {
    const lang = (await profileLang(ctx, services, site)) ?? chooseLang(ctx, services);
    const p: Page = { ctx, lang, t: translator(lang), site };
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Vary', 'Cookie, Accept-Language');
    try {
      if (site === CABINET_SITE && isLang(ctx.query.lang)) await saveChosenLang(ctx, services, ctx.query.lang);
      await handler(p);
    } catch (error) {
      await errorPage(p, services, error, await signedIn(ctx).catch(() => undefined));
    }
  };
}

const signedOf = (signed: SignedIn | undefined): Signed | undefined =>
  signed && { email: signed.user.email, csrf: signed.csrf };

export async function errorPage(p: Page, services: Services, error: unknown, signed?: Signed): Promise<void> {
  const problem = error instanceof Problem ? error : undefined;
  if (!problem)
    ((p.ctx.state.log as Logger | undefined) ?? services.logger).error(
      { err: error },
      'unhandled error in a cabinet page',
    );
  const status = problem?.status ?? 500;
  for (const [name, value] of Object.entries(problem?.headers ?? {}))
    if (name !== 'WWW-Authenticate') p.ctx.set(name, value);
  const [title, text]: [MessageKey, string] =
    status === 404
      ? ['notFoundTitle', p.t('notFound')]
      : status === 403
        ? ['forbiddenTitle', problem?.code === 'forbidden' ? p.t('forbidden') : p.t('csrfFailed')]
        : ['errorTitle', problem ? problemWords(p.t, problem) : p.t('internalError')];
  send(
    p,
    status,
    p.t(title),
    errorBody(p, p.t(title), text, !!signed),
    p.ctx.method === 'GET' ? undefined : p.site.home,
    signed,
  );
}

function errorBody({ t, site }: Page, title: string, text: string, signedIn: boolean): SafeHtml {
  return html`<h1>${title}</h1>
<p>${text}</p>
<p><a href="${signedIn ? site.home : site.signIn}">${signedIn ? t('backHome') : t('goToSignIn')}</a></p>`;
}

/** A problem (or a rule's refusal, which has the same code) in the reader's words. */
export function problemWords(t: Translate, problem: { code: string; status: number }): string {
  // dispute_open also names a dispute's state in the dictionary; the refusal has words of its own.
  if (problem.code === 'dispute_open') return t('disputeOpenRefusal');
  if (EXPLAINED.has(problem.code) && isMessageKey(problem.code)) return t(problem.code);
  return problem.status >= 500 ? t('internalError') : t('badForm');
}

export function send(
  p: Page,
  status: number,
  title: string,
  body: SafeHtml,
  getPath?: string,
  signedIn?: SignedIn | Signed,
): void {
  p.ctx.status = status;
  p.ctx.type = 'text/html; charset=utf-8';
  p.ctx.set('Content-Language', p.lang);
  const signed = signedIn && ('user' in signedIn ? signedOf(signedIn) : signedIn);
  p.ctx.body = layout({
    lang: p.lang,
    t: p.t,
    title,
    body,
    langHref: switchLangHref(p, getPath),
    signedIn: signed,
    site: p.site,
  });
}

/** This page's GET address in the other language; one-shot notices are dropped. */
function switchLangHref(p: Page, getPath?: string): string {
  const url = new URL(getPath ?? `${p.ctx.path}?${p.ctx.querystring}`, 'http://page.invalid');
  url.searchParams.set('lang', p.lang === 'ru' ? 'en' : 'ru');
  for (const oneShot of ['done', 'signed_out']) url.searchParams.delete(oneShot);
  return `${url.pathname}${url.search}`;
}

/** `?lang=` wins and is remembered in a cookie; then that cookie; then Accept-Language. */
function chooseLang(ctx: Context, services: Services): Lang {
  const asked = ctx.query.lang;
  if (isLang(asked)) {
    if (readCookie(ctx, LANG_COOKIE) !== asked) setCookie(ctx, services, LANG_COOKIE, asked, LANG_COOKIE_SECONDS);
    return asked;
  }
  const remembered = readCookie(ctx, LANG_COOKIE);
  return isLang(remembered) ? remembered : preferredLang(ctx.get('Accept-Language'));
}

/**
 * A signed-in person's own choice of language (their profile, or a switch on another device) for a browser that has
 * made none yet: remembered in its cookie, so this is looked up once per browser.
 */
async function profileLang(ctx: Context, services: Services, site: Site): Promise<Lang | undefined> {
  if (site !== CABINET_SITE || isLang(ctx.query.lang) || isLang(readCookie(ctx, LANG_COOKIE))) return undefined;
  const signed = await pageUser(ctx, services).catch(() => undefined);
  const chosen = signed && (await chosenLocale(services.db, signed.user.id));
  if (chosen) setCookie(ctx, services, LANG_COOKIE, chosen, LANG_COOKIE_SECONDS);
  return chosen;
}

/**
 * The language a signed-in person switched to on a cabinet page is their choice: saved to their profile, so their mail
 * and their pages on another device are in it too (a marketplace's buyer_locale no longer replaces it).
 */
async function saveChosenLang(ctx: Context, services: Services, lang: Lang): Promise<void> {
  const signed = await pageUser(ctx, services);
  if (signed) await chooseLocale(services.db, signed.user.id, lang);
}

export async function signedInOrRedirect(
  p: Page,
  services: Services,
  next = `${p.ctx.path}${p.ctx.search}`,
): Promise<SignedIn | undefined> {
  const signed = await pageUser(p.ctx, services);
  if (!signed) redirect(p.ctx, `/cabinet/sign-in?next=${encodeURIComponent(next)}`);
  // Every signed-in page shows times in the reader's zone: the views read it from the page.
  else p.timeZone = signed.user.time_zone;
  return signed;
}

/**
 * A signed-in person's form post: its fields, once the person is signed in (else a redirect to sign in that comes back
 * to `next`, and undefined) and the form carries their CSRF token (else 403).
 */
export async function signedInForm(
  p: Page,
  services: Services,
  next: string,
): Promise<{ form: URLSearchParams; signed: SignedIn } | undefined> {
  const form = await readForm(p.ctx);
  const signed = await signedInOrRedirect(p, services, next);
  if (!signed) return undefined;
  if (!sameToken(signed.csrf, form.get('_csrf') ?? undefined)) throw csrfFailed();
  return { form, signed };
}

export function redirect(ctx: Context, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}

/** An urlencoded form body (what browsers send); an empty body is an empty form. Read by body.ts, under its limit. */
export function readForm(ctx: Context): Promise<URLSearchParams> {
  return readUrlencodedForm(ctx);
}

export function csrfFailed(): Problem {
  return problem('csrf_failed', 'The form token is missing or wrong.');
}
