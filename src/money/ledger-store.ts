// The ledger in PostgreSQL: postings written in the transaction of the deal change that caused them, and read back as
// pages and balances. Tables ledger_postings and ledger_entries are append-only (src/migrations/1765900000000_money.sql)
// and every posting balances, checked here and again by the database when the transaction commits.
// Amounts go in and out as decimal text (numeric read as text): never a float.
import type { DbClient } from '../db.ts';
import { formatMinor, toMinor } from './amount.ts';
import type { FeeMoment } from './fee.ts';
import { ACCOUNT, HELD_PREFIX, paymentPostings, unbalanced, type PostingDraft, type PostingKind } from './ledger.ts';

/**
 * Writes the postings the deal's payments call for, as PostgreSQL holds them now, that are not written yet; inside the
 * caller's transaction, after the deal's records were written and with the deal's row locked (activities/deals/
 * records.ts), so they commit or roll back with the change that caused them. Idempotent: each posting is keyed by its
 * cause within the deal, so a retried or repeated write adds nothing. Returns how many postings it wrote.
 */
export async function postDealMoney(client: DbClient, dealId: string): Promise<number> {
  // One round trip: the deal's fee, its payments past pending, refunds, payouts and the causes already posted.
  type Payment = {
    id: string;
    amount: string;
    currency: string;
    status: 'pending' | 'hold' | 'released' | 'refunded' | 'disputed';
    was_held: boolean;
  };
  const row = (
    await client.query<{
      marketplace_id: string;
      fee: string;
      fee_moment: FeeMoment;
      payments: Payment[];
      refunds: { id: string; payment_id: string; amount: string }[];
      payouts: { id: string; payment_id: string; amount: string; status: 'pending' | 'succeeded' | 'failed' }[];
      causes: string[];
    }>(
      // A payment was held when the acquirer's hold was dated (the sandbox's at once, a live one's when the acquirer
      // confirmed it), or when the ledger has its payment already; one refunded without either was cancelled while pending.
      `SELECT d.marketplace_id, d.fee::text AS fee, d.fee_moment,
              (SELECT coalesce(json_agg(p ORDER BY p.created_at, p.id), '[]') FROM (
                 SELECT p.id, p.amount::text AS amount, trim(p.currency) AS currency, p.status, p.created_at,
                        p.hold_expires_at IS NOT NULL OR EXISTS (SELECT 1 FROM ledger_postings l WHERE l.deal_id = p.deal_id AND l.cause = p.id || '/payment') AS was_held
                   FROM deal_payments p WHERE p.deal_id = d.id AND p.status <> 'pending') p) AS payments,
              (SELECT coalesce(json_agg(r ORDER BY r.created_at, r.id), '[]') FROM (SELECT id, payment_id, amount::text AS amount, created_at FROM deal_refunds WHERE deal_id = d.id) r) AS refunds,
              (SELECT coalesce(json_agg(o ORDER BY o.created_at, o.id), '[]') FROM (SELECT id, payment_id, amount::text AS amount, status, created_at FROM deal_payouts WHERE deal_id = d.id) o) AS payouts,
              ARRAY(SELECT cause FROM ledger_postings WHERE deal_id = d.id) AS causes
         FROM deals d WHERE d.id = $1`,
      [dealId],
    )
  ).rows[0];
  if (!row || row.payments.length === 0) return 0;
  const written = new Set(row.causes);
  const money = { dealId, fee: row.fee, feeMoment: row.fee_moment };
  const missing = row.payments
    .flatMap((payment) => paymentPostings(money, { ...payment, wasHeld: payment.was_held }, row.refunds, row.payouts))
    .filter((posting) => !written.has(posting.cause));
  if (missing.length === 0) return 0;
  return insertPostings(client, row.marketplace_id, dealId, missing);
}

/** Writes postings of one deal (each must balance: an unbalanced one throws before anything is written). */
export async function insertPostings(
  client: DbClient,
  marketplaceId: string,
  dealId: string,
  postings: PostingDraft[],
): Promise<number> {
  for (const posting of postings) {
    const why = unbalanced(posting.entries);
    if (why) throw new Error(`The ledger posting ${posting.cause} of deal ${dealId} does not balance: ${why}.`);
  }
  // In the order given (seq follows it); a cause already written (a concurrent writer, which the deal's lock rules
  // out) is skipped with its entries.
  const inserted = await client.query<{ id: string; cause: string }>(
    `INSERT INTO ledger_postings (marketplace_id, deal_id, kind, cause)
     SELECT $1, $2, t.kind, t.cause FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(kind, cause, n) ORDER BY t.n
     ON CONFLICT (deal_id, cause) DO NOTHING RETURNING id, cause`,
    [marketplaceId, dealId, postings.map((posting) => posting.kind), postings.map((posting) => posting.cause)],
  );
  const ids = new Map(inserted.rows.map((row) => [row.cause, row.id]));
  const entries = postings.flatMap((posting) =>
    ids.has(posting.cause)
      ? posting.entries.map((entry, index) => ({
          posting_id: ids.get(posting.cause),
          line: index + 1,
          account: entry.account,
          amount: formatMinor(entry.amount),
          currency: entry.currency,
        }))
      : [],
  );
  if (entries.length > 0) {
    await client.query(
      `INSERT INTO ledger_entries (posting_id, line, account, amount, currency)
       SELECT e.posting_id, e.line, e.account, e.amount::numeric, e.currency
         FROM jsonb_to_recordset($1::jsonb) AS e(posting_id uuid, line smallint, account text, amount text, currency text)`,
      [JSON.stringify(entries)],
    );
  }
  return inserted.rows.length;
}

export interface PostingRecord {
  id: string;
  at: Date;
  deal_id: string;
  kind: PostingKind;
  /** Amounts as decimal text ("-2500.00"), in the order written. */
  entries: { account: string; amount: string; currency: string }[];
}

export interface LedgerFilter {
  marketplaceId: string;
  dealId?: string;
  createdGte?: string;
  createdLte?: string;
  limit: number;
  /** A posting id of this marketplace: the page holds the postings written before it. */
  startingAfter?: string;
}

/**
 * A page of the marketplace's postings, newest first; undefined when the cursor is not a posting of this marketplace
 * (filtered out or not).
 */
export async function listPostings(
  db: DbClient,
  filter: LedgerFilter,
): Promise<{ items: PostingRecord[]; hasMore: boolean } | undefined> {
  let before: string | null = null;
  if (filter.startingAfter) {
    const cursor = await db.query<{ seq: string }>(
      'SELECT seq::text AS seq FROM ledger_postings WHERE id = $1 AND marketplace_id = $2',
      [filter.startingAfter, filter.marketplaceId],
    );
    if (!cursor.rows[0]) return undefined;
    before = cursor.rows[0].seq;
  }
  const result = await db.query<PostingRecord>(
    `SELECT p.id, p.at, p.deal_id, p.kind,
            (SELECT json_agg(json_build_object('account', e.account, 'amount', e.amount::text, 'currency', e.currency) ORDER BY e.line)
               FROM ledger_entries e WHERE e.posting_id = p.id) AS entries
       FROM ledger_postings p
      WHERE p.marketplace_id = $1
        AND ($2::uuid IS NULL OR p.deal_id = $2)
        AND ($3::timestamptz IS NULL OR p.at >= $3)
        AND ($4::timestamptz IS NULL OR p.at <= $4)
        AND ($5::bigint IS NULL OR p.seq < $5)
      ORDER BY p.seq DESC LIMIT $6`,
    [
      filter.marketplaceId,
      filter.dealId ?? null,
      filter.createdGte ?? null,
      filter.createdLte ?? null,
      before,
      filter.limit + 1,
    ],
  );
  return { items: result.rows.slice(0, filter.limit), hasMore: result.rows.length > filter.limit };
}

export interface BalanceRecord {
  currency: string;
  /** Minor units of each part. */
  held: bigint;
  payable: bigint;
  paid_out: bigint;
  refunded: bigint;
  fees: bigint;
}

/**
 * The marketplace's balances per currency, summed from its postings' entries (never a stored counter): held in its
 * deals, payable to sellers, paid out to them, refunded to buyers, and its fees. A currency without postings is absent.
 */
export async function marketplaceBalances(db: DbClient, marketplaceId: string): Promise<BalanceRecord[]> {
  const result = await db.query<Record<keyof BalanceRecord, string>>(
    `SELECT e.currency,
            coalesce(sum(e.amount) FILTER (WHERE starts_with(e.account, $2)), 0)::text AS held,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $3), 0)::text AS payable,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $4), 0)::text AS paid_out,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $5), 0)::text AS refunded,
            coalesce(sum(e.amount) FILTER (WHERE e.account = $6), 0)::text AS fees
       FROM ledger_postings p JOIN ledger_entries e ON e.posting_id = p.id
      WHERE p.marketplace_id = $1
      GROUP BY e.currency ORDER BY e.currency`,
    [
      marketplaceId,
      HELD_PREFIX,
      ACCOUNT.sellerPayable,
      ACCOUNT.sellerPaidOut,
      ACCOUNT.refunded,
      ACCOUNT.marketplaceFee,
    ],
  );
  return result.rows.map((row) => ({
    currency: row.currency,
    held: toMinor(row.held),
    payable: toMinor(row.payable),
    paid_out: toMinor(row.paid_out),
    refunded: toMinor(row.refunded),
    fees: toMinor(row.fees),
  }));
}
