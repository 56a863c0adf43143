// Checking an authorization request (from the query, or carried through the login form). The client and its
// redirect URI are checked first: until both are known good, every error is a 400 page and nothing redirects.
// `state` is required (also a 400 page). Later errors go back to the client as RFC 6749 §4.1.2.1 error redirects.
import type { Db } from '../db.ts';
import { problem } from '../http/problem.ts';
import { findClient, type SsoClient } from './clients.ts';
import { matchRedirectUri } from './redirect-uris.ts';
import { resourceFormProblem } from './resources.ts';

/** Carried through the login form, so that the POST repeats exactly the request the page was shown for. */
export const CARRIED = [
  'client_id',
  'redirect_uri',
  'state',
  'scope',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'response_type',
  'prompt',
  'max_age',
  'resource',
  'acr_values',
] as const;

const MAX_STATE = 2048;
const MAX_NONCE = 512;
const MAX_SCOPE = 1000;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/; // base64url of a SHA-256 digest
const MAX_AGE = /^\d{1,9}$/; // seconds; a billion is over thirty years

export interface AuthorizeRequest {
  client: SsoClient;
  /** As presented: the code is bound to this string, and the exchange must repeat it exactly. */
  redirectUri: string;
  /** The checked URL the browser is sent to. */
  target: URL;
  state: string;
  scope: string;
  nonce?: string;
  codeChallenge?: string;
  /** OpenID Connect's prompt values (`none`, `login`; others are ignored). */
  prompts: ReadonlySet<string>;
  /** OpenID Connect's max_age: a session that began longer ago than this many seconds must sign in again. */
  maxAge?: number;
  /** RFC 8707: the protected resource the access token is for (checked against the data server in outcome.ts). */
  resource?: string;
  /** OpenID Connect's acr_values, in order of preference (`urn:svc:acr:mfa` asks for a second factor). */
  acrValues: readonly string[];
  carried: Record<string, string>;
}

export type Checked =
  { request: AuthorizeRequest } | { refusal: { target: URL; state: string; error: string; description: string } };

/** Parameters given once; a repeated one counts as unusable (RFC 6749 §3.1). */
export class Params {
  private constructor(private readonly values: Map<string, string[]>) {}

  static fromQuery(query: Record<string, string | string[] | undefined>): Params {
    const values = new Map<string, string[]>();
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) values.set(name, Array.isArray(value) ? value : [value]);
    return new Params(values);
  }

  static fromForm(form: URLSearchParams): Params {
    const values = new Map<string, string[]>();
    for (const [name, value] of form) {
      const list = values.get(name);
      if (list)
        list.push(value); // not a copy per value: a name repeated thousands of times costs one pass
      else values.set(name, [value]);
    }
    return new Params(values);
  }

  /** The value; '' counts as absent (RFC 6749 §3.1); undefined when absent, null when repeated. */
  get(name: string): string | undefined | null {
    const values = (this.values.get(name) ?? []).filter((value) => value !== '');
    return values.length > 1 ? null : values[0];
  }

  /** The GET address of this authorization request (for the page's language link). */
  authorizePath(): string {
    const query = new URLSearchParams();
    for (const name of CARRIED) for (const value of this.values.get(name) ?? []) query.append(name, value);
    return `/sso/authorize?${query.toString()}`;
  }
}

export async function checkAuthorizeRequest(db: Db, params: Params): Promise<Checked> {
  const clientId = params.get('client_id');
  if (!clientId) throw problem('unknown_client', 'client_id is missing or repeated.');
  const client = await findClient(db, clientId);
  if (!client) throw problem('unknown_client', 'No SSO client has this client_id.');

  const redirectUri = params.get('redirect_uri');
  if (!redirectUri) throw problem('redirect_uri_not_allowed', 'redirect_uri is missing or repeated.');
  const target = matchRedirectUri(redirectUri, client.redirect_uris);
  if (!target) throw problem('redirect_uri_not_allowed', 'The redirect_uri is not one the client registered.');

  const state = params.get('state');
  if (!state)
    throw problem('state_required', 'state is required (and once): a random value the client checks on return.');
  if (state.length > MAX_STATE) throw problem('state_required', `state is longer than ${MAX_STATE} characters.`);

  const refuse = (error: string, description: string): Checked => ({ refusal: { target, state, error, description } });
  for (const name of CARRIED) if (params.get(name) === null) return refuse('invalid_request', `${name} is repeated.`);
  const responseType = params.get('response_type');
  if (responseType !== undefined && responseType !== 'code')
    return refuse('unsupported_response_type', 'Only response_type=code is supported.');

  const codeChallenge = params.get('code_challenge') ?? undefined;
  const method = params.get('code_challenge_method') ?? undefined;
  if (method !== undefined && codeChallenge === undefined)
    return refuse('invalid_request', 'code_challenge_method without code_challenge.');
  if (codeChallenge !== undefined && method !== 'S256')
    return refuse('invalid_request', 'code_challenge_method must be S256 (plain is not supported).');
  if (codeChallenge !== undefined && !CHALLENGE.test(codeChallenge))
    return refuse('invalid_request', 'code_challenge must be 43 base64url characters.');
  if (codeChallenge === undefined && client.token_endpoint_auth_method === 'none')
    return refuse('invalid_request', 'A public client must use PKCE: code_challenge with code_challenge_method=S256.');

  const nonce = params.get('nonce') ?? undefined;
  if (nonce !== undefined && nonce.length > MAX_NONCE)
    return refuse('invalid_request', `nonce is longer than ${MAX_NONCE} characters.`);
  const scope = params.get('scope') ?? '';
  if (scope.length > MAX_SCOPE) return refuse('invalid_scope', `scope is longer than ${MAX_SCOPE} characters.`);
  const prompts = new Set((params.get('prompt') ?? '').split(' ').filter(Boolean));
  if (prompts.has('none') && prompts.size > 1)
    return refuse('invalid_request', 'prompt=none cannot be combined with other prompt values.');
  const maxAge = params.get('max_age') ?? undefined;
  if (maxAge !== undefined && !MAX_AGE.test(maxAge))
    return refuse('invalid_request', 'max_age must be a whole number of seconds.');

  const acrValues = params.get('acr_values') ?? '';
  if (acrValues.length > MAX_SCOPE)
    return refuse('invalid_request', `acr_values is longer than ${MAX_SCOPE} characters.`);

  const resource = params.get('resource') ?? undefined;
  const resourceProblem = resource === undefined ? undefined : resourceFormProblem(resource);
  if (resourceProblem) return refuse('invalid_target', resourceProblem);

  const carried: Record<string, string> = {};
  for (const name of CARRIED) {
    const value = params.get(name);
    if (value) carried[name] = value;
  }
  return {
    request: {
      client,
      redirectUri,
      target,
      state,
      scope,
      nonce,
      codeChallenge,
      prompts,
      maxAge: maxAge === undefined ? undefined : Number(maxAge),
      resource,
      acrValues: acrValues.split(' ').filter(Boolean),
      carried,
    },
  };
}

/** The client's redirect URI with these parameters added; its own query is kept byte for byte (RFC 6749 §3.1.2). */
export function withParams(target: URL, values: Record<string, string>): string {
  const href = target.href;
  const separator = !href.includes('?') ? '?' : href.endsWith('?') || href.endsWith('&') ? '' : '&';
  return `${href}${separator}${new URLSearchParams(values).toString()}`;
}
