// GET /sso/authorize and the login form it shows. With a cabinet token in Authorization it issues a code and answers
// 302 to the client at once (the simplified flow, no consent). A browser reuses its cabinet session (the svc_session
// cookie) unless prompt=login or max_age asks for a fresh sign-in; otherwise it gets the form, whose POST signs in,
// starts that browser session (so the next client needs no password) and answers 303 to the client (a top-level
// navigation), or to the consent page the first time this client asks. Errors are pages (problem+json for callers
// that ask for JSON).
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { FORM_LIMIT_BYTES } from '../http/body.ts';
import type { Services } from '../services.ts';
import { Problem, problem } from '../http/problem.ts';
import { bearerToken } from '../admin/auth.ts';
import { userForToken } from '../accounts/sessions.ts';
import { passwordStep } from '../accounts/operations.ts';
import { secondFactorHref, startPendingSignIn } from '../mfa/pending.ts';
import { hasSecondFactor } from '../mfa/factors.ts';
import { VERIFY_PATH } from '../mfa/page-views.ts';
import { ACR_MFA } from './claims.ts';
import { checkAuthorizeRequest } from './authorize-request.ts';
import { resolveMetadataDocumentClient } from './client-metadata.ts';
import { countLoginAttempt, loginLimits, loginSubjects, loginSucceeded } from '../accounts/login-limits.ts';
import { loginPage, ssoPage } from './page.ts';
import { startPageSession, validPreSessionCsrf } from '../web/session.ts';
import {
  browserSession,
  continueSignedIn,
  issueAndRedirect,
  refuse,
  requestPath,
  sendTo,
  sessionSignIn,
} from './outcome.ts';

const text = (description: string) => z.string().optional().catch(undefined).describe(description);
/** The query of the authorize step; the consent page carries the same. */
export const AuthorizeQuery = z.object({
  client_id: text('The SSO client, or the https address of its client ID metadata document'),
  redirect_uri: text('One of the redirect URIs the client registered; the code is bound to it'),
  state: text('Required: a random value the client compares on return (CSRF protection)'),
  scope: text('Space-separated; `openid` for OpenID Connect'),
  response_type: text('`code` (the default; the only one supported)'),
  code_challenge: text('PKCE: base64url(SHA-256(code_verifier))'),
  code_challenge_method: text('PKCE: `S256` (the only method supported)'),
  nonce: text('OpenID Connect: echoed in the ID token'),
  prompt: text(
    '`login`: always the form; `none`: never a page (login_required without a session, consent_required before consent)',
  ),
  max_age: text('Seconds: a browser session that began longer ago signs in again on the form'),
  resource: text('RFC 8707: the data server (`{mcp_url}` or `{mcp_url}/mcp/`) for an access token only for it'),
  acr_values: text(
    '`urn:svc:acr:mfa`: a browser session without a second factor gives it first, when the account has one',
  ),
  ui_locales: text('`ru` or `en` for the login form'),
  lang: text('`ru` or `en` for the login form'),
});

export function authorizeRoutes(api: Api, services: Services): void {
  const pageResponses = (extra: Record<number, { description: string; contentType?: string }>) => ({
    ...extra,
    400: {
      description: 'Unknown client, a redirect URI the client did not register, or no state: a page, never a redirect',
      contentType: 'text/html',
    },
  });

  api.route({
    method: 'get',
    path: '/sso/authorize',
    operationId: 'ssoAuthorize',
    summary: 'Start single sign-on: a code for the client, the consent page, or the login form',
    description:
      'With `Authorization: Bearer <cabinet token>`: 302 to `redirect_uri` with `code`, `state` and `iss` (RFC 9207), ' +
      'at once. A browser signed in to the cabinet goes straight back with a code, after the consent page the first ' +
      "time it signs in to this client (a marketplace's own client needs none); `prompt=login` and `max_age` ask for " +
      'the login form instead, `prompt=none` never shows a page (error `login_required` or `consent_required`). ' +
      'Also the OpenID Connect authorization endpoint (PKCE S256).',
    tags: ['SSO'],
    security: ['cabinetToken', 'anonymous'],
    query: AuthorizeQuery,
    responses: pageResponses({
      302: { description: 'To the client with code, state and iss (or an OAuth error), or to the consent page' },
      200: { description: 'The login form', contentType: 'text/html' },
      401: { description: 'The cabinet token in Authorization is not valid', contentType: 'text/html' },
    }),
    handler: ssoPage(services, async (p, params) => {
      await resolveMetadataDocumentClient(services, params.get('client_id'));
      const checked = await checkAuthorizeRequest(services.db, params);
      if ('refusal' in checked) return refuse(p.ctx, services, checked.refusal, 302);
      const { request } = checked;
      const authorization = p.ctx.get('Authorization');
      if (authorization) {
        const token = bearerToken(authorization);
        const user = token ? await userForToken(services.db, token) : undefined;
        if (!token || !user) {
          throw problem('unauthorized', 'The cabinet token is not valid or has expired; sign in again.', {
            headers: { 'WWW-Authenticate': 'Bearer realm="sso", error="invalid_token"' },
          });
        }
        // The spec's path: the site holds the person's cabinet token, so there is no consent page to honour.
        return issueAndRedirect(p.ctx, services, request, user.id, await sessionSignIn(services, token), 302, true);
      }
      const session = await browserSession(p.ctx, services);
      if (session && !request.prompts.has('login') && !tooOld(session.signedInAt, request.maxAge)) {
        // acr_values asking for a second factor: a session without one gives it on the step-up page and comes back
        // here. An account with none, or prompt=none, goes on: the ID token's acr says what the sign-in was.
        if (
          request.acrValues.includes(ACR_MFA) &&
          !session.amr.includes('mfa') &&
          !request.prompts.has('none') &&
          (await hasSecondFactor(services.db, session.user.id))
        )
          return sendTo(
            p.ctx,
            `${VERIFY_PATH}?next=${encodeURIComponent(requestPath('/sso/authorize', request))}`,
            302,
          );
        return continueSignedIn(p.ctx, services, request, session, 302);
      }
      if (request.prompts.has('none')) {
        return refuse(
          p.ctx,
          services,
          {
            target: request.target,
            state: request.state,
            error: 'login_required',
            description: 'The user is not signed in.',
          },
          302,
        );
      }
      loginPage(p, services, request, 200, '');
    }),
  });

  api.route({
    method: 'post',
    path: '/sso/authorize',
    operationId: 'ssoLogin',
    summary: 'The login form: sign in and continue to the client',
    description:
      'The authorization request travels in hidden fields with `email`, `password` and the form token `_csrf`.',
    tags: ['SSO'],
    rawBody: { contentType: 'application/x-www-form-urlencoded', description: 'The login form' },
    bodyLimitBytes: FORM_LIMIT_BYTES,
    responses: pageResponses({
      303: {
        description: 'To the client with code, state and iss, or to the consent page the first time this client asks',
      },
      401: { description: 'Wrong e-mail or password: the form again', contentType: 'text/html' },
      403: { description: 'The form token is missing or wrong', contentType: 'text/html' },
      429: {
        description: 'Too many wrong passwords for this account or address; see Retry-After',
        contentType: 'text/html',
      },
    }),
    handler: ssoPage(services, async (p, params, form) => {
      if (!validPreSessionCsrf(p.ctx, services, form?.get('_csrf') ?? undefined)) {
        throw problem('csrf_failed', 'The form token is missing or wrong.');
      }
      await resolveMetadataDocumentClient(services, params.get('client_id'));
      const checked = await checkAuthorizeRequest(services.db, params);
      if ('refusal' in checked) return refuse(p.ctx, services, checked.refusal, 303);
      const { request } = checked;
      const email = (form?.get('email') ?? '').slice(0, 320);
      const password = form?.get('password') ?? '';
      const subjects = loginSubjects(email, p.ctx.ip);
      const { retryAfter } = await countLoginAttempt(services.db, subjects, loginLimits(services.config));
      if (retryAfter) {
        p.ctx.set('Retry-After', String(retryAfter));
        return loginPage(
          p,
          services,
          request,
          429,
          email,
          p.t('tooManyAttempts', { minutes: Math.ceil(retryAfter / 60) }),
        );
      }
      const step = await passwordOrNothing(services, email, password, p.ctx.get('User-Agent'));
      if (!step) return loginPage(p, services, request, 401, email, p.t('wrongCredentials'));
      await loginSucceeded(services.db, subjects);
      if ('secondFactor' in step) {
        // The cabinet's second page asks for the factor, then comes back here signed in (so without prompt=login,
        // which this sign-in has just honoured).
        await startPendingSignIn(p.ctx, services, step.secondFactor.userId, p.ctx.get('User-Agent'));
        const { prompt: _prompt, ...carried } = request.carried;
        return sendTo(p.ctx, secondFactorHref(`/sso/authorize?${new URLSearchParams(carried).toString()}`), 303);
      }
      const { session } = step;
      // The form's sign-in is this browser's cabinet session from now on, so the next client needs no password.
      await startPageSession(p.ctx, services, session);
      const user = await userForToken(services.db, session.token);
      if (!user) throw new Error('a fresh cabinet session has no user');
      const signIn = (await sessionSignIn(services, session.token)) ?? { signedInAt: new Date(), amr: ['pwd'] };
      return continueSignedIn(p.ctx, services, request, { user, ...signIn }, 303);
    }),
  });
}

/** OpenID Connect's max_age: the sign-in is older than the client accepts (max_age=0 always is). */
function tooOld(signedInAt: Date, maxAge: number | undefined): boolean {
  return maxAge !== undefined && Date.now() - signedInAt.getTime() >= maxAge * 1000;
}

/** The cabinet's password step; undefined for wrong credentials (over-long passwords never reach the hash). */
async function passwordOrNothing(
  services: Services,
  email: string,
  password: string,
  userAgent: string,
): Promise<Awaited<ReturnType<typeof passwordStep>> | undefined> {
  if (password.length > 200) return undefined;
  return passwordStep(services, email, password, userAgent).catch((error: unknown) => {
    if (error instanceof Problem && error.status === 401) return undefined;
    throw error;
  });
}
