// The deal workflow's side effects on our own records: each is idempotent under retry, keyed by ids the workflow chose.
// A write PostgreSQL refuses for its data (a NUL character, a value too large, a broken constraint) would be refused
// again on every retry: it fails at once as a non-retryable `invalid_record`, so the workflow can refuse the change
// instead of waiting for it forever.
import pg from 'pg';
import { ApplicationFailure } from '@temporalio/common';
import type { Services } from '../src/services.ts';
import { inTransaction } from '../src/db.ts';
import { ensureUser } from '../src/accounts/users.ts';
import { ensureInvitation, invitationToken } from '../src/cabinet/invitations.ts';
import { findDeal } from '../src/deals/store.ts';
import type { ApprovalRecord, DealRecord, DealStatus, DocumentRecord, PaymentRecord } from '../src/deals/model.ts';
import type { NewDocument } from '../workflows/deal-messages.ts';
import { insertWebhookEvent } from '../src/webhooks/events.ts';

/** A document as the workflow holds it; where its file lives is known for the documents the workflow added itself. */
export type HeldDocument = DocumentRecord & Partial<Pick<NewDocument, 'organization_id' | 'storage_key'>>;

/** A deal's records as its workflow holds them. */
export interface DealRecords {
  documents: HeldDocument[];
  approvals: ApprovalRecord[];
  payments: PaymentRecord[];
}

export interface DealChange {
  dealId: string;
  /**
   * All the deal's records after the change, written as idempotent upserts: a write PostgreSQL lost earlier (a crash)
   * heals with the next one, and a write without a change re-asserts the deal as it stands.
   */
  records?: DealRecords;
  /** The single records of a change, as workflows sent them before `records`: a retry scheduled then may still run. */
  document?: NewDocument;
  approval?: ApprovalRecord;
  payment?: PaymentRecord;
  /** The status after the change, computed by the workflow with dealStatus(). */
  status: DealStatus;
  /** The webhook event when the status changed into one that has an event. */
  event?: { id: string; deliveryId: string; type: string; occurredAt: string };
}

/** The failure type of a write PostgreSQL refuses for its data; the API answers it with 400 (src/deals/commands.ts). */
const INVALID_RECORD = 'invalid_record';

// SQLSTATE classes: 22 data exception (NUL in text, a number out of range, broken JSON), 23 integrity constraint
// violation, 54 program limit exceeded (a value too large for its index).
const DATA_ERROR_CLASSES = new Set(['22', '23', '54']);

/** Runs a write; a refusal for its data becomes a non-retryable `invalid_record`, anything else stays retryable. */
async function refusedForGood<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof pg.DatabaseError) || !DATA_ERROR_CLASSES.has(error.code?.slice(0, 2) ?? '')) throw error;
    // The message reaches API callers: PostgreSQL's own words (and the SQL) stay in the cause, for the Temporal UI.
    throw ApplicationFailure.create({
      type: INVALID_RECORD,
      message: 'The deal records cannot store a value of this change (such as a NUL character or a value too large); nothing was changed.',
      nonRetryable: true,
      details: [{ sqlstate: error.code }],
      cause: error,
    });
  }
}

/** Columns of each record table besides deal_id, with their types, in the order of the upsert. */
const RECORD_COLUMNS = {
  deal_documents: {
    id: 'uuid', organization_id: 'uuid', kind: 'text', name: 'text', content_type: 'text', size: 'bigint', sha256: 'text',
    storage_key: 'text', created_at: 'timestamptz',
  },
  deal_approvals: { id: 'uuid', status: 'text', approver: 'text', comment: 'text', created_at: 'timestamptz', decided_at: 'timestamptz' },
  deal_payments: {
    id: 'uuid', amount: 'numeric', currency: 'text', provider: 'text', status: 'text', payment_url: 'text',
    provider_payment_id: 'text', hold_expires_at: 'timestamptz', created_at: 'timestamptz', updated_at: 'timestamptz',
  },
} as const;

/**
 * One statement per table: inserts the rows a deal lacks and puts back the ones that differ (all rows of one deal,
 * as JSON in $2), touching nothing that is already as given. Its row count is the number of rows it wrote.
 */
function upsertStatement(table: keyof typeof RECORD_COLUMNS): string {
  const columns = Object.entries(RECORD_COLUMNS[table]);
  const names = columns.map(([name]) => name);
  const updated = names.filter((name) => name !== 'id');
  return `INSERT INTO ${table} (deal_id, ${names.join(', ')})
    SELECT $1, ${names.map((name) => `r.${name}`).join(', ')}
      FROM jsonb_to_recordset($2::jsonb) AS r(${columns.map(([name, type]) => `${name} ${type}`).join(', ')})
    ON CONFLICT (id) DO UPDATE SET ${updated.map((name) => `${name} = excluded.${name}`).join(', ')}
      WHERE ${table}.deal_id = excluded.deal_id
        AND (${updated.map((name) => `${table}.${name}`).join(', ')}) IS DISTINCT FROM (${updated.map((name) => `excluded.${name}`).join(', ')})`;
}
const UPSERT = {
  deal_documents: upsertStatement('deal_documents'),
  deal_approvals: upsertStatement('deal_approvals'),
  deal_payments: upsertStatement('deal_payments'),
};

export function createDealActivities(services: Services) {
  const { db } = services;
  return {
    /**
     * Persists one change of a deal (or re-asserts the deal as it stands) and, with it, its webhook event. Returns the
     * delivery to send, if any.
     */
    async recordDealChange(change: DealChange): Promise<{ deliveryId: string | null }> {
      return refusedForGood(() =>
        inTransaction(db, async (client) => {
          const { records, document, approval, payment } = change;
          // The deal row first, locked: changes of one deal are written one after another, against the status as stored.
          const stored = (await client.query<{ status: string }>('SELECT status FROM deals WHERE id = $1 FOR UPDATE', [change.dealId])).rows[0]?.status;
          const rows = {
            // Documents the workflow read from PostgreSQL (it did not add them) carry no file location: left as they are.
            deal_documents: (records?.documents ?? (document ? [document] : [])).filter((held) => held.storage_key),
            deal_approvals: records?.approvals ?? (approval ? [approval] : []),
            deal_payments: records?.payments ?? (payment ? [payment] : []),
          };
          let written = 0;
          for (const table of ['deal_documents', 'deal_approvals', 'deal_payments'] as const) {
            if (records) {
              // The workflow is the deal's one writer: a row it does not hold was written by a workflow task that never
              // reached Temporal (its local activity ran, the task was lost, the caller got a 503 and tried again).
              const held = (table === 'deal_documents' ? records.documents : table === 'deal_approvals' ? records.approvals : records.payments).map((row) => row.id);
              written += (await client.query(`DELETE FROM ${table} WHERE deal_id = $1 AND NOT (id = ANY($2::uuid[]))`, [change.dealId, held])).rowCount ?? 0;
            }
            if (rows[table].length === 0) continue;
            written += (await client.query(UPSERT[table], [change.dealId, JSON.stringify(rows[table])])).rowCount ?? 0;
          }
          // updated_at moves when something changed: a re-assertion that finds the deal as it is leaves it alone.
          await client.query('UPDATE deals SET status = $2, updated_at = now() WHERE id = $1 AND ($3 OR status IS DISTINCT FROM $2)', [
            change.dealId,
            change.status,
            written > 0,
          ]);
          if (!change.event) return { deliveryId: null };
          if (stored === change.status) {
            // PostgreSQL is at this status already: a lost workflow task (as above) recorded this change and its event,
            // or this is a retry of this very write. That event stands, sent if it is not yet; a second would tell the
            // marketplace twice.
            const earlier = await client.query<{ delivery_id: string | null; status: string | null }>(
              `SELECT d.id AS delivery_id, d.status FROM webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
                WHERE e.deal_id = $1 AND e.event = $2 ORDER BY e.occurred_at DESC, d.created_at DESC LIMIT 1`,
              [change.dealId, change.event.type],
            );
            const found = earlier.rows[0];
            if (found) return { deliveryId: found.delivery_id && found.status !== 'delivered' ? found.delivery_id : null };
          }
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
        }),
      );
    },

    /** Gives the buyer and the seller a svc ID and a personal organization, and invites those without a password. */
    async provisionParties(dealId: string): Promise<void> {
      await refusedForGood(async () => {
        const deal = await findDeal(db, { id: dealId });
        if (!deal) return;
        const { id: buyerId } = await provision(deal, 'buyer', deal.buyer_email, deal.buyer_name);
        await db.query('UPDATE deals SET buyer_id = $2 WHERE id = $1', [dealId, buyerId]);
        if (deal.seller_email) {
          const { id: sellerId } = await provision(deal, 'seller', deal.seller_email, '');
          await db.query('UPDATE deals SET seller_id = $2 WHERE id = $1', [dealId, sellerId]);
        }
      });
    },

    /** An approver other than the buyer also needs an account to decide in the cabinet. */
    async provisionApprover(dealId: string, email: string): Promise<void> {
      await refusedForGood(async () => {
        const deal = await findDeal(db, { id: dealId });
        if (deal) await provision(deal, 'approver', email, '');
      });
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
