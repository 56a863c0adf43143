// What the form-encoded OAuth endpoints (/sso/oidc/token, /sso/oidc/revoke, /sso/oidc/introspect) share: reading the
// form with each parameter at most once, and the client's credentials, by HTTP Basic (client_secret_basic) or in the
// form (client_secret_post), never both (RFC 6749 §2.3). The credentials are checked against the database later.
import type { Context } from 'koa';
import { Problem } from '../http/problem.ts';
import { readForm } from '../web/page.ts';
import { asOAuthProblem, invalidClient, invalidRequest } from './oauth-problem.ts';

export const BASIC_CHALLENGE = 'Basic realm="sso"';
/** The client authentication methods of every form-encoded OAuth endpoint, for discovery. */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];
/** The token endpoint also serves public clients (client_id alone, PKCE required). */
export const TOKEN_ENDPOINT_AUTH_METHODS = [...CLIENT_AUTH_METHODS, 'none'];

export interface ClientCredentials {
  id: string;
  /** undefined: a public client (token_endpoint_auth_method `none`) sending only its client_id. */
  secret: string | undefined;
  /** WWW-Authenticate for invalid_client, when the client authenticated with a scheme (HTTP Basic). */
  challenge: string | undefined;
}

/** The form's parameters: '' counts as absent (RFC 6749 §3.1), a repeated one is invalid_request. */
export async function readOAuthForm(ctx: Context): Promise<(name: string) => string | undefined> {
  const form = await readForm(ctx).catch((error: unknown) => {
    throw error instanceof Problem ? asOAuthProblem(error) : error;
  });
  return (name: string) => {
    const values = form.getAll(name).filter((value) => value !== '');
    if (values.length > 1) throw invalidRequest(`${name} is repeated.`);
    return values[0];
  };
}

/** client_secret_basic or client_secret_post, never both (RFC 6749 §2.3); checked against the database later. */
export function clientCredentials(
  ctx: Context,
  bodyId: string | undefined,
  bodySecret: string | undefined,
): ClientCredentials {
  const authorization = ctx.get('Authorization');
  if (!authorization) {
    if (!bodyId) throw invalidClient(BASIC_CHALLENGE);
    // Only client_id: a public client, which the database check accepts only for token_endpoint_auth_method none.
    return { id: bodyId, secret: bodySecret, challenge: bodySecret ? undefined : BASIC_CHALLENGE };
  }
  const basic = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization);
  if (!basic) throw invalidClient(BASIC_CHALLENGE);
  if (bodySecret !== undefined)
    throw invalidRequest('Authenticate the client one way: HTTP Basic or client_secret in the form, not both.');
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // RFC 6749 §2.3.1: both halves are form-urlencoded before they are joined.
  const [id, secret] = colon < 0 ? [] : [decoded.slice(0, colon), decoded.slice(colon + 1)].map(formDecode);
  if (!id || !secret) throw invalidClient(BASIC_CHALLENGE);
  if (bodyId !== undefined && bodyId !== id)
    throw invalidRequest('client_id in the form differs from the one in Authorization.');
  return { id, secret, challenge: BASIC_CHALLENGE };
}

function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
