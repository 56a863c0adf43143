// Tender reads shared by REST and MCP: search, card, facets, countries.
// Full-text search is built for a million rows: it ranks a bounded set of candidates, never every match, and it
// picks how to find them from the planner's estimate of how common the query is (see fullTextSearch).
import type { z } from 'zod';
import { inTransaction, type Db, type DbClient } from '../db.ts';
import { problem } from '../http/problem.ts';
import { countryNames } from './countries.ts';
import {
  encodeCursor,
  type CountriesSchema,
  type FacetsSchema,
  type TenderCardSchema,
  type TenderFilters,
  type TenderListSchema,
  type TenderSchema,
  type TenderSearchInput,
  type TenderSort,
} from './schemas.ts';
import {
  concepts,
  filterSql,
  indexQuery,
  Params,
  parseTsquery,
  sortSql,
  type Concept,
  type Frequencies,
  type QueryNode,
} from './tender-filters.ts';

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
export const searchBounds = (timeoutMs: number): SearchBounds => ({
  candidates: RANK_CANDIDATES,
  broadShare: 0.2,
  timeoutMs,
});
/** Where counting a list without a query stops. */
export const COUNT_BOUND = 10_000;
const FACET_TOP = 20;
/**
 * Full-text search reads its candidates from the tenders' search vectors in shards: a tender's shard is SHARD_KEY (a
 * hash of its id), and each shard has a GIN index of its own (migration 1764900000000_tender_search_filters_speed.sql).
 * A GIN index finds every match before the first one is read, and a search ranks at most RANK_CANDIDATES of them, so
 * a query matching 20 000 tenders read them all for 2000; it now reads the shards one after another and stops in the
 * one where the candidates are complete (a query matching fewer than RANK_CANDIDATES reads all of them, and finds the
 * same matches as one index would). Which matches are the candidates was arbitrary before (the first in the table's
 * order), and is so now.
 */
const SEARCH_SHARDS = 8;
const SHARD_KEY = `(hashtext(s.id) & ${SEARCH_SHARDS - 1})`;
/** A search's range the planner expects to pass fewer than this share of the tenders may be read from its B-tree. */
const SELECTIVE_RANGE = 0.05;
/** A list filter the planner expects in fewer than this share of the tenders is read from the GIN index first. */
const RARE_FILTER = 0.02;

const COLUMNS = `t.id, t.source_key, t.country, t.title, t.description, t.buyer_name, t.buyer_id, t.value_amount,
  t.value_currency, t.status, t.law, t.published_at, t.deadline_at, t.url, t.classification, t.sample`;

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
  law: string | null;
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
    law: row.law,
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

type PagedRow = TenderRow & { cursor_keys: string[] };

/** A page of rows fetched with one extra row past it: is there a next page, and its cursor. */
function paged(input: TenderSearchInput, rows: PagedRow[], sort: TenderSort) {
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    items: page.map(toTender),
    next_cursor: rows.length > input.limit && last ? encodeCursor({ sort, keys: last.cursor_keys }) : null,
  };
}

const effectiveSort = (input: { q?: string; sort?: TenderSort }): TenderSort =>
  input.sort ?? (input.q ? 'relevance' : 'newest');

/** Lists without text: filtered, in the chosen order (newest by default), counted up to COUNT_BOUND. */
async function latestTenders(db: Db, input: TenderSearchInput): Promise<TenderList> {
  const sort = effectiveSort(input);
  const params = new Params();
  const filters = filterSql(input, params);
  const where = [...(filters.lexemes ? [`s.search @@ ${filters.lexemes}`] : []), ...filters.conditions];
  const countParams = [...params.values];
  const order = sortSql(sort, 's', params, input.cursor);
  const pageWhere = [...where, ...(order.after ? [order.after] : [])];
  // Walking a sort index and testing each row is quick when many rows pass, and slow when few do and they lie at the
  // far end (medicine codes are European, the largest values Russian): a rare filter reads its matches from the GIN
  // index first and sorts them.
  const probe = new Params();
  const lexemes = filterSql(input, probe, 'none').lexemes;
  const rare = lexemes
    ? (await db.query<{ share: number }>(`SELECT tender_search_share(${lexemes}) AS share`, probe.values)).rows[0]
        .share < RARE_FILTER
    : false;
  const matching = `SELECT * FROM tender_search s ${pageWhere.length > 0 ? `WHERE ${pageWhere.join(' AND ')}` : ''}`;
  const [page, count] = await Promise.all([
    db.query<PagedRow>(
      `WITH matching AS ${rare ? 'MATERIALIZED' : 'NOT MATERIALIZED'} (${matching}),
       page AS (
         SELECT s.id, ${order.cursorKeys} AS cursor_keys, row_number() OVER (ORDER BY ${order.orderBy}) AS n FROM matching s
         ORDER BY ${order.orderBy} LIMIT ${input.limit + 1} OFFSET ${input.offset})
       SELECT ${COLUMNS}, page.cursor_keys FROM page JOIN tenders t ON t.id = page.id ORDER BY page.n`,
      params.values,
    ),
    db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM tender_search s ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       LIMIT ${COUNT_BOUND + 1}) AS bounded`,
      countParams,
    ),
  ]);
  const counted = count.rows[0].n;
  return {
    ...paged(input, page.rows, sort),
    total: Math.min(counted, COUNT_BOUND),
    total_relation: counted > COUNT_BOUND ? 'gte' : 'eq',
    limit: input.limit,
    offset: input.offset,
  };
}

/**
 * Scores the candidates, orders them (by score, then date, by default) and pages through them. Where the candidates
 * come from depends on how common the query is:
 * - a common word («поставка» is in a quarter of all tenders): reading its GIN posting list alone would cost more
 *   than the whole search may, so the candidates are the newest matches, found by walking the date index and
 *   testing each row, a few thousand rows that stay in memory;
 * - if that walk ends without enough matches (words that are common apart but rare together: the estimate
 *   multiplies their shares), or the query is not common, the GIN index finds the candidates.
 * Filters are part of the match (lexemes) or conditions on the candidates (ranges), so they narrow the candidates,
 * never just the page. Fewer than `candidates` matches are all ranked and counted exactly; otherwise `total` says
 * "at least" (gte).
 */
async function fullTextSearch(db: Db, input: TenderSearchInput, q: string, bounds: SearchBounds): Promise<TenderList> {
  try {
    return await inTransaction(db, async (client) => {
      // A plan that reads the whole table is never the search's: with a LIMIT and an estimate of many matches (words
      // that are common apart), the planner may bet on finding them early in a sequential scan and test @@ on every
      // tender; the walk and the GIN index bound the work instead. Nor does it start parallel workers: the shards are
      // read in turn until the candidates are complete (a Parallel Append reads several at once, and the workers cost
      // more to start than a selective search takes).
      await client.query(`SET LOCAL statement_timeout = ${Math.ceil(bounds.timeoutMs)}; SET LOCAL enable_seqscan = off;
        SET LOCAL max_parallel_workers_per_gather = 0`);
      return await boundedSearch(client, input, q, bounds);
    });
  } catch (error) {
    if ((error as { code?: string }).code !== QUERY_CANCELED) throw error;
    throw problem(
      'search_timeout',
      `The search did not finish within ${bounds.timeoutMs / 1000} s: it has to read most tenders (a quoted phrase or a ` +
        'negation of very common words does). Remove the quotes, add a rarer word or a country, and try again.',
    );
  }
}

/** PostgreSQL's query_canceled: statement_timeout ran out. */
const QUERY_CANCELED = '57014';

/**
 * The score of a candidate c, 0..1: 0.9 × the mean over the query's concepts of where c holds it, plus 0.1 × a recency
 * e^(-age/365 days), so that of two equal matches the newer leads. A concept counts 0.85 in the title, 0.55 in the
 * description or the buyer's name, and 0.15 more when a classification label says it too (the code means what was
 * asked); 0.5 in a label alone, 0.4 when its words are spread over several fields. Rounded to four places and reckoned
 * from the start of today, so a score, and a cursor made of it, holds all day. The recency is float8 arithmetic (extract
 * gives numeric, whose exp costs a few microseconds a candidate: over half the scoring) and the start of today is reckoned
 * once per statement, not per candidate.
 */
const score = (concepts: Concept[]) => `round((
    0.9 * ${
      concepts.length === 0
        ? '1'
        : `(${concepts
            .map(
              (x) => `
      CASE WHEN c.search @@ ${x.title} THEN CASE WHEN c.search @@ ${x.label} THEN 1.00 ELSE 0.85 END
        WHEN c.search @@ ${x.body} THEN CASE WHEN c.search @@ ${x.label} THEN 0.70 ELSE 0.55 END
        WHEN c.search @@ ${x.label} THEN 0.50 WHEN c.search @@ ${x.any} THEN 0.4 ELSE 0 END`,
            )
            .join(' +')}) / ${concepts.length}`
    }
    + 0.1 * CASE WHEN c.published_at IS NULL THEN 0
      ELSE exp(-greatest(0, date_part('epoch', (SELECT date_trunc('day', now())) - c.published_at)) / 31557600) END)::numeric, 4)::float8`;

async function boundedSearch(
  db: DbClient,
  input: TenderSearchInput,
  q: string,
  bounds: SearchBounds,
): Promise<TenderList> {
  const sort = effectiveSort(input);
  const probe = new Params();
  const text = probe.add(q);
  // One statement reads the query (tender_query) and its filter lexemes, the planner's estimate of how common they are
  // together and the share of each of their lexemes; ranges only narrow the candidates later.
  const probeFilters = filterSql(input, probe, 'none');
  const estimate = await db.query<{
    words: string;
    nodes: number;
    filters: string | null;
    share: number;
    walked: number;
    frequencies: Frequencies;
    total: number;
  }>(
    `SELECT w::text AS words, numnode(w) AS nodes, f::text AS filters,
       tender_search_share(coalesce(w && f, w)) AS share,
       ${input.country ? `tender_search_share(('''@' || lower(${probe.add(input.country)}) || '''')::tsquery)` : '1'}::float8 AS walked,
       tender_search_frequencies(coalesce(w && f, w)) AS frequencies,
       (SELECT reltuples FROM pg_class WHERE oid = 'tender_search'::regclass)::float8 AS total
     FROM tender_query(${text}) AS w, (SELECT CAST(${probeFilters.lexemes ?? 'NULL'} AS tsquery) AS f) AS filter`,
    probe.values,
  );
  const { words, nodes, filters: filterWords, share, walked, frequencies, total } = estimate.rows[0];
  if (nodes === 0)
    return { items: [], total: 0, total_relation: 'eq', limit: input.limit, offset: input.offset, next_cursor: null };

  // A range few tenders pass (deadlines from today) is written on its sort index's key, so the planner may intersect
  // that index with what the GIN index finds; a wide one (most values below a bound) on the column, tested on the
  // candidates, since reading half of a B-tree costs more than the rows it spares. The planner's estimate decides.
  const rangeProbe = new Params();
  const probeRanges = filterSql(input, rangeProbe, 'keys', false).conditions;
  const rangeForm =
    probeRanges.length === 0
      ? 'columns'
      : (
            await db.query<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(
              `EXPLAIN (FORMAT JSON) SELECT 1 FROM tender_search s WHERE ${probeRanges.join(' AND ')}`,
              rangeProbe.values,
            )
          ).rows[0]['QUERY PLAN'][0].Plan['Plan Rows'] <
          SELECTIVE_RANGE * Math.max(total, 1)
        ? 'keys'
        : 'columns';

  const params = new Params();
  const match = `${params.add(filterWords ? `( ${words} ) & ( ${filterWords} )` : words)}::tsquery`;
  const ranges = filterSql(input, params, rangeForm, false).conditions;
  const parts = concepts(words);
  const ranking: Ranking = {
    sort,
    // Each concept's four forms as parameters, written into the score expression: no subquery per candidate.
    concepts: parts.map((c) => ({
      title: `${params.add(c.title)}::tsquery`,
      body: `${params.add(c.body)}::tsquery`,
      label: `${params.add(c.label)}::tsquery`,
      any: `${params.add(c.any)}::tsquery`,
    })),
    minScore: params.add(input.min_score ?? 0),
  };

  // The share among the tenders the walk reads: all of them, or the country's.
  if (share / Math.max(walked, 1e-9) >= bounds.broadShare) {
    const walk = params.copy();
    const country = input.country ? `WHERE s.country = ${walk.add(input.country)}::char(2)` : '';
    const newest = await rankCandidates(
      db,
      input,
      walk,
      ranking,
      `SELECT s.* FROM (
        SELECT * FROM tender_search s ${country}
        ORDER BY coalesce(s.published_at, '-infinity') DESC, s.id DESC LIMIT ${Math.ceil(bounds.candidates / bounds.broadShare)}) AS s
      WHERE ${[`s.search @@ ${match}`, ...ranges].join(' AND ')} LIMIT ${bounds.candidates}`,
    );
    if (newest.matched >= bounds.candidates) return toList(input, newest, bounds, sort);
  }
  // The GIN index finds the part of the query worth its posting lists (indexQuery); the rest is tested on the rows it
  // finds (ts_match_vq is @@ in a form the planner does not take to the index).
  const top = (node: QueryNode | undefined) => (node ? (node.kind === 'and' ? node.operands : [node]) : []);
  const indexed = indexQuery(
    [...top(parseTsquery(words)), ...top(filterWords ? parseTsquery(filterWords) : undefined)],
    frequencies,
    total,
    bounds.candidates,
  );
  const where =
    indexed && !indexed.exact
      ? [`s.search @@ ${params.add(indexed.index)}::tsquery`, `ts_match_vq(s.search, ${match})`]
      : [`s.search @@ ${match}`];
  // The shards in turn, each from its own GIN index, until `candidates` matches are found (see SEARCH_SHARDS); but a
  // range intersected from its B-tree (keys) is read once, with the whole index, not once a shard.
  const fromIndex =
    rangeForm === 'keys'
      ? `SELECT s.* FROM tender_search s WHERE ${[...where, ...ranges].join(' AND ')} LIMIT ${bounds.candidates}`
      : `SELECT s.* FROM (${Array.from(
          { length: SEARCH_SHARDS },
          (_, shard) =>
            `(SELECT * FROM tender_search s WHERE ${[`${SHARD_KEY} = ${shard}`, ...where, ...ranges].join(' AND ')})`,
        ).join(' UNION ALL ')}) AS s
      LIMIT ${bounds.candidates}`;
  return toList(input, await rankCandidates(db, input, params, ranking, fromIndex), bounds, sort);
}

interface Ranking {
  sort: TenderSort;
  /** The query's concepts: each as the placeholders of its forms (title, body, label, anywhere). */
  concepts: Concept[];
  minScore: string;
}

interface Ranked {
  rows: PagedRow[];
  matched: number;
  total: number;
}

/** One page of the scored candidates, with how many there were and how many pass min_score, in one statement. */
async function rankCandidates(
  db: DbClient,
  input: TenderSearchInput,
  base: Params,
  ranking: Ranking,
  candidates: string,
): Promise<Ranked> {
  const params = base.copy();
  const order = sortSql(ranking.sort, 'p', params, input.cursor);
  // Each candidate is scored as it is found: the candidates kept are their keys and scores, not their search vectors.
  // The counts row is joined to the page, so an empty page (no match, or past the end) still brings the counts.
  const result = await db.query<Partial<PagedRow> & { matched: number; total: number }>(
    `WITH candidates AS MATERIALIZED (
       SELECT c.id, c.published_at, c.deadline_at, c.value_amount, ${score(ranking.concepts)} AS score FROM (${candidates}) AS c),
     passing AS MATERIALIZED (SELECT * FROM candidates c WHERE c.score >= ${ranking.minScore}),
     page AS (
       SELECT p.id, p.score, ${order.cursorKeys} AS cursor_keys, row_number() OVER (ORDER BY ${order.orderBy}) AS n
       FROM passing p ${order.after ? `WHERE ${order.after}` : ''}
       ORDER BY ${order.orderBy} LIMIT ${input.limit + 1} OFFSET ${input.offset}),
     counts AS (SELECT (SELECT count(*) FROM candidates)::int AS matched, (SELECT count(*) FROM passing)::int AS total)
     SELECT counts.matched, counts.total, items.* FROM counts
     LEFT JOIN LATERAL (SELECT ${COLUMNS}, p.score, p.cursor_keys, p.n FROM page p JOIN tenders t ON t.id = p.id) AS items ON true
     ORDER BY items.n`,
    params.values,
  );
  const { matched, total } = result.rows[0];
  const rows = result.rows.filter((row): row is PagedRow & { matched: number; total: number } => row.id != null);
  return { rows, matched, total };
}

function toList(input: TenderSearchInput, ranked: Ranked, bounds: SearchBounds, sort: TenderSort): TenderList {
  return {
    ...paged(input, ranked.rows, sort),
    total: ranked.total,
    total_relation: ranked.matched >= bounds.candidates ? 'gte' : 'eq',
    limit: input.limit,
    offset: input.offset,
  };
}

export async function tenderCard(db: Db, id: string): Promise<TenderCard | undefined> {
  const result = await db.query<
    TenderRow & { ocid: string | null; procurement_method: string | null; updated_at: Date; raw: unknown }
  >(`SELECT ${COLUMNS}, t.ocid, t.procurement_method, t.updated_at, t.raw FROM tenders t WHERE t.id = $1`, [id]);
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

/**
 * Facet counts. For all tenders or one country they come from the materialized view; within text or other filters
 * they are counted over the matching tenders, at most COUNT_BOUND of them (total_relation says so), from the filter
 * lexemes of their search vectors.
 */
export async function tenderFacets(
  db: Db,
  input: TenderFilters & { q?: string },
): Promise<z.output<typeof FacetsSchema>> {
  const { country, ...rest } = input;
  const narrowed = Object.values(rest).some((value) => value !== undefined);
  const rows = narrowed ? await countMatching(db, input) : await countAll(db, country);
  const facets: z.output<typeof FacetsSchema> = {
    country: [],
    source: [],
    status: [],
    law: [],
    currency: [],
    classification: [],
    total: rows.total,
    total_relation: rows.relation,
  };
  for (const row of rows.counts) {
    if (row.facet === 'classification') {
      if (facets.classification.length >= FACET_TOP) continue;
      const [scheme = '', ...id] = row.value.split(':');
      facets.classification.push({ value: row.value, scheme, id: id.join(':'), tenders: row.tenders });
      continue;
    }
    const list = facets[row.facet as 'country' | 'source' | 'status' | 'law' | 'currency'];
    if (list && list.length < FACET_TOP * 5) list.push({ value: row.value, tenders: row.tenders });
  }
  return facets;
}

interface FacetRows {
  counts: Array<{ facet: string; value: string; tenders: number }>;
  total: number;
  relation: 'eq' | 'gte';
}

async function countAll(db: Db, country?: string): Promise<FacetRows> {
  const result = await db.query<{ facet: string; value: string; tenders: number }>(
    `SELECT facet, value, sum(tenders)::int AS tenders FROM tender_facet_counts
     ${country ? 'WHERE country = $1' : ''} GROUP BY facet, value ORDER BY facet, tenders DESC, value`,
    country ? [country] : [],
  );
  const total = result.rows.filter((row) => row.facet === 'country').reduce((sum, row) => sum + row.tenders, 0);
  return { counts: result.rows, total, relation: 'eq' };
}

/** Which facet a filter lexeme counts in, and its value as the API shows it. */
function facetOf(lexeme: string): { facet: string; value: string } | undefined {
  if (lexeme.startsWith('@')) return { facet: 'country', value: lexeme.slice(1).toUpperCase() };
  if (lexeme.startsWith('#')) {
    const [scheme = '', ...id] = lexeme.slice(1).split(':');
    return { facet: 'classification', value: `${scheme.toUpperCase()}:${id.join(':').toUpperCase()}` };
  }
  const match = /^~(status|source|law|currency):(.*)$/.exec(lexeme);
  if (!match) return undefined;
  return { facet: match[1], value: match[1] === 'currency' ? match[2].toUpperCase() : match[2] };
}

async function countMatching(db: Db, input: TenderFilters & { q?: string }): Promise<FacetRows> {
  const params = new Params();
  const filters = filterSql(input, params);
  const text = input.q ? `tender_query(${params.add(input.q)})` : undefined;
  const match = [text, filters.lexemes].filter(Boolean).join(' && ');
  const where = [...(match ? ['s.search @@ query.m'] : []), ...filters.conditions];
  const result = await db.query<{ lexeme: string; tenders: number; total: number }>(
    `WITH query AS (SELECT ${match || 'NULL::tsquery'} AS m),
     matched AS MATERIALIZED (
       SELECT s.search FROM tender_search s, query ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} LIMIT ${COUNT_BOUND})
     SELECT (SELECT count(*) FROM matched)::int AS total, lexeme, count(*)::int AS tenders
     FROM (SELECT 1) AS one LEFT JOIN LATERAL (
       SELECT lexeme FROM matched, unnest(tsvector_to_array(ts_filter(matched.search, '{d}'))) AS lexeme) AS lexemes ON true
     GROUP BY lexeme ORDER BY tenders DESC, lexeme`,
    params.values,
  );
  const total = result.rows[0]?.total ?? 0;
  const counts = result.rows.flatMap((row) => {
    const facet = row.lexeme ? facetOf(row.lexeme) : undefined;
    return facet ? [{ ...facet, tenders: row.tenders }] : [];
  });
  return { counts, total, relation: total >= COUNT_BOUND ? 'gte' : 'eq' };
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
 * Call after tenders change: facet and country counts are a materialized view, the search picks its plan from the
 * statistics of tender_search (ANALYZE samples a fixed number of rows, so it stays cheap at any size), and the typo
 * correction looks words up in the vocabulary (read from at most 100 000 tenders).
 */
export async function refreshTenderFacets(db: Db): Promise<void> {
  // All three as the tables' owner: the processes' role owns nothing (src/migrations/1765800000000_least_privilege.sql).
  await db.query('SELECT tender_facets_refresh()');
}
