// One zod schema per shape of the data API: REST validates and documents with them, MCP tools declare them as their
// input and output schemas, so both faces give the same data.
import { z } from 'zod';
import { nonBlank } from '../http/text.ts';
import { queryInt, queryNumber } from '../http/query-values.ts';

export const MAX_LIMIT = 100;
export const MAX_TOP_K = 50;
export const MAX_QUERY_LENGTH = 500;

const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 code, e.g. RU or de')
  .transform((value) => value.toUpperCase());

export const TenderSearchInput = z.object({
  q: nonBlank(MAX_QUERY_LENGTH).optional()
    .describe('Full-text query in Russian or English (web-search syntax: "exact phrase", -exclude, or). Word forms match: «поставки» finds «поставка».'),
  country: countryCode.optional().describe('ISO 3166-1 alpha-2 country code, any case'),
  min_score: queryNumber(0, 1).optional()
    .describe('Only results whose relevance score (0..1) is at least this; needs q'),
  limit: queryInt(1, MAX_LIMIT).default(20).describe(`Page size, 1..${MAX_LIMIT}`),
  offset: queryInt(0, 100_000).default(0).describe('Items to skip'),
});
export type TenderSearchInput = z.output<typeof TenderSearchInput>;

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
    value: z.object({ amount: z.number().nullable(), currency: z.string().nullable() })
      .describe('Estimated (initial maximum) value'),
    status: z.string().describe('OCDS tender status: planned, active, complete, cancelled, …'),
    published_at: z.string().nullable(),
    deadline_at: z.string().nullable().describe('Deadline for bids'),
    url: z.string().nullable().describe('The notice at its source'),
    classification: z.array(ClassificationSchema),
    score: z.number().optional().describe('Relevance 0..1, present when q was given'),
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
});

export const TenderIdInput = z.object({
  id: z.string().min(1).max(300).describe('Tender id from a search result'),
});

export const FacetsInput = z.object({
  country: countryCode.optional().describe('Count only tenders of this country'),
});

const FacetValue = z.object({ value: z.string(), tenders: z.number().int() });
export const FacetsSchema = z.object({
  country: z.array(FacetValue),
  source: z.array(FacetValue),
  status: z.array(FacetValue),
  currency: z.array(FacetValue),
  classification: z.array(FacetValue.extend({ scheme: z.string(), id: z.string() }))
    .describe('The most frequent codes, value is scheme:id'),
  total: z.number().int(),
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
      status: z.enum(SOURCE_STATUSES).describe('From the latest sync runs: ok, degraded (partial or recovering), failing, disabled'),
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
  corpus_keys: z.array(z.string().min(1).max(64)).max(20).optional()
    .describe('Search only these corpora (see /v1/corpora); all when absent'),
});

export const KnowledgeResultsSchema = z.object({
  items: z.array(
    z.object({ id: z.string(), corpus_key: z.string(), title: z.string(), snippet: z.string(), score: z.number(), url: z.string().nullable() }),
  ),
});

export const CorporaSchema = z.object({
  items: z.array(z.object({ key: z.string(), title: z.string(), description: z.string(), documents: z.number().int(), sample: z.boolean() })),
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
