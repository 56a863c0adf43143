// The signed-in user's data API keys and usage as JSON (the cabinet token; reads also the browser session): the same operations as the cabinet's data keys
// page (cabinet-pages.ts), over keys.ts and quota.ts.
import { bearerOrPageSession } from '../web/session.ts';
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import type { User } from '../accounts/users.ts';
import { requireCabinetUser } from '../accounts/sessions.ts';
import { nonBlank } from '../http/text.ts';
import {
  ACTIVE_DATA_KEYS_MAX,
  DATA_KEY_NAME_MAX,
  TARIFFS,
  issueOwnDataKey,
  listDataKeys,
  revokeDataKey,
} from './keys.ts';
import { accountUsage } from './quota.ts';

export const DataKeyName = nonBlank(DATA_KEY_NAME_MAX).describe('What the key is for, so you can tell your keys apart');
const DataKeyItem = z.object({
  id: z.uuid(),
  name: z.string().describe('Empty for keys issued by support before keys had names'),
  prefix: z
    .string()
    .nullable()
    .describe(
      'The first characters of the key (svc_mcp_ and 4 more), to recognise it; null for keys issued before prefixes were kept',
    ),
  created_at: z.iso.datetime(),
  revoked_at: z.iso.datetime().nullable(),
});

const me = (ctx: { state: { user?: unknown } }) => (ctx.state.user as User).id;

export function dataKeyCabinetRoutes(api: Api, services: Services): void {
  const { db } = services;
  const signedIn = { tags: ['Cabinet'], security: ['cabinetToken'], use: [requireCabinetUser(db)] };

  api.route({
    ...signedIn,
    // Also the browser session (a read, so no CSRF token is needed).
    use: [bearerOrPageSession(services)],
    method: 'get',
    path: '/cabinet/data-keys',
    operationId: 'cabinetDataKeys',
    summary: 'My data API keys',
    description: 'Active keys first, newest first. The key itself is never shown again after it is issued.',
    responses: { 200: { description: 'The keys', schema: z.object({ items: z.array(DataKeyItem) }) } },
    handler: async (ctx) => {
      ctx.body = { items: await listDataKeys(db, me(ctx)) };
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/data-keys',
    operationId: 'issueCabinetDataKey',
    summary: 'Issue a data API key',
    description:
      'The key (svc_mcp_…) serves the data API and MCP; it is shown only in this answer. A user without a data account ' +
      `gets one on the free tariff. At most ${ACTIVE_DATA_KEYS_MAX} active keys: 409 too_many_data_keys beyond.`,
    body: z.object({ name: DataKeyName }),
    responses: {
      201: {
        description: 'The key, shown only now',
        schema: z.object({
          id: z.uuid(),
          name: z.string(),
          key: z.string().describe('Copy it now: it is stored only as a hash'),
        }),
      },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await issueOwnDataKey(db, me(ctx), body.name);
    },
  });

  api.route({
    ...signedIn,
    method: 'post',
    path: '/cabinet/data-keys/{id}/revoke',
    operationId: 'revokeCabinetDataKey',
    summary: 'Revoke one of my data API keys',
    description:
      'Refused by the data API and MCP from the next request on. Revoking again answers the same; another user’s key is 404.',
    params: z.object({ id: z.string().max(100) }),
    responses: { 200: { description: 'The revoked key', schema: DataKeyItem } },
    handler: async (ctx, { params }) => {
      ctx.body = await revokeDataKey(db, me(ctx), params.id);
    },
  });

  api.route({
    ...signedIn,
    // Also the browser session (a read, so no CSRF token is needed).
    use: [bearerOrPageSession(services)],
    method: 'get',
    path: '/cabinet/data-usage',
    operationId: 'cabinetDataUsage',
    summary: 'My data tariff and this month’s usage',
    description:
      'Counted over all keys of the account, per calendar month (UTC). Without an account: the free tariff, nothing used.',
    responses: {
      200: {
        description: 'Tariff and usage',
        schema: z.object({
          tariff: z.enum(TARIFFS),
          monthly_quota: z.number().int().nullable().describe('Requests per month; null is unlimited'),
          used: z.number().int(),
          remaining: z.number().int().nullable(),
          resets_at: z.iso.datetime(),
        }),
      },
    },
    handler: async (ctx) => {
      ctx.body = await accountUsage(db, me(ctx));
    },
  });
}
