// POST /admin/data-keys: an administrator issues a data API key to an account (made on first use) with a tariff.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../accounts/admin.ts';
import { EmailSchema } from '../accounts/users.ts';
import { issueDataKey, TARIFFS } from './keys.ts';

export function dataKeyAdminRoutes(api: Api, services: Services): void {
  api.route({
    method: 'post',
    path: '/admin/data-keys',
    operationId: 'issueDataKey',
    summary: 'Issue a data API key',
    description: 'Makes the account of this e-mail when there is none, sets its tariff and issues a new svc_mcp_ key.',
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
    body: z.object({
      email: EmailSchema.describe('The account owner'),
      tariff: z.enum(TARIFFS).default('free'),
    }),
    responses: {
      201: {
        description: 'The key, shown only now',
        schema: z.object({ key: z.string(), account_id: z.uuid(), tariff: z.enum(TARIFFS) }),
      },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await issueDataKey(services.db, body);
    },
  });
}
