// Writing tenders: one bulk upsert per batch, keyed by (source, id at the source), so re-running a sync never
// duplicates a record and an unchanged record is not rewritten.
import type { Db, DbClient } from '../db.ts';

export interface TenderRecord {
  sourceId: string;
  ocid?: string | null;
  country: string;
  title: string;
  description?: string;
  buyerName?: string;
  buyerId?: string | null;
  valueAmount?: number | null;
  valueCurrency?: string | null;
  status?: string;
  /** The procurement law as a short key: 44-fz, 223-fz, eu-2014-24, … */
  law?: string | null;
  procurementMethod?: string | null;
  publishedAt?: string | null;
  deadlineAt?: string | null;
  url?: string | null;
  classification?: Array<{ scheme: string; id: string; description?: string }>;
  raw: unknown;
  sample?: boolean;
}

export function tenderId(sourceKey: string, sourceId: string): string {
  return `${sourceKey}:${sourceId}`;
}

/** Inserts or updates the records; returns how many rows were written (unchanged ones are skipped). */
export async function upsertTenders(db: Db | DbClient, sourceKey: string, records: TenderRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const rows = records.map((r) => ({
    id: tenderId(sourceKey, r.sourceId),
    source_id: r.sourceId,
    ocid: r.ocid ?? null,
    country: r.country.toUpperCase(),
    title: r.title.slice(0, 2000),
    description: (r.description ?? '').slice(0, 20_000),
    buyer_name: r.buyerName ?? '',
    buyer_id: r.buyerId ?? null,
    value_amount: r.valueAmount ?? null,
    value_currency: r.valueCurrency?.toUpperCase() ?? null,
    status: r.status ?? 'active',
    law: r.law?.toLowerCase() ?? null,
    procurement_method: r.procurementMethod ?? null,
    published_at: r.publishedAt ?? null,
    deadline_at: r.deadlineAt ?? null,
    url: r.url ?? null,
    classification: r.classification ?? [],
    raw: r.raw ?? {},
    sample: r.sample ?? false,
  }));
  const result = await db.query(
    `INSERT INTO tenders AS t (id, source_key, source_id, ocid, country, title, description, buyer_name, buyer_id, value_amount,
       value_currency, status, law, procurement_method, published_at, deadline_at, url, classification, raw, sample)
     SELECT r.id, $1, r.source_id, r.ocid, r.country, r.title, r.description, r.buyer_name, r.buyer_id, r.value_amount,
       r.value_currency, r.status, r.law, r.procurement_method, r.published_at, r.deadline_at, r.url, r.classification, r.raw, r.sample
     FROM jsonb_to_recordset($2::jsonb) AS r(id text, source_id text, ocid text, country text, title text, description text,
       buyer_name text, buyer_id text, value_amount numeric, value_currency text, status text, law text, procurement_method text,
       published_at timestamptz, deadline_at timestamptz, url text, classification jsonb, raw jsonb, sample boolean)
     ON CONFLICT (source_key, source_id) DO UPDATE SET
       ocid = excluded.ocid, country = excluded.country, title = excluded.title, description = excluded.description,
       buyer_name = excluded.buyer_name, buyer_id = excluded.buyer_id, value_amount = excluded.value_amount,
       value_currency = excluded.value_currency, status = excluded.status, law = excluded.law, procurement_method = excluded.procurement_method,
       published_at = excluded.published_at, deadline_at = excluded.deadline_at, url = excluded.url,
       classification = excluded.classification, raw = excluded.raw, sample = excluded.sample, updated_at = now()
     WHERE t.raw IS DISTINCT FROM excluded.raw`,
    [sourceKey, JSON.stringify(dedupe(rows))],
  );
  return result.rowCount ?? 0;
}

/** One row per id within a batch (ON CONFLICT cannot touch a row twice); the last one wins. */
function dedupe<T extends { id: string }>(rows: T[]): T[] {
  return [...new Map(rows.map((row) => [row.id, row])).values()];
}
