// The consent step: the first time a browser signs in to a client (and after the user disconnected it), the user sees
// what the client will receive and allows it or not. Allow records the grant and sends the code (303); Cancel sends
// the client `error=access_denied`. The form carries the authorization request, checked again on the post, and the
// signed-in session's CSRF token. Without a session both lead back to the login form.
import type { Api } from '../http/api.ts';
import { FORM_LIMIT_BYTES } from '../http/body.ts';
import type { Services } from '../services.ts';
import { problem } from '../http/problem.ts';
import { sameToken } from '../web/session.ts';
import { checkAuthorizeRequest } from './authorize-request.ts';
import { AuthorizeQuery } from './authorize.ts';
import { consentPage, ssoPage } from './page.ts';
import { CONSENT_PATH, browserSession, issueAndRedirect, refuse, requestPath, sendTo } from './outcome.ts';

export function consentRoutes(api: Api, services: Services): void {
  const pageResponses = {
    400: {
      description: 'Unknown client, a redirect URI the client did not register, or no state: a page, never a redirect',
      contentType: 'text/html',
    },
  };

  api.route({
    method: 'get',
    path: CONSENT_PATH,
    operationId: 'ssoConsent',
    summary: 'The consent page: what the client will receive, with Allow and Cancel',
    description: 'Takes the query of /sso/authorize. Without a browser session: 302 to the login form.',
    tags: ['SSO'],
    query: AuthorizeQuery,
    responses: {
      ...pageResponses,
      200: { description: 'The consent page', contentType: 'text/html' },
      302: { description: 'To the login form (not signed in), or to the client with an OAuth error' },
    },
    handler: ssoPage(services, async (p, params) => {
      const checked = await checkAuthorizeRequest(services.db, params);
      if ('refusal' in checked) return refuse(p.ctx, services, checked.refusal, 302);
      const session = await browserSession(p.ctx, services);
      if (!session) return sendTo(p.ctx, requestPath('/sso/authorize', checked.request), 302);
      await consentPage(p, services, checked.request, session, 200);
    }),
  });

  api.route({
    method: 'post',
    path: CONSENT_PATH,
    operationId: 'ssoConsentDecision',
    summary: 'Allow (a code for the client) or Cancel (error=access_denied)',
    description:
      'The authorization request travels in hidden fields with `decision` (`allow` or `cancel`) and the form token `_csrf`.',
    tags: ['SSO'],
    rawBody: { contentType: 'application/x-www-form-urlencoded', description: 'The consent form' },
    bodyLimitBytes: FORM_LIMIT_BYTES,
    responses: {
      ...pageResponses,
      303: {
        description:
          'To the client with code, state and iss, or error=access_denied; to the login form when not signed in',
      },
      403: { description: 'The form token is missing or wrong', contentType: 'text/html' },
    },
    handler: ssoPage(services, async (p, params, form) => {
      const session = await browserSession(p.ctx, services);
      if (session && !sameToken(session.csrf, form?.get('_csrf') ?? undefined)) {
        throw problem('csrf_failed', 'The form token is missing or wrong.');
      }
      const checked = await checkAuthorizeRequest(services.db, params);
      if ('refusal' in checked) return refuse(p.ctx, services, checked.refusal, 303);
      const { request } = checked;
      if (!session) return sendTo(p.ctx, requestPath('/sso/authorize', request), 303);
      const decision = form?.get('decision');
      if (decision === 'allow') return issueAndRedirect(p.ctx, services, request, session.user.id, session, 303);
      if (decision === 'cancel') {
        return refuse(
          p.ctx,
          services,
          {
            target: request.target,
            state: request.state,
            error: 'access_denied',
            description: 'The user did not allow this client.',
          },
          303,
        );
      }
      await consentPage(p, services, request, session, 400);
    }),
  });
}
