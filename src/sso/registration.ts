// Dynamic client registration (RFC 7591) at POST /sso/oidc/register: open (no initial access token), for public
// clients only (token_endpoint_auth_method `none`, so PKCE is required and the client holds no secret worth stealing),
// as MCP clients and other agents register themselves. Redirect URIs follow the administrators' rules
// (src/sso/redirect-uris.ts) without wildcards: exact https URIs, or plain http on a loopback address (RFC 8252 §7.3:
// an application on the user's machine; a loopback IP literal registered without a port takes any port). Registrations
// are limited per client address in windows kept in PostgreSQL (the widget's, src/widget/limits.ts), each is audited
// (`registerSsoClientDynamically`, the actor being the address), and the client is marked `registered_dynamically`.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { LARGE_BODY_LIMIT_BYTES } from '../http/body.ts';
import { problem, type Problem } from '../http/problem.ts';
import { nonBlank } from '../http/text.ts';
import type { Services } from '../services.ts';
import { recordAudit } from '../admin/audit.ts';
import { addressKey } from '../accounts/login-limits.ts';
import { countCreation } from '../widget/limits.ts';
import { GRANT_TYPES, createClient, type GrantType } from './clients.ts';
import { OAuthProblem, oauthJsonErrors, OAuthProblemSchema } from './oauth-problem.ts';
import { MAX_REDIRECT_URIS, MAX_REDIRECT_URI_LENGTH, parseRedirectUris } from './redirect-uris.ts';

export const REGISTRATION_PATH = '/sso/oidc/register';
export const DYNAMIC_CLIENT_PREFIX = 'dcr_';

const Metadata = z
  .object({
    redirect_uris: z
      .array(z.string().max(MAX_REDIRECT_URI_LENGTH))
      .min(1)
      .max(MAX_REDIRECT_URIS)
      .describe('Exact https URIs, or http on a loopback address (127.0.0.1, [::1], localhost); no wildcards'),
    client_name: nonBlank(200).optional().describe('Shown to the user on the consent page'),
    token_endpoint_auth_method: z
      .string()
      .max(64)
      .optional()
      .describe('`none` (the default here): only public clients register themselves'),
    grant_types: z
      .array(z.string().max(64))
      .max(10)
      .optional()
      .describe('A subset of authorization_code and refresh_token; default authorization_code'),
    response_types: z.array(z.string().max(64)).max(10).optional().describe('`code` only'),
    scope: z.string().max(1000).optional().describe('Echoed back; what a sign-in may ask is decided at authorize'),
  })
  // RFC 7591 §2: metadata the server does not understand is ignored (client_uri, logo_uri, software_id, …).
  .catchall(z.unknown());

const Registered = z.object({
  client_id: z.string(),
  client_id_issued_at: z.number().int(),
  client_name: z.string(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.enum(GRANT_TYPES)),
  response_types: z.array(z.literal('code')),
  token_endpoint_auth_method: z.literal('none'),
  scope: z.string().optional(),
});

const metadataProblem = (detail: string) =>
  new OAuthProblem('invalid_client_metadata', 'invalid_client_metadata', detail);

/**
 * A validation failure of the body in RFC 7591's shape (`error: invalid_client_metadata`, naming the field); its `code`
 * stays the service's own, as on every route (validation_failed, a body too deep among them).
 */
function asRegistrationProblem(error: Problem): Problem {
  if (error instanceof OAuthProblem || error.status !== 400) return error;
  return new OAuthProblem(error.code, 'invalid_client_metadata', error.message, {
    errors: error.errors,
  });
}

export function registrationRoutes(api: Api, services: Services): void {
  api.route({
    method: 'post',
    path: REGISTRATION_PATH,
    operationId: 'oidcRegisterClient',
    summary: 'Dynamic client registration (RFC 7591): a public client registers itself',
    description:
      'Open registration, no initial access token. Only public clients: `token_endpoint_auth_method` `none` (the ' +
      'default here; any other is 400 `invalid_client_metadata`), so the client uses PKCE (S256) and holds no secret. ' +
      '`redirect_uris`: exact https URIs, or http on a loopback address for an application on the user’s machine (a ' +
      'loopback IP literal without a port takes any port); otherwise 400 `invalid_redirect_uri`. `grant_types` ⊆ ' +
      '{authorization_code, refresh_token}, `response_types` ⊆ {code}. `client_name` is shown on the consent page. ' +
      'Limited per client address (429 `too_many_registrations` with Retry-After).',
    tags: ['OpenID Connect'],
    security: ['anonymous'],
    body: Metadata,
    bodyLimitBytes: LARGE_BODY_LIMIT_BYTES,
    mapProblem: asRegistrationProblem,
    use: [oauthJsonErrors(() => services.config.BASE_URL)],
    responses: {
      201: { description: 'The registered client', schema: Registered },
      400: {
        description: '`invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591 §3.2.2)',
        schema: OAuthProblemSchema,
        contentType: 'application/problem+json',
      },
      429: { description: 'Too many registrations from this address; see Retry-After' },
    },
    handler: async (ctx, { body }) => {
      const method = body.token_endpoint_auth_method ?? 'none';
      if (method !== 'none') {
        throw metadataProblem(
          `token_endpoint_auth_method ${JSON.stringify(method.slice(0, 64))} is not registered here: only public ` +
            'clients (none, with PKCE) register themselves; a confidential client is registered by an operator.',
        );
      }
      const grantTypes = [...new Set(body.grant_types ?? ['authorization_code'])];
      const unknownGrant = grantTypes.find((grant) => !(GRANT_TYPES as readonly string[]).includes(grant));
      if (unknownGrant !== undefined)
        throw metadataProblem(
          `grant_types may hold only authorization_code and refresh_token, not ${JSON.stringify(unknownGrant)}.`,
        );
      if (!grantTypes.includes('authorization_code'))
        throw metadataProblem('grant_types must include authorization_code (the only way to sign a user in).');
      const responseTypes = [...new Set(body.response_types ?? ['code'])];
      if (responseTypes.some((type) => type !== 'code')) throw metadataProblem('response_types may hold only code.');
      if (body.redirect_uris.some((uri) => uri.includes(' ') || uri === ''))
        throw new OAuthProblem(
          'invalid_redirect_uri',
          'invalid_redirect_uri',
          'A redirect URI is empty or has a space.',
        );
      const parsed = parseRedirectUris(body.redirect_uris.join(' '), { wildcard: false });
      if ('problem' in parsed)
        throw new OAuthProblem('invalid_redirect_uri', 'invalid_redirect_uri', `redirect_uris: ${parsed.problem}.`);

      const address = addressKey(ctx.ip);
      const wait = await countCreation(
        services.db,
        `sso-register:${address}`,
        services.config.SSO_REGISTRATION_LIMIT_PER_ADDRESS,
        services.config.SSO_REGISTRATION_WINDOW_SECONDS,
      );
      if (wait !== undefined) {
        throw problem(
          'too_many_registrations',
          `Too many client registrations from this address; retry in ${wait} s.`,
          {
            headers: { 'Retry-After': String(wait) },
          },
        );
      }

      const clientId = `${DYNAMIC_CLIENT_PREFIX}${randomBytes(16).toString('base64url')}`;
      const name = body.client_name ?? new URL(parsed.uris[0]).host;
      const card = await createClient(services.db, services.masterKey, {
        client_id: clientId,
        name,
        redirect_uris: parsed.uris,
        token_endpoint_auth_method: 'none',
        registered_dynamically: true,
        grant_types: grantTypes as GrantType[],
      });
      const registered: z.infer<typeof Registered> = {
        client_id: card.client_id,
        client_id_issued_at: Math.floor(new Date(card.created_at).getTime() / 1000),
        client_name: card.name,
        redirect_uris: parsed.uris,
        grant_types: grantTypes as GrantType[],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        ...(body.scope !== undefined ? { scope: body.scope } : {}),
      };
      await recordAudit(services.db, {
        actor: `address:${address}`,
        action: 'registerSsoClientDynamically',
        object_type: 'sso_client',
        object_id: card.client_id,
        after: registered,
      });
      ctx.status = 201;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = registered;
    },
  });
}
