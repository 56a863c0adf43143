// How an authorization request ends once the user is known: a code for the client (recording the grant), an error
// at the client's checked redirect URI (RFC 6749 §4.1.2.1), or first the consent page when the client has no grant
// covering the scope asked for.
// Also the browser's cabinet session as the SSO steps see it, with the time its user signed in (the ID token's
// auth_time, and what max_age is measured against).
import type { Context } from 'koa';
import type { Services } from '../services.ts';
import type { User } from '../accounts/users.ts';
import { hashSecret } from '../secrets.ts';
import { redirect } from '../web/page.ts';
import { pageUser } from '../web/session.ts';
import { withParams, type AuthorizeRequest } from './authorize-request.ts';
import { issueCode } from './codes.ts';
import { consentNeeded, recordGrant } from './grants.ts';
import { namesDataServer } from './resources.ts';

export const CONSENT_PATH = '/sso/consent';

export interface BrowserSession {
  user: User;
  csrf: string;
  signedInAt: Date;
  /** How it signed in (RFC 8176), for the code and the ID token. */
  amr: readonly string[];
}

/** What a code records of the sign-in behind it: when (auth_time) and how (amr). */
export type SignInRecord = Pick<BrowserSession, 'signedInAt' | 'amr'>;

/** The signed-in user of this browser (the svc_session cookie), or undefined. */
export async function browserSession(ctx: Context, services: Services): Promise<BrowserSession | undefined> {
  const signed = await pageUser(ctx, services);
  return signed && { user: signed.user, csrf: signed.csrf, signedInAt: signed.signedInAt, amr: signed.amr };
}

/** When and how the cabinet session behind this token signed in. */
export async function sessionSignIn(services: Services, token: string): Promise<SignInRecord | undefined> {
  const result = await services.db.query<{ created_at: Date; amr: string[] }>(
    'SELECT created_at, amr FROM cabinet_sessions WHERE token_hash = $1',
    [hashSecret(token)],
  );
  const row = result.rows[0];
  return row && { signedInAt: row.created_at, amr: row.amr };
}

/** This request's address on another SSO step (the consent page, the login form), carrying it unchanged. */
export function requestPath(path: string, request: AuthorizeRequest, extra: Record<string, string> = {}): string {
  return `${path}?${new URLSearchParams({ ...request.carried, ...extra }).toString()}`;
}

/** A signed-in user in the browser: the code, unless the client still needs their consent (prompt=none: an error). */
export async function continueSignedIn(
  ctx: Context,
  services: Services,
  request: AuthorizeRequest,
  session: Omit<BrowserSession, 'csrf'>,
  status: 302 | 303,
) {
  if (request.resource !== undefined && !namesDataServer(services.config, request.resource))
    return refuse(ctx, services, unknownResource(request), status);
  if (await consentNeeded(services.db, request.client, session.user.id, request.scope)) {
    if (request.prompts.has('none')) {
      return refuse(
        ctx,
        services,
        {
          target: request.target,
          state: request.state,
          error: 'consent_required',
          description: 'The user has not allowed this client (this scope) yet.',
        },
        status,
      );
    }
    return sendTo(ctx, requestPath(CONSENT_PATH, request), status);
  }
  return issueAndRedirect(ctx, services, request, session.user.id, session, status);
}

/** A code for the client, sent to its redirect URI with state and iss (RFC 9207); the grant records this sign-in. */
export async function issueAndRedirect(
  ctx: Context,
  services: Services,
  request: AuthorizeRequest,
  userId: string,
  signIn: SignInRecord | undefined,
  status: 302 | 303,
  viaCabinetToken = false,
) {
  if (request.resource !== undefined && !namesDataServer(services.config, request.resource))
    return refuse(ctx, services, unknownResource(request), status);
  await recordGrant(services.db, request.client.client_id, userId, request.scope);
  const code = await issueCode(
    services.db,
    {
      clientId: request.client.client_id,
      userId,
      redirectUri: request.redirectUri,
      scope: request.scope,
      nonce: request.nonce,
      codeChallenge: request.codeChallenge,
      authTime: signIn?.signedInAt,
      amr: signIn?.amr,
      resource: request.resource,
      viaCabinetToken,
    },
    services.config.SSO_CODE_TTL_SECONDS,
  );
  sendTo(ctx, withParams(request.target, { code, state: request.state, iss: services.config.BASE_URL }), status);
}

/** RFC 8707 §2: a resource this issuer makes no tokens for. */
function unknownResource(request: AuthorizeRequest) {
  return {
    target: request.target,
    state: request.state,
    error: 'invalid_target',
    description: 'resource names no resource of this service: tokens are issued for the data server only.',
  };
}

/** An error the client handles (RFC 6749 §4.1.2.1), sent to its checked redirect URI with the state and iss. */
export function refuse(
  ctx: Context,
  services: Services,
  refusal: { target: URL; state: string; error: string; description: string },
  status: 302 | 303,
) {
  const values = {
    error: refusal.error,
    error_description: refusal.description,
    state: refusal.state,
    iss: services.config.BASE_URL,
  };
  sendTo(ctx, withParams(refusal.target, values), status);
}

/** 302 answers a GET (as the simplified flow does); 303 a form post, so the browser follows with a GET. */
export function sendTo(ctx: Context, location: string, status: 302 | 303) {
  if (status === 303) return redirect(ctx, location);
  ctx.status = 302;
  ctx.redirect(location);
}
