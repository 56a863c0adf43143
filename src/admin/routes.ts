// The administration's own operations: reading the audit log.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../accounts/admin.ts';
import { queryInt } from '../http/query-values.ts';
import { listAudit } from './audit.ts';

const AuditRecord = z.object({
  id: z.string().describe('Increasing with time'),
  at: z.iso.datetime(),
  actor: z.string().describe('`bootstrap`, `token:<name>`, or an administrator'),
  action: z.string().describe('The operation (its operationId in this document)'),
  object_type: z.string(),
  object_id: z.string().nullable(),
  before: z.unknown().describe('The object before the action, when the action changed an existing one; secrets redacted'),
  after: z.unknown().describe('The answer of the action; secrets redacted'),
});

export function adminRoutes(api: Api, services: Services): void {
  api.route({
    method: 'get',
    path: '/admin/audit',
    operationId: 'adminAudit',
    summary: 'The audit log of administrative actions, newest first',
    description: 'Filter by `actor`, `action` and `object_id`; pass the last item’s id as `starting_after` for the next page.',
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
    query: z.object({
      actor: z.string().min(1).max(320).optional(),
      action: z.string().min(1).max(100).optional(),
      object_id: z.string().min(1).max(100).optional(),
      limit: queryInt(1, 100).default(50).describe('Records per page'),
      starting_after: z.string().regex(/^[0-9]{1,18}$/, 'must be a record id').optional().describe('A record id: the page continues after it'),
    }),
    responses: { 200: { description: 'The records', schema: z.object({ items: z.array(AuditRecord), has_more: z.boolean() }) } },
    handler: async (ctx, { query }) => {
      ctx.body = await listAudit(services.db, query);
    },
  });
}
