// Marketplace activation (administrators) and the key check marketplaces start with (GET /api/mkt/ping). The other
// administrative operations on marketplaces are in admin-routes.ts.
import { z } from 'zod';
import { nonBlank } from '../http/text.ts';
import { OriginSchema } from '../http/web-addresses.ts';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../admin/auth.ts';
import { requireSecretKey, type Marketplace } from './marketplaces.ts';
import { activateMarketplace } from './admin.ts';
import { ClientCard, ExactRedirectUri } from '../sso/schemas.ts';

export const CreateMarketplaceBody = z.object({
  name: nonBlank(200).describe('Display name'),
  mode: z
    .enum(['sandbox', 'live'])
    .default('sandbox')
    .describe('`sandbox` holds escrow at once; `live` uses the acquirer'),
  sso_redirect_uri: ExactRedirectUri.optional().describe(
    'Redirect URI of the SSO client made for it (https; http only on loopback)',
  ),
  allowed_origins: z
    .array(OriginSchema)
    .max(50)
    .default([])
    .describe('Storefront origins allowed to call the widget API'),
});

const MarketplaceCreated = z.object({
  id: z.uuid(),
  name: z.string(),
  mode: z.enum(['sandbox', 'live']),
  secret_key: z.string().describe('mk_ key for server-to-server calls; shown once'),
  public_key: z.string().describe('pk_ key for the widget on the storefront; shown once'),
  sso_client: ClientCard.nullable().describe(
    'The SSO client made for sso_redirect_uri (client_id is the marketplace id), or null',
  ),
  allowed_origins: z.array(z.string()),
  created_at: z.iso.datetime(),
});

const Ping = z.object({
  ok: z.literal(true),
  marketplace_id: z.uuid(),
  name: z.string(),
  mode: z.enum(['sandbox', 'live']),
});

export function marketplaceRoutes(api: Api, services: Services): void {
  const admin = requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN);

  api.route({
    method: 'post',
    path: '/admin/marketplaces',
    operationId: 'createMarketplace',
    summary: 'Activate a marketplace and issue its keys',
    tags: ['Administration'],
    security: ['adminToken'],
    use: [admin],
    body: CreateMarketplaceBody,
    responses: { 201: { description: 'The marketplace with its keys, shown only now', schema: MarketplaceCreated } },
    handler: async (ctx, { body }) => {
      const { marketplace, secretKey, publicKey, ssoClient } = await activateMarketplace(services, body);
      ctx.status = 201;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = {
        id: marketplace.id,
        name: marketplace.name,
        mode: marketplace.mode,
        secret_key: secretKey,
        public_key: publicKey,
        sso_client: ssoClient,
        allowed_origins: marketplace.allowed_origins,
        created_at: marketplace.created_at.toISOString(),
      };
    },
  });

  api.route({
    method: 'get',
    path: '/api/mkt/ping',
    operationId: 'ping',
    summary: 'Check the secret key',
    tags: ['Marketplace'],
    security: ['marketplaceKey'],
    use: [requireSecretKey(services.db)],
    responses: { 200: { description: 'The key is valid', schema: Ping } },
    handler: (ctx) => {
      const marketplace = ctx.state.marketplace as Marketplace;
      ctx.body = { ok: true, marketplace_id: marketplace.id, name: marketplace.name, mode: marketplace.mode };
    },
  });
}
