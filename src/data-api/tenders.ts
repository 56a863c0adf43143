// Tender reads shared by REST and MCP: search, card, facets, countries.
// Search is built for a million rows: the GIN index finds at most RANK_CANDIDATES matches and only those are ranked,
// so a common word («поставка») costs the same as a rare one; `total` then says "at least" (total_relation gte).
import type { z } from 'zod';
import type { Db } from '../db.ts';
import { countryNames } from './countries.ts';
import type { CountriesSchema, FacetsSchema, TenderCardSchema, TenderListSchema, TenderSchema, TenderSearchInput } from './schemas.ts';

export type Tender = z.output<typeof TenderSchema>;
export type TenderCard = z.output<typeof TenderCardSchema>;
export type TenderList = z.output<typeof TenderListSchema>;

/** How many matches of a full-text query are ranked at most. */
export const RANK_CANDIDATES = 2000;
/** Where counting a list without a query stops. */
export const COUNT_BOUND = 10_000;
const FACET_TOP = 20;

const COLUMNS = `t.id, t.source_key, t.country, t.title, t.description, t.buyer_name, t.buyer_id, t.value_amount,
  t.value_currency, t.status, t.published_at, t.deadline_at, t.url, t.classification, t.sample`;

interface TenderRow {
  id: string;
  source_key: string;
  country: string;
  title: string;
  description: string;
  buyer_name: string;
  buyer_id: string | null;
  value_amount: number | null;
  value_currency: string | null;
  status: string;
  published_at: Date | null;
  deadline_at: Date | null;
  url: string | null;
  classification: Array<{ scheme: string; id: string; description?: string }>;
  sample: boolean;
  score?: number;
}

export function toTender(row: TenderRow): Tender {
  return {
    id: row.id,
    source: row.source_key,
    country: row.country,
    title: row.title,
    description: row.description,
    buyer: { name: row.buyer_name, id: row.buyer_id },
    value: { amount: row.value_amount, currency: row.value_currency },
    status: row.status,
    published_at: row.published_at?.toISOString() ?? null,
    deadline_at: row.deadline_at?.toISOString() ?? null,
    url: row.url,
    classification: row.classification.map((c) => ({ scheme: c.scheme, id: c.id, description: c.description ?? '' })),
    ...(row.score === undefined ? {} : { score: Number(row.score) }),
    sample: row.sample,
  };
}

export async function searchTenders(db: Db, input: TenderSearchInput): Promise<TenderList> {
  return input.q ? fullTextSearch(db, input, input.q) : latestTenders(db, input);
}

async function latestTenders(db: Db, input: TenderSearchInput): Promise<TenderList> {
  const where = input.country ? 'WHERE t.country = $1' : '';
  const params = input.country ? [input.country] : [];
  const [page, count] = await Promise.all([
    db.query<TenderRow>(
      `SELECT ${COLUMNS} FROM tenders t ${where}
       ORDER BY t.published_at DESC NULLS LAST, t.id LIMIT ${input.limit} OFFSET ${input.offset}`,
      params,
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 FROM tenders t ${where} LIMIT ${COUNT_BOUND + 1}) AS bounded`, params),
  ]);
  const counted = count.rows[0]!.n;
  return {
    items: page.rows.map(toTender),
    total: Math.min(counted, COUNT_BOUND),
    total_relation: counted > COUNT_BOUND ? 'gte' : 'eq',
    limit: input.limit,
    offset: input.offset,
  };
}

async function fullTextSearch(db: Db, input: TenderSearchInput, q: string): Promise<TenderList> {
  const params: unknown[] = [q, input.min_score ?? 0];
  // The country is a lexeme of the search vector: the index intersects it with the words (see the migration).
  const match = input.country
    ? `t.search @@ (query.q && $${params.push(`'@${input.country.toLowerCase()}'`)}::tsquery)`
    : 't.search @@ query.q';
  // Candidates are the first RANK_CANDIDATES index matches; ts_rank's normalisation 32 maps rank to rank/(rank+1),
  // a score in 0..1 that min_score compares.
  const result = await db.query<TenderRow & { matched: number; total: number }>(
    `WITH query AS (SELECT websearch_to_tsquery('russian', $1) AS q),
     candidates AS MATERIALIZED (
       SELECT t.id, t.search, t.published_at FROM tenders t, query
       WHERE numnode(query.q) > 0 AND ${match} LIMIT ${RANK_CANDIDATES}),
     ranked AS (
       SELECT c.id, c.published_at, ts_rank(c.search, query.q, 32)::float8 AS score FROM candidates c, query),
     passing AS (SELECT * FROM ranked WHERE score >= $2),
     page AS (
       SELECT id, score, published_at FROM passing
       ORDER BY score DESC, published_at DESC NULLS LAST, id LIMIT ${input.limit} OFFSET ${input.offset})
     SELECT ${COLUMNS}, p.score, (SELECT count(*) FROM candidates)::int AS matched, (SELECT count(*) FROM passing)::int AS total
     FROM page p JOIN tenders t ON t.id = p.id
     ORDER BY p.score DESC, p.published_at DESC NULLS LAST, p.id`,
    params,
  );
  let matched = result.rows[0]?.matched;
  let total = result.rows[0]?.total;
  if (matched === undefined) {
    // An empty page (no match, or past the end) still reports the count.
    const counts = await db.query<{ matched: number; total: number }>(
      `WITH query AS (SELECT websearch_to_tsquery('russian', $1) AS q),
       candidates AS MATERIALIZED (SELECT t.search FROM tenders t, query WHERE numnode(query.q) > 0 AND ${match} LIMIT ${RANK_CANDIDATES})
       SELECT count(*)::int AS matched, (count(*) FILTER (WHERE ts_rank(c.search, query.q, 32)::float8 >= $2))::int AS total
       FROM candidates c, query`,
      params,
    );
    matched = counts.rows[0]!.matched;
    total = counts.rows[0]!.total;
  }
  return {
    items: result.rows.map(toTender),
    total: total ?? 0,
    total_relation: matched >= RANK_CANDIDATES ? 'gte' : 'eq',
    limit: input.limit,
    offset: input.offset,
  };
}

export async function tenderCard(db: Db, id: string): Promise<TenderCard | undefined> {
  const result = await db.query<TenderRow & { ocid: string | null; procurement_method: string | null; updated_at: Date; raw: unknown }>(
    `SELECT ${COLUMNS}, t.ocid, t.procurement_method, t.updated_at, t.raw FROM tenders t WHERE t.id = $1`,
    [id],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return {
    ...toTender(row),
    ocid: row.ocid,
    procurement_method: row.procurement_method,
    updated_at: row.updated_at.toISOString(),
    source_record: row.raw,
  };
}

export async function tenderFacets(db: Db, country?: string): Promise<z.output<typeof FacetsSchema>> {
  const result = await db.query<{ facet: string; value: string; tenders: number }>(
    `SELECT facet, value, sum(tenders)::bigint AS tenders FROM tender_facet_counts
     ${country ? 'WHERE country = $1' : ''} GROUP BY facet, value ORDER BY facet, tenders DESC, value`,
    country ? [country] : [],
  );
  const facets: z.output<typeof FacetsSchema> = { country: [], source: [], status: [], currency: [], classification: [], total: 0 };
  for (const row of result.rows) {
    if (row.facet === 'country') facets.total += row.tenders;
    if (row.facet === 'classification') {
      if (facets.classification.length >= FACET_TOP) continue;
      const [scheme = '', ...rest] = row.value.split(':');
      facets.classification.push({ value: row.value, scheme, id: rest.join(':'), tenders: row.tenders });
      continue;
    }
    const list = facets[row.facet as 'country' | 'source' | 'status' | 'currency'];
    if (list && list.length < FACET_TOP * 5) list.push({ value: row.value, tenders: row.tenders });
  }
  return facets;
}

export async function tenderCountries(db: Db): Promise<z.output<typeof CountriesSchema>> {
  const result = await db.query<{ value: string; tenders: number }>(
    `SELECT value, sum(tenders)::bigint AS tenders FROM tender_facet_counts WHERE facet = 'country'
     GROUP BY value ORDER BY tenders DESC, value`,
  );
  return {
    items: result.rows.map((row) => {
      const names = countryNames(row.value);
      return { code: row.value, name: names.en, name_ru: names.ru, tenders: row.tenders };
    }),
  };
}

/** Facet and country counts are a materialized view; call after tenders change. */
export async function refreshTenderFacets(db: Db): Promise<void> {
  await db.query('REFRESH MATERIALIZED VIEW CONCURRENTLY tender_facet_counts');
}
