// What every SSO page shares: the language, the headers (never framed, no referrer, a CSP whose form-action lets
// the login and consent forms' answers reach the client), errors as pages in the reader's language (problem+json for
// callers that ask for JSON), and the two forms: the login form (its CSRF token from the pre-session cookie) and the
// consent page (the signed-in session's token).
import type { Context } from 'koa';
import type { Services } from '../services.ts';
import type { Logger } from '../log.ts';
import { Problem } from '../http/problem.ts';
import { translator } from '../web/i18n.ts';
import { readForm, send, type Page } from '../web/page.ts';
import { CABINET_SITE } from '../web/layout.ts';
import { preSessionCsrf } from '../web/session.ts';
import { Params, type AuthorizeRequest } from './authorize-request.ts';
import { consentScopes } from './claims.ts';
import { isSsoMessage, ssoLang, ssoTranslator, type SsoTranslate } from './i18n.ts';
import { consentBody, errorBody, loginBody } from './views.ts';
import { personalOrganization } from '../accounts/users.ts';
import { CONSENT_PATH, requestPath, type BrowserSession } from './outcome.ts';
import { namesDataServer } from './resources.ts';
import { TOOL_NAMES } from '../data-api/tool-names.ts';

interface SsoPage extends Page {
  st: SsoTranslate;
}

/** Wraps a page handler: language, the headers every SSO page carries, parameters, and errors as pages. */
export function ssoPage(
  services: Services,
  handler: (p: SsoPage, params: Params, form?: URLSearchParams) => Promise<void>,
) {
  return async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Content-Security-Policy', contentSecurityPolicy());
    ctx.set('Vary', 'Accept, Accept-Language, Cookie');
    let p = pageFor(ctx, ssoLang(undefined, undefined, ctx.get('Accept-Language')));
    let params: Params | undefined;
    try {
      const form = ctx.method === 'POST' ? await readForm(ctx) : undefined;
      params = form ? Params.fromForm(form) : Params.fromQuery(ctx.query);
      p = pageFor(
        ctx,
        ssoLang(params.get('lang') ?? undefined, params.get('ui_locales') ?? undefined, ctx.get('Accept-Language')),
      );
      await handler(p, params, form);
    } catch (error) {
      errorPage(p, services, error, params?.authorizePath());
    }
  };
}

function pageFor(ctx: Context, lang: SsoPage['lang']): SsoPage {
  return { ctx, lang, t: translator(lang), st: ssoTranslator(lang), site: CABINET_SITE };
}

/** No scripts, styles and images from this origin only, never framed; the form may post here and lead to the client. */
function contentSecurityPolicy(formTarget?: URL): string {
  const formAction = formTarget ? `'self' ${formTarget.origin}` : `'self'`;
  return `default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action ${formAction}`;
}

function errorPage(p: SsoPage, services: Services, error: unknown, getPath?: string): void {
  const problem = error instanceof Problem ? error : undefined;
  // Programs that ask for JSON get the usual problem details from the error middleware.
  if (p.ctx.accepts('html', 'json') === 'json') throw error;
  if (!problem)
    ((p.ctx.state.log as Logger | undefined) ?? services.logger).error(
      { err: error },
      'unhandled error in an SSO page',
    );
  for (const [name, value] of Object.entries(problem?.headers ?? {})) p.ctx.set(name, value);
  const words = !problem ? p.st('internal') : isSsoMessage(problem.code) ? p.st(problem.code) : p.st('generic');
  send(
    p,
    problem?.status ?? 500,
    p.st('errorTitle'),
    errorBody(p, words, problem?.code ?? 'internal_error'),
    getPath ?? '/sso/authorize',
  );
}

export function loginPage(
  p: SsoPage,
  services: Services,
  request: AuthorizeRequest,
  status: number,
  email: string,
  error?: string,
): void {
  p.ctx.set('Content-Security-Policy', contentSecurityPolicy(request.target));
  const title = p.st('signInTo', { service: p.t('appName'), client: request.client.name });
  // After signing up the user is signed in afresh, so prompt=login would only ask for the new password once more.
  const { prompt: _prompt, ...afterSignUp } = request.carried;
  const body = loginBody(p, {
    title,
    targetHost: request.target.host,
    carried: request.carried,
    lang: p.lang,
    csrf: preSessionCsrf(p.ctx, services),
    email,
    error,
    signUpNext: `/sso/authorize?${new URLSearchParams(afterSignUp).toString()}`,
  });
  send(p, status, title, body, requestPath('/sso/authorize', request));
}

/** What the client will receive and whether the user lets it: the first sign-in to a client in this browser. */
export async function consentPage(
  p: SsoPage,
  services: Services,
  request: AuthorizeRequest,
  session: BrowserSession,
  status: number,
): Promise<void> {
  p.ctx.set('Content-Security-Policy', contentSecurityPolicy(request.target));
  const org = await personalOrganization(services.db, session.user.id);
  const title = p.st('consentTitle', { client: request.client.name, service: p.t('appName') });
  const body = consentBody(p, {
    title,
    clientName: request.client.name,
    targetHost: request.target.host,
    user: { email: session.user.email, name: session.user.name.trim(), org: org?.name ?? '' },
    carried: request.carried,
    lang: p.lang,
    csrf: session.csrf,
    otherAccount: requestPath('/sso/authorize', request, { prompt: 'login' }),
    tools: request.resource !== undefined && namesDataServer(services.config, request.resource) ? TOOL_NAMES : [],
    selfRegistered: request.client.registered_dynamically,
    scopes: consentScopes(request.scope),
    pairwise: request.client.subject_type === 'pairwise',
  });
  send(p, status, title, body, requestPath(CONSENT_PATH, request));
}
