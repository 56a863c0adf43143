// Standard OpenID Connect beside the simplified flow, so stock client libraries work unchanged: discovery (issuer =
// BASE_URL), the JWKS, a form-encoded token endpoint (client_secret_basic or client_secret_post) that answers
// access_token, token_type, expires_in and a signed id_token, and userinfo. Authorization is /sso/authorize, shared
// with the simplified flow, and a code redeemed at either token endpoint is gone from both.
import { z } from 'zod';
import type { Context } from 'koa';
import type { Api } from '../http/api.ts';
import { FORM_LIMIT_BYTES } from '../http/body.ts';
import type { Services } from '../services.ts';
import { bearerToken } from '../admin/auth.ts';
import { readForm } from '../web/page.ts';
import { authenticateClient } from './clients.ts';
import { redeemCode } from './codes.ts';
import { OAuthProblem, asOAuthProblem, invalidClient, invalidRequest, oauthProblemResponses } from './oauth-problem.ts';
import { Problem } from '../http/problem.ts';
import { SIGNING_ALG, publishedKeys } from './signing-keys.ts';
import { newAccessToken, signIdToken, userInfo } from './tokens.ts';
import { Profile } from './schemas.ts';

export const OIDC_TOKEN_PATH = '/sso/oidc/token';
const BASIC_CHALLENGE = 'Basic realm="sso"';

const TokenResponse = z.object({
  access_token: z.string().describe('Opaque; for userinfo'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  id_token: z.string().describe('A JWT signed with a key from the JWKS (RS256)'),
  scope: z.string(),
});

export function oidcRoutes(api: Api, services: Services): void {
  const base = () => services.config.BASE_URL; // read per request: tests and proxies set it after start
  const oidc = { tags: ['OpenID Connect'] };

  api.route({
    ...oidc,
    method: 'get',
    path: '/.well-known/openid-configuration',
    operationId: 'openidConfiguration',
    summary: 'OpenID Connect discovery',
    responses: { 200: { description: 'The provider metadata', schema: z.record(z.string(), z.unknown()) } },
    handler: (ctx) => {
      publicDocument(ctx);
      ctx.body = {
        issuer: base(),
        authorization_endpoint: `${base()}/sso/authorize`,
        token_endpoint: `${base()}${OIDC_TOKEN_PATH}`,
        userinfo_endpoint: `${base()}/sso/userinfo`,
        jwks_uri: `${base()}/sso/jwks`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [SIGNING_ALG],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        code_challenge_methods_supported: ['S256'],
        scopes_supported: ['openid', 'profile', 'email'],
        claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'email', 'name', 'svc_id', 'org'],
        prompt_values_supported: ['none', 'login'],
        ui_locales_supported: ['en', 'ru'],
        authorization_response_iss_parameter_supported: true,
      };
    },
  });

  api.route({
    ...oidc,
    method: 'get',
    path: '/sso/jwks',
    operationId: 'ssoJwks',
    summary: 'The public keys that sign ID tokens (JWKS)',
    responses: {
      200: { description: 'The key set', schema: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }) },
    },
    handler: async (ctx) => {
      publicDocument(ctx);
      ctx.body = { keys: await publishedKeys(services.db) };
    },
  });

  api.route({
    ...oidc,
    method: 'post',
    path: OIDC_TOKEN_PATH,
    operationId: 'oidcToken',
    summary: 'The OpenID Connect token endpoint (authorization_code)',
    description:
      'Form-encoded: `grant_type=authorization_code`, `code`, `redirect_uri`, `code_verifier` (PKCE); the client ' +
      'authenticates with HTTP Basic (client_secret_basic) or `client_id` and `client_secret` in the form ' +
      '(client_secret_post). Errors carry RFC 6749 `error` beside the problem `code`.',
    security: ['clientSecretBasic'],
    rawBody: { contentType: 'application/x-www-form-urlencoded', description: 'The token request' },
    bodyLimitBytes: FORM_LIMIT_BYTES,
    responses: { 200: { description: 'The tokens', schema: TokenResponse }, ...oauthProblemResponses },
    handler: async (ctx) => {
      const form = await readForm(ctx).catch((error: unknown) => {
        throw error instanceof Problem ? asOAuthProblem(error) : error;
      });
      const field = (name: string) => {
        const values = form.getAll(name).filter((value) => value !== '');
        if (values.length > 1) throw invalidRequest(`${name} is repeated.`);
        return values[0];
      };
      const credentials = clientCredentials(ctx, field('client_id'), field('client_secret'));
      const code = field('code');
      const redirectUri = field('redirect_uri');
      const refusal =
        field('grant_type') !== 'authorization_code'
          ? new OAuthProblem(
              'unsupported_grant_type',
              'unsupported_grant_type',
              'grant_type must be authorization_code.',
            )
          : !code || !redirectUri
            ? invalidRequest('code and redirect_uri are required.')
            : undefined;
      if (refusal) {
        // A client that does not authenticate learns nothing else (RFC 6749 §5.2 puts invalid_client first).
        if (!(await authenticateClient(services.db, credentials.id, credentials.secret)))
          throw invalidClient(credentials.challenge);
        throw refusal;
      }
      const accessToken = newAccessToken();
      const ttlSeconds = services.config.SSO_ACCESS_TOKEN_TTL_SECONDS;
      const redeemed = await redeemCode(services.db, {
        code: code,
        client: credentials,
        redirectUri: redirectUri,
        codeVerifier: field('code_verifier'),
        accessToken: { token: accessToken, ttlSeconds },
        clientChallenge: credentials.challenge,
      });
      const idToken = await signIdToken(services.db, services.masterKey, {
        issuer: base(),
        clientId: credentials.id,
        redeemed,
        ttlSeconds,
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
      ctx.body = {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ttlSeconds,
        id_token: idToken,
        scope: redeemed.scope,
      };
    },
  });

  for (const method of ['get', 'post'] as const) {
    api.route({
      ...oidc,
      method,
      path: '/sso/userinfo',
      operationId: method === 'get' ? 'oidcUserinfo' : 'oidcUserinfoPost',
      summary: 'The signed-in user, for the access token',
      security: ['ssoAccessToken'],
      responses: {
        200: { description: 'The claims', schema: Profile.extend({ sub: z.uuid() }) },
        401: oauthProblemResponses[401],
      },
      handler: async (ctx) => {
        const token = bearerToken(ctx.get('Authorization'));
        const claims = token ? await userInfo(services.db, token) : undefined;
        if (!claims) {
          const error = token ? ', error="invalid_token"' : '';
          throw new OAuthProblem(
            'unauthorized',
            'invalid_token',
            'Send a valid access token as Authorization: Bearer <token>.',
            {
              headers: { 'WWW-Authenticate': `Bearer realm="sso"${error}` },
            },
          );
        }
        ctx.set('Cache-Control', 'no-store');
        ctx.body = claims;
      },
    });
  }
}

/** Discovery and keys are public, for browser-based clients too. */
function publicDocument(ctx: Context): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Cache-Control', 'public, max-age=300');
}

/** client_secret_basic or client_secret_post, never both (RFC 6749 §2.3); checked against the database later. */
function clientCredentials(ctx: Context, bodyId: string | undefined, bodySecret: string | undefined) {
  const authorization = ctx.get('Authorization');
  if (!authorization) {
    if (!bodyId || !bodySecret) throw invalidClient(BASIC_CHALLENGE);
    return { id: bodyId, secret: bodySecret, challenge: undefined };
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
