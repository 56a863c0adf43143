// GET /admin/mail: the outbox, newest first. In development (no SMTP_URL) this is where invitations land.
import { z } from 'zod';
import { queryInt } from '../http/query-values.ts';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../admin/auth.ts';
import { EmailSchema } from '../accounts/users.ts';

const MailItem = z.object({
  id: z.uuid(),
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  status: z.enum(['outbox', 'pending', 'sent', 'failed']).describe('`outbox`: kept here because SMTP_URL is not set'),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  created_at: z.iso.datetime(),
  sent_at: z.iso.datetime().nullable(),
});

export function mailRoutes(api: Api, services: Services): void {
  api.route({
    method: 'get',
    path: '/admin/mail',
    operationId: 'listMail',
    summary: 'Outgoing mail, newest first',
    tags: ['Administration'],
    security: ['adminToken'],
    use: [requireAdmin(services.db, services.config.SVC_BOOTSTRAP_ADMIN_TOKEN)],
    query: z.object({
      to: EmailSchema.optional().describe('Only mail to this address'),
      limit: queryInt(1, 200).default(50),
    }),
    responses: { 200: { description: 'The outbox', schema: z.object({ items: z.array(MailItem) }) } },
    handler: async (ctx, { query }) => {
      const items = await services.mailer.list(query);
      ctx.body = {
        items: items.map((mail) => ({
          ...mail,
          created_at: mail.created_at.toISOString(),
          sent_at: mail.sent_at?.toISOString() ?? null,
        })),
      };
    },
  });
}
