// Reading and writing deal records in PostgreSQL. Reads never need the workflow (DESIGN rule 2); writes after
// creation happen only in the workflow's persistence activity (activities/deals.ts).
import type { Db, DbClient } from '../db.ts';
import type { ApprovalRecord, DealRecord, DealSnapshot, DocumentRecord, PaymentRecord } from './model.ts';

export type NewDeal = Omit<DealRecord, 'created_at' | 'updated_at'>;

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

const DEAL_COLUMNS = `id, marketplace_id, external_id, title, buyer_email, buyer_name, seller_email, amount, currency,
  description, created_at, updated_at`;

function toDeal(row: Record<string, any>): DealRecord {
  return { ...row, amount: Number(row.amount), created_at: iso(row.created_at)!, updated_at: iso(row.updated_at)! } as DealRecord;
}

/** Inserts the deal unless the marketplace already has this external_id; returns the stored one either way. */
export async function insertDeal(db: Db, deal: NewDeal): Promise<{ deal: DealRecord; created: boolean }> {
  const inserted = await db.query(
    `INSERT INTO deals (id, marketplace_id, external_id, title, buyer_email, buyer_name, seller_email, amount, currency, description)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (marketplace_id, external_id) DO NOTHING RETURNING ${DEAL_COLUMNS}`,
    [deal.id, deal.marketplace_id, deal.external_id, deal.title, deal.buyer_email, deal.buyer_name, deal.seller_email, deal.amount, deal.currency, deal.description],
  );
  if (inserted.rows[0]) return { deal: toDeal(inserted.rows[0]), created: true };
  const existing = await db.query(`SELECT ${DEAL_COLUMNS} FROM deals WHERE marketplace_id = $1 AND external_id = $2`, [
    deal.marketplace_id,
    deal.external_id,
  ]);
  return { deal: toDeal(existing.rows[0]), created: false };
}

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

export async function loadSnapshot(db: DbClient, dealId: string): Promise<DealSnapshot | undefined> {
  const deal = await findDeal(db, { id: dealId });
  if (!deal) return undefined;
  const [documents, approvals, payments] = await Promise.all([
    db.query(
      `SELECT id, kind, name, content_type, size, sha256, created_at FROM deal_documents WHERE deal_id = $1 ORDER BY created_at, id`,
      [dealId],
    ),
    db.query(
      `SELECT id, status, approver, comment, created_at, decided_at FROM deal_approvals WHERE deal_id = $1 ORDER BY created_at, id`,
      [dealId],
    ),
    db.query(
      `SELECT id, amount, currency, provider, status, payment_url, provider_payment_id, hold_expires_at, created_at, updated_at
         FROM deal_payments WHERE deal_id = $1 ORDER BY created_at, id`,
      [dealId],
    ),
  ]);
  return {
    deal,
    documents: documents.rows.map((row) => ({ ...row, size: Number(row.size), created_at: iso(row.created_at)! }) as DocumentRecord),
    approvals: approvals.rows.map(
      (row) => ({ ...row, created_at: iso(row.created_at)!, decided_at: iso(row.decided_at) }) as ApprovalRecord,
    ),
    payments: payments.rows.map(
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
  };
}
