// The deal workflow's side effects on our own records: each is idempotent under retry, keyed by ids the workflow chose.
import type { Services } from '../src/services.ts';
import { inTransaction } from '../src/db.ts';
import { ensureUser } from '../src/accounts/users.ts';
import { ensureInvitation, invitationToken } from '../src/cabinet/invitations.ts';
import { findDeal } from '../src/deals/store.ts';
import type { ApprovalRecord, DealRecord, DealStatus, PaymentRecord } from '../src/deals/model.ts';
import type { NewDocument } from '../workflows/deal-messages.ts';
import { insertWebhookEvent } from '../src/webhooks/events.ts';

export interface DealChange {
  dealId: string;
  document?: NewDocument;
  approval?: ApprovalRecord;
  payment?: PaymentRecord;
  /** The status after the change, computed by the workflow with dealStatus(). */
  status: DealStatus;
  /** The webhook event when the status changed into one that has an event. */
  event?: { id: string; deliveryId: string; type: string; occurredAt: string };
}

export function createDealActivities(services: Services) {
  const { db } = services;
  return {
    /** Persists one change of a deal and, with it, its webhook event. Returns the delivery to send, if any. */
    async recordDealChange(change: DealChange): Promise<{ deliveryId: string | null }> {
      return inTransaction(db, async (client) => {
        const { document, approval, payment } = change;
        if (document) {
          await client.query(
            `INSERT INTO deal_documents (id, deal_id, organization_id, kind, name, content_type, size, sha256, storage_key, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
            [document.id, change.dealId, document.organization_id, document.kind, document.name, document.content_type,
              document.size, document.sha256, document.storage_key, document.created_at],
          );
        }
        if (approval) {
          await client.query(
            `INSERT INTO deal_approvals (id, deal_id, status, approver, comment, created_at, decided_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (id) DO UPDATE SET status = excluded.status, comment = excluded.comment, decided_at = excluded.decided_at`,
            [approval.id, change.dealId, approval.status, approval.approver, approval.comment, approval.created_at, approval.decided_at],
          );
        }
        if (payment) {
          await client.query(
            `INSERT INTO deal_payments (id, deal_id, amount, currency, provider, status, payment_url, provider_payment_id,
                                        hold_expires_at, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
             ON CONFLICT (id) DO UPDATE SET status = excluded.status, payment_url = excluded.payment_url,
               provider_payment_id = excluded.provider_payment_id, hold_expires_at = excluded.hold_expires_at,
               updated_at = excluded.updated_at`,
            [payment.id, change.dealId, payment.amount, payment.currency, payment.provider, payment.status, payment.payment_url,
              payment.provider_payment_id, payment.hold_expires_at, payment.created_at, payment.updated_at],
          );
        }
        await client.query('UPDATE deals SET status = $2, updated_at = now() WHERE id = $1', [change.dealId, change.status]);
        if (!change.event) return { deliveryId: null };
        const deal = (await findDeal(client, { id: change.dealId }))!;
        const deliveryId = await insertWebhookEvent(client, {
          eventId: change.event.id,
          deliveryId: change.event.deliveryId,
          event: change.event.type,
          occurredAt: change.event.occurredAt,
          status: change.status,
          deal,
        });
        return { deliveryId };
      });
    },

    /** Gives the buyer and the seller a svc ID and a personal organization, and invites those without a password. */
    async provisionParties(dealId: string): Promise<void> {
      const deal = await findDeal(db, { id: dealId });
      if (!deal) return;
      const { id: buyerId } = await provision(deal, 'buyer', deal.buyer_email, deal.buyer_name);
      await db.query('UPDATE deals SET buyer_id = $2 WHERE id = $1', [dealId, buyerId]);
      if (deal.seller_email) {
        const { id: sellerId } = await provision(deal, 'seller', deal.seller_email, '');
        await db.query('UPDATE deals SET seller_id = $2 WHERE id = $1', [dealId, sellerId]);
      }
    },

    /** An approver other than the buyer also needs an account to decide in the cabinet. */
    async provisionApprover(dealId: string, email: string): Promise<void> {
      const deal = await findDeal(db, { id: dealId });
      if (deal) await provision(deal, 'approver', email, '');
    },
  };

  async function provision(deal: DealRecord, role: 'buyer' | 'seller' | 'approver', email: string, name: string) {
    const { user } = await ensureUser(db, { email, name });
    const invitation = await ensureInvitation(db, user.id);
    if (invitation) {
      const link = `${services.config.BASE_URL}/cabinet/invite?token=${invitationToken(services.masterKey, invitation.id)}`;
      const opening = {
        buyer: 'A marketplace has opened a safe deal for you',
        seller: 'A buyer has opened a safe deal with you',
        approver: 'You are asked to approve the terms of a safe deal',
      }[role];
      await services.mailer.send({
        key: `invitation/${invitation.id}`,
        to: user.email,
        subject: 'Your account for safe deals',
        text:
          `Hello${user.name ? ` ${user.name}` : ''},\n\n${opening}${deal.title ? `: "${deal.title}"` : ''}.\n` +
          `Your account (svc ID ${user.id}) is ready. Set a password to open your cabinet:\n\n${link}\n`,
      });
    }
    return user;
  }
}
