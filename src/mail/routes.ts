// GET /admin/mail: the outbox, newest first. In development (no SMTP_URL) this is where invitations land. Its links
// are secrets (an invitation, a reset or a setup link lets whoever holds it in): only the admin role reads them whole,
// only in the development outbox, and each such read is audited; every other reader sees them masked.
import { z } from 'zod';
import { queryInt } from '../http/query-values.ts';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { requireAdmin } from '../admin/auth.ts';
import { EmailSchema } from '../accounts/users.ts';
import { maskLinks } from '../accounts/tokens.ts';
import { recordAudit } from '../admin/audit.ts';
import type { AdminActor } from '../admin/auth.ts';
import type { MailRecord } from './outbox.ts';

export type LinkView = 'whole' | 'masked';

/**
 * The outbox as this administrator may read it: links whole for the admin role while no SMTP server is configured
 * (a read that shows any link is then audited as `readMail`, naming those mails), masked for every other role and
 * whenever SMTP is configured.
 */
export async function readOutbox(
  services: Services,
  admin: AdminActor,
  filter: { to?: string; limit: number; startingAfter?: string },
): Promise<{ items: MailRecord[]; links: LinkView; hasMore: boolean }> {
  // One more than asked tells whether an older page follows; only the page's own mails are shown and audited.
  const listed = await services.mailer.list({ ...filter, limit: filter.limit + 1 });
  const items = listed.slice(0, filter.limit);
  const hasMore = listed.length > filter.limit;
  const links: LinkView = admin.role === 'admin' && services.mailer.isDevelopmentOutbox ? 'whole' : 'masked';
  if (links === 'masked')
    return { items: items.map((mail) => ({ ...mail, text: maskLinks(mail.text) })), links, hasMore };
  // What the audit needs is who saw which links: a page with no link in it revealed nothing.
  const revealing = items.filter((mail) => maskLinks(mail.text) !== mail.text);
  if (revealing.length > 0) {
    await recordAudit(services.db, {
      actor: admin.actor,
      action: 'readMail',
      object_type: 'mail',
      object_id: revealing.length === 1 ? revealing[0].id : null,
      after: { to: filter.to ?? null, mail_ids: revealing.map((mail) => mail.id) },
    });
  }
  return { items, links, hasMore };
}

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
    description:
      'Single-use links (invitations, password resets, sign-up confirmations, administrator setups) are secrets. The ' +
      '`admin` role reads them whole while no SMTP server is configured (the development outbox), and each such read ' +
      'is written to the audit log (`readMail`); the other roles, and everyone once SMTP is configured, see them masked ' +
      '(`inv_…`); `links` says which.',
    responses: {
      200: {
        description: 'The outbox',
        schema: z.object({
          items: z.array(MailItem),
          links: z.enum(['whole', 'masked']).describe('Whether the texts show single-use links whole or masked'),
        }),
      },
    },
    handler: async (ctx, { query }) => {
      const { items, links } = await readOutbox(services, ctx.state.admin as AdminActor, query);
      ctx.body = {
        links,
        items: items.map((mail) => ({
          ...mail,
          created_at: mail.created_at.toISOString(),
          sent_at: mail.sent_at?.toISOString() ?? null,
        })),
      };
    },
  });
}
