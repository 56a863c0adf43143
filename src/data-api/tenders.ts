// Tender reads shared by REST and MCP: search, card, facets, countries.
// Full-text search is built for a million rows: it ranks a bounded set of candidates, never every match, and it
// picks how to find them from the planner's estimate of how common the query is (see fullTextSearch).
import type { z } from 'zod';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import { Problem } from '../http/problem.ts';
import { countryNames } from './countries.ts';
import type { CountriesSchema, FacetsSchema, TenderCardSchema, TenderListSchema, TenderSchema, TenderSearchInput } from './schemas.ts';

export type Tender = z.output<typeof TenderSchema>;
export type TenderCard = z.output<typeof TenderCardSchema>;
export type TenderList = z.output<typeof TenderListSchema>;

/**
 * How full-text search bounds its work. At most `candidates` matches are ranked. A query the planner expects in at
 * least `broadShare` of all tenders (a common word) takes its candidates from the newest tenders, walking at most
 * candidates / broadShare of them; any other query takes them from the GIN index. A search still running after
 * `timeoutMs` is stopped (a quoted phrase of very common words that never stand together has to read most tenders).
 */
export interface SearchBounds {
  candidates: number;
  broadShare: number;
  timeoutMs: number;
}
/** How many matches of a full-text query are ranked at most (tenders, practice, knowledge). */
export const RANK_CANDIDATES = 2000;

/** The service's bounds, with the operator's time budget (SEARCH_TIMEOUT_MS). */
export const searchBounds = (timeoutMs: number): SearchBounds => ({ candidates: RANK_CANDIDATES, broadShare: 0.2, timeoutMs });
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

export async function searchTenders(db: Db, input: TenderSearchInput, bounds: SearchBounds): Promise<TenderList> {
  return input.q ? fullTextSearch(db, input, input.q, bounds) : latestTenders(db, input);
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

/**
 * Ranks the candidates by ts_rank (normalisation 32 maps it to rank/(rank+1), a 0..1 score that min_score compares),
 * then by date. Where the candidates come from depends on how common the query is:
 * - a common word («поставка» is in a quarter of all tenders): reading its GIN posting list alone would cost more
 *   than the whole search may, so the candidates are the newest matches, found by walking the date index and
 *   testing each row, a few thousand rows that stay in memory;
 * - if that walk ends without enough matches (words that are common apart but rare together: the estimate
 *   multiplies their shares), or the query is not common, the GIN index finds the candidates.
 * Fewer than `candidates` matches are all ranked and counted exactly; otherwise `total` says "at least" (gte).
 */
async function fullTextSearch(db: Db, input: TenderSearchInput, q: string, bounds: SearchBounds): Promise<TenderList> {
  try {
    return await inTransaction(db, async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${Math.ceil(bounds.timeoutMs)}`);
      return await boundedSearch(client, input, q, bounds);
    });
  } catch (error) {
    if ((error as { code?: string }).code !== QUERY_CANCELED) throw error;
    throw new Problem(503, 'search_timeout',
      `The search did not finish within ${bounds.timeoutMs / 1000} s: it has to read most tenders (a quoted phrase or a ` +
        'negation of very common words does). Remove the quotes, add a rarer word or a country, and try again.');
  }
}

/** PostgreSQL's query_canceled: statement_timeout ran out. */
const QUERY_CANCELED = '57014';

async function boundedSearch(db: DbClient, input: TenderSearchInput, q: string, bounds: SearchBounds): Promise<TenderList> {
  const params: unknown[] = input.country ? [q, input.min_score ?? 0, input.country] : [q, input.min_score ?? 0];
  // The country is a lexeme of the search vector, so the index intersects it with the words (see the migration).
  const matchWith = (countryParam: string) =>
    input.country
      ? `(websearch_to_tsquery('russian', $1) && ('''@' || lower(${countryParam}) || '''')::tsquery)`
      : `websearch_to_tsquery('russian', $1)`;
  const estimate = await db.query<{ words: number; share: number; walked: number }>(
    `SELECT numnode(websearch_to_tsquery('russian', $1)) AS words, tender_search_share(${matchWith('$2')}) AS share,
       ${input.country ? `tender_search_share(('''@' || lower($2) || '''')::tsquery)` : '1'}::float8 AS walked`,
    input.country ? [q, input.country] : [q],
  );
  const match = matchWith('$3');
  const { words, share, walked } = estimate.rows[0]!;
  if (words === 0) return { items: [], total: 0, total_relation: 'eq', limit: input.limit, offset: input.offset };

  // The share among the tenders the walk reads: all of them, or the country's.
  if (share / Math.max(walked, 1e-9) >= bounds.broadShare) {
    const newest = await rankCandidates(db, input, params, match, `SELECT s.id, s.search, s.published_at FROM (
        SELECT id, search, published_at FROM tender_search ${input.country ? 'WHERE country = $3::char(2)' : ''}
        ORDER BY published_at DESC NULLS LAST, id LIMIT ${Math.ceil(bounds.candidates / bounds.broadShare)}) AS s, query
      WHERE s.search @@ query.m LIMIT ${bounds.candidates}`);
    if (newest.matched >= bounds.candidates) return toList(input, newest, bounds);
  }
  const fromIndex = `SELECT s.id, s.search, s.published_at FROM tender_search s, query WHERE s.search @@ query.m LIMIT ${bounds.candidates}`;
  return toList(input, await rankCandidates(db, input, params, match, fromIndex), bounds);
}

interface Ranked {
  rows: TenderRow[];
  matched: number;
  total: number;
}

/** One page of the ranked candidates, with how many there were and how many pass min_score, in one statement. */
async function rankCandidates(db: DbClient, input: TenderSearchInput, params: unknown[], match: string, candidates: string): Promise<Ranked> {
  // The counts row is joined to the page, so an empty page (no match, or past the end) still brings the counts.
  const result = await db.query<Partial<TenderRow> & { matched: number; total: number }>(
    `WITH query AS (SELECT websearch_to_tsquery('russian', $1) AS q, ${match} AS m),
     candidates AS MATERIALIZED (${candidates}),
     ranked AS (SELECT c.id, c.published_at, ts_rank(c.search, query.q, 32)::float8 AS score FROM candidates c, query),
     passing AS MATERIALIZED (SELECT * FROM ranked WHERE score >= $2),
     page AS (
       SELECT id, score, published_at FROM passing
       ORDER BY score DESC, published_at DESC NULLS LAST, id LIMIT ${input.limit} OFFSET ${input.offset}),
     counts AS (SELECT (SELECT count(*) FROM candidates)::int AS matched, (SELECT count(*) FROM passing)::int AS total)
     SELECT counts.matched, counts.total, items.* FROM counts
     LEFT JOIN LATERAL (SELECT ${COLUMNS}, p.score FROM page p JOIN tenders t ON t.id = p.id) AS items ON true
     ORDER BY items.score DESC, items.published_at DESC NULLS LAST, items.id`,
    params,
  );
  const { matched, total } = result.rows[0]!;
  const rows = result.rows.filter((row): row is TenderRow & { matched: number; total: number } => row.id != null);
  return { rows, matched, total };
}

function toList(input: TenderSearchInput, ranked: Ranked, bounds: SearchBounds): TenderList {
  return {
    items: ranked.rows.map(toTender),
    total: ranked.total,
    total_relation: ranked.matched >= bounds.candidates ? 'gte' : 'eq',
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

/**
 * Call after tenders change: facet and country counts are a materialized view, and the search picks its plan from
 * the statistics of tender_search (ANALYZE samples a fixed number of rows, so it stays cheap at any size).
 */
export async function refreshTenderFacets(db: Db): Promise<void> {
  await db.query('REFRESH MATERIALIZED VIEW CONCURRENTLY tender_facet_counts');
  await db.query('ANALYZE tender_search');
}
