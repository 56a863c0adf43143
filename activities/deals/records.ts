// The deal workflow's side effects on our own records: each is idempotent under retry, keyed by ids the workflow chose.
// A write PostgreSQL refuses for its data (a NUL character, a value too large, a broken constraint) would be refused
// again on every retry: it fails at once as a non-retryable `invalid_record`, so the workflow can refuse the change
// instead of waiting for it forever.
import pg from 'pg';
import type { Services } from '../../src/services.ts';
import { inTransaction, type DbClient } from '../../src/db.ts';
import { refuse } from '../../src/temporal/refusal.ts';
import { ensureUser, findMailRecipient, followLocale } from '../../src/accounts/users.ts';
import { findMarketplace } from '../../src/marketplaces/marketplaces.ts';
import { dealPageUrl, invitationMail } from '../../src/mail/templates.ts';
import type { DealNotice } from '../../src/deals/notifications.ts';
import { enqueueNotices } from '../../src/deals/notice-outbox.ts';
import { ensureInvitation, invitationToken } from '../../src/accounts/tokens.ts';
import { widgetMailAllowed } from '../../src/widget/mail-limits.ts';
import { DEAL_COLUMNS, findDeal, loadSnapshot, toDeal } from '../../src/deals/store.ts';
import type {
  ActorKind,
  ApprovalRecord,
  CancellationRecord,
  DealRecord,
  DealSnapshot,
  DealStatus,
  DisputeMessage,
  DisputeRecord,
  DeliveryRecord,
  DocumentRecord,
  PaymentRecord,
  PayoutRecord,
  RefundRecord,
} from '../../src/deals/model.ts';
import type { NewDocument } from '../../workflows/deals/deal-messages.ts';
import { insertWebhookEvent } from '../../src/webhooks/events.ts';
import { postDealMoney } from '../../src/money/ledger-store.ts';

/** A document as the workflow holds it; where its file lives is known for the documents the workflow added itself. */
export type HeldDocument = DocumentRecord & Partial<Pick<NewDocument, 'organization_id' | 'storage_key'>>;

/** A deal's records as its workflow holds them. */
export interface DealRecords {
  documents: HeldDocument[];
  approvals: ApprovalRecord[];
  payments: PaymentRecord[];
  /** Absent in writes of workflows from before disputes and cancellations were records: left as stored. */
  dispute?: DisputeRecord | null;
  cancellation?: CancellationRecord | null;
  /** Absent in writes of workflows from before payouts: left as stored. */
  refunds?: RefundRecord[];
  payouts?: PayoutRecord[];
  delivery?: DeliveryRecord | null;
}

/** What one change wrote: a new or altered row of each kind, the dispute as it now stands, the deal's own columns. */
export interface ChangedRecords {
  document?: HeldDocument;
  approval?: ApprovalRecord;
  payment?: PaymentRecord;
  refund?: RefundRecord;
  payout?: PayoutRecord;
  dispute?: DisputeRecord;
  cancellation?: CancellationRecord;
  delivery?: DeliveryRecord;
}

/** A webhook event the change calls for: its status's, or one of money and delivery (with what it tells). */
export interface ChangeEvent {
  id: string;
  deliveryId: string;
  type: string;
  occurredAt: string;
  actor?: ActorKind;
  reason?: string;
  /** Told in the event's body as `data`: a payout, a refunded amount, a tracking number. */
  data?: Record<string, unknown>;
  /** Mail only, no webhook (a request to the seller for a payout destination, the buyer's reminder). */
  mailOnly?: boolean;
}

export interface DealChange {
  dealId: string;
  /**
   * All the deal's records after the change, as the workflow holds them: written whole (idempotent upserts) when the
   * write is not sized (see `version`), which puts back what PostgreSQL lost; a write without a change re-asserts them.
   */
  records?: DealRecords;
  /** The single records of a change, as workflows sent them before `records`: a retry scheduled then may still run. */
  document?: NewDocument;
  approval?: ApprovalRecord;
  payment?: PaymentRecord;
  /**
   * The version the deal is at after this write (deals.version). With `changed`, the write is sized by the change and
   * applies when PostgreSQL holds the version before it; at any other version (PostgreSQL lost a write, or this is a
   * retry of a write that committed) the whole of `records` is written instead. Without `changed` (a re-assertion),
   * `records` are written and the version set. Workflows from before versions send neither.
   */
  version?: number;
  /** The rows this change wrote or altered, each once: all a sized write touches besides the deal's row. */
  changed?: ChangedRecords;
  /** The status after the change, computed by the workflow with dealStatus(). */
  status: DealStatus;
  /** The webhook event when the status changed into one that has an event. */
  event?: ChangeEvent;
  /** Events of money and delivery the change calls for besides its status's (told first, in this order). */
  events?: ChangeEvent[];
  /** Mail the people the event concerns, once it is stored (workflows from before mails were sent leave it out). */
  notify?: boolean;
  /** A new message of the dispute, whose other side is mailed once it is stored. */
  message?: DisputeMessage;
}

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
    throw refuse(
      'invalid_record',
      'The deal records cannot store a value of this change (such as a NUL character or a value too large); nothing was changed.',
      { details: [{ sqlstate: error.code }], cause: error },
    );
  }
}

/** Columns of each record table besides deal_id, with their types, in the order of the upsert. */
const RECORD_COLUMNS = {
  deal_documents: {
    id: 'uuid',
    organization_id: 'uuid',
    kind: 'text',
    name: 'text',
    content_type: 'text',
    size: 'bigint',
    sha256: 'text',
    storage_key: 'text',
    created_at: 'timestamptz',
  },
  deal_approvals: {
    id: 'uuid',
    status: 'text',
    approver: 'text',
    comment: 'text',
    created_at: 'timestamptz',
    decided_at: 'timestamptz',
  },
  deal_payments: {
    id: 'uuid',
    amount: 'numeric',
    currency: 'text',
    provider: 'text',
    status: 'text',
    payment_url: 'text',
    provider_payment_id: 'text',
    hold_expires_at: 'timestamptz',
    provider_deal_id: 'text',
    payout_status: 'text',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
  deal_payouts: {
    id: 'uuid',
    payment_id: 'uuid',
    amount: 'numeric',
    currency: 'text',
    status: 'text',
    destination_type: 'text',
    destination_title: 'text',
    provider_payout_id: 'text',
    failure_reason: 'text',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
  deal_refunds: {
    id: 'uuid',
    payment_id: 'uuid',
    amount: 'numeric',
    currency: 'text',
    actor: 'text',
    reason: 'text',
    created_at: 'timestamptz',
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
  deal_payouts: upsertStatement('deal_payouts'),
  deal_refunds: upsertStatement('deal_refunds'),
};

/** A payout as its table holds it: where it went, flat. */
const payoutRow = ({ destination, ...payout }: PayoutRecord) => ({
  ...payout,
  destination_type: destination.type,
  destination_title: destination.title,
});

/** Writes the dispute and the messages it lacks (messages are never edited); returns the rows written. */
async function writeDispute(client: DbClient, dealId: string, dispute: DisputeRecord): Promise<number> {
  const { decision } = dispute;
  const row = await client.query(
    `INSERT INTO deal_disputes (deal_id, status, reason, opened_by, opened_at, decision_outcome, decision_reason, decided_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (deal_id) DO UPDATE SET status = excluded.status, decision_outcome = excluded.decision_outcome,
       decision_reason = excluded.decision_reason, decided_at = excluded.decided_at
     WHERE (deal_disputes.status, deal_disputes.decision_outcome, deal_disputes.decision_reason, deal_disputes.decided_at)
       IS DISTINCT FROM (excluded.status, excluded.decision_outcome, excluded.decision_reason, excluded.decided_at)`,
    [
      dealId,
      dispute.status,
      dispute.reason,
      dispute.opened_by,
      dispute.opened_at,
      decision?.outcome ?? null,
      decision?.reason ?? null,
      decision?.decided_at ?? null,
    ],
  );
  const messages = await client.query(
    `INSERT INTO deal_dispute_messages (id, deal_id, author, text, files, created_at)
     SELECT m.id, $1, m.author, m.text, m.files, m.created_at
       FROM jsonb_to_recordset($2::jsonb) AS m(id uuid, author text, text text, files jsonb, created_at timestamptz)
     ON CONFLICT (id) DO NOTHING`,
    [dealId, JSON.stringify(dispute.messages)],
  );
  return (row.rowCount ?? 0) + (messages.rowCount ?? 0);
}

/** The delivery's columns of the deal's row; the rows written. */
async function writeDelivery(client: DbClient, dealId: string, delivery: DeliveryRecord | null): Promise<number> {
  const written = await client.query(
    `UPDATE deals SET delivery_status = $2, carrier = $3, tracking = $4, shipped_at = $5, delivered_at = $6, inspection_ends_at = $7, reminded_at = $8
      WHERE id = $1 AND (delivery_status, carrier, tracking, shipped_at, delivered_at, inspection_ends_at, reminded_at)
        IS DISTINCT FROM ($2, $3, $4, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::timestamptz)`,
    [
      dealId,
      delivery?.status ?? null,
      delivery?.carrier ?? null,
      delivery?.tracking ?? null,
      delivery?.shipped_at ?? null,
      delivery?.delivered_at ?? null,
      delivery?.inspection_ends_at ?? null,
      delivery?.reminded_at ?? null,
    ],
  );
  return written.rowCount ?? 0;
}

/** The cancellation's columns of the deal's row; the rows written. */
async function writeCancellation(
  client: DbClient,
  dealId: string,
  { cancelled_at, actor, reason }: CancellationRecord,
): Promise<number> {
  const written = await client.query(
    `UPDATE deals SET cancelled_at = $2, cancel_actor = $3, cancel_reason = $4
      WHERE id = $1 AND (cancelled_at, cancel_actor, cancel_reason) IS DISTINCT FROM ($2::timestamptz, $3, $4)`,
    [dealId, cancelled_at, actor, reason],
  );
  return written.rowCount ?? 0;
}

export function createDealActivities(services: Services) {
  const { db } = services;
  return {
    /**
     * Persists one change of a deal (or re-asserts the deal as it stands) and, with it, its webhook event. Returns the
     * delivery to send, if any.
     */
    async recordDealChange(
      change: DealChange,
    ): Promise<{ deliveryId: string | null; eventId?: string; deliveryIds?: string[] }> {
      const recorded = await refusedForGood(() =>
        inTransaction(db, async (client) => {
          const written = await writeChange(client);
          // The mails the change calls for, as notices in this same transaction: the worker's drainer sends them after
          // the commit (src/deals/notice-outbox.ts), off the path of the change; each keyed by its event or message.
          await enqueueNotices(client, noticesOf(change, written.eventId));
          return written;
        }),
      );
      return recorded;

      async function writeChange(
        client: pg.PoolClient,
      ): Promise<{ deliveryId: string | null; eventId?: string; deliveryIds?: string[] }> {
        if (!change.changed && change.version !== undefined && !change.event && !change.events && !change.message) {
          // A re-assertion: PostgreSQL at the workflow's version holds every write the workflow made (each write moves
          // the version in its own transaction), so there is nothing to put back.
          const at = await client.query<{ version: string }>('SELECT version FROM deals WHERE id = $1 FOR UPDATE', [
            change.dealId,
          ]);
          if (Number(at.rows[0]?.version) === change.version) return { deliveryId: null };
        }
        if (change.changed && change.version !== undefined) {
          // The common path: PostgreSQL holds what the workflow held before this change, so the change alone is written.
          const bumped = await client.query(
            `UPDATE deals SET version = $2, status = $3, updated_at = now() WHERE id = $1 AND version = $2 - 1 RETURNING ${DEAL_COLUMNS}`,
            [change.dealId, change.version, change.status],
          );
          if (bumped.rows[0]) return writeSized(client, change.changed, toDeal(bumped.rows[0]));
        }
        return writeWhole(client);
      }

      /** Writes the rows of the change and its events; the deal's row is locked, versioned and at its new status already. */
      async function writeSized(client: pg.PoolClient, changed: ChangedRecords, deal: DealRecord) {
        const { dealId } = change;
        // Payments before the refunds and payouts that name them.
        const rows = {
          deal_documents: changed.document?.storage_key ? [changed.document] : [],
          deal_approvals: changed.approval ? [changed.approval] : [],
          deal_payments: changed.payment ? [changed.payment] : [],
          deal_payouts: changed.payout ? [payoutRow(changed.payout)] : [],
          deal_refunds: changed.refund ? [changed.refund] : [],
        };
        for (const table of Object.keys(rows) as (keyof typeof rows)[]) {
          if (rows[table].length > 0) await client.query(UPSERT[table], [dealId, JSON.stringify(rows[table])]);
        }
        if (changed.delivery) await writeDelivery(client, dealId, changed.delivery);
        if (changed.dispute) await writeDispute(client, dealId, changed.dispute);
        if (changed.cancellation) await writeCancellation(client, dealId, changed.cancellation);
        // Money moved: the postings it calls for, in this transaction (keyed by their cause, as in writeWhole).
        if ((changed.payment && changed.payment.status !== 'pending') || changed.refund || changed.payout)
          await postDealMoney(client, dealId);
        const extra = await writeEvents(client, deal);
        if (!change.event) return { deliveryId: null, deliveryIds: extra };
        return {
          deliveryId: await writeStatusEvent(client, change.event, deal),
          eventId: change.event.id,
          deliveryIds: extra,
        };
      }

      /** The events of money and delivery (a payout sent comes before the deal.paid it completes); their deliveries. */
      async function writeEvents(client: pg.PoolClient, deal: DealRecord | undefined): Promise<string[]> {
        const deliveries: string[] = [];
        for (const told of change.events ?? []) {
          if (told.mailOnly) continue;
          deal ??= (await findDeal(client, { id: change.dealId }))!;
          const deliveryId = await insertWebhookEvent(client, {
            eventId: told.id,
            deliveryId: told.deliveryId,
            taskQueue: services.config.TEMPORAL_TASK_QUEUE,
            event: told.type,
            occurredAt: told.occurredAt,
            status: change.status,
            actor: told.actor,
            reason: told.reason,
            data: told.data,
            deal,
          });
          if (deliveryId) deliveries.push(deliveryId);
        }
        return deliveries;
      }

      function writeStatusEvent(client: pg.PoolClient, event: ChangeEvent, deal: DealRecord): Promise<string | null> {
        return insertWebhookEvent(client, {
          eventId: event.id,
          deliveryId: event.deliveryId,
          taskQueue: services.config.TEMPORAL_TASK_QUEUE,
          event: event.type,
          occurredAt: event.occurredAt,
          status: change.status,
          actor: event.actor,
          reason: event.reason,
          deal,
        });
      }

      /**
       * Writes all the deal's records as the workflow holds them (idempotent upserts, rows it does not hold removed):
       * a re-assertion, a change of a workflow from before versions, or one that found PostgreSQL at another version.
       */
      async function writeWhole(
        client: pg.PoolClient,
      ): Promise<{ deliveryId: string | null; eventId?: string; deliveryIds?: string[] }> {
        const { records, document, approval, payment } = change;
        // The deal row first, locked: changes of one deal are written one after another, against the status as stored.
        const stored = (
          await client.query<{ status: string }>('SELECT status FROM deals WHERE id = $1 FOR UPDATE', [change.dealId])
        ).rows[0]?.status;
        const rows = {
          // Documents the workflow read from PostgreSQL (it did not add them) carry no file location: left as they are.
          deal_documents: (records?.documents ?? (document ? [document] : [])).filter((held) => held.storage_key),
          deal_approvals: records?.approvals ?? (approval ? [approval] : []),
          deal_payments: records?.payments ?? (payment ? [payment] : []),
          deal_payouts: (records?.payouts ?? []).map(payoutRow),
          deal_refunds: records?.refunds ?? [],
        };
        const heldLists = {
          deal_documents: records?.documents,
          deal_approvals: records?.approvals,
          deal_payments: records?.payments,
          // Workflows from before payouts hold no such lists: their rows (none) are left alone.
          deal_payouts: records?.payouts,
          deal_refunds: records?.refunds,
        };
        let written = 0;
        // Payouts and refunds name their payment: they go after it is written, and before it could be removed.
        for (const table of ['deal_payouts', 'deal_refunds'] as const) {
          const held = heldLists[table];
          if (held)
            written +=
              (
                await client.query(`DELETE FROM ${table} WHERE deal_id = $1 AND NOT (id = ANY($2::uuid[]))`, [
                  change.dealId,
                  held.map((row) => row.id),
                ])
              ).rowCount ?? 0;
        }
        for (const table of [
          'deal_documents',
          'deal_approvals',
          'deal_payments',
          'deal_payouts',
          'deal_refunds',
        ] as const) {
          const held = heldLists[table];
          if (held && table !== 'deal_payouts' && table !== 'deal_refunds') {
            // The workflow is the deal's one writer: a row it does not hold was written by a workflow task that never
            // reached Temporal (its local activity ran, the task was lost, the caller got a 503 and tried again).
            written +=
              (
                await client.query(`DELETE FROM ${table} WHERE deal_id = $1 AND NOT (id = ANY($2::uuid[]))`, [
                  change.dealId,
                  held.map((row) => row.id),
                ])
              ).rowCount ?? 0;
          }
          if (rows[table].length === 0) continue;
          written += (await client.query(UPSERT[table], [change.dealId, JSON.stringify(rows[table])])).rowCount ?? 0;
        }
        if (records?.delivery !== undefined) written += await writeDelivery(client, change.dealId, records.delivery);
        if (records?.dispute) written += await writeDispute(client, change.dealId, records.dispute);
        if (records?.cancellation) written += await writeCancellation(client, change.dealId, records.cancellation);
        // The money the change moved, in the ledger in this same transaction: the postings its payments call for and
        // that are not written yet (keyed by their cause, so a retry or a re-assertion posts nothing twice, and one
        // that finds a posting missing writes it). An unbalanced posting fails the write, and the change with it.
        if (rows.deal_payments.some((held) => held.status !== 'pending')) await postDealMoney(client, change.dealId);
        // updated_at moves when something changed: a re-assertion that finds the deal as it is leaves it alone. From here
        // the deal is at the workflow's version, and its next change is sized again.
        await client.query(
          `UPDATE deals SET status = $2, updated_at = CASE WHEN $3 OR status IS DISTINCT FROM $2 THEN now() ELSE updated_at END, version = coalesce($4, version)
            WHERE id = $1`,
          [change.dealId, change.status, written > 0, change.version ?? null],
        );
        // Events of money and delivery first, each idempotent by the id the workflow chose.
        const extraDeliveries = await writeEvents(client, undefined);
        if (!change.event) return { deliveryId: null, deliveryIds: extraDeliveries };
        if (stored === change.status) {
          // PostgreSQL is at this status already: a lost workflow task (as above) recorded this change and its event,
          // or this is a retry of this very write. That event stands, sent if it is not yet; a second would tell the
          // marketplace twice.
          const earlier = await client.query<{ event_id: string; delivery_id: string | null; status: string | null }>(
            `SELECT e.id AS event_id, d.id AS delivery_id, d.status FROM webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
              WHERE e.deal_id = $1 AND e.event = $2 ORDER BY e.occurred_at DESC, d.created_at DESC LIMIT 1`,
            [change.dealId, change.event.type],
          );
          const found = earlier.rows[0];
          if (found) {
            return {
              deliveryId: found.delivery_id && found.status !== 'delivered' ? found.delivery_id : null,
              eventId: found.event_id,
              deliveryIds: extraDeliveries,
            };
          }
        }
        const deal = (await findDeal(client, { id: change.dealId }))!;
        const deliveryId = await writeStatusEvent(client, change.event, deal);
        return { deliveryId, eventId: change.event.id, deliveryIds: extraDeliveries };
      }
    },

    /**
     * Gives the buyer and the seller a svc ID and a personal organization, and invites those without a password.
     * Answers the deal.created event the API wrote with the deal, and its delivery while it is still to be sent.
     */
    async provisionParties(
      dealId: string,
    ): Promise<{ eventId?: string; deliveryId?: string; snapshot?: DealSnapshot } | void> {
      return refusedForGood(async () => {
        const deal = await findDeal(db, { id: dealId });
        if (!deal) return;
        const { id: buyerId } = await provision(deal, 'buyer', deal.buyer_email, deal.buyer_name);
        await db.query('UPDATE deals SET buyer_id = $2 WHERE id = $1', [dealId, buyerId]);
        if (deal.seller_email) {
          const { id: sellerId } = await provision(deal, 'seller', deal.seller_email, '');
          await db.query('UPDATE deals SET seller_id = $2 WHERE id = $1', [dealId, sellerId]);
        }
        const created = await db.query<{ event_id: string; delivery_id: string | null }>(
          `SELECT e.id AS event_id, d.id AS delivery_id FROM webhook_events e
             LEFT JOIN webhook_deliveries d ON d.event_id = e.id AND d.status IN ('pending', 'retrying')
            WHERE e.deal_id = $1 AND e.event = 'deal.created' LIMIT 1`,
          [dealId],
        );
        const row = created.rows[0];
        if (row) await enqueueNotices(db, [{ dealId, eventId: row.event_id, status: 'created', actor: 'marketplace' }]);
        // The deal as recorded: a run started again after the deal's workflow ended (a late update) starts from what
        // its caller read, which may be older than what the ended run wrote.
        const snapshot = await loadSnapshot(db, dealId);
        return {
          ...(row ? { eventId: row.event_id, deliveryId: row.delivery_id ?? undefined } : {}),
          ...(snapshot ? { snapshot } : {}),
        };
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
    // The language the marketplace gave for this party, before anything is mailed to them.
    const locale = role === 'buyer' ? deal.buyer_locale : role === 'seller' ? deal.seller_locale : undefined;
    if (locale) await followLocale(db, user.id, locale);
    const invitation = await ensureInvitation(db, user.id);
    if (invitation && (await widgetMailAllowed(db, deal, 'created', email))) {
      const marketplace = await findMarketplace(db, deal.marketplace_id);
      const mail = invitationMail({
        role,
        locale: (await findMailRecipient(db, user.email))?.locale ?? 'ru',
        name: user.name,
        svcId: user.id,
        dealTitle: deal.title,
        marketplaceName: marketplace?.name ?? '',
        link: `${services.config.BASE_URL}/cabinet/invite?token=${invitationToken(services.masterKey, invitation.id)}`,
        dealUrl: dealPageUrl(services.config.BASE_URL, deal.id),
      });
      // One mail per deal (the invitation's link is the same in each): a second deal tells of itself too.
      await services.mailer.send({ key: `invitation/${invitation.id}/${deal.id}`, to: user.email, ...mail });
    }
    return user;
  }
}

/** The notices a change calls for: its events of money and delivery, its status's event when told, a dispute message. */
function noticesOf(change: DealChange, statusEventId: string | undefined): DealNotice[] {
  const { dealId, status, event, message } = change;
  const notices: DealNotice[] = (change.events ?? []).map((told) => ({
    dealId,
    eventId: told.id,
    status,
    actor: told.actor,
    reason: told.reason,
    event: told.type,
    data: told.data,
  }));
  if (change.notify && event && statusEventId)
    notices.push({ dealId, eventId: statusEventId, status, actor: event.actor, reason: event.reason });
  if (message) {
    notices.push({
      dealId,
      eventId: message.id,
      status,
      actor: message.author,
      disputeMessage: { author: message.author, text: message.text },
    });
  }
  return notices;
}
