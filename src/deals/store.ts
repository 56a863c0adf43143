// Reading and writing deal records in PostgreSQL. Reads never need the workflow
// (docs/decisions/0002-postgresql-is-the-record.md); writes after creation happen only in the workflow's persistence
// activity (activities/deals/records.ts).
import type { DbClient } from '../db.ts';
import type { FeeMoment } from '../money/fee.ts';
import { rememberedKeyCheck, type RememberedKey } from '../marketplaces/marketplaces.ts';
import type {
  ActorKind,
  ApprovalRecord,
  DealRecord,
  DealSnapshot,
  DealStatus,
  DisputeMessage,
  DocumentRecord,
  PaymentRecord,
  PayoutRecord,
  RefundRecord,
} from './model.ts';

export type NewDeal = Omit<DealRecord, 'created_at' | 'updated_at'>;

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export const DEAL_COLUMNS = `id, marketplace_id, external_id, title, buyer_email, buyer_name, seller_email, amount, fee, fee_moment, currency,
  description, buyer_locale, seller_locale, created_at, updated_at`;

const DEAL_COLUMN_NAMES = DEAL_COLUMNS.split(',').map((name) => name.trim());

export function toDeal(row: Record<string, any>): DealRecord {
  return {
    ...row,
    amount: Number(row.amount),
    fee: Number(row.fee),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  } as DealRecord;
}

/**
 * Inserts the deal unless the marketplace already has this external_id, and with a new deal its `deal.created` event
 * and that event's delivery (when the marketplace has an endpoint for it): one statement, so a creation is one round
 * trip to PostgreSQL and one commit. Returns the stored deal either way. The fee (decimal text, exact) and its moment
 * are fixed now: the marketplace's schedule then, or the fee it gave. `announce` makes the event's body from the deal
 * as it will be stored (its id and times are chosen here, so the bytes are fixed before the insert).
 *
 * With `key` (a secret key this process remembers, and the marketplace it read) the same statement first checks that the
 * key still works and the marketplace is unchanged, and writes nothing when not: then it answers undefined, and the
 * caller looks the key up again. The statement is prepared once per connection: planning its four parts cost more
 * than running them.
 */
export async function insertDeal(
  db: DbClient,
  deal: Omit<NewDeal, 'fee'> & { fee: string; fee_moment: FeeMoment },
  announce: (deal: DealRecord) => {
    eventId: string;
    deliveryId: string;
    taskQueue: string;
    event: string;
    body: Buffer;
  },
  key?: RememberedKey,
): Promise<{ deal: DealRecord; created: boolean } | undefined> {
  const at = new Date().toISOString();
  const event = announce({ ...deal, fee: Number(deal.fee), created_at: at, updated_at: at });
  const values: unknown[] = [
    deal.id,
    deal.marketplace_id,
    deal.external_id,
    deal.title,
    deal.buyer_email,
    deal.buyer_name,
    deal.seller_email,
    deal.amount,
    deal.currency,
    deal.description,
    deal.fee,
    deal.fee_moment,
    at,
    event.eventId,
    event.event,
    event.body,
    event.deliveryId,
    deal.buyer_locale ?? null,
    deal.seller_locale ?? null,
    event.taskQueue,
  ];
  const inserted = await db.query(
    key
      ? { name: 'insertDealCheckingKey', text: INSERT_DEAL_CHECKING_KEY, values: [...values, key.hash, key.version] }
      : { name: 'insertDeal', text: INSERT_DEAL, values },
  );
  const { key_live: keyLive, ...row } = inserted.rows[0] as { key_live: boolean; id: string | null };
  if (!keyLive) return undefined;
  if (row.id !== null) return { deal: toDeal(row), created: true };
  const existing = await db.query(`SELECT ${DEAL_COLUMNS} FROM deals WHERE marketplace_id = $1 AND external_id = $2`, [
    deal.marketplace_id,
    deal.external_id,
  ]);
  return { deal: toDeal(existing.rows[0]), created: false };
}

/**
 * insertDeal's statement, writing only when `live` yields its row. Its answer is always one row: `key_live`, and the
 * new deal's columns (null when the external_id was taken or the key did not pass).
 */
const insertDealStatement = (live: string) =>
  `WITH live AS (${live}),
   made AS (
     INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, buyer_name, seller_email, amount, currency, description, fee, fee_moment, created_at, updated_at, buyer_locale, seller_locale)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::numeric, $12, $13, $13, $18, $19 FROM live
     ON CONFLICT (marketplace_id, external_id) DO NOTHING RETURNING ${DEAL_COLUMNS}),
   told AS (
     INSERT INTO webhook_events (id, marketplace_id, deal_id, event, body, occurred_at)
     SELECT $14, made.marketplace_id, made.id, $15, $16, made.created_at FROM made RETURNING id),
   sent AS (
     INSERT INTO webhook_deliveries (id, event_id, deal_id, task_queue)
     SELECT $17, told.id, $1, $20 FROM told
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE marketplace_id = $2 AND (events IS NULL OR $15 = ANY (events))))
   SELECT EXISTS (SELECT FROM live) AS key_live, made.* FROM (SELECT) AS one LEFT JOIN made ON true`;
const INSERT_DEAL = insertDealStatement('SELECT');
const INSERT_DEAL_CHECKING_KEY = insertDealStatement(rememberedKeyCheck('$21', '$2', '$22'));

export async function findDeal(db: DbClient, where: { id: string } | { marketplaceId: string; externalId: string }) {
  const result =
    'id' in where
      ? await db.query(`SELECT ${DEAL_COLUMNS} FROM deals WHERE id = $1`, [where.id])
      : await db.query(`SELECT ${DEAL_COLUMNS} FROM deals WHERE marketplace_id = $1 AND external_id = $2`, [
          where.marketplaceId,
          where.externalId,
        ]);
  return result.rows[0] ? toDeal(result.rows[0]) : undefined;
}

/** A list of the deal's rows of one table, as JSON, oldest first: one sub-select of loadSnapshot's single statement. */
const rowsOf = (columns: string, table: string) =>
  `(SELECT coalesce(json_agg(r ORDER BY r.created_at, r.id), '[]') FROM (SELECT ${columns} FROM ${table} WHERE deal_id = d.id) r)`;

/**
 * The deal and all its records in one statement (every change through the API reads it, and the workflow when it
 * starts): one round trip instead of nine.
 */
export async function loadSnapshot(db: DbClient, dealId: string): Promise<DealSnapshot | undefined> {
  const result = await db.query(
    `SELECT ${DEAL_COLUMNS}, version,
            cancelled_at, cancel_actor, cancel_reason, delivery_status, carrier, tracking, shipped_at, delivered_at, inspection_ends_at, reminded_at,
            ${rowsOf('id, kind, name, content_type, size, sha256, created_at', 'deal_documents')} AS documents,
            ${rowsOf('id, status, approver, comment, created_at, decided_at', 'deal_approvals')} AS approvals,
            ${rowsOf('id, amount::text, currency, provider, status, payment_url, provider_payment_id, hold_expires_at, provider_deal_id, payout_status, created_at, updated_at', 'deal_payments')} AS payments,
            (SELECT row_to_json(x) FROM (SELECT status, reason, opened_by, opened_at, decision_outcome, decision_reason, decided_at FROM deal_disputes WHERE deal_id = d.id) x) AS dispute,
            ${rowsOf('id, author, text, files, created_at', 'deal_dispute_messages')} AS messages,
            ${rowsOf('id, payment_id, amount::text, currency, actor, reason, created_at', 'deal_refunds')} AS refunds,
            ${rowsOf('id, payment_id, amount::text, currency, status, destination_type, destination_title, provider_payout_id, failure_reason, created_at, updated_at', 'deal_payouts')} AS payouts
       FROM deals d WHERE d.id = $1`,
    [dealId],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const { version, documents, approvals, payments, dispute: disputed, messages, refunds, payouts } = row;
  // The deal's own columns only: the row also holds its records.
  const deal = toDeal(Object.fromEntries(DEAL_COLUMN_NAMES.map((name) => [name, row[name]])));
  const cancelled = row.cancelled_at ? row : undefined;
  const delivered = row.delivery_status ? row : undefined;
  return {
    deal,
    version: Number(version),
    documents: (documents as any[]).map(
      (row) => ({ ...row, size: Number(row.size), created_at: iso(row.created_at)! }) as DocumentRecord,
    ),
    approvals: (approvals as any[]).map(
      (row) => ({ ...row, created_at: iso(row.created_at)!, decided_at: iso(row.decided_at) }) as ApprovalRecord,
    ),
    payments: (payments as any[]).map(
      (row) =>
        ({
          ...row,
          amount: Number(row.amount),
          currency: row.currency.trim(),
          hold_expires_at: iso(row.hold_expires_at),
          created_at: iso(row.created_at)!,
          updated_at: iso(row.updated_at)!,
        }) as PaymentRecord,
    ),
    refunds: (refunds as any[]).map(
      (row) =>
        ({
          ...row,
          amount: Number(row.amount),
          currency: row.currency.trim(),
          created_at: iso(row.created_at)!,
        }) as RefundRecord,
    ),
    payouts: (payouts as any[]).map(
      ({ destination_type, destination_title, ...row }) =>
        ({
          ...row,
          amount: Number(row.amount),
          currency: row.currency.trim(),
          destination: { type: destination_type, title: destination_title },
          created_at: iso(row.created_at)!,
          updated_at: iso(row.updated_at)!,
        }) as PayoutRecord,
    ),
    delivery: delivered
      ? {
          status: delivered.delivery_status,
          carrier: delivered.carrier ?? '',
          tracking: delivered.tracking ?? '',
          shipped_at: iso(delivered.shipped_at)!,
          delivered_at: iso(delivered.delivered_at),
          inspection_ends_at: iso(delivered.inspection_ends_at),
          reminded_at: iso(delivered.reminded_at),
        }
      : null,
    cancellation: cancelled
      ? {
          actor: cancelled.cancel_actor,
          reason: cancelled.cancel_reason,
          cancelled_at: iso(cancelled.cancelled_at)!,
        }
      : null,
    dispute: disputed
      ? {
          status: disputed.status,
          reason: disputed.reason,
          opened_by: disputed.opened_by as ActorKind,
          opened_at: iso(disputed.opened_at)!,
          messages: (messages as any[]).map((row) => ({ ...row, created_at: iso(row.created_at)! }) as DisputeMessage),
          decision: disputed.decision_outcome
            ? {
                outcome: disputed.decision_outcome,
                reason: disputed.decision_reason ?? '',
                decided_at: iso(disputed.decided_at)!,
              }
            : null,
        }
      : null,
  };
}

export interface DealListFilter {
  /** The marketplace's own list; absent, every marketplace's (administrators). */
  marketplaceId?: string;
  limit: number;
  /** A deal id: the page starts after it (newest first). */
  startingAfter?: string;
  status?: DealStatus;
  createdGte?: string;
  createdLte?: string;
  externalId?: string;
  /** The buyer's address, in any case. */
  buyerEmail?: string;
  /** Part of the external id, in any case (the console's search). */
  externalIdPart?: string;
  /** Part of the buyer's or the seller's address, in any case (the console's search). */
  emailPart?: string;
}

/** A LIKE pattern that finds `part` anywhere, its own %, _ and \ taken literally. */
const containing = (part: string | undefined) =>
  part ? `%${part.replace(/[\\%_]/g, (character) => `\\${character}`)}%` : null;

/** A page of deals (one marketplace's, or all for administrators), newest first; `has_more` when another page follows. */
export async function listDeals(
  db: DbClient,
  filter: DealListFilter,
): Promise<{ snapshots: DealSnapshot[]; hasMore: boolean }> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM deals d
      WHERE ($1::uuid IS NULL OR marketplace_id = $1)
        AND ($2::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM deals WHERE id = $2 AND ($1::uuid IS NULL OR marketplace_id = $1)))
        AND ($3::text IS NULL OR status = $3)
        AND ($4::timestamptz IS NULL OR created_at >= $4)
        AND ($5::timestamptz IS NULL OR created_at <= $5)
        AND ($7::text IS NULL OR external_id = $7)
        AND ($8::text IS NULL OR lower(buyer_email) = lower($8))
        AND ($9::text IS NULL OR external_id ILIKE $9)
        AND ($10::text IS NULL OR buyer_email ILIKE $10 OR seller_email ILIKE $10)
      ORDER BY created_at DESC, id DESC LIMIT $6`,
    [
      filter.marketplaceId ?? null,
      filter.startingAfter ?? null,
      filter.status ?? null,
      filter.createdGte ?? null,
      filter.createdLte ?? null,
      filter.limit + 1,
      filter.externalId ?? null,
      filter.buyerEmail ?? null,
      containing(filter.externalIdPart),
      containing(filter.emailPart),
    ],
  );
  const ids = result.rows.slice(0, filter.limit).map((row) => row.id);
  const snapshots = (await Promise.all(ids.map((id) => loadSnapshot(db, id)))) as DealSnapshot[];
  return { snapshots, hasMore: result.rows.length > filter.limit };
}

/** Whether the marketplace has a deal of this id (a cursor must name one of its own). */
export async function marketplaceHasDeal(db: DbClient, marketplaceId: string, dealId: string): Promise<boolean> {
  return (
    (await db.query('SELECT 1 FROM deals WHERE id = $1 AND marketplace_id = $2', [dealId, marketplaceId])).rowCount ===
    1
  );
}

/** The deals a person takes part in, newest first, with their part: buyer, seller or approver of one of its approvals. */
export async function dealsOfPerson(
  db: DbClient,
  email: string,
): Promise<{ id: string; role: 'buyer' | 'seller' | 'approver' }[]> {
  const result = await db.query<{ id: string; role: 'buyer' | 'seller' | 'approver' }>(
    `SELECT DISTINCT ON (d.created_at, d.id) d.id,
            CASE WHEN lower(d.buyer_email) = lower($1) THEN 'buyer'
                 WHEN lower(d.seller_email) = lower($1) THEN 'seller' ELSE 'approver' END AS role
       FROM deals d
      WHERE lower(d.buyer_email) = lower($1) OR lower(d.seller_email) = lower($1)
         OR d.id IN (SELECT deal_id FROM deal_approvals WHERE lower(approver) = lower($1))
      ORDER BY d.created_at DESC, d.id DESC LIMIT 500`,
    [email],
  );
  return result.rows;
}

/** Approvals addressed to the person, newest first, with their deals. */
export async function approvalsOfPerson(db: DbClient, email: string): Promise<{ id: string; deal_id: string }[]> {
  const result = await db.query<{ id: string; deal_id: string }>(
    `SELECT id, deal_id FROM deal_approvals WHERE lower(approver) = lower($1) ORDER BY created_at DESC, id DESC LIMIT 200`,
    [email],
  );
  return result.rows;
}

/** The deal an approval belongs to. */
export async function dealOfApproval(db: DbClient, approvalId: string): Promise<string | undefined> {
  return (await db.query<{ deal_id: string }>('SELECT deal_id FROM deal_approvals WHERE id = $1', [approvalId])).rows[0]
    ?.deal_id;
}

/** A stored file of a deal (a document, or a dispute's evidence) with where its bytes are. */
export async function dealFile(
  db: DbClient,
  fileId: string,
): Promise<{ deal_id: string; name: string; content_type: string; storage_key: string } | undefined> {
  const document = await db.query('SELECT deal_id, name, content_type, storage_key FROM deal_documents WHERE id = $1', [
    fileId,
  ]);
  if (document.rows[0]) return document.rows[0];
  const evidence = await db.query(
    `SELECT m.deal_id, f.name, f.content_type, f.storage_key
       FROM deal_dispute_messages m, jsonb_to_recordset(m.files) AS f(id uuid, name text, content_type text, storage_key text)
      WHERE f.id = $1`,
    [fileId],
  );
  return evidence.rows[0];
}

/**
 * Counts one more resend of the deal's invitation in its fixed window (in PostgreSQL, so every server instance counts
 * against the same limit); answers the count and the seconds until the window ends.
 */
export async function countInvitationResend(
  db: DbClient,
  dealId: string,
  windowSeconds: number,
): Promise<{ hits: number; retry_after: number }> {
  const result = await db.query<{ hits: number; retry_after: number }>(
    `INSERT INTO deal_invitation_windows AS w (deal_id, hits, window_started_at) VALUES ($1, 1, now())
     ON CONFLICT (deal_id) DO UPDATE SET
       hits = CASE WHEN w.window_started_at < now() - make_interval(secs => $2) THEN 1 ELSE w.hits + 1 END,
       window_started_at = CASE WHEN w.window_started_at < now() - make_interval(secs => $2) THEN now() ELSE w.window_started_at END
     RETURNING hits, ceil(extract(epoch FROM window_started_at + make_interval(secs => $2) - now()))::int AS retry_after`,
    [dealId, windowSeconds],
  );
  return result.rows[0];
}

/** A deal's webhook events, oldest first: its timeline, with who made each change and why. */
export async function dealEvents(db: DbClient, dealId: string): Promise<DealEventRecord[]> {
  const result = await db.query(
    `SELECT id, event, occurred_at, convert_from(body, 'UTF8')::jsonb ->> 'actor' AS actor, convert_from(body, 'UTF8')::jsonb ->> 'reason' AS reason
       FROM webhook_events WHERE deal_id = $1 ORDER BY occurred_at, seq`,
    [dealId],
  );
  return result.rows.map((row) => ({
    id: row.id,
    type: row.event,
    created_at: iso(row.occurred_at)!,
    actor: row.actor,
    reason: row.reason,
  }));
}

export interface DealEventRecord {
  id: string;
  type: string;
  created_at: string;
  actor: ActorKind | null;
  reason: string | null;
}

export interface DealDeliveryRecord {
  delivery_id: string;
  event: string;
  /** 0 for a delivery not attempted yet. */
  attempt: number;
  status: 'pending' | 'delivered' | 'retrying' | 'failed' | 'skipped';
  http_status: number | null;
  error: string | null;
  at: string;
}

/** Every attempt of every webhook delivery of the deal's events, oldest first; a delivery not tried yet as attempt 0. */
export async function dealDeliveries(db: DbClient, dealId: string): Promise<DealDeliveryRecord[]> {
  const result = await db.query(
    `SELECT d.id AS delivery_id, e.event, coalesce(a.attempt, 0) AS attempt, coalesce(a.status, d.status) AS status,
            a.http_status, a.error, coalesce(a.attempted_at, d.created_at) AS at
       FROM webhook_events e
       JOIN webhook_deliveries d ON d.event_id = e.id
       LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
      WHERE e.deal_id = $1
      ORDER BY coalesce(a.attempted_at, d.created_at), d.id, a.attempt`,
    [dealId],
  );
  return result.rows.map((row) => ({ ...row, attempt: Number(row.attempt), at: iso(row.at)! }) as DealDeliveryRecord);
}

export interface DisputeQueueRow {
  deal_id: string;
  status: 'open' | 'decided';
  reason: string;
  opened_at: string;
  decided_at: string | null;
  messages_count: number;
}

/**
 * A page of disputes: open ones oldest first (the queue an arbiter works through), decided ones newest decision first.
 * The cursor is a deal id of the same list; `marketplaceId` keeps the disputes of that marketplace's deals.
 */
export async function listDisputes(
  db: DbClient,
  filter: { status: 'open' | 'decided'; limit: number; startingAfter?: string; marketplaceId?: string },
): Promise<{ rows: DisputeQueueRow[]; hasMore: boolean }> {
  const open = filter.status === 'open';
  const result = await db.query(
    `SELECT p.deal_id, p.status, p.reason, p.opened_at, p.decided_at,
            (SELECT count(*) FROM deal_dispute_messages m WHERE m.deal_id = p.deal_id)::int AS messages_count
       FROM deal_disputes p
      WHERE p.status = $1
        AND ($2::uuid IS NULL OR ${
          open
            ? '(p.opened_at, p.deal_id) > (SELECT opened_at, deal_id FROM deal_disputes WHERE deal_id = $2 AND status = $1)'
            : '(p.decided_at, p.deal_id) < (SELECT decided_at, deal_id FROM deal_disputes WHERE deal_id = $2 AND status = $1)'
        })
        AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM deals d WHERE d.id = p.deal_id AND d.marketplace_id = $4))
      ORDER BY ${open ? 'p.opened_at, p.deal_id' : 'p.decided_at DESC, p.deal_id DESC'} LIMIT $3`,
    [filter.status, filter.startingAfter ?? null, filter.limit + 1, filter.marketplaceId ?? null],
  );
  const rows = result.rows
    .slice(0, filter.limit)
    .map((row) => ({ ...row, opened_at: iso(row.opened_at)!, decided_at: iso(row.decided_at) }) as DisputeQueueRow);
  return { rows, hasMore: result.rows.length > filter.limit };
}

/** Whether a dispute of this status belongs to the deal (a cursor of the disputes list must name one). */
export async function hasDispute(db: DbClient, dealId: string, status: 'open' | 'decided'): Promise<boolean> {
  return (
    (await db.query('SELECT 1 FROM deal_disputes WHERE deal_id = $1 AND status = $2', [dealId, status])).rowCount === 1
  );
}

/** Marketplaces by name, for the console's filter and for naming a deal's marketplace. */
export async function marketplaceNames(db: DbClient, ids?: string[]): Promise<Map<string, string>> {
  const result = await db.query<{ id: string; name: string }>(
    ids
      ? 'SELECT id, name FROM marketplaces WHERE id = ANY($1::uuid[]) ORDER BY name'
      : 'SELECT id, name FROM marketplaces ORDER BY name, id LIMIT 500',
    ids ? [ids] : [],
  );
  return new Map(result.rows.map((row) => [row.id, row.name]));
}
