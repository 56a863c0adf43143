// GET /sso/authorize and the login form it shows. With a cabinet token in Authorization it issues a code and answers
// 302 to the client; a browser without one gets the form, whose POST signs in with the cabinet's login and answers
// 303 to the client (a top-level navigation). Errors are pages (problem+json for callers that ask for JSON).
import { z } from 'zod';
import type { Context } from 'koa';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { Problem } from '../http/problem.ts';
import { bearerToken } from '../accounts/admin.ts';
import { hashSecret } from '../secrets.ts';
import { redirect } from '../web/page.ts';
import { revokeSession, userForToken } from '../accounts/sessions.ts';
import { signIn, type Session } from '../accounts/operations.ts';
import { checkAuthorizeRequest, withParams, type AuthorizeRequest } from './authorize-request.ts';
import { issueCode } from './codes.ts';
import { countLoginAttempt, loginLimits, loginSubjects, loginSucceeded } from '../accounts/login-limits.ts';
import { loginPage, ssoPage } from './page.ts';
import { validPreSessionCsrf } from '../web/session.ts';

const text = (description: string) => z.string().optional().catch(undefined).describe(description);
const AuthorizeQuery = z.object({
  client_id: text('The SSO client'),
  redirect_uri: text('One of the redirect URIs the client registered; the code is bound to it'),
  state: text('Required: a random value the client compares on return (CSRF protection)'),
  scope: text('Space-separated; `openid` for OpenID Connect'),
  response_type: text('`code` (the default; the only one supported)'),
  code_challenge: text('PKCE: base64url(SHA-256(code_verifier))'),
  code_challenge_method: text('PKCE: `S256` (the only method supported)'),
  nonce: text('OpenID Connect: echoed in the ID token'),
  prompt: text('`none`: answer login_required instead of showing the form'),
  ui_locales: text('`ru` or `en` for the login form'),
  lang: text('`ru` or `en` for the login form'),
});

export function authorizeRoutes(api: Api, services: Services): void {
  const pageResponses = (extra: Record<number, { description: string; contentType?: string }>) => ({
    ...extra,
    400: { description: 'Unknown client, a redirect URI the client did not register, or no state: a page, never a redirect', contentType: 'text/html' },
  });

  api.route({
    method: 'get',
    path: '/sso/authorize',
    operationId: 'ssoAuthorize',
    summary: 'Start single sign-on: a code for the client, or the login form',
    description:
      'With `Authorization: Bearer <cabinet token>`: 302 to `redirect_uri` with `code`, `state` and `iss` (RFC 9207). ' +
      'A browser without a token gets the login form. Also the OpenID Connect authorization endpoint (PKCE S256).',
    tags: ['SSO'],
    security: ['cabinetToken', 'anonymous'],
    query: AuthorizeQuery,
    responses: pageResponses({
      302: { description: 'To the client with code, state and iss (or an OAuth error)' },
      200: { description: 'The login form', contentType: 'text/html' },
      401: { description: 'The cabinet token in Authorization is not valid', contentType: 'text/html' },
    }),
    handler: ssoPage(services, async (p, params) => {
      const checked = await checkAuthorizeRequest(services.db, params);
      if ('refusal' in checked) return refuse(p.ctx, services, checked.refusal, 302);
      const { request } = checked;
      const authorization = p.ctx.get('Authorization');
      if (authorization) {
        const token = bearerToken(authorization);
        const user = token ? await userForToken(services.db, token) : undefined;
        if (!token || !user) {
          throw new Problem(401, 'unauthorized', 'The cabinet token is not valid or has expired; sign in again.', {
            headers: { 'WWW-Authenticate': 'Bearer realm="sso", error="invalid_token"' },
          });
        }
        return issueAndRedirect(p.ctx, services, request, user.id, await sessionStartedAt(services, token), 302);
      }
      if (request.prompt === 'none') {
        return refuse(p.ctx, services, { target: request.target, state: request.state, error: 'login_required', description: 'The user is not signed in.' }, 302);
      }
      loginPage(p, services, request, 200, '');
    }),
  });

  api.route({
    method: 'post',
    path: '/sso/authorize',
    operationId: 'ssoLogin',
    summary: 'The login form: sign in and continue to the client',
    description: 'The authorization request travels in hidden fields with `email`, `password` and the form token `_csrf`.',
    tags: ['SSO'],
    rawBody: { contentType: 'application/x-www-form-urlencoded', description: 'The login form' },
    responses: pageResponses({
      303: { description: 'To the client with code, state and iss' },
      401: { description: 'Wrong e-mail or password: the form again', contentType: 'text/html' },
      403: { description: 'The form token is missing or wrong', contentType: 'text/html' },
      429: { description: 'Too many wrong passwords for this account or address; see Retry-After', contentType: 'text/html' },
    }),
    handler: ssoPage(services, async (p, params, form) => {
      if (!validPreSessionCsrf(p.ctx, services, form?.get('_csrf') ?? undefined)) {
        throw new Problem(403, 'csrf_failed', 'The form token is missing or wrong.');
      }
      const checked = await checkAuthorizeRequest(services.db, params);
      if ('refusal' in checked) return refuse(p.ctx, services, checked.refusal, 303);
      const { request } = checked;
      const email = (form?.get('email') ?? '').slice(0, 320);
      const password = form?.get('password') ?? '';
      const subjects = loginSubjects(email, p.ctx.ip);
      const { retryAfter } = await countLoginAttempt(services.db, subjects, loginLimits(services.config));
      if (retryAfter) {
        p.ctx.set('Retry-After', String(retryAfter));
        return loginPage(p, services, request, 429, email, p.t('tooManyAttempts', { minutes: Math.ceil(retryAfter / 60) }));
      }
      const session = await signInOrNothing(services, email, password);
      if (!session) return loginPage(p, services, request, 401, email, p.t('wrongCredentials'));
      await loginSucceeded(services.db, subjects);
      // The cabinet's login made a session only to prove who this is; nobody holds its token, so it ends here.
      const user = await userForToken(services.db, session.token);
      await revokeSession(services.db, session.token);
      if (!user) throw new Error('a fresh cabinet session has no user');
      return issueAndRedirect(p.ctx, services, request, user.id, new Date(), 303);
    }),
  });
}

async function issueAndRedirect(ctx: Context, services: Services, request: AuthorizeRequest, userId: string, authTime: Date | undefined, status: 302 | 303) {
  const code = await issueCode(
    services.db,
    {
      clientId: request.client.client_id,
      userId,
      redirectUri: request.redirectUri,
      scope: request.scope,
      nonce: request.nonce,
      codeChallenge: request.codeChallenge,
      authTime,
    },
    services.config.SSO_CODE_TTL_SECONDS,
  );
  sendTo(ctx, withParams(request.target, { code, state: request.state, iss: services.config.BASE_URL }), status);
}

/** An error the client handles (RFC 6749 §4.1.2.1), sent to its checked redirect URI with the state and iss. */
function refuse(ctx: Context, services: Services, refusal: { target: URL; state: string; error: string; description: string }, status: 302 | 303) {
  const values = { error: refusal.error, error_description: refusal.description, state: refusal.state, iss: services.config.BASE_URL };
  sendTo(ctx, withParams(refusal.target, values), status);
}

function sendTo(ctx: Context, location: string, status: 302 | 303) {
  if (status === 303) return redirect(ctx, location);
  ctx.status = 302;
  ctx.redirect(location);
}

/** The cabinet's login; undefined for wrong credentials (over-long passwords never reach the hash). */
async function signInOrNothing(services: Services, email: string, password: string): Promise<Session | undefined> {
  if (password.length > 200) return undefined;
  return signIn(services, email, password).catch((error: unknown) => {
    if (error instanceof Problem && error.status === 401) return undefined;
    throw error;
  });
}

/** When the cabinet session behind this token began: the ID token's auth_time. */
async function sessionStartedAt(services: Services, token: string): Promise<Date | undefined> {
  const result = await services.db.query<{ created_at: Date }>('SELECT created_at FROM cabinet_sessions WHERE token_hash = $1', [hashSecret(token)]);
  return result.rows[0]?.created_at;
}

