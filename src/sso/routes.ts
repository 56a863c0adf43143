// Single sign-on: the simplified token exchange (JSON in, profile out), client registration and the administrative
// card, plus the authorize and consent pages, the standard OpenID Connect endpoints beside them, and the user's
// connected sites (JSON and page).
import { z } from 'zod';
import { nonBlank } from '../http/text.ts';
import type { Api } from '../http/api.ts';
import { LARGE_BODY_LIMIT_BYTES } from '../http/body.ts';
import type { Services } from '../services.ts';
import { notFound } from '../http/problem.ts';
import { forbiddenFor, requireAdmin, type AdminActor } from '../admin/auth.ts';
import { recordAudit } from '../admin/audit.ts';
import { queryInt } from '../http/query-values.ts';
import { clientCard, createClient, deleteClient, listClients, rotateSecret, updateClient } from './clients.ts';
import { redeemCode } from './codes.ts';
import { parseRedirectUris } from './redirect-uris.ts';
import { rotateSigningKey, rotationPolicy } from './signing-keys.ts';
import { authorizeRoutes } from './authorize.ts';
import { consentRoutes } from './consent.ts';
import { connectedSiteRoutes } from './connected-sites.ts';
import { connectedSitePages } from './connected-sites-pages.ts';
import { oidcRoutes } from './oidc.ts';
import { BackchannelLogoutUri, ClientCard, PostLogoutRedirectUris, Profile, RedirectUris, uriList } from './schemas.ts';
import { OAuthProblem, asOAuthProblem, oauthProblemResponses } from './oauth-problem.ts';
import { coversProfile } from './claims.ts';

const ClientSummary = ClientCard.omit({ client_secret: true });

/** What a client registers beside its redirect URIs (issue 25); each optional on registration and change. */
const ClientSettingsBody = {
  token_endpoint_auth_method: ClientCard.shape.token_endpoint_auth_method.optional(),
  subject_type: ClientCard.shape.subject_type.optional(),
  post_logout_redirect_uris: PostLogoutRedirectUris.optional(),
  backchannel_logout_uri: BackchannelLogoutUri.nullable().optional(),
};

function settingsOf(body: {
  post_logout_redirect_uris?: string;
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'none';
  subject_type?: 'public' | 'pairwise';
  backchannel_logout_uri?: string | null;
}) {
  return {
    token_endpoint_auth_method: body.token_endpoint_auth_method,
    subject_type: body.subject_type,
    post_logout_redirect_uris:
      body.post_logout_redirect_uris === undefined ? undefined : uriList(body.post_logout_redirect_uris),
    backchannel_logout_uri: body.backchannel_logout_uri,
  };
}

export const ClientId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/,
    'must be 1–128 letters, digits and . _ ~ - (starting with a letter or digit)',
  );

export function ssoRoutes(api: Api, services: Services): void {
  const admin = {
    tags: ['SSO administration'],
    security: ['adminToken'],
    use: [requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
  };
  const ClientParams = z.object({ client_id: z.string().max(128) });

  authorizeRoutes(api, services);
  consentRoutes(api, services);
  connectedSiteRoutes(api, services);
  connectedSitePages(api, services);

  api.route({
    method: 'post',
    path: '/sso/token',
    operationId: 'ssoToken',
    summary: "Exchange a code for the user's profile",
    description:
      'The client server exchanges the code once, within SSO_CODE_TTL_SECONDS, with the redirect_uri given at the authorize ' +
      'step. 400 `code_already_used` (also revokes what the code issued), `code_expired`, `redirect_uri_mismatch`, ' +
      '`invalid_code`, `invalid_code_verifier`; `invalid_scope` for the code of a browser sign-in with an OpenID Connect ' +
      'scope (with `openid`) lacking one of `profile email org`, since the user allowed less than this profile ' +
      '(the code is spent); 401 `invalid_client`.',
    tags: ['SSO'],
    body: z.object({
      client_id: z.string().max(128),
      client_secret: z.string().max(200),
      code: z.string().max(200),
      redirect_uri: z.string().max(2000),
      code_verifier: z
        .string()
        .min(43)
        .max(128)
        .optional()
        .describe('PKCE, when the authorize step had a code_challenge'),
    }),
    responses: { 200: { description: 'The profile', schema: Profile }, ...oauthProblemResponses },
    mapProblem: asOAuthProblem,
    handler: async (ctx, { body }) => {
      const redeemed = await redeemCode(services.db, {
        code: body.code,
        client: { id: body.client_id, secret: body.client_secret },
        redirectUri: body.redirect_uri,
        codeVerifier: body.code_verifier,
      });
      // A person who allowed the site in a browser allowed what the scope lists (src/sso/claims.ts), and this answer is
      // the whole profile. The spec's authorize with the person's own cabinet token asks no consent: its code answers
      // the profile whatever the scope says, as SPEC.md's flow expects.
      if (!redeemed.viaCabinetToken && !coversProfile(redeemed.scope))
        throw new OAuthProblem(
          'invalid_scope',
          'invalid_scope',
          'This sign-in did not ask for profile, email and org: exchange its code at /sso/oidc/token.',
        );
      ctx.set('Cache-Control', 'no-store');
      ctx.body = redeemed.user;
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/sso/clients',
    operationId: 'createSsoClient',
    bodyLimitBytes: LARGE_BODY_LIMIT_BYTES, // up to 20 redirect URIs of 2,000 characters
    summary: 'Register an SSO client',
    description:
      '409 `client_id_taken` when the client_id is registered already. `token_endpoint_auth_method` `none` registers a ' +
      'public client (no usable secret; its code exchange needs a PKCE code_verifier).',
    body: z.object({ client_id: ClientId, name: nonBlank(200), redirect_uris: RedirectUris, ...ClientSettingsBody }),
    responses: { 201: { description: 'The client with its secret', schema: ClientCard } },
    handler: async (ctx, { body }) => {
      const parsed = parseRedirectUris(body.redirect_uris) as { uris: string[] };
      ctx.status = 201;
      ctx.body = await createClient(services.db, services.masterKey, {
        client_id: body.client_id,
        name: body.name,
        redirect_uris: parsed.uris,
        ...settingsOf(body),
      });
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/sso/clients',
    operationId: 'listSsoClients',
    summary: 'The SSO clients, newest first (without secrets)',
    description:
      'The marketplaces’ automatic clients have `automatic: true` and their `marketplace_id`. Pass the last item’s client_id as `starting_after` for the next page.',
    query: z.object({
      limit: queryInt(1, 100).default(20).describe('Clients per page'),
      starting_after: ClientId.optional().describe('A client_id: the page continues after it'),
    }),
    responses: {
      200: { description: 'The clients', schema: z.object({ items: z.array(ClientSummary), has_more: z.boolean() }) },
    },
    handler: async (ctx, { query }) => {
      ctx.body = await listClients(services.db, query);
    },
  });

  api.route({
    ...admin,
    method: 'get',
    path: '/admin/sso/clients/{client_id}',
    operationId: 'ssoClientCard',
    summary: 'The client card, with its secret',
    description:
      'The admin role only (403 forbidden for the others: the secret lets its holder act as the client); each read is written to the audit log (`revealSsoClientSecret`). The list has every client without secrets.',
    params: ClientParams,
    responses: { 200: { description: 'The card', schema: ClientCard } },
    handler: async (ctx, { params }) => {
      const { role } = ctx.state.admin as AdminActor;
      if (role !== 'admin') throw forbiddenFor(role);
      const card = (await clientCard(services.db, services.masterKey, params.client_id)) ?? throwNotFound();
      await recordAudit(services.db, {
        actor: (ctx.state.admin as AdminActor).actor,
        action: 'revealSsoClientSecret',
        object_type: 'sso_client',
        object_id: card.client_id,
      });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = card;
    },
  });

  api.route({
    ...admin,
    method: 'patch',
    path: '/admin/sso/clients/{client_id}',
    operationId: 'updateSsoClient',
    bodyLimitBytes: LARGE_BODY_LIMIT_BYTES, // up to 20 redirect URIs of 2,000 characters
    summary: 'Rename a client, replace its redirect URIs or logout settings, or disable (and enable) it',
    description:
      'A disabled client is `invalid_client` at once at both token endpoints, unknown at authorize (the 400 page), and ' +
      'its access tokens are refused at userinfo; enabling it restores all of that. A marketplace’s automatic client can ' +
      'only be disabled or enabled here: 409 `sso_client_of_marketplace` for name or redirect_uris.',
    params: ClientParams,
    body: z.object({
      name: nonBlank(200).optional(),
      redirect_uris: RedirectUris.optional(),
      disabled: z.boolean().optional(),
      ...ClientSettingsBody,
    }),
    responses: { 200: { description: 'The client after the change (without its secret)', schema: ClientSummary } },
    handler: async (ctx, { params, body }) => {
      const redirectUris =
        body.redirect_uris === undefined
          ? undefined
          : (parseRedirectUris(body.redirect_uris) as { uris: string[] }).uris;
      const changed =
        (await updateClient(services.db, params.client_id, {
          name: body.name,
          disabled: body.disabled,
          redirect_uris: redirectUris,
          ...settingsOf(body),
        })) ?? throwNotFound();
      ctx.state.auditBefore = changed.before;
      ctx.body = changed.after;
    },
  });

  api.route({
    ...admin,
    method: 'delete',
    path: '/admin/sso/clients/{client_id}',
    operationId: 'deleteSsoClient',
    summary: 'Delete a client with its codes, access tokens and grants',
    description:
      'Everything the client was issued stops working at once. A marketplace’s automatic client: 409 `sso_client_of_marketplace` (disable it instead).',
    params: ClientParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx, { params }) => {
      ctx.state.auditBefore = (await deleteClient(services.db, params.client_id)) ?? throwNotFound();
      ctx.status = 204;
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/sso/clients/{client_id}/rotate-secret',
    operationId: 'rotateSsoClientSecret',
    summary: 'Replace the client secret; the old one stops working at once',
    params: ClientParams,
    responses: { 200: { description: 'The card with the new secret', schema: ClientCard } },
    handler: async (ctx, { params }) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = (await rotateSecret(services.db, services.masterKey, params.client_id)) ?? throwNotFound();
    },
  });

  api.route({
    ...admin,
    method: 'post',
    path: '/admin/sso/signing-keys/rotate',
    operationId: 'rotateSsoSigningKey',
    summary: 'Add a new signing key (ID tokens, access tokens)',
    description:
      'The new key is in the JWKS at once and signs from `not_before` (default SSO_SIGNING_KEY_PUBLISH_SECONDS, so ' +
      'that clients caching the JWKS see it first); the keys it replaces stay in the JWKS until every token they ' +
      'signed has expired (`retires_at`), then are retired.',
    body: z.object({
      activate_after_seconds: z
        .number()
        .int()
        .min(0)
        .max(7 * 24 * 3600)
        .optional(),
    }),
    responses: {
      201: {
        description: 'The new key, and the keys it replaces with when each leaves the JWKS',
        schema: z.object({
          kid: z.string(),
          not_before: z.iso.datetime(),
          replaced: z.array(z.object({ kid: z.string(), retires_at: z.iso.datetime() })),
        }),
      },
    },
    handler: async (ctx, { body }) => {
      const policy = rotationPolicy(services.config);
      ctx.status = 201;
      ctx.body = await rotateSigningKey(services.db, services.masterKey, {
        activateAfterSeconds: body.activate_after_seconds ?? policy.publishSeconds,
        overlapSeconds: policy.overlapSeconds,
      });
    },
  });

  oidcRoutes(api, services);
}

function throwNotFound(): never {
  throw notFound('No SSO client has this client_id.');
}
