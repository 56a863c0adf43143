// The data API under /v1. Every request counts against the key's monthly quota (unless refused by validation or failed
// on our side: auth.ts); MCP tools call the same functions.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import { notFound } from '../http/problem.ts';
import type { Services } from '../services.ts';
import { requireDataKey } from './auth.ts';
import type { Usage } from './quota.ts';
import {
  CorporaSchema,
  CountriesSchema,
  FacetsInput,
  FacetsSchema,
  KnowledgeResultsSchema,
  KnowledgeSearchInput,
  MeSchema,
  PracticeResultsSchema,
  PracticeSearchInput,
  SourcesSchema,
  TenderCardSchema,
  TenderIdInput,
  TenderListSchema,
  TenderSearchQuery,
  tenderSearch,
} from './schemas.ts';
import { searchBounds, searchTenders, tenderCard, tenderCountries, tenderFacets } from './tenders.ts';
import { listSources } from './sources.ts';
import { listCorpora, searchKnowledge, searchPractice } from './practice.ts';
import { TOOL_NAMES } from './tool-names.ts';

export function dataRoutes(api: Api, services: Services): void {
  const { db } = services;
  const bounds = searchBounds(services.config.SEARCH_TIMEOUT_MS);
  const common = { security: ['dataKey'], use: [requireDataKey(services)] };
  const errors = {
    401: { description: 'No valid key (WWW-Authenticate: Bearer)' },
    429: { description: 'The monthly quota is used up (quota_exceeded, Retry-After)' },
  };

  api.route({
    ...common,
    method: 'get',
    path: '/v1/tenders',
    operationId: 'searchTenders',
    summary: 'Search tenders',
    description:
      'Search by meaning (Russian and English word forms, procurement synonyms and translations, one-letter typos) with ' +
      'a relevance score 0..1, or a list without q; filters by status, deadline, publication date, value, currency, ' +
      'classification code prefix (CPV, OKPD2), buyer, source, law and country; sort by relevance, newest, deadline or ' +
      'value; page by offset or by cursor (next_cursor). At most 2000 matches are ranked (the newest ones for a very ' +
      'common word); total is then a lower bound (total_relation gte).',
    tags: ['Tenders'],
    query: TenderSearchQuery,
    responses: {
      200: { description: 'A page of tenders', schema: TenderListSchema },
      503: {
        description:
          'The search ran past its time budget (search_timeout): a quoted phrase or negation of very common words',
      },
      ...errors,
    },
    handler: async (ctx, { query }) => {
      ctx.body = await searchTenders(db, tenderSearch(query), bounds);
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/v1/tenders/facets',
    operationId: 'tenderFacets',
    summary: 'Filter facets',
    description:
      'Tender counts by country, source, status, law, currency and the most frequent classification codes, within the ' +
      'text and filters given (as GET /v1/tenders takes them; with any, over at most 10 000 matching tenders).',
    tags: ['Tenders'],
    query: FacetsInput,
    responses: { 200: { description: 'Facet counts', schema: FacetsSchema }, ...errors },
    handler: async (ctx, { query }) => {
      ctx.body = await tenderFacets(db, query);
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/v1/tenders/countries',
    operationId: 'tenderCountries',
    summary: 'Countries that have tenders',
    tags: ['Tenders'],
    responses: { 200: { description: 'Countries with their tender counts', schema: CountriesSchema }, ...errors },
    handler: async (ctx) => {
      ctx.body = await tenderCountries(db);
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/v1/tenders/{id}',
    operationId: 'getTender',
    summary: 'A tender card',
    description: 'The tender with its OCDS id, procurement method and the record as the source published it.',
    tags: ['Tenders'],
    params: TenderIdInput,
    responses: {
      200: { description: 'The card', schema: TenderCardSchema },
      404: { description: 'No such tender' },
      ...errors,
    },
    handler: async (ctx, { params }) => {
      const card = await tenderCard(db, params.id);
      if (!card) throw notFound(`No tender ${params.id}.`);
      ctx.body = card;
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/v1/sources',
    operationId: 'listSources',
    summary: 'Tender sources and their status',
    tags: ['Sources'],
    responses: { 200: { description: 'The sources', schema: SourcesSchema }, ...errors },
    handler: async (ctx) => {
      ctx.body = await listSources(db);
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/v1/practice/search',
    operationId: 'searchPractice',
    summary: 'Search supervisory practice',
    description: 'Court and FAS decisions on public procurement, best matches first.',
    tags: ['Practice'],
    body: PracticeSearchInput,
    responses: { 200: { description: 'Matching decisions', schema: PracticeResultsSchema }, ...errors },
    handler: async (ctx, { body }) => {
      ctx.body = await searchPractice(db, body);
    },
  });

  api.route({
    ...common,
    method: 'post',
    path: '/v1/knowledge/search',
    operationId: 'searchKnowledge',
    summary: 'Search knowledge corpora',
    description: 'An unknown key in corpus_keys is 400 unknown_corpus.',
    tags: ['Knowledge'],
    body: KnowledgeSearchInput,
    responses: { 200: { description: 'Matching documents', schema: KnowledgeResultsSchema }, ...errors },
    handler: async (ctx, { body }) => {
      ctx.body = await searchKnowledge(db, body);
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/v1/corpora',
    operationId: 'listCorpora',
    summary: 'Available knowledge corpora',
    tags: ['Knowledge'],
    responses: { 200: { description: 'The corpora', schema: CorporaSchema }, ...errors },
    handler: async (ctx) => {
      ctx.body = await listCorpora(db);
    },
  });

  api.route({
    ...common,
    method: 'get',
    path: '/v1/me',
    operationId: 'me',
    summary: 'The key’s tariff and usage',
    tags: ['Account'],
    responses: { 200: { description: 'Tariff, quota and usage this month', schema: MeSchema }, ...errors },
    handler: (ctx) => {
      ctx.body = me(ctx.state.dataUsage as Usage);
    },
  });
}

export function me(usage: Usage): z.output<typeof MeSchema> {
  return {
    account_id: usage.accountId,
    tariff: usage.tariff,
    monthly_quota: usage.quota,
    used: usage.used,
    remaining: usage.quota === null ? null : Math.max(0, usage.quota - usage.used),
    resets_at: usage.resetsAt.toISOString(),
    tools: [...TOOL_NAMES],
  };
}
