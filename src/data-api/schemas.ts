// One zod schema per shape of the data API: REST validates and documents with them, MCP tools declare them as their
// input and output schemas, so both faces give the same data.
import { z } from 'zod';
import { nonBlank } from '../http/text.ts';
import { problem } from '../http/problem.ts';
import { QueryDate, QueryTimestamp, queryInt, queryNumber } from '../http/query-values.ts';

export const MAX_LIMIT = 100;
export const MAX_TOP_K = 50;
export const MAX_QUERY_LENGTH = 500;

const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 code, e.g. RU or de')
  .transform((value) => value.toUpperCase());

export const TENDER_STATUSES = [
  'planning',
  'planned',
  'active',
  'complete',
  'cancelled',
  'unsuccessful',
  'withdrawn',
] as const;
export const TENDER_SORTS = ['relevance', 'newest', 'deadline', 'value_asc', 'value_desc'] as const;
export type TenderSort = (typeof TENDER_SORTS)[number];
export const MAX_VALUE = 1e13;

/** A date or a moment: 2026-11-01 or 2026-11-01T09:00:00Z. A date as an upper bound takes in the whole day. */
const isoMoment = z.union([QueryDate, QueryTimestamp]);

/** A classification code prefix, optionally naming its scheme: 33600000, cpv:336, okpd2:21.20. */
export interface ClassificationPrefix {
  scheme?: 'cpv' | 'okpd2';
  code: string;
}
const CLASSIFICATION = /^(?:(cpv|okpd2):)?([0-9][0-9.-]{0,19})$/i;
// The whole list's shape, so the OpenAPI document says exactly what is taken (JSON Schema patterns have no flags).
const PREFIX = ' *(?:(?:[cC][pP][vV]|[oO][kK][pP][dD]2):)?[0-9][0-9.-]{0,19} *';
const classificationList = z
  .string()
  .max(400)
  .regex(
    new RegExp(`^${PREFIX}(?:,${PREFIX}){0,19}$`),
    'must be 1 to 20 comma-separated code prefixes such as 33600000, cpv:336 or okpd2:21.20',
  )
  .transform((value): ClassificationPrefix[] =>
    value.split(',').map((part) => {
      const match = CLASSIFICATION.exec(part.trim())!;
      return { ...(match[1] ? { scheme: match[1].toLowerCase() as 'cpv' | 'okpd2' } : {}), code: match[2] };
    }),
  );

/** Where the previous page ended: the sort it was made for and the sort keys of its last item (base64url JSON). */
export interface TenderCursor {
  sort: TenderSort;
  keys: string[];
}
export function encodeCursor(cursor: TenderCursor): string {
  return Buffer.from(JSON.stringify({ s: cursor.sort, k: cursor.keys })).toString('base64url');
}
const cursorText = z
  .string()
  .min(1)
  .max(1000)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor as a page gave it');

/** The cursor a page gave, or 400 invalid_cursor: its shape is documented, what it holds is ours. */
function decodeCursor(value: string): TenderCursor {
  try {
    const { s, k } = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    const keyCount = s === 'relevance' ? 3 : 2;
    if (
      TENDER_SORTS.includes(s) &&
      Array.isArray(k) &&
      k.length === keyCount &&
      k.every((key) => typeof key === 'string')
    ) {
      return { sort: s, keys: k };
    }
  } catch {
    // not base64url JSON: refused below
  }
  throw problem('invalid_cursor', 'cursor is not one this API gave; pass next_cursor from the previous page as it is.');
}

/**
 * The filters of GET /v1/tenders, /v1/tenders/facets and their MCP tools. REST reads every value from the query
 * string, MCP takes JSON numbers: `number` gives the number schema of each.
 */
function tenderFilters(number: (min: number, max: number) => z.ZodType<number>) {
  return {
    country: countryCode.optional().describe('ISO 3166-1 alpha-2 country code, any case'),
    status: z
      .enum(TENDER_STATUSES)
      .optional()
      .describe('OCDS tender status; active is open for bids or being evaluated'),
    deadline_from: isoMoment.optional().describe('Bid deadline on or after this date or moment (ISO 8601)'),
    deadline_to: isoMoment.optional().describe('Bid deadline on or before this date (the whole day) or moment'),
    published_from: isoMoment.optional().describe('Published on or after this date or moment'),
    published_to: isoMoment.optional().describe('Published on or before this date (the whole day) or moment'),
    value_min: number(0, MAX_VALUE)
      .optional()
      .describe('Estimated value at least this, in the tender’s currency (combine with currency)'),
    value_max: number(0, MAX_VALUE).optional().describe('Estimated value at most this, in the tender’s currency'),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code, e.g. RUB or eur')
      .transform((value) => value.toUpperCase())
      .optional()
      .describe('ISO 4217 currency of the value, any case'),
    classification: classificationList
      .optional()
      .describe(
        'Classification code prefixes, comma-separated; cpv: or okpd2: names the scheme, none means either: 33600000, cpv:336, okpd2:21.20',
      ),
    buyer: nonBlank(200)
      .optional()
      .describe('The buyer: its id (e.g. the INN) or words of its name, all of which must occur'),
    source: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/, 'must be a source key (see /v1/sources)')
      .transform((value) => value.toLowerCase())
      .optional()
      .describe('Key of the source (see /v1/sources)'),
    law: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9.-]{0,31}$/, 'must be a law key such as 44-fz, 223-fz or eu-2014-24')
      .transform((value) => value.toLowerCase())
      .optional()
      .describe('Procurement law: 44-fz, 223-fz, eu-2014-24, uk-pa-2023, … (facets list those present)'),
  };
}

const QUERY_DESCRIPTION =
  'What to find, in Russian or English, as a supplier would say it: «лекарственные препараты», "diesel fuel Perm", ' +
  'medicines. Word forms, synonyms and translations of common goods and works match, and a one-letter typo is forgiven; ' +
  'web-search syntax: "exact phrase", -exclude, or. Leave out what filters say better (status, dates, value, codes).';

function searchFields(
  number: (min: number, max: number) => z.ZodType<number>,
  int: (min: number, max: number) => z.ZodType<number>,
) {
  return {
    ...tenderFilters(number),
    min_score: number(0, 1)
      .optional()
      .describe('Only results whose relevance score (0..1) is at least this; needs the text'),
    sort: z
      .enum(TENDER_SORTS)
      .optional()
      .describe(
        'relevance (the default with text), newest (the default without), deadline (soonest first), value_asc, value_desc',
      ),
    limit: int(1, MAX_LIMIT).default(20).describe(`Page size, 1..${MAX_LIMIT}`),
    offset: int(0, 100_000).default(0).describe('Items to skip; for deep lists pass cursor instead'),
    cursor: cursorText.optional().describe('next_cursor of the previous page: the page after it, in the same sort'),
  };
}

export const TenderSearchQuery = z.object({
  q: nonBlank(MAX_QUERY_LENGTH).optional().describe(QUERY_DESCRIPTION),
  ...searchFields(queryNumber, queryInt),
});
/** A search as tenders.ts runs it: the cursor decoded. */
export type TenderSearchInput = Omit<z.output<typeof TenderSearchQuery>, 'cursor'> & { cursor?: TenderCursor };

/**
 * The search the request asks for, or 400: a cursor this API did not give (invalid_cursor), or parameters that each
 * have a documented shape but contradict one another (conflicting_parameters), which a schema cannot say.
 */
export function tenderSearch(input: z.output<typeof TenderSearchQuery>, text: 'q' | 'query' = 'q'): TenderSearchInput {
  const conflict = (message: string) => problem('conflicting_parameters', message);
  const hasText = input.q !== undefined;
  if (input.sort === 'relevance' && !hasText)
    throw conflict(`sort=relevance needs ${text}: without text there is no relevance.`);
  if (input.value_min !== undefined && input.value_max !== undefined && input.value_min > input.value_max) {
    throw conflict('value_min must not exceed value_max.');
  }
  if (input.cursor === undefined) return { ...input, cursor: undefined };
  if (input.offset)
    throw conflict('offset cannot be combined with cursor: the cursor already says where the page starts.');
  const cursor = decodeCursor(input.cursor);
  const sort = input.sort ?? (hasText ? 'relevance' : 'newest');
  if (cursor.sort !== sort) throw conflict(`cursor was made for sort=${cursor.sort}, not ${sort}.`);
  return { ...input, cursor };
}

const jsonNumber = (min: number, max: number) => z.number().min(min).max(max);
const jsonInt = (min: number, max: number) => z.number().int().min(min).max(max);
/** search_tenders: the text is `query`, as in search_practice and search_knowledge. */
export const SearchTendersToolInput = z.object({
  query: nonBlank(MAX_QUERY_LENGTH).optional().describe(`${QUERY_DESCRIPTION} Latest tenders when absent.`),
  ...searchFields(jsonNumber, jsonInt),
});

export const FacetsInput = z.object({
  q: nonBlank(MAX_QUERY_LENGTH).optional().describe('Count only the tenders this text finds (as GET /v1/tenders does)'),
  ...tenderFilters(queryNumber),
});
export const TenderFacetsToolInput = z.object({
  query: nonBlank(MAX_QUERY_LENGTH)
    .optional()
    .describe('Count only the tenders this text finds (as search_tenders does)'),
  ...tenderFilters(jsonNumber),
});
export type TenderFilters = Omit<z.output<typeof FacetsInput>, 'q'>;

export const ClassificationSchema = z.object({
  scheme: z.string().describe('CPV, OKPD2, …'),
  id: z.string(),
  description: z.string(),
});

export const TenderSchema = z
  .object({
    id: z.string().describe('Stable tender id: <source>:<id at the source>'),
    source: z.string().describe('Key of the source (see /v1/sources)'),
    country: z.string().describe('ISO 3166-1 alpha-2'),
    title: z.string(),
    description: z.string(),
    buyer: z.object({ name: z.string(), id: z.string().nullable().describe('e.g. the INN in Russia') }),
    value: z
      .object({ amount: z.number().nullable(), currency: z.string().nullable() })
      .describe('Estimated (initial maximum) value'),
    status: z.string().describe('OCDS tender status: planning, active, complete, cancelled, unsuccessful, …'),
    law: z
      .string()
      .nullable()
      .describe('Procurement law: 44-fz, 223-fz, eu-2014-24, …; null when the source does not say'),
    published_at: z.string().nullable(),
    deadline_at: z.string().nullable().describe('Deadline for bids'),
    url: z.string().nullable().describe('The notice at its source'),
    classification: z.array(ClassificationSchema),
    score: z
      .number()
      .optional()
      .describe(
        'Relevance 0..1, present with text: 0.9 × how well the query is found (title above description and buyer, a classification label that says it adds) + 0.1 × recency',
      ),
    sample: z.boolean().describe('True for generated sample data'),
  })
  .meta({ title: 'Tender' });

export const TenderCardSchema = TenderSchema.extend({
  ocid: z.string().nullable().describe('OCDS contracting process id, when the source has one'),
  procurement_method: z.string().nullable(),
  updated_at: z.string(),
  source_record: z.unknown().describe('The record as the source published it'),
}).meta({ title: 'TenderCard' });

export const TenderListSchema = z.object({
  items: z.array(TenderSchema),
  total: z.number().int().describe('Matching tenders; a lower bound when total_relation is gte'),
  total_relation: z.enum(['eq', 'gte']).describe('gte when counting stopped at the bound (very broad filters)'),
  limit: z.number().int(),
  offset: z.number().int(),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
});

export const TenderIdInput = z.object({
  id: z.string().min(1).max(300).describe('Tender id from a search result'),
});

const FacetValue = z.object({ value: z.string(), tenders: z.number().int() });
export const FacetsSchema = z.object({
  country: z.array(FacetValue),
  source: z.array(FacetValue),
  status: z.array(FacetValue),
  currency: z.array(FacetValue),
  law: z.array(FacetValue),
  classification: z
    .array(FacetValue.extend({ scheme: z.string(), id: z.string() }))
    .describe('The most frequent codes, value is scheme:id'),
  total: z.number().int().describe('Tenders counted; with text or filters at most 10 000 of them'),
  total_relation: z.enum(['eq', 'gte']).describe('gte when more tenders match than were counted'),
});

export const CountriesSchema = z.object({
  items: z.array(z.object({ code: z.string(), name: z.string(), name_ru: z.string(), tenders: z.number().int() })),
});

export const SOURCE_STATUSES = ['ok', 'degraded', 'failing', 'disabled'] as const;
export const SourcesSchema = z.object({
  items: z.array(
    z.object({
      key: z.string(),
      name: z.string(),
      country: z.string().nullable(),
      status: z
        .enum(SOURCE_STATUSES)
        .describe('From the latest sync runs: ok, degraded (partial or recovering), failing, disabled'),
      last_sync_at: z.string().nullable().describe('End of the latest successful sync'),
      records: z.number().int(),
    }),
  ),
});

export const PracticeSearchInput = z.object({
  query: nonBlank(MAX_QUERY_LENGTH).describe('What to look for in court and FAS decisions (Russian or English)'),
  top_k: z.number().int().min(1).max(MAX_TOP_K).default(10).describe(`How many results, 1..${MAX_TOP_K}`),
});

export const PracticeResultsSchema = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      court: z.string(),
      decided_at: z.string().describe('Date of the decision, YYYY-MM-DD'),
      case_number: z.string(),
      snippet: z.string(),
      score: z.number(),
      url: z.string().nullable(),
    }),
  ),
});

export const KnowledgeSearchInput = z.object({
  query: nonBlank(MAX_QUERY_LENGTH).describe('What to look for (Russian or English)'),
  top_k: z.number().int().min(1).max(MAX_TOP_K).default(10).describe(`How many results, 1..${MAX_TOP_K}`),
  corpus_keys: z
    .array(z.string().min(1).max(64))
    .max(20)
    .optional()
    .describe('Search only these corpora (see /v1/corpora); all when absent'),
});

export const KnowledgeResultsSchema = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      corpus_key: z.string(),
      title: z.string(),
      snippet: z.string(),
      score: z.number(),
      url: z.string().nullable(),
    }),
  ),
});

export const CorporaSchema = z.object({
  items: z.array(
    z.object({
      key: z.string(),
      title: z.string(),
      description: z.string(),
      documents: z.number().int(),
      sample: z.boolean(),
    }),
  ),
});

export const MeSchema = z.object({
  account_id: z.string(),
  tariff: z.string(),
  monthly_quota: z.number().int().nullable().describe('null when unlimited'),
  used: z.number().int().describe('Requests counted this calendar month (UTC), this one included'),
  remaining: z.number().int().nullable(),
  resets_at: z.string().describe('Start of the next calendar month, UTC'),
  tools: z.array(z.string()).describe('MCP tools this key may call'),
});
