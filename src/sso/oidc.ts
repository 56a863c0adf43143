// Standard OpenID Connect beside the simplified flow, so stock client libraries work unchanged: discovery (issuer =
// BASE_URL), the JWKS, a form-encoded token endpoint (client_secret_basic or client_secret_post) that answers a JWT
// access_token (RFC 9068, src/sso/tokens.ts), token_type, expires_in and a signed id_token (and a refresh_token for offline_access, rotated on each
// use: src/sso/refresh-tokens.ts), and userinfo; revocation and introspection are src/sso/token-routes.ts.
// Authorization is /sso/authorize, shared with the simplified flow, and a code redeemed at either token endpoint is
// gone from both.
import { z } from 'zod';
import type { Context } from 'koa';
import type { Api } from '../http/api.ts';
import { FORM_LIMIT_BYTES } from '../http/body.ts';
import type { Services } from '../services.ts';
import { bearerToken } from '../admin/auth.ts';
import { authenticateClient, findClient } from './clients.ts';
import { CLIENT_AUTH_METHODS, TOKEN_ENDPOINT_AUTH_METHODS, clientCredentials, readOAuthForm } from './client-auth.ts';
import { LOGOUT_PATH, logoutRoutes } from './logout.ts';
import { issueSubject } from './subjects.ts';
import { redeemCode, type Redeemed } from './codes.ts';
import {
  OAuthProblem,
  invalidClient,
  invalidRequest,
  oauthFormProblemResponses,
  oauthJsonErrors,
  oauthProblemResponses,
} from './oauth-problem.ts';
import { ACR_VALUES, SUPPORTED_CLAIMS, SUPPORTED_SCOPES } from './claims.ts';
import { newRefreshToken, rotateRefreshToken } from './refresh-tokens.ts';
import { SIGNING_ALG, publishedKeys, rotationPolicy } from './signing-keys.ts';
import { INTROSPECT_PATH, REVOKE_PATH, tokenRoutes } from './token-routes.ts';
import { REGISTRATION_PATH, registrationRoutes } from './registration.ts';
import { newAccessTokenId, signAccessToken, signIdToken, userInfo } from './tokens.ts';
import { Profile } from './schemas.ts';

export const OIDC_TOKEN_PATH = '/sso/oidc/token';

const TokenResponse = z.object({
  access_token: z
    .string()
    .describe(
      'A JWT (RFC 9068: typ at+jwt; iss, sub, aud = the resource or the client, client_id, scope, jti, iat, exp) ' +
        'signed with a key from the JWKS; for userinfo and the resource it names, introspection and revocation',
    ),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z
    .string()
    .optional()
    .describe(
      'When the scope has offline_access: single use, each use answers the next; a spent one used again revokes ' +
        'every token of the sign-in',
    ),
  id_token: z.string().describe('A JWT signed with a key from the JWKS (RS256); after a refresh without nonce'),
  scope: z.string(),
});

export function oidcRoutes(api: Api, services: Services): void {
  const base = () => services.config.BASE_URL; // read per request: tests and proxies set it after start
  const oidc = { tags: ['OpenID Connect'] };

  /** The provider metadata, one document for OpenID Connect discovery and RFC 8414. */
  const metadata = () => ({
    issuer: base(),
    authorization_endpoint: `${base()}/sso/authorize`,
    token_endpoint: `${base()}${OIDC_TOKEN_PATH}`,
    userinfo_endpoint: `${base()}/sso/userinfo`,
    jwks_uri: `${base()}/sso/jwks`,
    revocation_endpoint: `${base()}${REVOKE_PATH}`,
    introspection_endpoint: `${base()}${INTROSPECT_PATH}`,
    registration_endpoint: `${base()}${REGISTRATION_PATH}`,
    // A client_id may be the https address of its metadata document (src/sso/client-metadata.ts).
    client_id_metadata_document_supported: true,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    subject_types_supported: ['public', 'pairwise'],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    token_endpoint_auth_methods_supported: TOKEN_ENDPOINT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    scopes_supported: SUPPORTED_SCOPES,
    claims_supported: SUPPORTED_CLAIMS,
    // What authenticationClaims issues; acr_values at the authorize step may ask for the MFA one (src/sso/authorize.ts).
    acr_values_supported: ACR_VALUES,
    prompt_values_supported: ['none', 'login'],
    ui_locales_supported: ['en', 'ru'],
    authorization_response_iss_parameter_supported: true,
    end_session_endpoint: `${base()}${LOGOUT_PATH}`,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: false,
  });

  for (const document of [
    {
      path: '/.well-known/openid-configuration',
      operationId: 'openidConfiguration',
      summary: 'OpenID Connect discovery',
    },
    {
      path: '/.well-known/oauth-authorization-server',
      operationId: 'oauthAuthorizationServerMetadata',
      summary: 'OAuth 2.0 authorization server metadata (RFC 8414), the same document',
    },
  ]) {
    api.route({
      ...oidc,
      ...document,
      method: 'get',
      responses: { 200: { description: 'The provider metadata', schema: z.record(z.string(), z.unknown()) } },
      handler: (ctx) => {
        publicDocument(ctx);
        ctx.body = metadata();
      },
    });
  }

  api.route({
    ...oidc,
    method: 'get',
    path: '/sso/jwks',
    operationId: 'ssoJwks',
    summary:
      'The public keys that sign ID tokens and access tokens (JWKS): upcoming, current and replaced ones until they retire',
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
    summary: 'The OpenID Connect token endpoint (authorization_code, refresh_token)',
    description:
      'Form-encoded: `grant_type=authorization_code`, `code`, `redirect_uri`, `code_verifier` (PKCE); or ' +
      '`grant_type=refresh_token`, `refresh_token` and optionally `scope` (no wider than granted). The client ' +
      'authenticates with HTTP Basic (client_secret_basic) or `client_id` and `client_secret` in the form ' +
      '(client_secret_post). A grant whose scope has `offline_access` answers a `refresh_token`; each use spends it ' +
      'and answers the next, and a spent one used again revokes every token of that sign-in (400 ' +
      '`refresh_token_reused`). `resource` (RFC 8707), when given, must be the one the sign-in named (else 400 ' +
      '`invalid_target`); the access token is only for that audience. Errors carry RFC 6749 `error` beside the ' +
      'problem `code`.',
    security: ['clientSecretBasic'],
    use: [oauthJsonErrors(base)],
    rawBody: { contentType: 'application/x-www-form-urlencoded', description: 'The token request' },
    bodyLimitBytes: FORM_LIMIT_BYTES,
    responses: { 200: { description: 'The tokens', schema: TokenResponse }, ...oauthFormProblemResponses },
    handler: async (ctx) => {
      const field = await readOAuthForm(ctx);
      const credentials = clientCredentials(ctx, field('client_id'), field('client_secret'));
      const grantType = field('grant_type');
      const code = field('code');
      const redirectUri = field('redirect_uri');
      const refreshToken = field('refresh_token');
      const resource = field('resource');
      const registered = await findClient(services.db, credentials.id);
      const refreshAllowed = !registered || registered.grant_types.includes('refresh_token');
      const refusal =
        grantType !== 'authorization_code' && grantType !== 'refresh_token'
          ? new OAuthProblem(
              'unsupported_grant_type',
              'unsupported_grant_type',
              'grant_type must be authorization_code or refresh_token.',
            )
          : grantType === 'authorization_code' && (!code || !redirectUri)
            ? invalidRequest('code and redirect_uri are required.')
            : grantType === 'refresh_token' && !refreshToken
              ? invalidRequest('refresh_token is required.')
              : grantType === 'refresh_token' && !refreshAllowed
                ? new OAuthProblem(
                    'grant_type_not_allowed',
                    'unauthorized_client',
                    'This client did not register the refresh_token grant.',
                  )
                : undefined;
      if (refusal) {
        // A client that does not authenticate learns nothing else (RFC 6749 §5.2 puts invalid_client first).
        if (!(await authenticateClient(services.db, credentials.id, credentials.secret)))
          throw invalidClient(credentials.challenge);
        throw refusal;
      }
      const accessToken = newAccessTokenId();
      const nextRefreshToken = newRefreshToken();
      const ttlSeconds = services.config.SSO_ACCESS_TOKEN_TTL_SECONDS;
      const refreshTtlSeconds = services.config.SSO_REFRESH_TOKEN_TTL_SECONDS;
      let granted: Redeemed;
      if (grantType === 'refresh_token') {
        granted = await rotateRefreshToken(services.db, {
          refreshToken: refreshToken!,
          client: credentials,
          scope: field('scope'),
          accessToken: { jti: accessToken, ttlSeconds },
          next: { token: nextRefreshToken, ttlSeconds: refreshTtlSeconds },
          familyMaxSeconds: services.config.SSO_REFRESH_FAMILY_MAX_SECONDS,
          clientChallenge: credentials.challenge,
          resource,
        });
      } else {
        granted = await redeemCode(services.db, {
          code: code!,
          client: credentials,
          redirectUri: redirectUri!,
          codeVerifier: field('code_verifier'),
          accessToken: { jti: accessToken, ttlSeconds },
          refreshToken: refreshAllowed ? { token: nextRefreshToken, ttlSeconds: refreshTtlSeconds } : undefined,
          clientChallenge: credentials.challenge,
          resource,
        });
      }
      const client = registered;
      const subject = client
        ? await issueSubject(services.db, services.masterKey, client, granted.user.svc_id)
        : granted.user.svc_id;
      const policy = rotationPolicy(services.config);
      const idToken = await signIdToken(
        services.db,
        services.masterKey,
        {
          issuer: base(),
          clientId: credentials.id,
          subject,
          redeemed: granted,
          ttlSeconds,
          pairwise: client?.subject_type === 'pairwise',
        },
        policy,
      );
      const signedAccessToken = await signAccessToken(
        services.db,
        services.masterKey,
        base(),
        {
          audience: granted.resource ?? credentials.id,
          subject,
          clientId: credentials.id,
          scope: granted.scope,
          jti: accessToken,
          ttlSeconds,
        },
        policy,
      );
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
      ctx.body = {
        access_token: signedAccessToken,
        token_type: 'Bearer',
        expires_in: ttlSeconds,
        ...(grantType === 'refresh_token' || granted.refreshIssued ? { refresh_token: nextRefreshToken } : {}),
        id_token: idToken,
        scope: granted.scope,
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
        200: {
          description:
            'The claims the token’s scope selects: `profile` gives `name` (and `locale`, `zoneinfo` when chosen), ' +
            '`email` gives `email` and `email_verified`, `org` the organization; a pairwise client never gets ' +
            '`svc_id` or `org`',
          schema: Profile.partial().extend({
            sub: z.string().describe('The svc ID, or a pairwise client’s own subject'),
            email_verified: z.boolean().optional(),
            locale: z.string().optional(),
            zoneinfo: z.string().optional(),
          }),
        },
        401: oauthProblemResponses[401],
      },
      handler: async (ctx) => {
        const token = bearerToken(ctx.get('Authorization'));
        const claims = token ? await userInfo(services.db, services.masterKey, base(), token) : undefined;
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

  tokenRoutes(api, services);
  logoutRoutes(api, services);
  registrationRoutes(api, services);
}

/** Discovery and keys are public, for browser-based clients too. */
function publicDocument(ctx: Context): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Cache-Control', 'public, max-age=300');
}
